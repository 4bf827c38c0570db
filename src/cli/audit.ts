/**
 * `airlock audit verify <file>`: checks an audit file's hash chain. One line of output:
 * `ok: N rows` on stdout (exit 0), or `broken at line L: <reason> (N rows checked)` on stderr
 * (exit 1). A file that cannot be read prints `cannot read <file>: <code>` on stderr (exit 2),
 * so scripts can tell a damaged log from a missing one. A file without a single row prints
 * `empty: 0 rows …` on stderr (exit 3): an empty chain holds trivially, so "ok" would hide a
 * file that was emptied (truncated to nothing), which the file alone cannot tell from a new one.
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

/**
 * Exit codes of `airlock audit verify`.
 *
 * @example
 * ```ts
 * if ((await auditVerifyCommand(file)) === AUDIT_VERIFY_EXIT.empty) alert('the audit file has no rows');
 * ```
 */
export const AUDIT_VERIFY_EXIT = { ok: 0, broken: 1, unreadable: 2, empty: 3 } as const;

/** The line for a file without rows: says what the file alone cannot tell. */
export const EMPTY_AUDIT_LINE = 'empty: 0 rows — the file has no rows; if it had rows before, it was emptied';

/** Exit codes: 0 the chain holds, 1 it is broken, 2 the file cannot be read, 3 the file has no rows. */
export async function auditVerifyCommand(path: string, output: AuditCommandOutput = PROCESS_OUTPUT): Promise<number> {
  let result;
  try {
    result = await verifyAuditFile(path);
  } catch (error) {
    const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
    output.stderr(`cannot read ${path}: ${typeof code === 'string' ? code : 'unknown error'}\n`);
    return AUDIT_VERIFY_EXIT.unreadable;
  }
  if (result.ok && result.rows === 0) {
    output.stderr(`${EMPTY_AUDIT_LINE}\n`);
    return AUDIT_VERIFY_EXIT.empty;
  }
  if (result.ok) {
    output.stdout(`ok: ${result.rows} rows\n`);
    return AUDIT_VERIFY_EXIT.ok;
  }
  output.stderr(`broken at line ${result.firstBrokenLine}: ${result.reason} (${result.rows} rows checked)\n`);
  return AUDIT_VERIFY_EXIT.broken;
}
