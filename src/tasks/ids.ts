/**
 * Ids and timestamps minted on the request path: random v4 UUIDs and ISO 8601 times.
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
 */
export function newId(): string {
  if (uuidNext === UUID_BATCH) {
    randomFillSync(uuidBytes);
    uuidNext = 0;
  }
  const at = uuidNext * 16;
  uuidNext += 1;
  let out = 0;
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) uuidText[out++] = 0x2d; // '-'
    let byte = uuidBytes[at + i] as number;
    if (i === 6)
      byte = (byte & 0x0f) | 0x40; // version 4
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
