import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { checkAgentEvent } from './events.js';

function cyclic(): unknown {
  const value: Record<string, unknown> = {};
  value.self = value;
  return value;
}

function nested(depth: number): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i++) value = { next: value };
  return value;
}

describe('checkAgentEvent', () => {
  it('accepts every well-formed event', () => {
    const good: unknown[] = [
      { type: 'working' },
      { type: 'working', text: 'thinking' },
      { type: 'text', text: 'a' },
      { type: 'text', text: '', last: true },
      { type: 'artifact', artifact: { parts: [{ kind: 'data', data: { a: 1 } }] } },
      { type: 'message', parts: [{ kind: 'text', text: 'hi' }] },
      { type: 'message', parts: [{ kind: 'url', url: 'https://example.com/a.pdf' }] },
      { type: 'message', parts: [{ kind: 'raw', raw: 'aGk=' }] },
      { type: 'completed' },
      { type: 'completed', text: 'done' },
      { type: 'input-required', question: 'Which day?' },
      { type: 'rejected', reason: 'no' },
      { type: 'failed', reason: 'broken' },
      { type: 'propose-action', action: { tool: 'notes_write', args: { a: 1 }, level: 'L4' } },
      {
        type: 'propose-action',
        action: { tool: 'notes_write', level: 4 },
        continuation: { step: 'write', list: [1, 'two', null, true, { deep: [] }], gone: undefined },
      },
      { type: 'propose-action', action: { tool: 't', level: 'L3' }, continuation: 'x'.repeat(200 * 1024) },
    ];
    for (const event of good) assert.equal(checkAgentEvent(event), undefined, JSON.stringify(event));
  });

  it('names what is wrong with a malformed event', () => {
    const bad: Array<[unknown, RegExp]> = [
      [null, /not an object/],
      [[{ type: 'text' }], /not an object/],
      [{ text: 'x' }, /no event type/],
      [{ type: 'txt', text: 'x' }, /unknown event type "txt"/],
      [{ type: 'text' }, /"text" is not a string/],
      [{ type: 'text', text: 'a', last: 'yes' }, /"last" is not a boolean/],
      [{ type: 'working', text: 3 }, /"text" is not a string/],
      [{ type: 'input-required' }, /"question"/],
      [{ type: 'failed', reason: { message: 'x' } }, /"reason"/],
      [{ type: 'message', parts: [] }, /non-empty array/],
      [{ type: 'message', parts: [{ kind: 'file', file: {} }] }, /not a text, data, raw or url part/],
      [{ type: 'artifact', artifact: 'x' }, /"artifact" is not an object/],
      [{ type: 'propose-action', action: { tool: 't', level: 'L4' }, continuation: () => 1 }, /not plain JSON/],
      [{ type: 'propose-action', action: { tool: 't', level: 'L4' }, continuation: { at: new Date() } }, /plain JSON/],
      [{ type: 'propose-action', action: { tool: 't', level: 'L4' }, continuation: { n: 10n } }, /plain JSON/],
      [{ type: 'propose-action', action: { tool: 't', level: 'L4' }, continuation: [Number.NaN] }, /number/],
      [{ type: 'propose-action', action: { tool: 't', level: 'L4' }, continuation: cyclic() }, /cycle/],
      [{ type: 'propose-action', action: { tool: 't', level: 'L4' }, continuation: nested(100) }, /too deep/],
      [
        { type: 'propose-action', action: { tool: 't', level: 'L4' }, continuation: 'x'.repeat(256 * 1024) },
        /over 256 KiB/,
      ],
      [
        { type: 'propose-action', action: { tool: 't', level: 'L4' }, continuation: ['é'.repeat(140 * 1024)] },
        /over 256 KiB/,
      ],
    ];
    for (const [event, reason] of bad) assert.match(checkAgentEvent(event) ?? '', reason, String(reason));
  });

  it('never throws, and never echoes a long or odd type name (property)', () => {
    fc.assert(
      fc.property(fc.anything(), (value) => {
        const problem = checkAgentEvent(value);
        if (problem !== undefined) assert.ok(problem.length < 80);
      }),
      { numRuns: 1000 },
    );
  });
});
