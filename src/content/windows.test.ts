import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { firstOpenWindow } from './windows.js';

/** A space, a dot and anything above ASCII end a stretch; letters do not. */
const ENDS = Uint8Array.from({ length: 0x80 }, (_, c) => (c === 0x20 || c === 0x2e ? 1 : 0));
const ends = (code: number): boolean => code >= 0x80 || ENDS[code] === 1;

/** The first i ≥ from with no ending character in [i, i + width), looked for at every position. */
function everyPosition(text: string, from: number, width: number): number {
  for (let i = from; i + width <= text.length; i++) {
    let open = true;
    for (let j = i; j < i + width && open; j++) open = !ends(text.charCodeAt(j));
    if (open) return i;
  }
  return -1;
}

describe('firstOpenWindow', () => {
  it('finds the first open window that a look at every position finds, from anywhere', () => {
    const unit = fc.constantFrom('a', 'b', ' ', '.', 'é', '中');
    fc.assert(
      fc.property(fc.array(unit, { maxLength: 60 }), fc.integer({ min: 1, max: 12 }), (units, width) => {
        const text = units.join('');
        for (let from = 0; from <= text.length; from++) {
          assert.equal(
            firstOpenWindow(text, from, width, ENDS),
            everyPosition(text, from, width),
            `${JSON.stringify(text)} ${from} ${width}`,
          );
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('answers at the edges', () => {
    assert.equal(firstOpenWindow('', 0, 1, ENDS), -1);
    assert.equal(firstOpenWindow('abcd', 0, 4, ENDS), 0);
    assert.equal(firstOpenWindow('abcd', 0, 5, ENDS), -1);
    assert.equal(firstOpenWindow('ab cd', 0, 2, ENDS), 0);
    assert.equal(firstOpenWindow('a bcd', 0, 3, ENDS), 2);
  });
});
