import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { exceedsJsonDepth } from './json-depth.js';

/** The reference: depth of a parsed value (scalar 0, each array or object one more). */
function depthOf(value: unknown): number {
  if (Array.isArray(value)) {
    let deepest = 0;
    for (const item of value) deepest = Math.max(deepest, depthOf(item));
    return deepest + 1;
  }
  if (value !== null && typeof value === 'object') {
    let deepest = 0;
    for (const item of Object.values(value)) deepest = Math.max(deepest, depthOf(item));
    return deepest + 1;
  }
  return 0;
}

/** Checks the scanner against the reference at every limit around the text's true depth. */
function agreesWithParse(text: string): boolean {
  const bytes = Buffer.from(text, 'utf8');
  const depth = depthOf(JSON.parse(text));
  for (let max = Math.max(0, depth - 2); max <= depth + 1; max++) {
    if (exceedsJsonDepth(bytes, max) !== depth > max) return false;
  }
  return true;
}

/** Strings made mostly of the bytes a scanner could trip on. */
const nasty = fc.string({
  unit: fc.constantFrom('[', ']', '{', '}', '"', '\\', '\\"', '\\\\', ':', ',', 'u', '0', 'é', '😀', '\n', '\u0000'),
  maxLength: 12,
});

/** As {@link nasty}, long enough to be searched rather than read byte by byte. */
const longNasty = fc.string({
  unit: fc.constantFrom('[', ']', '{', '}', '"', '\\', '\\"', '\\\\', 'a', 'é', 'Привет '),
  minLength: 10,
  maxLength: 80,
});

/** The scan as it was, one byte at a time: the reference for any bytes at all, JSON or not. */
function byteByByte(body: Uint8Array, maxDepth: number): boolean {
  let depth = 0;
  for (let i = 0; i < body.length; i++) {
    const byte = body[i] as number;
    if (byte === 0x22) {
      for (i++; i < body.length; i++) {
        if (body[i] === 0x22) break;
        if (body[i] === 0x5c) i++;
      }
    } else if (byte === 0x5b || byte === 0x7b) {
      if (++depth > maxDepth) return true;
    } else if ((byte === 0x5d || byte === 0x7d) && depth > 0) depth--;
  }
  return false;
}

/** JSON values nested up to ~40 deep, with nasty keys and strings at every level. */
const { deep } = fc.letrec<{ deep: unknown }>((tie) => ({
  deep: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.oneof(nasty, fc.integer(), fc.boolean(), fc.constant(null)),
    fc.array(tie('deep'), { maxLength: 3 }),
    fc.dictionary(nasty, tie('deep'), { maxKeys: 3 }),
  ),
}));

/** A chain `n` deep, alternating arrays and objects, with string decoys at every level. */
function chain(n: number, decoy: string): unknown {
  let value: unknown = decoy;
  for (let i = 0; i < n; i++) value = i % 2 === 0 ? [decoy, value] : { [decoy]: value, x: decoy };
  return value;
}

describe('exceedsJsonDepth', () => {
  it('refuses one level over the limit and accepts exactly the limit', () => {
    const at = Buffer.from(`${'['.repeat(32)}${']'.repeat(32)}`);
    const over = Buffer.from(`${'['.repeat(33)}${']'.repeat(33)}`);
    assert.equal(exceedsJsonDepth(at, 32), false);
    assert.equal(exceedsJsonDepth(over, 32), true);
  });

  it('counts objects and arrays alike', () => {
    assert.equal(exceedsJsonDepth(Buffer.from('{"a":[{"b":[1]}]}'), 3), true);
    assert.equal(exceedsJsonDepth(Buffer.from('{"a":[{"b":[1]}]}'), 4), false);
    assert.equal(exceedsJsonDepth(Buffer.from('"scalar"'), 0), false);
    assert.equal(exceedsJsonDepth(Buffer.from('[]'), 0), true);
  });

  it('refuses a megabyte of openers at once, without reading them all', () => {
    const attack = Buffer.alloc(1_048_576, '[');
    assert.equal(exceedsJsonDepth(attack, 32), true);
  });

  it('ignores brackets inside strings', () => {
    assert.equal(exceedsJsonDepth(Buffer.from('["[[[[[[", "{{{{{{"]'), 1), false);
  });

  it('keeps to the string across an escaped quote', () => {
    // After `\"` the string goes on, so the brackets are still inside it.
    assert.equal(exceedsJsonDepth(Buffer.from(String.raw`["\"[[[[["]`), 1), false);
  });

  it('leaves the string after an escaped backslash', () => {
    // `\\` is a whole escape: the quote after it closes the string and the brackets count.
    assert.equal(exceedsJsonDepth(Buffer.from(String.raw`["\\",[[[[]]]]]`), 4), true);
    assert.equal(exceedsJsonDepth(Buffer.from(String.raw`["\\\"[[[["]`), 1), false);
  });

  it('cannot be fooled by stray closers', () => {
    assert.equal(exceedsJsonDepth(Buffer.from(`${']'.repeat(100)}${'['.repeat(40)}`), 32), true);
  });

  it('accepts a Uint8Array as well as a Buffer', () => {
    assert.equal(exceedsJsonDepth(new TextEncoder().encode('[[[]]]'), 2), true);
  });

  it('agrees with JSON.parse on any JSON value, compact or indented', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8, stringUnit: 'binary' }), fc.boolean(), (value, indent) =>
        agreesWithParse(JSON.stringify(value, null, indent ? 2 : undefined)),
      ),
      { numRuns: 1_000 },
    );
  });

  it('agrees with JSON.parse on deep values full of brackets, quotes and backslashes in strings', () => {
    fc.assert(
      fc.property(deep, fc.boolean(), (value, indent) =>
        agreesWithParse(JSON.stringify(value, null, indent ? 1 : undefined)),
      ),
      { numRuns: 1_000 },
    );
  });

  it('agrees with JSON.parse on values whose long strings are full of quotes and backslashes', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(longNasty, fc.integer({ min: 0, max: 6 })), { maxLength: 6 }), (pieces) =>
        agreesWithParse(JSON.stringify(pieces.map(([text, n]) => chain(n, text)))),
      ),
      { numRuns: 1_000 },
    );
  });

  it('reads any bytes as the byte-by-byte scan does, valid JSON or not', () => {
    const bytes = fc
      .array(fc.constantFrom('"', '\\', '[', ']', '{', '}', 'a', 'é', 'xxxxxxxxxxxxxxxxxxxx'), { maxLength: 120 })
      .map((units) => Buffer.from(units.join(''), 'utf8'));
    fc.assert(
      fc.property(bytes, fc.integer({ min: 0, max: 8 }), (body, max) => {
        assert.equal(exceedsJsonDepth(body, max), byteByByte(body, max));
        assert.equal(exceedsJsonDepth(new Uint8Array(body), max), byteByByte(body, max));
      }),
      { numRuns: 3_000 },
    );
  });

  it('agrees with JSON.parse on long chains around the default limit', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 80 }), nasty, (n, decoy) =>
        agreesWithParse(JSON.stringify(chain(n, decoy))),
      ),
      { numRuns: 500 },
    );
  });
});
