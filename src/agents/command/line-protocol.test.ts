import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import fc from 'fast-check';

import { CONTROL_PREFIX, LineProtocolParser, parseControlLine, type ProtocolItem } from './line-protocol.js';

/** Parses `chunks` as one output, start to end. */
function parseChunks(chunks: readonly string[]): ProtocolItem[] {
  const parser = new LineProtocolParser();
  const items: ProtocolItem[] = [];
  for (const chunk of chunks) items.push(...parser.push(chunk));
  items.push(...parser.end());
  return items;
}

/** Adjacent text items joined and empty ones dropped: what does not depend on chunking. */
function normalised(items: readonly ProtocolItem[]): ProtocolItem[] {
  const out: ProtocolItem[] = [];
  for (const item of items) {
    if (item.kind === 'text') {
      if (item.text.length === 0) continue;
      const previous = out.at(-1);
      if (previous?.kind === 'text') {
        out[out.length - 1] = { kind: 'text', text: previous.text + item.text };
        continue;
      }
    }
    out.push(item);
  }
  return out;
}

describe('parseControlLine', () => {
  it('reads each verb with its argument, trimmed', () => {
    assert.deepEqual(parseControlLine('@airlock working  fetching the page '), {
      kind: 'working',
      note: 'fetching the page',
    });
    assert.deepEqual(parseControlLine('@airlock input-required Which city?'), {
      kind: 'input-required',
      question: 'Which city?',
    });
    assert.deepEqual(parseControlLine('@airlock failed no such city'), { kind: 'failed', reason: 'no such city' });
    assert.deepEqual(parseControlLine('@airlock rejected not allowed'), { kind: 'rejected', reason: 'not allowed' });
  });

  it('gives an empty argument when there is none', () => {
    assert.deepEqual(parseControlLine('@airlock working'), { kind: 'working', note: '' });
    assert.deepEqual(parseControlLine('@airlock failed '), { kind: 'failed', reason: '' });
    assert.deepEqual(parseControlLine('@airlock input-required'), { kind: 'input-required', question: '' });
    assert.deepEqual(parseControlLine('@airlock rejected'), { kind: 'rejected', reason: '' });
  });

  it('drops the carriage return of a CRLF line', () => {
    assert.deepEqual(parseControlLine('@airlock working note\r'), { kind: 'working', note: 'note' });
    assert.deepEqual(parseControlLine('@airlock working\r'), { kind: 'working', note: '' });
  });

  it('keeps the text escape exactly as written', () => {
    assert.deepEqual(parseControlLine('@airlock text @airlock working'), { kind: 'text', text: '@airlock working' });
    assert.deepEqual(parseControlLine('@airlock text   spaced  '), { kind: 'text', text: '  spaced  ' });
    assert.deepEqual(parseControlLine('@airlock text'), { kind: 'text', text: '' });
    assert.deepEqual(parseControlLine('@airlock text \r'), { kind: 'text', text: '\r' });
  });

  it('reports unknown verbs (case-sensitive, a doubled space makes an empty verb)', () => {
    assert.deepEqual(parseControlLine('@airlock progress 50%'), { kind: 'unknown', verb: 'progress' });
    assert.deepEqual(parseControlLine('@airlock Working x'), { kind: 'unknown', verb: 'Working' });
    assert.deepEqual(parseControlLine('@airlock  working x'), { kind: 'unknown', verb: '' });
    assert.deepEqual(parseControlLine('@airlock '), { kind: 'unknown', verb: '' });
  });
});

describe('LineProtocolParser', () => {
  it('streams a line that cannot be a control line before its newline', () => {
    const parser = new LineProtocolParser();
    assert.deepEqual(parser.push('Hello, wor'), [{ kind: 'text', text: 'Hello, wor' }]);
    assert.deepEqual(parser.push('ld\nand more'), [{ kind: 'text', text: 'ld\nand more' }]);
    assert.deepEqual(parser.end(), []);
  });

  it('holds a line start back only while it is a prefix of the control prefix', () => {
    const parser = new LineProtocolParser();
    assert.deepEqual(parser.push('@'), []);
    assert.deepEqual(parser.push('airl'), []);
    assert.deepEqual(parser.push('ove'), [{ kind: 'text', text: '@airlove' }]);
    assert.deepEqual(parser.push(' you\n@airlock'), [{ kind: 'text', text: ' you\n' }]);
    assert.deepEqual(parser.push('\n'), [{ kind: 'text', text: '@airlock\n' }]);
    assert.deepEqual(parser.push('@airlockx'), [{ kind: 'text', text: '@airlockx' }]);
  });

  it('holds a control line until its newline, however it is cut', () => {
    const parser = new LineProtocolParser();
    assert.deepEqual(parser.push('@airlock '), []);
    assert.deepEqual(parser.push('work'), []);
    assert.deepEqual(parser.push('ing 50'), []);
    assert.deepEqual(parser.push('%\nrest'), [
      { kind: 'working', note: '50%' },
      { kind: 'text', text: 'rest' },
    ]);
  });

  it('keeps text and control lines in order within one chunk', () => {
    assert.deepEqual(parseChunks(['a\n@airlock working w\nb\n@airlock failed f\nc']), [
      { kind: 'text', text: 'a\n' },
      { kind: 'working', note: 'w' },
      { kind: 'text', text: 'b\n' },
      { kind: 'failed', reason: 'f' },
      { kind: 'text', text: 'c' },
    ]);
  });

  it('only recognises the prefix at the very start of a line', () => {
    assert.deepEqual(parseChunks(['say @airlock working\n', ' @airlock working x\n']), [
      { kind: 'text', text: 'say @airlock working\n' },
      { kind: 'text', text: ' @airlock working x\n' },
    ]);
  });

  it('turns the text escape into reply text with its newline', () => {
    assert.deepEqual(parseChunks(['before\n@airlock text @airlock literal\nafter']), [
      { kind: 'text', text: 'before\n@airlock literal\nafter' },
    ]);
    assert.deepEqual(parseChunks(['@airlock text no newline at the end']), [
      { kind: 'text', text: 'no newline at the end' },
    ]);
  });

  it('counts an unterminated control line at the end, and a held-back prefix as text', () => {
    assert.deepEqual(parseChunks(['x\n@airlock input-required Name?']), [
      { kind: 'text', text: 'x\n' },
      { kind: 'input-required', question: 'Name?' },
    ]);
    const parser = new LineProtocolParser();
    assert.deepEqual(parser.push('x\n@airl'), [{ kind: 'text', text: 'x\n' }]);
    assert.deepEqual(parser.end(), [{ kind: 'text', text: '@airl' }]);
  });

  it('passes empty lines and CRLF text through', () => {
    assert.deepEqual(parseChunks(['\n\r\n\n']), [{ kind: 'text', text: '\n\r\n\n' }]);
  });

  it('is ready for a new output after end()', () => {
    const parser = new LineProtocolParser();
    parser.push('@airlock work');
    assert.deepEqual(parser.end(), [{ kind: 'unknown', verb: 'work' }]);
    assert.deepEqual(parser.push('@airlock working again\n'), [{ kind: 'working', note: 'again' }]);
  });

  it('reports unknown verbs as items (the backend drops them)', () => {
    assert.deepEqual(parseChunks(['@airlock shout hi\nok']), [
      { kind: 'unknown', verb: 'shout' },
      { kind: 'text', text: 'ok' },
    ]);
  });
});

/** Lines that exercise every state: plain text, prefixes of the marker, control lines, escapes. */
const line = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'grapheme', maxLength: 6 }),
  fc.integer({ min: 0, max: CONTROL_PREFIX.length }).map((length) => CONTROL_PREFIX.slice(0, length)),
  fc
    .tuple(fc.constantFrom('working', 'input-required', 'failed', 'rejected', 'text', 'bogus', ''), fc.string())
    .map(([verb, argument]) => `${CONTROL_PREFIX}${verb} ${argument.replaceAll('\n', ' ')}`),
  fc.string({ maxLength: 6 }).map((tail) => `@airlock${tail}`),
);

/** An output and the places to cut it into chunks. */
const cutOutput = fc
  .tuple(fc.array(line, { maxLength: 10 }), fc.constantFrom('', '\n', '\r\n'), fc.array(fc.nat(), { maxLength: 12 }))
  .map(([lines, ending, cuts]) => {
    const output = lines.join('\n') + ending;
    const points = [...new Set(cuts.map((cut) => cut % (output.length + 1)))].sort((a, b) => a - b);
    const chunks: string[] = [];
    let from = 0;
    for (const point of points) {
      chunks.push(output.slice(from, point));
      from = point;
    }
    chunks.push(output.slice(from));
    return { output, chunks };
  });

describe('LineProtocolParser properties', () => {
  it('yields the same items however the output is cut into chunks', () => {
    fc.assert(
      fc.property(cutOutput, ({ output, chunks }) => {
        assert.deepEqual(normalised(parseChunks(chunks)), normalised(parseChunks([output])));
      }),
      { numRuns: 2000 },
    );
  });

  it('loses no byte of an output without control lines', () => {
    fc.assert(
      fc.property(cutOutput, ({ output, chunks }) => {
        fc.pre(!output.split('\n').some((text) => text.startsWith(CONTROL_PREFIX)));
        const text = parseChunks(chunks)
          .map((item) => (item.kind === 'text' ? item.text : ''))
          .join('');
        assert.equal(text, output);
      }),
      { numRuns: 1000 },
    );
  });

  it('streams at once every chunk of an output where no line starts with "@"', () => {
    const plain = fc.string({ maxLength: 40 }).map((text) => text.replaceAll(/(^|\n)@/g, '$1#'));
    fc.assert(
      fc.property(fc.array(plain, { maxLength: 8 }), (chunks) => {
        // Chunks that glue into a line starting with '@' are left out; every other one comes out
        // whole as soon as it is pushed.
        fc.pre(
          !chunks.some((chunk, index) => chunk.startsWith('@') && /(^|\n)$/.test(chunks.slice(0, index).join(''))),
        );
        const parser = new LineProtocolParser();
        for (const chunk of chunks) {
          const text = parser
            .push(chunk)
            .map((item) => (item.kind === 'text' ? item.text : ''))
            .join('');
          assert.equal(text, chunk);
        }
        assert.deepEqual(parser.end(), []);
      }),
      { numRuns: 1000 },
    );
  });
});
