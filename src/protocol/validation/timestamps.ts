/**
 * Timestamps on the wire: ISO 8601 / RFC 3339 parsing with range checks, the request-side
 * check (`statusTimestampAfter`), and the normalisation of a remote's status timestamp.
 *
 * @example
 * ```ts
 * parseTimestamp('2026-01-02T03:04:05Z'); // 1767323045000
 * ```
 */
import type { Ctx } from './guard.js';
import { isAbsent } from './primitives.js';

/**
 * The status timestamp used when a remote omits one. The canonical model requires a
 * timestamp, and inventing "now" would make decoding non-deterministic and make a stale
 * status look fresh (it would sort first in ListTasks). The Unix epoch is deterministic,
 * sorts as the oldest possible value, and is easy to recognise as "unknown".
 *
 * @example
 * ```ts
 * decodeStatus(w, { state: 'working' }, 'status', RESPONSE).timestamp === UNKNOWN_TIMESTAMP;
 * ```
 */
export const UNKNOWN_TIMESTAMP = '1970-01-01T00:00:00.000Z';

/**
 * ISO 8601 / RFC 3339 date-time: seconds required, up to 9 fraction digits, `T`, `t` or a
 * space between date and time, `Z` or an offset. No offset means UTC: v0.3 examples omit the
 * `Z`, and `Date.parse` would otherwise read such a value in the host's local time zone.
 */
const TIMESTAMP_PATTERN =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):?(\d{2}))?$/;

const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Epoch milliseconds of an ISO 8601 timestamp, or undefined if it is not one. Fields are
 * range-checked (`Date.parse` rolls Feb 30 over to March).
 *
 * @example
 * ```ts
 * parseTimestamp('2026-01-02T03:04:05Z');      // 1767323045000
 * parseTimestamp('2026-01-02T03:04:05');       // the same: no offset means UTC
 * parseTimestamp('2026-02-30T00:00:00Z');      // undefined
 * ```
 */
export function parseTimestamp(text: string): number | undefined {
  const m = TIMESTAMP_PATTERN.exec(text);
  if (m === null) return undefined;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  const hour = Number(m[4]);
  const minute = Number(m[5]);
  const second = Number(m[6]);
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  const isLeap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const maxDay = month === 2 && !isLeap ? 28 : (DAYS_IN_MONTH[month - 1] ?? 31);
  if (day > maxDay) return undefined;
  const millis = m[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, '0'));
  // Date.UTC maps years 0..99 to 19xx; setUTCFullYear does not.
  const date = new Date(Date.UTC(2000, month - 1, day, hour, minute, second, millis));
  date.setUTCFullYear(year);
  let ms = date.getTime();
  if (m[9] !== undefined) {
    const offsetHours = Number(m[10]);
    const offsetMinutes = Number(m[11]);
    if (offsetHours > 23 || offsetMinutes > 59) return undefined;
    const offset = (offsetHours * 60 + offsetMinutes) * 60_000;
    ms = m[9] === '+' ? ms - offset : ms + offset;
  }
  return Number.isFinite(ms) ? ms : undefined;
}

/**
 * A required timestamp as epoch milliseconds.
 *
 * @example
 * ```ts
 * checkTimestamp('2026-01-01T00:00:00Z', 'statusTimestampAfter', REQUEST); // 1767225600000
 * ```
 */
export function checkTimestamp(value: unknown, path: string, ctx: Ctx): number {
  if (typeof value !== 'string') throw ctx.fail(path, isAbsent(value) ? 'is required' : 'must be a string');
  const ms = parseTimestamp(value);
  if (ms === undefined) throw ctx.fail(path, 'must be an ISO 8601 timestamp');
  return ms;
}

/**
 * A status timestamp from a remote, normalised to the canonical `toISOString()` form
 * (UTC, milliseconds, `Z`). Absent or empty → `UNKNOWN_TIMESTAMP`.
 *
 * @example
 * ```ts
 * statusTimestamp('2026-01-01T10:00:00', 'status.timestamp', RESPONSE); // '2026-01-01T10:00:00.000Z'
 * ```
 */
export function statusTimestamp(value: unknown, path: string, ctx: Ctx): string {
  if (isAbsent(value) || value === '') return UNKNOWN_TIMESTAMP;
  const ms = checkTimestamp(value, path, ctx);
  const date = new Date(ms);
  // Only four-digit years have a plain ISO rendering; the pattern admits nothing else.
  return date.toISOString();
}
