import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { jsonString } from './json-text.js';

/** Long strings that differ from one another by one character JSON must escape, or not at all. */
const longStringArb = fc
  .tuple(
    fc.constantFrom('Привет, как дела? ', 'plain ascii prose ', '这是一个测试'),
    fc.integer({ min: 0, max: 40 }),
    fc.constantFrom('', '"', '\\', '\n', '\u0000', '\ud800', 'é', '😀'),
  )
  .map(([prose, at, odd]) => {
    const text = prose.repeat(30);
    return text.slice(0, at) + odd + text.slice(at + odd.length);
  });

describe('jsonString', () => {
  it('is JSON.stringify for any sequence of long strings, remembered or not', () => {
    fc.assert(
      fc.property(fc.array(longStringArb, { minLength: 1, maxLength: 8 }), (texts) => {
        for (const text of texts) {
          assert.equal(jsonString(text), JSON.stringify(text));
          // A copy equal in content, and the same string again, whatever was remembered.
          assert.equal(jsonString(` ${text}`.slice(1)), JSON.stringify(text));
          assert.equal(jsonString(text), JSON.stringify(text));
        }
      }),
      { numRuns: 500 },
    );
  });

  it('is JSON.stringify for short strings', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (text) => {
        assert.equal(jsonString(text), JSON.stringify(text));
      }),
    );
  });
});
