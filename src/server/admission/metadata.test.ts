import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { A2AError } from '../../protocol/errors.js';
import type { Message } from '../../protocol/model.js';
import { REFUSED } from './compose.js';
import { createMetadataStep } from './metadata.js';
import type { TurnCandidate } from './turn.js';

const LIMITS = { maxMetadataBytes: 64, maxMetadataKeys: 8, maxMetadataDepth: 4 };

function setUp() {
  const rows: string[] = [];
  const refused: Error[] = [];
  const step = createMetadataStep<TurnCandidate>({
    config: { limits: LIMITS },
    audit: { rejected: (_ctx, reason) => void rows.push(reason) },
  });
  const candidate = (message: Message | undefined): TurnCandidate => ({
    ctx: { principalKey: 'client:a', agentSlug: 'echo', backend: {} as never },
    message,
    refuseTurn: (error) => refused.push(error),
    text: '',
    grant: undefined,
  });
  return { step, rows, refused, candidate };
}

const text = (extra: Partial<Message> = {}): Message => ({
  messageId: 'm',
  role: 'user',
  parts: [{ kind: 'text', text: 'hi' }],
  ...extra,
});

describe('metadata step', () => {
  it('passes a message within the caps, and a request without a message', () => {
    const { step, rows, candidate } = setUp();
    const plain = candidate(text());
    assert.equal(step(plain), plain);
    const small = candidate(text({ metadata: { trace: 'abc' } }));
    assert.equal(step(small), small);
    const none = candidate(undefined);
    assert.equal(step(none), none);
    assert.deepEqual(rows, []);
  });

  it('refuses message metadata over the cap: audited with its reason, refused with -32602 naming the setting', () => {
    const { step, rows, refused, candidate } = setUp();
    assert.equal(step(candidate(text({ metadata: { big: 'x'.repeat(100) } }))), REFUSED);
    assert.deepEqual(rows, ['metadata_too_large']);
    const error = refused[0];
    assert.ok(error instanceof A2AError);
    assert.equal(error.rpcCode, -32602);
    assert.match(error.message, /limits\.maxMetadataBytes/);
  });

  it('counts part metadata too, and refuses too many keys or too deep a value', () => {
    const { step, rows, candidate } = setUp();
    const parts: Message['parts'] = [{ kind: 'text', text: 'hi', metadata: { big: 'x'.repeat(100) } }];
    assert.equal(step(candidate(text({ parts }))), REFUSED);
    assert.equal(step(candidate(text({ metadata: { a: [1, 2, 3, 4, 5, 6, 7, 8, 9] } }))), REFUSED);
    assert.equal(step(candidate(text({ metadata: { a: { b: { c: { d: {} } } } } }))), REFUSED);
    assert.deepEqual(rows, ['metadata_too_large', 'metadata_too_many_keys', 'metadata_too_deep']);
  });
});
