/**
 * What every task store shares about ListTasks: the query checks, the sort key and its opaque
 * page token. The token format is `MemoryTaskStore`'s, byte for byte (base64url of the JSON
 * array `[statusMs, id]`), and so are the error messages, so that a caller cannot tell the
 * stores apart by their tokens or errors. (memory.ts keeps private copies of these functions;
 * it can import them from here unchanged.)
 *
 * The token is the sort key of the last task shown, not an offset: a keyset cursor, so a page
 * is an index seek and pages stay stable while tasks are added. It is not signed: it only ever
 * narrows the caller's own owner-scoped query, so a forged one can reach nothing more.
 *
 * @example
 * ```ts
 * checkTaskQuery(query);
 * const after = query.pageToken ? decodePageToken(query.pageToken) : undefined;
 * // … read pageSize + 1 rows below `after` …
 * const nextPageToken = more ? encodePageToken({ statusMs: last.statusMs, id: last.id }) : '';
 * ```
 */
import { A2AError } from '../../protocol/errors.js';
import type { Task } from '../../protocol/model.js';
import type { TaskQuery } from '../store.js';
import { TaskStoreInputError } from './errors.js';

/** Largest ListTasks page. */
export const MAX_PAGE_SIZE = 100;
/** A page token is at most a timestamp and a task id; anything much longer is not ours. */
export const MAX_PAGE_TOKEN_LENGTH = 2_048;

/**
 * The list order's key: status timestamp (epoch ms), then task id. Task ids are unique, so no
 * two tasks share a key.
 *
 * @example
 * ```ts
 * const key: TaskSortKey = { statusMs: Date.parse(task.status.timestamp), id: task.id };
 * ```
 */
export interface TaskSortKey {
  readonly statusMs: number;
  readonly id: string;
}

/**
 * Checks `pageSize` (an integer 1..100) and `statusTimestampAfter` (finite). The page token is
 * checked by {@link decodePageToken}.
 *
 * @throws A2AError INVALID_PARAMS naming the field.
 * @example
 * ```ts
 * checkTaskQuery({ pageSize: 0 }); // throws: pageSize must be an integer from 1 to 100
 * ```
 */
export function checkTaskQuery(query: TaskQuery): void {
  const { pageSize, statusTimestampAfter } = query;
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_SIZE) {
    throw new A2AError('INVALID_PARAMS', `Invalid params: pageSize must be an integer from 1 to ${MAX_PAGE_SIZE}`, {
      field: 'pageSize',
    });
  }
  if (statusTimestampAfter !== undefined && !Number.isFinite(statusTimestampAfter)) {
    throw new A2AError('INVALID_PARAMS', 'Invalid params: statusTimestampAfter must be a time', {
      field: 'statusTimestampAfter',
    });
  }
}

/**
 * The opaque token for the page after the task with this key.
 *
 * @example
 * ```ts
 * encodePageToken({ statusMs: 1767225600000, id: 't1' }); // 'WzE3NjcyMjU2MDAwMDAsInQxIl0'
 * ```
 */
export function encodePageToken(key: TaskSortKey): string {
  return Buffer.from(JSON.stringify([key.statusMs, key.id]), 'utf8').toString('base64url');
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;

/**
 * Strict inverse of {@link encodePageToken}. Node's base64 decoder skips characters it does
 * not know, so the token must also survive a round trip: that rejects every string the encoder
 * could not have produced, including ones whose bytes are not valid UTF-8.
 *
 * A database store passes `maxIdBytes`: a token whose id it could never have stored (see
 * {@link isStorableKey}) is refused like any other forged token, before it reaches a query.
 *
 * @throws A2AError INVALID_PARAMS on `pageToken` for anything the encoder could not have made.
 * @example
 * ```ts
 * decodePageToken('WzE3NjcyMjU2MDAwMDAsInQxIl0'); // { statusMs: 1767225600000, id: 't1' }
 * ```
 */
export function decodePageToken(token: string, maxIdBytes?: number): TaskSortKey {
  if (token.length > MAX_PAGE_TOKEN_LENGTH || !BASE64URL.test(token)) throw badPageToken();
  const text = Buffer.from(token, 'base64url').toString('utf8');
  if (Buffer.from(text, 'utf8').toString('base64url') !== token) throw badPageToken();
  const key = parseJson(text);
  if (!Array.isArray(key) || key.length !== 2) throw badPageToken();
  const [statusMs, id] = key as unknown[];
  if (typeof statusMs !== 'number' || !Number.isSafeInteger(statusMs) || typeof id !== 'string') {
    throw badPageToken();
  }
  if (maxIdBytes !== undefined && !isStorableKey(id, maxIdBytes)) throw badPageToken();
  return { statusMs, id };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw badPageToken();
  }
}

function badPageToken(): A2AError {
  return new A2AError('INVALID_PARAMS', 'Invalid params: pageToken is not valid', { field: 'pageToken' });
}

/**
 * The task's status timestamp in epoch ms, the first half of its sort key.
 *
 * @throws TaskStoreInputError `invalid_timestamp` if it is not a date.
 * @example
 * ```ts
 * statusMsOf(task, 'SqliteTaskStore'); // 1767225600000
 * ```
 */
export function statusMsOf(task: Task, storeName: string): number {
  const { timestamp } = task.status;
  if (timestamp === lastTimestamp) return lastTimestampMs;
  const statusMs = Date.parse(timestamp);
  if (!Number.isFinite(statusMs)) {
    throw new TaskStoreInputError('invalid_timestamp', `${storeName}: task.status.timestamp is not a date`);
  }
  lastTimestamp = timestamp;
  lastTimestampMs = statusMs;
  return statusMs;
}

/**
 * The last status timestamp parsed and its time: the service renders one string per millisecond
 * (`isoNow`), so most puts compare one pointer instead of calling into `Date.parse`. Only
 * timestamps that parsed are kept.
 */
let lastTimestamp = '1970-01-01T00:00:00.000Z';
let lastTimestampMs = 0;

/**
 * The earliest and latest epoch ms a `Date` can hold (±100 000 000 days): every stored status
 * timestamp lies in between, which lets a database store clamp a caller's bound into its
 * integer column's range without changing which tasks match.
 */
const DATE_LIMIT_MS = 8.64e15;

/**
 * `statusTimestampAfter` as the smallest integer epoch ms that matches: status timestamps are
 * whole milliseconds, so `ts >= 1.5` is `ts >= 2`, and a bound beyond any date is clamped to
 * just past it. A database compares integer columns with integer parameters only (a float
 * parameter would not use a PostgreSQL index on a bigint column).
 *
 * @example
 * ```ts
 * statusFloorMs(1.5); // 2
 * statusFloorMs(1e300); // 8640000000000001
 * statusFloorMs(undefined); // -8640000000000000
 * ```
 */
export function statusFloorMs(statusTimestampAfter: number | undefined): number {
  if (statusTimestampAfter === undefined) return -DATE_LIMIT_MS;
  return Math.ceil(Math.min(Math.max(statusTimestampAfter, -DATE_LIMIT_MS), DATE_LIMIT_MS + 1));
}

/**
 * The keyset bound of a list query: tasks strictly before this key in list order. Without a
 * page token it is a key after every task, so that one prepared statement serves both cases.
 *
 * @example
 * ```ts
 * listBound(undefined); // { statusMs: 8640000000000001, id: '' }: before it, every task
 * ```
 */
export function listBound(after: TaskSortKey | undefined): TaskSortKey {
  return after ?? { statusMs: DATE_LIMIT_MS + 1, id: '' };
}

/** NUL and lone surrogates (`\p{Cs}` matches unpaired halves only under the `u` flag). */
const UNSTORABLE_CHARS = /[\0\p{Cs}]/u;

/**
 * Whether a text database column keeps this owner, task id or context id exactly: no NUL
 * (PostgreSQL's text type refuses it) and no lone surrogate (UTF-8 has no form for one, so
 * both drivers would store U+FFFD and two different ids could collide), and at most
 * `maxBytes` of UTF-8 (PostgreSQL refuses a B-tree entry over about 2.7 kB). Every key Airlock
 * makes passes: ids are printable ASCII of at most 256 characters, and owner keys escape
 * control characters and surrogates.
 *
 * @example
 * ```ts
 * isStorableKey('client:app::app@echo', 1024); // true
 * isStorableKey('a\u0000b', 1024); // false
 * ```
 */
export function isStorableKey(value: string, maxBytes: number): boolean {
  // A UTF-16 unit is at most 3 bytes of UTF-8, so most keys skip the byte count.
  if (value.length * 3 > maxBytes && Buffer.byteLength(value, 'utf8') > maxBytes) return false;
  return !UNSTORABLE_CHARS.test(value);
}
