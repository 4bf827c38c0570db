import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { decodeUtf8, utf8ToWrite } from './utf8.js';

/** Text long enough for the converter, in several scripts, with astral characters and controls. */
const longText = fc
  .array(
    fc.oneof(
      fc.constantFrom('Привет, ', 'café — ', '这是一个测试', '😀', '\u0000', '\ufeff', 'plain ascii ', '\n'),
      fc.string({ unit: 'binary', maxLength: 8 }),
    ),
    { minLength: 100, maxLength: 600 },
  )
  .map((pieces) => pieces.join(''));

describe('decodeUtf8', () => {
  it('gives what toString gives, for valid UTF-8 of any length', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), longText), (text) => {
        const bytes = Buffer.from(text, 'utf8');
        assert.equal(decodeUtf8(bytes), bytes.toString('utf8'));
      }),
      { numRuns: 500 },
    );
  });

  it('gives what toString gives for invalid UTF-8 (U+FFFD), short or long', () => {
    const invalid = fc.constantFrom([0xff], [0xc3], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82], [0x80]);
    fc.assert(
      fc.property(longText, invalid, fc.nat(), (text, bad, at) => {
        const valid = Buffer.from(text, 'utf8');
        const cut = at % (valid.length + 1);
        const bytes = Buffer.concat([valid.subarray(0, cut), Buffer.from(bad), valid.subarray(cut)]);
        assert.equal(decodeUtf8(bytes), bytes.toString('utf8'));
      }),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 2_000 }), (raw) => {
        const bytes = Buffer.from(raw);
        assert.equal(decodeUtf8(bytes), bytes.toString('utf8'));
      }),
      { numRuns: 300 },
    );
  });

  it('decodes a long body in another script', () => {
    const text = 'Привет, как дела? '.repeat(200);
    assert.equal(decodeUtf8(Buffer.from(text)), text);
    // A leading byte order mark is kept, as toString keeps it.
    assert.equal(decodeUtf8(Buffer.from(`\ufeff${text}`)), `\ufeff${text}`);
  });
});

describe('utf8ToWrite', () => {
  it('writes the same bytes as the string, for any text, lone surrogates included', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ unit: 'binary' }), longText),
        fc.constantFrom('', '\ud800', '\udfff'),
        (text, lone) => {
          const withLone = `${text}${lone}${text}`;
          const written = utf8ToWrite(withLone, Buffer.byteLength(withLone));
          assert.deepEqual(
            typeof written === 'string' ? Buffer.from(written, 'utf8') : written,
            Buffer.from(withLone, 'utf8'),
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it('gives bytes for long text mostly outside ASCII, and the string otherwise', () => {
    const cyrillic = 'Привет, как дела? '.repeat(200);
    assert.ok(Buffer.isBuffer(utf8ToWrite(cyrillic, Buffer.byteLength(cyrillic))));
    const latin = 'Café déjà vu, naïve. '.repeat(200);
    assert.equal(utf8ToWrite(latin, Buffer.byteLength(latin)), latin);
    assert.equal(utf8ToWrite('Привет', 12), 'Привет');
  });

  it('round-trips through decodeUtf8', () => {
    fc.assert(
      fc.property(longText, (text) => {
        const written = utf8ToWrite(text, Buffer.byteLength(text));
        const bytes = typeof written === 'string' ? Buffer.from(written, 'utf8') : written;
        assert.equal(decodeUtf8(bytes), Buffer.from(text, 'utf8').toString('utf8'));
      }),
      { numRuns: 200 },
    );
  });
});
