/**
 * The tool loop's saved state: built within 256 KiB, and read back only when it is this
 * backend's own and consistent (it comes back from storage).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { buildContinuation, CONTINUATION_KIND, MAX_CONTINUATION_BYTES, readContinuation } from './continuation.js';
import type { TranscriptMessage } from './request.js';

const call = (
  id: string,
  name: string,
): { id: string; type: 'function'; function: { name: string; arguments: string } } => ({
  id,
  type: 'function',
  function: { name, arguments: '{}' },
});

const TRANSCRIPT: TranscriptMessage[] = [
  { role: 'system', content: 'S' },
  { role: 'user', content: 'U' },
  { role: 'assistant', content: null, tool_calls: [call('c1', 'read')] },
  { role: 'tool', tool_call_id: 'c1', content: 'R1' },
  { role: 'assistant', content: 'let me', tool_calls: [call('c2', 'read'), call('c3', 'write'), call('c4', 'list')] },
  { role: 'tool', tool_call_id: 'c2', content: 'R2' },
];

describe('continuation', () => {
  it('round-trips through JSON and resumes at the pending call', () => {
    const built = buildContinuation(TRANSCRIPT, 'c3', ['c4']);
    assert.ok(built.ok);
    assert.equal(built.continuation.kind, CONTINUATION_KIND);
    const read = readContinuation(JSON.parse(JSON.stringify(built.continuation)));
    assert.ok(read.ok);
    assert.deepEqual(read.state.messages, TRANSCRIPT);
    assert.equal(read.state.pendingIndex, 1);
    assert.deepEqual(
      read.state.calls.map((c) => c.id),
      ['c2', 'c3', 'c4'],
    );
  });

  it('refuses to build one past 256 KiB', () => {
    const big: TranscriptMessage[] = [
      ...TRANSCRIPT.slice(0, 5),
      { role: 'tool', tool_call_id: 'c2', content: 'x'.repeat(MAX_CONTINUATION_BYTES) },
    ];
    const built = buildContinuation(big, 'c3', ['c4']);
    assert.equal(built.ok, false);
  });

  it('refuses a state whose calls do not line up with the answer', () => {
    const cases: Array<[string, readonly string[]]> = [
      ['c4', []],
      ['c3', []],
      ['c3', ['c4', 'c5']],
      ['c2', ['c3', 'c4']],
      ['', ['c4']],
    ];
    for (const [pending, remaining] of cases) {
      const built = buildContinuation(TRANSCRIPT, pending, remaining);
      assert.ok(built.ok);
      assert.equal(readContinuation(built.continuation).ok, false, `${pending} ${remaining.join()}`);
    }
  });

  it('never throws on anything, and accepts only its own shape (property)', () => {
    fc.assert(
      fc.property(fc.anything(), (value) => {
        const read = readContinuation(value);
        assert.equal(read.ok, false);
        if (!read.ok) assert.match(read.reason, /^the tool loop cannot resume/);
      }),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(fc.jsonValue(), fc.nat({ max: TRANSCRIPT.length - 1 }), (junk, at) => {
        const messages: unknown[] = [...TRANSCRIPT];
        messages[at] = junk;
        const read = readContinuation({
          kind: CONTINUATION_KIND,
          version: 1,
          messages,
          pending: 'c3',
          remaining: ['c4'],
        });
        if (read.ok) assert.deepEqual(read.state.messages[at], TRANSCRIPT[at]);
      }),
      { numRuns: 500 },
    );
  });
});
