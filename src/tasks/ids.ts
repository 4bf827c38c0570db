/**
 * Ids and timestamps minted on the request path: UUIDs (random v4; time-ordered v7 for task ids)
 * and ISO 8601 times.
 *
 * @example
 * ```ts
 * const task = { id: newId(), status: { state: 'submitted', timestamp: isoNow() } };
 * ```
 */
import { randomFillSync } from 'node:crypto';

/** UUIDs made per fill of random bytes (randomUUID fills for 128; a larger fill costs less per UUID). */
const UUID_BATCH = 1024;
const uuidBytes = Buffer.alloc(16 * UUID_BATCH);
let uuidNext = UUID_BATCH;
const uuidText = Buffer.alloc(36);
const HEX_DIGITS = Buffer.from('0123456789abcdef', 'latin1');

/**
 * A random (version 4) UUID, the same as `crypto.randomUUID()`: 122 bits from the same CSPRNG,
 * drawn in batches as it does. It is written into a buffer and read out as one flat string,
 * where randomUUID joins 20 pieces into a rope that every Map key use must flatten again.
 * (Slicing UUIDs out of one string per batch measured slower: sliced strings are slower keys.)
 *
 * @example
 * ```ts
 * newId(); // '9b2f0c1e-4d5a-4e6b-8f7c-0a1b2c3d4e5f'
 * ```
 */
export function newId(): string {
  return uuid(-1);
}

/**
 * A task id: a version 7 UUID (RFC 9562), the creation time in milliseconds in its first 48 bits
 * and 74 random bits after it. Durable stores index tasks by id; ids that grow with time put
 * each new entry at the end of that index and each evicted one near its start, where v4 ids
 * touched a random page of it for every insert and every delete (pages the database then
 * writes whole). The time it shows is the creation time the task's owner reads in its status
 * anyway; the random bits keep ids unguessable, and a task is only ever read by its owner.
 *
 * @example
 * ```ts
 * newTaskId(); // '0193a4f2-6c1e-7b3d-9f0a-1c2d3e4f5a6b'
 * ```
 */
export function newTaskId(nowMs: number = Date.now()): string {
  return uuid(Number.isFinite(nowMs) ? Math.min(Math.max(Math.floor(nowMs), 0), MAX_UUID_MS) : 0);
}

/** The last millisecond a version 7 UUID's 48-bit field holds. */
const MAX_UUID_MS = 2 ** 48 - 1;

/** A version 4 UUID for `ms` < 0, else a version 7 one carrying `ms`. */
function uuid(ms: number): string {
  if (uuidNext === UUID_BATCH) {
    randomFillSync(uuidBytes);
    uuidNext = 0;
  }
  const at = uuidNext * 16;
  uuidNext += 1;
  if (ms >= 0) {
    const high = Math.floor(ms / 0x1_0000_0000);
    const low = ms >>> 0;
    uuidBytes[at] = high >>> 8;
    uuidBytes[at + 1] = high & 0xff;
    uuidBytes[at + 2] = low >>> 24;
    uuidBytes[at + 3] = (low >>> 16) & 0xff;
    uuidBytes[at + 4] = (low >>> 8) & 0xff;
    uuidBytes[at + 5] = low & 0xff;
  }
  const version = ms >= 0 ? 0x70 : 0x40;
  let out = 0;
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) uuidText[out++] = 0x2d; // '-'
    let byte = uuidBytes[at + i] as number;
    if (i === 6) byte = (byte & 0x0f) | version;
    else if (i === 8) byte = (byte & 0x3f) | 0x80; // RFC 9562 variant
    uuidText[out++] = HEX_DIGITS[byte >> 4] as number;
    uuidText[out++] = HEX_DIGITS[byte & 0x0f] as number;
  }
  return uuidText.toString('latin1', 0, 36);
}

let lastMs = Number.NaN;
let lastIso = '';

/** `new Date().toISOString()`, rendered at most once per millisecond. */
export function isoNow(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastIso = new Date(ms).toISOString();
    lastMs = ms;
  }
  return lastIso;
}
