import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { displayArgs, escapeText, hasHiddenCharacters, hiddenWarning, unescapeText } from './display.js';
import type { JsonValue } from './redact.js';

/** Every character a screen could hide or reorder, plus ordinary ones and JSON's own specials. */
const HIDDEN_SAMPLES = [
  '\u202E',
  '\u202A',
  '\u202B',
  '\u202C',
  '\u202D',
  '\u2066',
  '\u2067',
  '\u2068',
  '\u2069',
  '\u200B',
  '\u200C',
  '\u200D',
  '\u200E',
  '\u200F',
  '\uFEFF',
  '\u00AD',
  '\u061C',
  '\u180E',
  '\u2060',
  '\u2061',
  '\u2064',
  '\u2028',
  '\u2029',
  '\u0000',
  '\u001B',
  '\r',
  '\u007F',
  '\u0085',
  '\u009F',
  '\u00A0',
  '\u2007',
  '\u3000',
  '\uFE0F',
  '\u034F',
  '\u3164',
  '\uD800',
  '\uDFFF',
  '\u{E0001}',
  '\u{E0041}',
  '\u{E0100}',
];
const tricky = fc.string({
  unit: fc.oneof(
    fc.constantFrom(...HIDDEN_SAMPLES, '\n', '\t', '\\', '"', 'u', '2', '0', 'E', 'a', ' ', 'é', '😀', '\\u202E'),
    fc.string({ unit: 'binary', maxLength: 1 }),
  ),
});
const args: fc.Arbitrary<JsonValue> = fc.letrec<{ value: JsonValue }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    tricky,
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(tricky, tie('value'), { maxKeys: 4 }),
  ),
})).value;

/** Any character a person could not see, other than the pretty-printer's own layout. */
function invisibleIn(text: string, layout: boolean): string[] {
  const found = [...text].filter((char) => hasHiddenCharacters(char));
  return layout ? found.filter((char) => char !== '\n') : found;
}

describe('displayArgs', () => {
  it('shows the bidi trick escaped, names what it escaped, and decodes to the arguments', () => {
    const real = { amount: '\u2066\u202E9876543210\u202C\u2069', 'to\u200B': 'x' };
    const shown = displayArgs(real);
    assert.equal(shown.text, '{"amount":"\\u2066\\u202E9876543210\\u202C\\u2069","to\\u200B":"x"}');
    assert.deepEqual(shown.hidden, ['U+2066', 'U+202E', 'U+202C', 'U+2069', 'U+200B']);
    assert.equal(shown.hiddenCount, 5);
    assert.deepEqual(JSON.parse(shown.text), real);
    assert.match(hiddenWarning(shown) ?? '', /5 invisible or direction-changing characters \(U\+2066, U\+202E/);
  });

  it('leaves ordinary arguments as plain JSON and flags nothing (newlines and tabs are layout)', () => {
    const shown = displayArgs({ body: 'line 1\nline\t2', path: 'C:\\tmp', n: 3, emoji: '😀' }, 2);
    assert.equal(shown.text, JSON.stringify({ body: 'line 1\nline\t2', path: 'C:\\tmp', n: 3, emoji: '😀' }, null, 2));
    assert.equal(shown.hiddenCount, 0);
    assert.equal(hiddenWarning(shown), undefined);
  });

  it('escapes nested keys and values, astral tags as surrogate pairs, and lone surrogates', () => {
    const shown = displayArgs({ a: [{ '\u{E0041}': '\uD800' }], '\u2028': null });
    assert.equal(shown.text, '{"a":[{"\\uDB40\\uDC41":"\\ud800"}],"\\u2028":null}');
    assert.deepEqual(shown.hidden, ['U+E0041', 'U+D800', 'U+2028']);
  });

  it('property: JSON.parse of the display is the arguments exactly, and it shows no hidden character', () => {
    fc.assert(
      fc.property(args, fc.constantFrom(undefined, 2), (value, indent) => {
        const shown = displayArgs(value, indent);
        assert.deepEqual(JSON.parse(shown.text), JSON.parse(JSON.stringify(value)));
        assert.deepEqual(invisibleIn(shown.text, indent !== undefined), []);
      }),
      { numRuns: 2000 },
    );
  });

  it('property: flags exactly when a key or value holds a hidden character other than \\n and \\t', () => {
    fc.assert(
      fc.property(args, (value) => {
        const texts: string[] = [];
        const walk = (item: JsonValue): void => {
          if (typeof item === 'string') texts.push(item);
          else if (Array.isArray(item)) item.forEach(walk);
          else if (item !== null && typeof item === 'object')
            for (const [key, inner] of Object.entries(item)) {
              texts.push(key);
              walk(inner);
            }
        };
        walk(value);
        const expected = texts.some((text) => invisibleIn(text, false).some((char) => char !== '\n' && char !== '\t'));
        assert.equal(displayArgs(value).hiddenCount > 0, expected);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('escapeText', () => {
  it('property: unescapeText undoes it, and its output holds no hidden character', () => {
    fc.assert(
      fc.property(tricky, (text) => {
        const escaped = escapeText(text);
        assert.equal(unescapeText(escaped), text);
        assert.deepEqual(invisibleIn(escaped, false), []);
      }),
      { numRuns: 2000 },
    );
  });

  it('keeps a literal backslash-u apart from an escape', () => {
    assert.equal(escapeText('\\u202E\u202E'), '\\\\u202E\\u202E');
    assert.equal(unescapeText(escapeText('\\u202E\u202E')), '\\u202E\u202E');
  });
});
