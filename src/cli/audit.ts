/**
 * `airlock audit verify <file>`: checks an audit file's hash chain. One line of output:
 * `ok: N rows` on stdout (exit 0), or `broken at line L: <reason> (N rows checked)` on stderr
 * (exit 1). A file that cannot be read prints `cannot read <file>: <code>` on stderr (exit 2),
 * so scripts can tell a damaged log from a missing one.
 *
 * @example
 * ```sh
 * airlock audit verify /var/log/airlock/audit.jsonl   # ok: 1520 rows
 * ```
 */
import { verifyAuditFile } from '../audit/verify.js';

export interface AuditCommandOutput {
  stdout: (line: string) => void;
  stderr: (line: string) => void;
}

const PROCESS_OUTPUT: AuditCommandOutput = {
  stdout: (line) => process.stdout.write(line),
  stderr: (line) => process.stderr.write(line),
};

/** Exit codes: 0 the chain holds, 1 it is broken, 2 the file cannot be read. */
export async function auditVerifyCommand(path: string, output: AuditCommandOutput = PROCESS_OUTPUT): Promise<number> {
  let result;
  try {
    result = await verifyAuditFile(path);
  } catch (error) {
    const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
    output.stderr(`cannot read ${path}: ${typeof code === 'string' ? code : 'unknown error'}\n`);
    return 2;
  }
  if (result.ok) {
    output.stdout(`ok: ${result.rows} rows\n`);
    return 0;
  }
  output.stderr(`broken at line ${result.firstBrokenLine}: ${result.reason} (${result.rows} rows checked)\n`);
  return 1;
}
