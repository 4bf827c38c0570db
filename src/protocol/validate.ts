/**
 * Validation shared by the v1.0 and v0.3 codecs: primitive validators, and the structural
 * decoders (message, artifact, status, task, stream-event bodies, JSON-RPC errors) whose
 * rules are the same in both dialects once parts and enums are decoded.
 *
 * Every validator takes a `Ctx` that says which side we are on. Requests come from untrusted
 * callers and fail with -32602 `INVALID_PARAMS`; results come from remote agents and fail with
 * -32006 `INVALID_AGENT_RESPONSE`. Either way the error names the field path
 * (`message.parts[1].text`) and never echoes the offending value.
 *
 * Optional fields treat JSON `null` as absent: ProtoJSON defines it that way for v1.0, and
 * some v0.3 clients serialise unset fields as null. Unset is always the safe reading.
 *
 * @example
 * ```ts
 * const id = checkId(params.id, 'id', REQUEST); // throws A2AError INVALID_PARAMS if bad
 * ```
 */
import { A2A_ERRORS, A2AError, errorCodeForNumber, invalidParams } from './errors.js';
import type { A2AErrorCode } from './errors.js';
import type {
  Artifact,
  JsonObject,
  JsonValue,
  Message,
  Part,
  Role,
  SendResult,
  Task,
  TaskState,
  TaskStatus,
} from './model.js';

/** A JSON object as it arrives: known keys are read one by one and checked. */
export type Rec = Record<string, unknown>;

/** Which side of the wire we validate for, and how a failure is reported. */
export interface Ctx {
  /** True for a request from an untrusted caller; false for a remote agent's result. */
  readonly inbound: boolean;
  fail(field: string, problem: string): A2AError;
}

/**
 * Server side: a caller's request. Failures are -32602 with the field path.
 *
 * @example
 * ```ts
 * checkString(undefined, 'message.messageId', REQUEST, 256); // throws INVALID_PARAMS
 * ```
 */
export const REQUEST: Ctx = { inbound: true, fail: invalidParams };

/**
 * Client side: a remote agent's result. Failures are -32006 with the field path.
 *
 * @example
 * ```ts
 * checkString(42, 'result.id', RESPONSE, 256); // throws INVALID_AGENT_RESPONSE
 * ```
 */
export const RESPONSE: Ctx = {
  inbound: false,
  fail: (field, problem) =>
    new A2AError('INVALID_AGENT_RESPONSE', `Invalid agent response: ${field} ${problem}`, { field }),
};

/**
 * Size limits. They bound what one request can make us allocate or log; the HTTP layer caps
 * the body size separately.
 *
 * @example
 * ```ts
 * if (parts.length > LIMITS.parts) throw invalidParams('message.parts', 'has too many items');
 * ```
 */
export const LIMITS = {
  /** messageId, contextId, taskId, artifactId, tenant. */
  idLength: 256,
  /** Parts in one message or artifact. */
  parts: 1000,
  /** File URLs and interface URLs. */
  urlLength: 8192,
  pageToken: 1024,
  /** Nesting of `data` and `metadata` values; deeper input is refused before anything recurses on it. */
  jsonDepth: 64,
  mediaTypeLength: 256,
  filenameLength: 1024,
  /** extensions, referenceTaskIds, acceptedOutputModes. */
  listItems: 100,
  listItemLength: 2048,
  /** historyLength is an int32 on the wire. */
  int32Max: 2147483647,
  /** Remote error messages are truncated to this before they travel further. */
  errorMessageLength: 1024,
} as const;

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

// ---------------------------------------------------------------------------------------------
// Primitives

/**
 * The value as a plain JSON object, or undefined for anything else (arrays and null included).
 *
 * @example
 * ```ts
 * asRecord({ a: 1 }); // { a: 1 }
 * asRecord([1]);      // undefined
 * ```
 */
export function asRecord(value: unknown): Rec | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Rec) : undefined;
}

/**
 * True when a field was left out (or sent as null, which means the same).
 *
 * @example
 * ```ts
 * isAbsent(null); // true
 * ```
 */
export function isAbsent(value: unknown): value is undefined | null {
  return value === undefined || value === null;
}

/**
 * A required object.
 *
 * @example
 * ```ts
 * const message = checkRecord(params.message, 'message', REQUEST);
 * ```
 */
export function checkRecord(value: unknown, path: string, ctx: Ctx): Rec {
  const rec = asRecord(value);
  if (rec !== undefined) return withProtoFieldNames(rec);
  throw ctx.fail(path, isAbsent(value) ? 'is required' : 'must be an object');
}

/**
 * A required object whose keys are names chosen by the sender (a map such as
 * `securitySchemes`), read exactly as sent.
 *
 * @example
 * ```ts
 * const schemes = checkMap(card.securitySchemes, 'card.securitySchemes', RESPONSE);
 * ```
 */
export function checkMap(value: unknown, path: string, ctx: Ctx): Rec {
  const rec = asRecord(value);
  if (rec !== undefined) return rec;
  throw ctx.fail(path, isAbsent(value) ? 'is required' : 'must be an object');
}

/**
 * ProtoJSON parsers accept a field's proto name (`history_length`) as well as its JSON name
 * (`historyLength`), and real clients send both spellings. Structural records are read
 * through this; free-form `metadata` and `data` are not, so their keys stay as sent. The
 * JSON name wins when both are present. No copy is made when no key has an underscore.
 *
 * @example
 * ```ts
 * withProtoFieldNames({ history_length: 1 }); // { history_length: 1, historyLength: 1 }
 * ```
 */
export function withProtoFieldNames(rec: Rec): Rec {
  let copy: Rec | undefined;
  for (const key in rec) {
    if (!Object.hasOwn(rec, key) || key.indexOf('_') <= 0) continue;
    const camel = key.replace(/_([a-z0-9])/g, (_match, letter: string) => letter.toUpperCase());
    if (camel === key || Object.hasOwn(rec, camel)) continue;
    copy ??= { ...rec };
    copy[camel] = rec[key];
  }
  return copy ?? rec;
}

/**
 * A required string of `min..max` characters.
 *
 * @example
 * ```ts
 * const messageId = checkString(m.messageId, 'message.messageId', REQUEST, 256, 1);
 * ```
 */
export function checkString(value: unknown, path: string, ctx: Ctx, max: number, min = 0): string {
  if (typeof value !== 'string') throw ctx.fail(path, isAbsent(value) ? 'is required' : 'must be a string');
  if (value.length < min) throw ctx.fail(path, min === 1 ? 'must not be empty' : `must be at least ${min} characters`);
  if (value.length > max) throw ctx.fail(path, `must be at most ${max} characters`);
  return value;
}

/**
 * An optional string of at most `max` characters. With `emptyIsUnset` (ProtoJSON, v1.0) an
 * empty string is the field's default and reads as absent.
 *
 * @example
 * ```ts
 * optString('', 'part.mediaType', REQUEST, 256, true); // undefined
 * ```
 */
export function optString(
  value: unknown,
  path: string,
  ctx: Ctx,
  max: number,
  emptyIsUnset = false,
): string | undefined {
  if (isAbsent(value) || (emptyIsUnset && value === '')) return undefined;
  return checkString(value, path, ctx, max);
}

/** Printable ASCII without spaces: safe in logs, headers, URLs and store keys. */
const ID_PATTERN = /^[\x21-\x7e]+$/;

/**
 * A required identifier (task, context, tenant): 1..256 printable ASCII characters, no spaces.
 *
 * @example
 * ```ts
 * checkId('task-1', 'id', REQUEST);   // 'task-1'
 * checkId('a b', 'id', REQUEST);      // throws: must be printable ASCII without spaces
 * ```
 */
export function checkId(value: unknown, path: string, ctx: Ctx): string {
  const id = checkString(value, path, ctx, LIMITS.idLength, 1);
  if (!ID_PATTERN.test(id)) throw ctx.fail(path, 'must be printable ASCII without spaces');
  return id;
}

/**
 * An optional identifier; see `checkId`.
 *
 * @example
 * ```ts
 * optId(undefined, 'message.contextId', REQUEST); // undefined
 * ```
 */
export function optId(value: unknown, path: string, ctx: Ctx, emptyIsUnset = false): string | undefined {
  if (isAbsent(value) || (emptyIsUnset && value === '')) return undefined;
  return checkId(value, path, ctx);
}

/**
 * An optional integer in `min..max`. Fractions, numeric strings and non-finite numbers fail.
 *
 * @example
 * ```ts
 * optInt(-1, 'historyLength', REQUEST, 0, LIMITS.int32Max); // throws INVALID_PARAMS
 * ```
 */
export function optInt(value: unknown, path: string, ctx: Ctx, min: number, max: number): number | undefined {
  if (isAbsent(value)) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value)) throw ctx.fail(path, 'must be an integer');
  if (value < min || value > max) throw ctx.fail(path, `must be between ${min} and ${max}`);
  return value;
}

/**
 * `historyLength`: unset, or an integer ≥ 0 (0 means "no history", not "unset").
 *
 * @example
 * ```ts
 * optHistoryLength(0, 'historyLength', REQUEST); // 0
 * ```
 */
export function optHistoryLength(value: unknown, path: string, ctx: Ctx): number | undefined {
  return optInt(value, path, ctx, 0, LIMITS.int32Max);
}

/**
 * An optional boolean.
 *
 * @example
 * ```ts
 * optBool('true', 'configuration.blocking', REQUEST); // throws: must be a boolean
 * ```
 */
export function optBool(value: unknown, path: string, ctx: Ctx): boolean | undefined {
  if (isAbsent(value)) return undefined;
  if (typeof value !== 'boolean') throw ctx.fail(path, 'must be a boolean');
  return value;
}

/**
 * An optional array of strings (at most `LIMITS.listItems` items of `LIMITS.listItemLength`).
 * With `ids`, every item must also be a valid identifier.
 *
 * @example
 * ```ts
 * optStringList(['text/plain'], 'configuration.acceptedOutputModes', REQUEST); // ['text/plain']
 * ```
 */
export function optStringList(value: unknown, path: string, ctx: Ctx, ids = false): string[] | undefined {
  if (isAbsent(value)) return undefined;
  if (!Array.isArray(value)) throw ctx.fail(path, 'must be an array of strings');
  if (value.length > LIMITS.listItems) throw ctx.fail(path, `must have at most ${LIMITS.listItems} items`);
  for (let i = 0; i < value.length; i++) {
    const item: unknown = value[i];
    if (ids) checkId(item, `${path}[${i}]`, ctx);
    else checkString(item, `${path}[${i}]`, ctx, LIMITS.listItemLength);
  }
  return value as string[];
}

/**
 * An optional array of strings with no item limit (agent cards: modes, tags, examples).
 *
 * @example
 * ```ts
 * stringArray(undefined, 'skills[0].tags', RESPONSE); // undefined
 * ```
 */
export function stringArray(value: unknown, path: string, ctx: Ctx): string[] | undefined {
  if (isAbsent(value)) return undefined;
  if (!Array.isArray(value)) throw ctx.fail(path, 'must be an array of strings');
  for (let i = 0; i < value.length; i++) {
    if (typeof value[i] !== 'string') throw ctx.fail(`${path}[${i}]`, 'must be a string');
  }
  return value as string[];
}

/**
 * Any JSON value, checked in place (no copy): finite numbers, plain objects and dense arrays,
 * nested at most `LIMITS.jsonDepth` deep. Input from `JSON.parse` always passes the type
 * checks; the depth bound keeps later recursive code (serialisers, loggers) off the stack limit.
 *
 * @example
 * ```ts
 * checkJson({ a: [1, 'x', null] }, 'message.parts[0].data', REQUEST); // returns the same object
 * ```
 */
export function checkJson(value: unknown, path: string, ctx: Ctx): JsonValue {
  if (!isJson(value, 0)) {
    throw ctx.fail(path, `must be JSON nested at most ${LIMITS.jsonDepth} levels deep`);
  }
  return value;
}

function isJson(value: unknown, depth: number): value is JsonValue {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object': {
      if (value === null) return true;
      if (depth >= LIMITS.jsonDepth) return false;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          if (!isJson(value[i], depth + 1)) return false;
        }
        return true;
      }
      const proto: unknown = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) return false;
      for (const key of Object.keys(value)) {
        if (!isJson((value as Rec)[key], depth + 1)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

/**
 * An optional JSON object (`metadata`, Struct in v1.0).
 *
 * @example
 * ```ts
 * optJsonObject([1], 'metadata', REQUEST); // throws: must be an object
 * ```
 */
export function optJsonObject(value: unknown, path: string, ctx: Ctx): JsonObject | undefined {
  if (isAbsent(value)) return undefined;
  if (asRecord(value) === undefined) throw ctx.fail(path, 'must be an object');
  return checkJson(value, path, ctx) as JsonObject;
}

/** Standard or URL-safe alphabet, optional padding (ProtoJSON accepts both for bytes). */
const BASE64_PATTERN = /^[A-Za-z0-9+/_-]*={0,2}$/;

/**
 * True for a base64 string. The bytes are not decoded: this runs once per part on the request
 * path, and the content layer decodes when (and if) it needs the bytes.
 *
 * @example
 * ```ts
 * isBase64('aGk='); // true
 * isBase64('a');    // false (no length is 1 mod 4)
 * ```
 */
export function isBase64(s: string): boolean {
  if (!BASE64_PATTERN.test(s)) return false;
  const padded = s.endsWith('=');
  return padded ? s.length % 4 === 0 : s.length % 4 !== 1;
}

/**
 * A required base64 string.
 *
 * @example
 * ```ts
 * checkBase64('aGk=', 'message.parts[0].raw', REQUEST); // 'aGk='
 * ```
 */
export function checkBase64(value: unknown, path: string, ctx: Ctx): string {
  if (typeof value !== 'string') throw ctx.fail(path, isAbsent(value) ? 'is required' : 'must be a base64 string');
  if (!isBase64(value)) throw ctx.fail(path, 'must be a base64 string');
  return value;
}

/**
 * A required URL string (1..8192 characters). Only the shape is checked here; what a URL may
 * point at (SSRF rules) is decided by the content layer.
 *
 * @example
 * ```ts
 * checkUrl('https://example.com/a.pdf', 'message.parts[0].url', REQUEST);
 * ```
 */
export function checkUrl(value: unknown, path: string, ctx: Ctx): string {
  return checkString(value, path, ctx, LIMITS.urlLength, 1);
}

// ---------------------------------------------------------------------------------------------
// Timestamps

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

// ---------------------------------------------------------------------------------------------
// JSON text (the encoders' fast path)

/**
 * A codec's results as JSON text, written directly rather than built as wire objects and then
 * serialised: `sendResult(r) === JSON.stringify(dialect.encodeSendResult(r))`, byte for byte.
 *
 * @example
 * ```ts
 * const body = `{"jsonrpc":"2.0","id":1,"result":${V03_JSON.sendResult(result)}}`;
 * ```
 */
export interface JsonWriters {
  sendResult(result: SendResult): string;
  task(task: Task): string;
}

/** A string JSON carries as it is: no quote, backslash, control character or surrogate. */
// eslint-disable-next-line no-control-regex
const PLAIN_JSON_STRING = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;

/**
 * `JSON.stringify(value)` for a string; the common string needs no escaping and skips the
 * general serialiser.
 *
 * @example
 * ```ts
 * jsonString('hi');     // '"hi"'
 * jsonString('say "x"'); // '"say \\"x\\""'
 * ```
 */
export function jsonString(value: string): string {
  return PLAIN_JSON_STRING.test(value) ? `"${value}"` : JSON.stringify(value);
}

/**
 * The fields after `parts` that both dialects write alike for a message: `,"contextId":…`,
 * `,"taskId":…`, `,"metadata":…`, `,"extensions":…`, `,"referenceTaskIds":…`, each only when set.
 *
 * @example
 * ```ts
 * messageTailJson({ messageId: 'm', role: 'user', parts: [], taskId: 't' }); // ',"taskId":"t"'
 * ```
 */
export function messageTailJson(message: Message): string {
  let out = '';
  if (message.contextId !== undefined) out += `,"contextId":${jsonString(message.contextId)}`;
  if (message.taskId !== undefined) out += `,"taskId":${jsonString(message.taskId)}`;
  if (message.metadata !== undefined) out += `,"metadata":${JSON.stringify(message.metadata)}`;
  if (message.extensions !== undefined) out += `,"extensions":${JSON.stringify(message.extensions)}`;
  if (message.referenceTaskIds !== undefined) out += `,"referenceTaskIds":${JSON.stringify(message.referenceTaskIds)}`;
  return out;
}

/**
 * `,"key":[…]` for a non-empty list written item by item, or `''` for an empty one (the
 * codecs omit empty lists, as ProtoJSON does).
 *
 * @example
 * ```ts
 * jsonListField('history', task.history, writeMessage); // ',"history":[{…},{…}]'
 * ```
 */
export function jsonListField<T>(key: string, items: readonly T[], write: (item: T) => string): string {
  return items.length === 0 ? '' : `,"${key}":${jsonArray(items, write)}`;
}

/**
 * `[…]`: a list written item by item.
 *
 * @example
 * ```ts
 * jsonArray(['a', 'b'], jsonString); // '["a","b"]'
 * ```
 */
export function jsonArray<T>(items: readonly T[], write: (item: T) => string): string {
  let out = '[';
  for (let i = 0; i < items.length; i++) {
    if (i > 0) out += ',';
    out += write(items[i] as T);
  }
  return `${out}]`;
}

// ---------------------------------------------------------------------------------------------
// Error safety net

/**
 * Runs a decoder and guarantees that only `A2AError` escapes. The validators above throw
 * nothing else by design; this turns a bug (say a TypeError on exotic input) into a clean
 * protocol error instead of a 500 with a stack trace.
 *
 * @example
 * ```ts
 * return guard(REQUEST, () => decodeParams(params));
 * ```
 */
export function guard<T>(ctx: Ctx, decode: () => T): T {
  try {
    return decode();
  } catch (error) {
    if (error instanceof A2AError) throw error;
    const code = ctx.inbound ? 'INVALID_PARAMS' : 'INVALID_AGENT_RESPONSE';
    throw new A2AError(code, undefined, { cause: error });
  }
}

/**
 * A `kind` discriminator (v0.3): absent is accepted, a different value is refused.
 *
 * @example
 * ```ts
 * checkKind('task', 'message', 'message.kind', REQUEST); // throws: must be "message"
 * ```
 */
export function checkKind(value: unknown, expected: string, path: string, ctx: Ctx): void {
  if (isAbsent(value) || value === expected) return;
  throw ctx.fail(path, `must be "${expected}"`);
}

// ---------------------------------------------------------------------------------------------
// Structures shared by both dialects

/**
 * What differs between the dialects inside messages, artifacts and tasks. Each codec supplies
 * one; the structural decoders below do the rest.
 *
 * @example
 * ```ts
 * const message = decodeMessage(V10_WIRE, params.message, 'message', REQUEST);
 * ```
 */
export interface WireFormat {
  /** v0.3 tags messages and tasks with `kind` (checked when present). */
  readonly kindTags: boolean;
  /** ProtoJSON (v1.0): an empty string is the default value and reads as unset. */
  readonly emptyIsUnset: boolean;
  /** v0.3 requires `contextId` on a task; v1.0 makes it optional (absent → ''). */
  readonly taskContextRequired: boolean;
  decodePart(value: unknown, path: string, ctx: Ctx): Part;
  decodeRole(value: unknown, path: string, ctx: Ctx): Role;
  decodeState(value: unknown, path: string, ctx: Ctx): TaskState;
}

/**
 * Sets the optional fields every part may carry; undefined ones stay absent.
 *
 * @example
 * ```ts
 * setPartExtras({ kind: 'raw', raw: 'aGk=' }, 'text/plain', 'hi.txt', undefined);
 * ```
 */
export function setPartExtras<P extends Part>(
  part: P,
  mediaType: string | undefined,
  filename: string | undefined,
  metadata: JsonObject | undefined,
): P {
  if (mediaType !== undefined) part.mediaType = mediaType;
  if (filename !== undefined) part.filename = filename;
  if (metadata !== undefined) part.metadata = metadata;
  return part;
}

/**
 * A parts array. Requests need 1..1000 parts; remote results may carry none (some agents
 * send empty status messages or empty append chunks) but never more than 1000.
 *
 * @example
 * ```ts
 * const parts = decodeParts(V03_WIRE, m.parts, 'message.parts', REQUEST);
 * ```
 */
export function decodeParts(w: WireFormat, value: unknown, path: string, ctx: Ctx): Part[] {
  if (!Array.isArray(value)) throw ctx.fail(path, isAbsent(value) ? 'is required' : 'must be an array');
  if (ctx.inbound && value.length === 0) throw ctx.fail(path, 'must not be empty');
  if (value.length > LIMITS.parts) throw ctx.fail(path, `must have at most ${LIMITS.parts} items`);
  // map, not push: the array is exactly as long as its parts, and a stored message keeps it.
  return (value as unknown[]).map((item, i) => w.decodePart(item, `${path}[${i}]`, ctx));
}

/**
 * A message. In a request the role must be the user's: a caller never speaks as the agent,
 * and a missing role is refused rather than guessed.
 *
 * @example
 * ```ts
 * decodeMessage(V10_WIRE, { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi' }] }, 'message', REQUEST);
 * ```
 */
export function decodeMessage(w: WireFormat, value: unknown, path: string, ctx: Ctx): Message {
  const rec = checkRecord(value, path, ctx);
  if (w.kindTags) checkKind(rec.kind, 'message', `${path}.kind`, ctx);
  const messageId = checkString(rec.messageId, `${path}.messageId`, ctx, LIMITS.idLength, 1);
  const role = w.decodeRole(rec.role, `${path}.role`, ctx);
  if (ctx.inbound && role !== 'user') throw ctx.fail(`${path}.role`, 'must be the user role');
  const parts = decodeParts(w, rec.parts, `${path}.parts`, ctx);
  const message: Message = { messageId, role, parts };
  const contextId = optId(rec.contextId, `${path}.contextId`, ctx, w.emptyIsUnset);
  if (contextId !== undefined) message.contextId = contextId;
  const taskId = optId(rec.taskId, `${path}.taskId`, ctx, w.emptyIsUnset);
  if (taskId !== undefined) message.taskId = taskId;
  const metadata = optJsonObject(rec.metadata, `${path}.metadata`, ctx);
  if (metadata !== undefined) message.metadata = metadata;
  const extensions = optStringList(rec.extensions, `${path}.extensions`, ctx);
  if (extensions !== undefined) message.extensions = extensions;
  const references = optStringList(rec.referenceTaskIds, `${path}.referenceTaskIds`, ctx, true);
  if (references !== undefined) message.referenceTaskIds = references;
  return message;
}

/**
 * An artifact.
 *
 * @example
 * ```ts
 * decodeArtifact(V10_WIRE, { artifactId: 'a1', parts: [{ text: 'x' }] }, 'artifact', RESPONSE);
 * ```
 */
export function decodeArtifact(w: WireFormat, value: unknown, path: string, ctx: Ctx): Artifact {
  const rec = checkRecord(value, path, ctx);
  const artifactId = checkString(rec.artifactId, `${path}.artifactId`, ctx, LIMITS.idLength, 1);
  const parts = decodeParts(w, rec.parts, `${path}.parts`, ctx);
  const artifact: Artifact = { artifactId, parts };
  const name = optString(rec.name, `${path}.name`, ctx, LIMITS.listItemLength, w.emptyIsUnset);
  if (name !== undefined) artifact.name = name;
  const description = optString(rec.description, `${path}.description`, ctx, Infinity, w.emptyIsUnset);
  if (description !== undefined) artifact.description = description;
  const metadata = optJsonObject(rec.metadata, `${path}.metadata`, ctx);
  if (metadata !== undefined) artifact.metadata = metadata;
  const extensions = optStringList(rec.extensions, `${path}.extensions`, ctx);
  if (extensions !== undefined) artifact.extensions = extensions;
  return artifact;
}

/**
 * A task status. A missing timestamp becomes `UNKNOWN_TIMESTAMP` (see there for why).
 *
 * @example
 * ```ts
 * decodeStatus(V03_WIRE, { state: 'working' }, 'status', RESPONSE);
 * ```
 */
export function decodeStatus(w: WireFormat, value: unknown, path: string, ctx: Ctx): TaskStatus {
  const rec = checkRecord(value, path, ctx);
  const state = w.decodeState(rec.state, `${path}.state`, ctx);
  const timestamp = statusTimestamp(rec.timestamp, `${path}.timestamp`, ctx);
  const status: TaskStatus = { state, timestamp };
  if (!isAbsent(rec.message)) status.message = decodeMessage(w, rec.message, `${path}.message`, ctx);
  return status;
}

function decodeList<T>(
  value: unknown,
  path: string,
  ctx: Ctx,
  decodeItem: (item: unknown, itemPath: string) => T,
): T[] {
  if (isAbsent(value)) return [];
  if (!Array.isArray(value)) throw ctx.fail(path, 'must be an array');
  const out: T[] = [];
  for (let i = 0; i < value.length; i++) out.push(decodeItem(value[i], `${path}[${i}]`));
  return out;
}

/**
 * A task (client side). Missing `artifacts`/`history` become `[]`.
 *
 * @example
 * ```ts
 * decodeTaskWith(V10_WIRE, { id: 't1', status: { state: 'TASK_STATE_WORKING' } }, 'result', RESPONSE);
 * ```
 */
export function decodeTaskWith(w: WireFormat, value: unknown, path: string, ctx: Ctx): Task {
  const rec = checkRecord(value, path, ctx);
  if (w.kindTags) checkKind(rec.kind, 'task', `${path}.kind`, ctx);
  const id = checkId(rec.id, `${path}.id`, ctx);
  const contextId = w.taskContextRequired
    ? checkId(rec.contextId, `${path}.contextId`, ctx)
    : (optId(rec.contextId, `${path}.contextId`, ctx, true) ?? '');
  const status = decodeStatus(w, rec.status, `${path}.status`, ctx);
  const artifacts = decodeList(rec.artifacts, `${path}.artifacts`, ctx, (item, p) => decodeArtifact(w, item, p, ctx));
  const history = decodeList(rec.history, `${path}.history`, ctx, (item, p) => decodeMessage(w, item, p, ctx));
  const task: Task = { id, contextId, status, artifacts, history };
  const metadata = optJsonObject(rec.metadata, `${path}.metadata`, ctx);
  if (metadata !== undefined) task.metadata = metadata;
  return task;
}

/**
 * A list of tasks (ListTasks results).
 *
 * @example
 * ```ts
 * const tasks = decodeTaskList(V10_WIRE, result.tasks, 'result.tasks', RESPONSE);
 * ```
 */
export function decodeTaskList(w: WireFormat, value: unknown, path: string, ctx: Ctx): Task[] {
  return decodeList(value, path, ctx, (item, p) => decodeTaskWith(w, item, p, ctx));
}

/** The fields shared by status-update and artifact-update events. */
export interface EventHead {
  taskId: string;
  contextId: string;
  metadata?: JsonObject;
}

/**
 * `taskId`, `contextId` and `metadata` of a stream event.
 *
 * @example
 * ```ts
 * const head = decodeEventHead(rec, 'result.statusUpdate', RESPONSE);
 * ```
 */
export function decodeEventHead(rec: Rec, path: string, ctx: Ctx): EventHead {
  const head: EventHead = {
    taskId: checkId(rec.taskId, `${path}.taskId`, ctx),
    contextId: checkId(rec.contextId, `${path}.contextId`, ctx),
  };
  const metadata = optJsonObject(rec.metadata, `${path}.metadata`, ctx);
  if (metadata !== undefined) head.metadata = metadata;
  return head;
}

// ---------------------------------------------------------------------------------------------
// JSON-RPC errors from a remote

const ERROR_INFO_TYPE = 'type.googleapis.com/google.rpc.ErrorInfo';
const BAD_REQUEST_TYPE = 'type.googleapis.com/google.rpc.BadRequest';

/**
 * Type URLs of the v1.0 error details.
 *
 * @example
 * ```ts
 * data.push({ '@type': ERROR_DETAIL_TYPES.errorInfo, reason, domain: A2A_ERROR_DOMAIN });
 * ```
 */
export const ERROR_DETAIL_TYPES = { errorInfo: ERROR_INFO_TYPE, badRequest: BAD_REQUEST_TYPE } as const;

/** The ErrorInfo `domain` of A2A errors (§9.5). */
export const A2A_ERROR_DOMAIN = 'a2a-protocol.org';

/** Reason → code (the inverse of `errorReason`), for remote errors whose number is not ours. */
function codeForReason(reason: string): A2AErrorCode | undefined {
  if (reason === 'JSON_PARSE_ERROR') return 'JSON_PARSE';
  return Object.hasOwn(A2A_ERRORS, reason) ? (reason as A2AErrorCode) : undefined;
}

/** Drops control characters and caps the length of text a remote chose. */
function cleanRemoteText(text: string): string {
  // eslint-disable-next-line no-control-regex
  const clean = text.replace(/[\u0000-\u001f\u007f]+/g, ' ');
  return clean.length > LIMITS.errorMessageLength ? `${clean.slice(0, LIMITS.errorMessageLength)}…` : clean;
}

/**
 * A remote's JSON-RPC `error` member as an `A2AError`. Known numbers map to their code, an
 * unknown number falls back on a v1.0 ErrorInfo `reason` and then on INTERNAL; a malformed
 * error object becomes INVALID_AGENT_RESPONSE. A BadRequest field violation becomes `field`.
 * The remote's message is kept (cleaned and truncated) because it is what explains the failure.
 * Never throws.
 *
 * @example
 * ```ts
 * decodeRpcError({ code: -32001, message: 'Task not found' }).code; // 'TASK_NOT_FOUND'
 * ```
 */
export function decodeRpcError(error: unknown): A2AError {
  const rec = asRecord(error);
  if (rec === undefined || typeof rec.code !== 'number' || !Number.isInteger(rec.code)) {
    return new A2AError('INVALID_AGENT_RESPONSE', 'The agent sent a malformed JSON-RPC error');
  }
  let code = errorCodeForNumber(rec.code);
  let field: string | undefined;
  if (Array.isArray(rec.data)) {
    for (const detail of rec.data) {
      const d = asRecord(detail);
      if (d === undefined) continue;
      if (d['@type'] === ERROR_INFO_TYPE && code === undefined && typeof d.reason === 'string') {
        code = codeForReason(d.reason);
      } else if (d['@type'] === BAD_REQUEST_TYPE && field === undefined && Array.isArray(d.fieldViolations)) {
        const first = asRecord(d.fieldViolations[0]);
        if (first !== undefined && typeof first.field === 'string' && first.field.length <= LIMITS.listItemLength) {
          field = cleanRemoteText(first.field);
        }
      }
    }
  }
  const message = typeof rec.message === 'string' && rec.message.length > 0 ? cleanRemoteText(rec.message) : undefined;
  return new A2AError(code ?? 'INTERNAL', message, field === undefined ? undefined : { field });
}
