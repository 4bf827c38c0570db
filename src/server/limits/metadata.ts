/**
 * Limits on what a caller makes Airlock keep with a message besides its text: `metadata` on the
 * message and on every part, `extensions`, `referenceTaskIds`, and the parts' `filename` and
 * `mediaType`. All of it is stored with the task (history), so it is counted like the text is
 * (`maxInputChars`), against its own cap.
 *
 * Size is the JSON size in UTF-8 bytes (strings without escapes, which only make the wire form
 * larger); keys are object keys plus array items, all values together (what makes a small JSON
 * text cost many heap objects); depth is one value's nesting. The walk stops at the first limit
 * passed, so it costs at most what the caps allow, and it allocates nothing when the message is
 * within them.
 *
 * @example
 * ```ts
 * const error = checkMetadataLimits(message, { maxMetadataBytes: 4096, maxMetadataKeys: 128, maxMetadataDepth: 8 });
 * if (error !== undefined) audit.rejected(ctx, error.reason);
 * ```
 */
import { A2AError } from '../../protocol/errors.js';
import type { JsonValue, Message } from '../../protocol/model.js';

/** Why a message's metadata was refused, for the audit log. */
export type MetadataLimitReason = 'metadata_too_large' | 'metadata_too_many_keys' | 'metadata_too_deep';

/** The limits {@link checkMetadataLimits} applies (a subset of the `limits` config). */
export interface MetadataLimits {
  maxMetadataBytes: number;
  maxMetadataKeys: number;
  maxMetadataDepth: number;
}

/**
 * An INVALID_PARAMS error that also carries the audit reason; its message names the setting.
 *
 * @example
 * ```ts
 * if (error instanceof MetadataLimitError) audit.rejected(ctx, error.reason);
 * ```
 */
export class MetadataLimitError extends A2AError {
  readonly reason: MetadataLimitReason;

  constructor(reason: MetadataLimitReason, message: string) {
    super('INVALID_PARAMS', message, { field: 'message.metadata' });
    this.reason = reason;
  }
}

/** Running totals of one walk; `over` is set once a limit is passed (the walk stops). */
interface Tally {
  bytes: number;
  keys: number;
  over: MetadataLimitReason | undefined;
}

/**
 * The first limit the message's stored extras break, or undefined.
 *
 * @example
 * ```ts
 * checkMetadataLimits({ messageId: 'm', role: 'user', parts: [{ kind: 'text', text: 'hi' }], metadata: { a: 1 } },
 *   { maxMetadataBytes: 4096, maxMetadataKeys: 128, maxMetadataDepth: 8 }); // undefined
 * ```
 */
export function checkMetadataLimits(message: Message, limits: MetadataLimits): MetadataLimitError | undefined {
  const tally: Tally = { bytes: 0, keys: 0, over: undefined };
  if (message.metadata !== undefined) walk(message.metadata, 1, tally, limits);
  if (message.extensions !== undefined) strings(message.extensions, tally, limits);
  if (message.referenceTaskIds !== undefined) strings(message.referenceTaskIds, tally, limits);
  const parts = message.parts;
  for (let i = 0; i < parts.length && tally.over === undefined; i++) {
    const part = parts[i] as Message['parts'][number];
    if (part.metadata !== undefined) walk(part.metadata, 1, tally, limits);
    if (part.filename !== undefined) add(tally, Buffer.byteLength(part.filename, 'utf8') + 2, limits);
    if (part.mediaType !== undefined) add(tally, Buffer.byteLength(part.mediaType, 'utf8') + 2, limits);
  }
  switch (tally.over) {
    case undefined:
      return undefined;
    case 'metadata_too_large':
      return new MetadataLimitError(
        'metadata_too_large',
        `Message metadata (with extensions, referenceTaskIds, part metadata) is over ${limits.maxMetadataBytes} bytes; at most limits.maxMetadataBytes = ${limits.maxMetadataBytes} are accepted`,
      );
    case 'metadata_too_many_keys':
      return new MetadataLimitError(
        'metadata_too_many_keys',
        `Message metadata has over ${limits.maxMetadataKeys} keys and items; at most limits.maxMetadataKeys = ${limits.maxMetadataKeys} are accepted`,
      );
    case 'metadata_too_deep':
      return new MetadataLimitError(
        'metadata_too_deep',
        `Message metadata is nested deeper than ${limits.maxMetadataDepth}; at most limits.maxMetadataDepth = ${limits.maxMetadataDepth} is accepted`,
      );
  }
}

function add(tally: Tally, bytes: number, limits: MetadataLimits): void {
  tally.bytes += bytes;
  if (tally.bytes > limits.maxMetadataBytes && tally.over === undefined) tally.over = 'metadata_too_large';
}

function count(tally: Tally, limits: MetadataLimits): void {
  tally.keys++;
  if (tally.keys > limits.maxMetadataKeys && tally.over === undefined) tally.over = 'metadata_too_many_keys';
}

/** A list of strings (extensions, referenceTaskIds): `["a","b"]`; each item counts as a key. */
function strings(list: readonly string[], tally: Tally, limits: MetadataLimits): void {
  add(tally, 2 + Math.max(0, list.length - 1), limits);
  for (let i = 0; i < list.length && tally.over === undefined; i++) {
    count(tally, limits);
    add(tally, Buffer.byteLength(list[i] as string, 'utf8') + 2, limits);
  }
}

/** Adds one JSON value's size and keys; stops as soon as a limit is passed. */
function walk(value: JsonValue, depth: number, tally: Tally, limits: MetadataLimits): void {
  if (value === null) return add(tally, 4, limits);
  switch (typeof value) {
    case 'string':
      return add(tally, Buffer.byteLength(value, 'utf8') + 2, limits);
    case 'number':
      // Integers without making a string; anything else as JSON writes it.
      return add(
        tally,
        Number.isInteger(value) && Math.abs(value) < 1e15 ? digits(value) : String(value).length,
        limits,
      );
    case 'boolean':
      return add(tally, value ? 4 : 5, limits);
  }
  if (depth > limits.maxMetadataDepth) {
    tally.over ??= 'metadata_too_deep';
    return;
  }
  if (Array.isArray(value)) {
    add(tally, 2 + Math.max(0, value.length - 1), limits);
    for (let i = 0; i < value.length && tally.over === undefined; i++) {
      count(tally, limits);
      walk(value[i] as JsonValue, depth + 1, tally, limits);
    }
    return;
  }
  add(tally, 2, limits);
  let first = true;
  for (const key in value) {
    if (tally.over !== undefined) return;
    if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
    count(tally, limits);
    // "key": plus a comma before every key but the first.
    add(tally, Buffer.byteLength(key, 'utf8') + (first ? 3 : 4), limits);
    first = false;
    walk(value[key] as JsonValue, depth + 1, tally, limits);
  }
}

function digits(value: number): number {
  let n = value < 0 ? 2 : 1;
  let rest = Math.abs(value);
  while (rest >= 10) {
    rest = Math.floor(rest / 10);
    n++;
  }
  return n;
}
