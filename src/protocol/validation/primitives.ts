/**
 * Primitive validators shared by the v1.0 and v0.3 codecs: objects, strings, identifiers,
 * integers, booleans, string lists, JSON values, base64 and URLs, each checked against the
 * size limits in `LIMITS` and reported through the `Ctx` of the side being decoded.
 *
 * Optional fields treat JSON `null` as absent: ProtoJSON defines it that way for v1.0, and
 * some v0.3 clients serialise unset fields as null. Unset is always the safe reading.
 *
 * @example
 * ```ts
 * const id = checkId(params.id, 'id', REQUEST); // throws A2AError INVALID_PARAMS if bad
 * ```
 */
import type { JsonObject, JsonValue } from '../model.js';
import type { Ctx } from './guard.js';

/**
 * A JSON object as it arrives: known keys are read one by one and checked.
 *
 * @example
 * ```ts
 * const rec: Rec = checkRecord(params, 'params', REQUEST);
 * ```
 */
export type Rec = Record<string, unknown>;

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
