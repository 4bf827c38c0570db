/**
 * SSE framing and the chat-completion stream decoder: line endings, comments, fields, events cut
 * at every possible point, and a property test that any split of the byte stream (even inside a
 * UTF-8 character or a CRLF) yields the same tokens.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { SseDataDecoder } from './sse.js';
import { ChatStreamDecoder, type CompletionEvent } from './stream.js';

function decodeAll(pieces: readonly string[]): string[] {
  const sse = new SseDataDecoder();
  const out: string[] = [];
  for (const piece of pieces) out.push(...sse.push(piece));
  out.push(...sse.end());
  return out;
}

describe('SseDataDecoder', () => {
  it('dispatches each event on its blank line', () => {
    assert.deepEqual(decodeAll(['data: one\n\ndata: two\n\n']), ['one', 'two']);
  });

  it('accepts LF, CRLF and lone CR line endings alike', () => {
    assert.deepEqual(decodeAll(['data: a\r\n\r\ndata: b\r\rdata: c\n\n']), ['a', 'b', 'c']);
  });

  it('treats a CRLF cut between two pieces as one line ending', () => {
    assert.deepEqual(decodeAll(['data: a\r', '\ndata: b\r', '\n\r', '\n']), ['a\nb']);
    // A lone CR at the end of a piece, then a blank-line CR: two line endings, not one.
    assert.deepEqual(decodeAll(['data: a\r', '\r']), ['a']);
  });

  it('ignores comments, event, id and retry fields and unknown fields', () => {
    const text = ': keep-alive\nevent: message\nid: 7\nretry: 100\nfoo: bar\ndata: x\n\n: ping\n\n';
    assert.deepEqual(decodeAll([text]), ['x']);
  });

  it('joins several data lines of one event with newlines, as the spec says', () => {
    assert.deepEqual(decodeAll(['data: first\ndata: second\n\n']), ['first\nsecond']);
  });

  it('removes exactly one space after the colon; no colon means an empty value', () => {
    assert.deepEqual(decodeAll(['data:tight\n\ndata:  two spaces\n\ndata\n\n']), ['tight', ' two spaces', '']);
  });

  it('does not dispatch an event without data', () => {
    assert.deepEqual(decodeAll(['\n\n\n: only a comment\n\nevent: x\n\n']), []);
  });

  it('at the end, keeps an event whose lines all arrived and drops an unfinished line', () => {
    assert.deepEqual(decodeAll(['data: [DONE]\n']), ['[DONE]']);
    assert.deepEqual(decodeAll(['data: {"cut']), []);
  });

  it('an empty piece changes nothing, even right after a CR', () => {
    assert.deepEqual(decodeAll(['data: a\r', '', '\n\n']), ['a']);
  });

  it('gives the same events whichever way the text is cut (property)', () => {
    const line = fc.string({ maxLength: 20 }).map((text) => text.replace(/[\r\n]/g, ''));
    const event = fc.array(line, { minLength: 1, maxLength: 3 });
    const ending = fc.constantFrom('\n', '\r\n', '\r');
    fc.assert(
      fc.property(
        fc.array(fc.tuple(event, ending, fc.boolean()), { maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 10 }),
        (events, cuts) => {
          let text = '';
          const expected: string[] = [];
          for (const [lines, eol, comment] of events) {
            if (comment) text += `: comment${eol}`;
            for (const value of lines) text += `data: ${value}${eol}`;
            text += eol;
            expected.push(lines.join('\n'));
          }
          assert.deepEqual(decodeAll(cutAt(text, cuts)), expected);
        },
      ),
    );
  });
});

describe('ChatStreamDecoder', () => {
  const encoder = new TextEncoder();

  function decodeBytes(pieces: readonly Uint8Array[]): CompletionEvent[] {
    const decoder = new ChatStreamDecoder();
    const events: CompletionEvent[] = [];
    for (const piece of pieces) events.push(...decoder.push(piece));
    events.push(...decoder.end());
    return events;
  }

  function chunk(delta: Record<string, unknown>, finish: string | null = null): string {
    return `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  }

  it('reads tokens, the finish and [DONE] from an OpenAI stream', () => {
    const text = `${chunk({ role: 'assistant', content: '' })}${chunk({ content: 'Hel' })}${chunk({ content: 'lo' })}${chunk({}, 'stop')}data: [DONE]\n\n`;
    assert.deepEqual(decodeBytes([encoder.encode(text)]), [
      { type: 'token', text: 'Hel' },
      { type: 'token', text: 'lo' },
      { type: 'finish', reason: 'stop' },
      { type: 'done' },
    ]);
  });

  it('keeps a UTF-8 character cut between two pieces whole', () => {
    const bytes = encoder.encode(chunk({ content: 'é🙂' }));
    const at = bytes.indexOf(0xf0) + 2; // inside the emoji's four bytes
    assert.deepEqual(decodeBytes([bytes.subarray(0, at), bytes.subarray(at)]), [{ type: 'token', text: 'é🙂' }]);
  });

  it('reports an error object and a payload that is not JSON', () => {
    const text = `data: {"error":{"message":"overloaded"}}\n\ndata: {"choices":[\n\n`;
    assert.deepEqual(decodeBytes([encoder.encode(text)]), [
      { type: 'error', message: 'overloaded' },
      { type: 'invalid', what: 'a stream event that is not a JSON object' },
    ]);
  });

  it('yields the same tokens whichever way the byte stream is cut (property)', () => {
    const token = fc.string({ unit: 'binary', minLength: 1, maxLength: 12 });
    fc.assert(
      fc.property(
        fc.array(token, { maxLength: 12 }),
        fc.constantFrom('\n', '\r\n'),
        fc.array(fc.nat(), { maxLength: 16 }),
        (tokens, eol, cuts) => {
          let text = `: keep-alive${eol}${eol}`;
          for (const value of tokens) {
            const data = JSON.stringify({ choices: [{ index: 0, delta: { content: value }, finish_reason: null }] });
            text += `data: ${data}${eol}${eol}`;
          }
          text += `data: [DONE]${eol}${eol}`;
          const bytes = encoder.encode(text);
          const events = decodeBytes(cutAt(bytes, cuts));
          const expected: CompletionEvent[] = [...tokens.map((value) => ({ type: 'token' as const, text: value }))];
          expected.push({ type: 'done' });
          assert.deepEqual(events, expected);
        },
      ),
    );
  });
});

/** Cuts `whole` at the given positions (taken modulo its length, sorted, duplicates kept). */
function cutAt<T extends string | Uint8Array>(whole: T, cuts: readonly number[]): T[] {
  const points = cuts.map((cut) => (whole.length === 0 ? 0 : cut % (whole.length + 1))).sort((a, b) => a - b);
  const pieces: T[] = [];
  let from = 0;
  for (const point of points) {
    pieces.push(whole.slice(from, point) as T);
    from = point;
  }
  pieces.push(whole.slice(from) as T);
  return pieces;
}
