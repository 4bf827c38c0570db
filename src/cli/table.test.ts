import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatTable, outputWidth, wrapLines } from './table.js';

describe('CLI tables and wrapped lines', () => {
  it('lays out a table that fits as one line per row, the last column unpadded', () => {
    assert.deepEqual(
      formatTable(
        ['NAME', 'PIN'],
        [
          ['travel', 'tofu'],
          ['wiki', '-'],
        ],
      ),
      ['NAME    PIN', 'travel  tofu', 'wiki    -'],
    );
  });

  it('wraps the widest column at spaces when the row is wider than the width', () => {
    const lines = formatTable(
      ['NAME', 'STATUS', 'PIN'],
      [['travel-desk-europe-west', 'error card_signature_invalid', 'operator (drift)']],
      { width: 60 },
    );
    assert.deepEqual(lines, [
      'NAME                     STATUS                  PIN',
      'travel-desk-europe-west  error                   operator',
      '                         card_signature_invalid  (drift)',
    ]);
  });

  it('cuts words only when wrapping at spaces is not enough', () => {
    const lines = formatTable(['NAME', 'X'], [['a'.repeat(30), 'b']], { width: 20 });
    assert.deepEqual(lines, ['NAME               X', `${'a'.repeat(17)}  b`, 'a'.repeat(13)]);
  });

  it('wraps text with an indent and a hanging indent, cutting a word longer than a line', () => {
    assert.deepEqual(wrapLines('one two three', { width: 9, indent: '  ' }), ['  one two', '  three']);
    assert.deepEqual(wrapLines(`x ${'d'.repeat(12)}`, { width: 10, indent: 'k ', hangingIndent: '  ' }), [
      'k x',
      '  dddddddd',
      '  dddd',
    ]);
  });

  it('believes a terminal width between 40 and 200 columns, else 80', () => {
    assert.deepEqual([outputWidth(undefined), outputWidth(20), outputWidth(120), outputWidth(500)], [80, 80, 120, 200]);
  });
});
