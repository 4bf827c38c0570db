/**
 * The audit check of `airlock doctor`: the configured audit file is writable (or can be
 * created) and its hash chain is intact, with the same verifier as `airlock audit verify`.
 *
 * @example
 * ```ts
 * await auditLine({ file: '.airlock/audit.jsonl', stdout: false }); // ok: …: chain intact, 12 rows
 * ```
 */
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { verifyAuditFile } from '../../audit/verify.js';
import type { AuditConfig } from '../../config/schema.js';
import { isWritable, nearestExisting, reasonOf, type CheckLine } from './check.js';

/**
 * The audit line for the config's `audit` section.
 *
 * @example
 * ```ts
 * await auditLine({ stdout: false }); // { status: 'skip', check: 'audit', detail: 'no audit file configured (audit.file)' }
 * ```
 */
export async function auditLine(audit: AuditConfig): Promise<CheckLine> {
  const file = audit.file;
  if (file === undefined) {
    const where = audit.stdout ? 'audit rows go to stdout only' : 'no audit file configured (audit.file)';
    return { status: 'skip', check: 'audit', detail: where };
  }
  const full = resolve(file);
  if (!existsSync(full)) {
    const folder = nearestExisting(dirname(full));
    return isWritable(folder)
      ? { status: 'ok', check: 'audit', detail: `${file} does not exist yet; airlock serve creates it` }
      : { status: 'fail', check: 'audit', detail: `${file} cannot be created: ${folder} is not writable` };
  }
  if (!isWritable(full)) return { status: 'fail', check: 'audit', detail: `${file} is not writable by this user` };
  let result;
  try {
    result = await verifyAuditFile(full);
  } catch (error) {
    return { status: 'fail', check: 'audit', detail: `${file} cannot be read: ${reasonOf(error)}` };
  }
  if (!result.ok) {
    return {
      status: 'fail',
      check: 'audit',
      detail: `${file}: chain broken at line ${result.firstBrokenLine}: ${result.reason} (${result.rows} rows checked); move it aside before serving`,
    };
  }
  if (result.rows === 0) {
    return { status: 'warn', check: 'audit', detail: `${file}: no rows; if it had rows before, it was emptied` };
  }
  return {
    status: 'ok',
    check: 'audit',
    detail: `${file}: chain intact, ${result.rows} ${result.rows === 1 ? 'row' : 'rows'}`,
  };
}
