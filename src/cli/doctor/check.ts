/**
 * What every `airlock doctor` check returns and how a line is printed: a status, the check's
 * name, and one sentence that never carries a secret.
 *
 * @example
 * ```ts
 * formatCheckLine({ status: 'ok', check: 'config', detail: 'airlock.yaml: 1 agent, 1 client' });
 * // 'ok    config    airlock.yaml: 1 agent, 1 client'
 * ```
 */
import { accessSync, constants, existsSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * `ok` passed; `warn` worth a look, not a failure; `fail` fails the run (exit 1); `skip` not
 * configured, or not checkable because an earlier check failed.
 *
 * @example
 * ```ts
 * const status: CheckStatus = 'skip';
 * ```
 */
export type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip';

/**
 * One printed line of `airlock doctor`.
 *
 * @example
 * ```ts
 * const line: CheckLine = { status: 'skip', check: 'redis', detail: 'not configured' };
 * ```
 */
export interface CheckLine {
  status: CheckStatus;
  /** The check's name: config, tokens, port, store, redis, audit, registry. */
  check: string;
  detail: string;
}

/**
 * A line as printed: status and check name in columns.
 *
 * @example
 * ```ts
 * formatCheckLine({ status: 'fail', check: 'port', detail: '127.0.0.1:41240 is in use by another process' });
 * // 'fail  port      127.0.0.1:41240 is in use by another process'
 * ```
 */
export function formatCheckLine(line: CheckLine): string {
  return `${line.status.padEnd(5)} ${line.check.padEnd(9)} ${line.detail}`;
}

/**
 * The last line: how many of each, and which checks failed.
 *
 * @example
 * ```ts
 * summaryLine([{ status: 'ok', check: 'config', detail: '' }]); // 'all good: 1 ok'
 * ```
 */
export function summaryLine(lines: readonly CheckLine[]): string {
  const count = (status: CheckStatus): number => lines.filter((line) => line.status === status).length;
  const parts = [`${count('ok')} ok`];
  if (count('warn') > 0) parts.push(`${count('warn')} ${count('warn') === 1 ? 'warning' : 'warnings'}`);
  if (count('skip') > 0) parts.push(`${count('skip')} skipped`);
  const failed = [...new Set(lines.filter((line) => line.status === 'fail').map((line) => line.check))];
  if (failed.length === 0) return `all good: ${parts.join(', ')}`;
  return `${count('fail')} failed (${failed.join(', ')}): ${parts.join(', ')}`;
}

/**
 * A URL without its password (and without query or fragment, which may carry one), for lines
 * about Redis and other services.
 *
 * @example
 * ```ts
 * withoutPassword('redis://app:secret@cache:6379/0'); // 'redis://app@cache:6379/0'
 * ```
 */
export function withoutPassword(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '(unparseable URL)';
  }
  const user = parsed.username !== '' ? `${parsed.username}@` : '';
  return `${parsed.protocol}//${user}${parsed.host}${parsed.pathname === '/' ? '' : parsed.pathname}`;
}

/**
 * A system error's code (`ECONNREFUSED`), else its one-line message; never a stack.
 *
 * @example
 * ```ts
 * reasonOf(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' })); // 'ECONNREFUSED'
 * ```
 */
export function reasonOf(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    const code = (error as { code?: unknown }).code;
    const message = error instanceof Error ? error.message.split('\n')[0]!.trim() : '';
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code;
    if (message.length > 0) return message.length > 200 ? `${message.slice(0, 200)}…` : message;
    if (typeof code === 'string') return code;
  }
  return String(error);
}

/**
 * The path itself if it exists, else its nearest existing parent: where a missing file would
 * be created (the folders in between are created by the writer).
 *
 * @example
 * ```ts
 * nearestExisting('/tmp/a/b/c.db'); // '/tmp' when neither a nor b exists
 * ```
 */
export function nearestExisting(path: string): string {
  let current = path;
  while (!existsSync(current) && dirname(current) !== current) current = dirname(current);
  return current;
}

/**
 * Whether this process may write the file (or create files in the folder).
 *
 * @example
 * ```ts
 * isWritable('/etc'); // false for most users
 * ```
 */
export function isWritable(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}
