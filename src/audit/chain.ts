/**
 * The row format and hash chain shared by every sink and by `verifyAuditFile`.
 *
 * A row is one line of UTF-8 JSON terminated by `\n` (0x0A):
 *
 * ```text
 * {"seq":<n>,"prev":"<64 hex>",<event fields…>,"hash":"<64 hex>"}\n
 * ```
 *
 * 1. `body` = `JSON.stringify({ seq, prev, ...event })`: `seq` first, `prev` second, then the
 *    event's own keys in insertion order (JSON.stringify output: no white space, non-ASCII as
 *    is, lone surrogates escaped, so the bytes are always valid UTF-8).
 * 2. `hash` = lowercase hex SHA-256 of the UTF-8 bytes of `body`.
 * 3. The line is `body` without its final `}`, then `,"hash":"<hash>"}` — so `hash` is always
 *    the last 75 bytes before the newline, and `body` is recovered from the line's bytes as
 *    `line[0 .. len-75] + "}"`.
 * 4. `seq` is 1 on the first row of a file and increases by exactly 1 per row (so it equals the
 *    line number); `prev` is the previous row's `hash`, and 64 zeros on the first row.
 *
 * So every byte of row n is covered by row n's own `hash` (the body bytes are hashed, the
 * hash bytes are compared), and row n's `hash` is bound into row n+1 by `prev`: editing any
 * byte is reported at the row that holds it, and deleting, inserting or reordering rows is
 * reported at the first row out of place (by `seq`/`prev`). What a plain hash chain cannot
 * show: the removal of whole rows from the end of the file, or a complete rewrite by someone
 * who recomputes every hash from the edit onwards. Anchor the head (`lastHash`, or the last
 * row's `seq` and `hash`) somewhere else if that matters.
 *
 * @example
 * ```ts
 * const row = encodeRow(GENESIS_HEAD, event); // row.seq === 1, row.bytes ends with '\n'
 * checkLine(row.bytes.subarray(0, -1));       // { ok: true, seq: 1, prev: '000…', hash: row.hash }
 * ```
 */
import { createHash, hash as oneShotHash } from 'node:crypto';
import { jsonString } from '../protocol/json-text.js';
import type { AuditEvent } from './events.js';
import { RowBuffer } from './row-buffer.js';
import { assertAuditSafe, AuditUnsafeEventError } from './safety.js';

/** `prev` of the first row of a file. */
export const GENESIS_PREV = '0'.repeat(64);
/** Longest row, in bytes without the newline; the writers refuse longer rows, `verify` reports them. */
export const MAX_LINE_BYTES = 64 * 1024;

/** Where a chain stands: the last row's `seq` and `hash` (0 and `GENESIS_PREV` before any row). */
export interface ChainHead {
  seq: number;
  hash: string;
}

export const GENESIS_HEAD: Readonly<ChainHead> = Object.freeze({ seq: 0, hash: GENESIS_PREV });

export interface EncodedRow {
  seq: number;
  hash: string;
  /** The line without its newline. */
  line: string;
  /** The exact bytes to append: the line's UTF-8 and `\n`. */
  bytes: Buffer;
}

const HASH_KEY = ',"hash":"';
const HASH_KEY_BYTES = Buffer.from(HASH_KEY, 'latin1');
/** `,"hash":"` + 64 hex + `"}` */
const SUFFIX_LENGTH = HASH_KEY.length + 64 + 2;
const HEX64 = /^[0-9a-f]{64}$/;
const CLOSE_BRACE = Buffer.from('}', 'latin1');
const QUOTE = 0x22;
const BRACE = 0x7d;

/** Where the one-row encoders write: {@link appendRow} is the only writer of the row format. */
const scratch = new RowBuffer();

/**
 * The row that follows `head`. Runs `assertAuditSafe` first: every sink writes through here
 * (or through {@link appendRow}, which this calls), so no sink can skip the guard.
 *
 * @throws AuditUnsafeEventError for an unsafe event or a row over `MAX_LINE_BYTES`
 */
export function encodeRow(head: Readonly<ChainHead>, event: AuditEvent): EncodedRow {
  try {
    const { seq, hash } = appendRow(scratch, head, event);
    const bytes = Buffer.from(scratch.bytes());
    return { seq, hash, line: bytes.toString('utf8', 0, bytes.length - 1), bytes };
  } finally {
    scratch.clear();
  }
}

/**
 * {@link encodeRow} without the bytes: the row as a string, for whoever keeps rows as text.
 *
 * @throws AuditUnsafeEventError for an unsafe event or a row over `MAX_LINE_BYTES`
 */
export function encodeLine(head: Readonly<ChainHead>, event: AuditEvent): Omit<EncodedRow, 'bytes'> {
  const { seq, hash, line } = encodeRow(head, event);
  return { seq, hash, line };
}

/**
 * The row that follows `head`, with its newline, appended to `rows`: the one writer of the row
 * format (steps 1–3 above). The body is written as UTF-8 and hashed where it lies, so group
 * commit makes no string per row and no joined copy of the batch. Returns the new head; on a
 * throw nothing is appended.
 *
 * @throws AuditUnsafeEventError for an unsafe event or a row over `MAX_LINE_BYTES`
 *
 * @example
 * ```ts
 * const rows = new RowBuffer();
 * const head = appendRow(rows, GENESIS_HEAD, event); // head.seq === 1
 * rows.bytes().equals(encodeRow(GENESIS_HEAD, event).bytes); // true
 * ```
 */
export function appendRow(rows: RowBuffer, head: Readonly<ChainHead>, event: AuditEvent): ChainHead {
  assertAuditSafe(event);
  const seq = head.seq + 1;
  // The body is JSON.stringify({ seq, prev, ...event }) (the event may not carry `seq` or
  // `prev`: assertAuditSafe refuses unknown keys), without copying the event: written as UTF-8
  // where the row goes (a UTF-16 code unit takes at most 3 bytes; lone surrogates are escaped),
  // then hashed there, then its closing brace replaced by the hash suffix.
  const fields = JSON.stringify(event);
  // One write of one string: the prefix and the event's fields joined (a second write of the
  // fields alone cost ~0.1 µs a row more).
  const body = `{"seq":${seq},"prev":${jsonString(head.hash)}${fields.length > 2 ? ',' : ''}${fields.slice(1)}`;
  const start = rows.length;
  const buffer = rows.reserve(body.length * 3 + SUFFIX_LENGTH);
  let end = start + buffer.write(body, start, 'utf8');
  // One-shot `crypto.hash` (Node 20.12+, the engines floor): no Hash object per row.
  const hash = oneShotHash('sha256', buffer.subarray(start, end), 'hex');
  end -= 1; // the body's closing brace: the hash goes before it
  end += buffer.write(`${HASH_KEY}${hash}"}\n`, end, 'latin1');
  if (end - start - 1 > MAX_LINE_BYTES) throw new AuditUnsafeEventError('', `row longer than ${MAX_LINE_BYTES} bytes`);
  rows.commit(end);
  return { seq, hash };
}

export type LineProblem = 'bad_format' | 'bad_hash' | 'bad_json';

export type LineCheck = { ok: true; seq: number; prev: string; hash: string } | { ok: false; reason: LineProblem };

/**
 * Checks one line on its own (bytes without the newline): the hash suffix is where it must be,
 * the body hashes to it, and the line is a JSON object with an integer `seq` and a string
 * `prev`. Whether `seq` and `prev` fit the previous row is the caller's business.
 */
export function checkLine(line: Buffer): LineCheck {
  const length = line.length;
  if (length <= SUFFIX_LENGTH + 1 || line[0] !== 0x7b || line[length - 1] !== BRACE || line[length - 2] !== QUOTE) {
    return { ok: false, reason: 'bad_format' };
  }
  const at = length - SUFFIX_LENGTH;
  if (!line.subarray(at, at + HASH_KEY_BYTES.length).equals(HASH_KEY_BYTES)) return { ok: false, reason: 'bad_format' };
  const hash = line.toString('latin1', at + HASH_KEY_BYTES.length, length - 2);
  if (!HEX64.test(hash)) return { ok: false, reason: 'bad_format' };
  const digest = createHash('sha256').update(line.subarray(0, at)).update(CLOSE_BRACE).digest('hex');
  if (digest !== hash) return { ok: false, reason: 'bad_hash' };
  let row: unknown;
  try {
    row = JSON.parse(line.toString('utf8'));
  } catch {
    return { ok: false, reason: 'bad_json' };
  }
  if (typeof row !== 'object' || row === null || Array.isArray(row)) return { ok: false, reason: 'bad_json' };
  const { seq, prev } = row as { seq?: unknown; prev?: unknown };
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || typeof prev !== 'string') {
    return { ok: false, reason: 'bad_format' };
  }
  return { ok: true, seq, prev, hash };
}
