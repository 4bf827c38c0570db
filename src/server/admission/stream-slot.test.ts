import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CapacityError } from '../../tasks/policy.js';
import { REFUSED } from './compose.js';
import {
  createStreamSlotStep,
  STREAM_RETRY_AFTER_SECONDS,
  StreamLimitError,
  type StreamCandidate,
} from './stream-slot.js';

function candidate(principalKey: string) {
  const refused: Error[] = [];
  const stream: StreamCandidate = {
    ctx: { principalKey, agentSlug: 'echo', backend: {} as never },
    refuseStream: (error) => refused.push(error),
    release: undefined,
  };
  return { stream, refused };
}

function stepWith(maxStreams: number, maxStreamsPerPrincipal: number) {
  const rows: string[] = [];
  const step = createStreamSlotStep({
    limits: { maxStreams, maxStreamsPerPrincipal },
    audit: { rateLimited: (reason: string) => rows.push(reason) },
  });
  return { step, rows };
}

describe('stream slot step', () => {
  it('answers at once with a release; a principal over its cap is refused, naming the setting', () => {
    const { step, rows } = stepWith(10, 2);
    const first = step(candidate('client:a').stream);
    const second = step(candidate('client:a').stream);
    assert.notEqual(first, REFUSED);
    assert.notEqual(second, REFUSED);
    assert.ok(!(first instanceof Promise));
    const third = candidate('client:a');
    assert.equal(step(third.stream), REFUSED);
    const error = third.refused[0];
    assert.ok(error instanceof StreamLimitError && error instanceof CapacityError);
    assert.equal(error.retryAfterSeconds, STREAM_RETRY_AFTER_SECONDS);
    assert.match(error.message, /limits\.maxStreamsPerPrincipal = 2/);
    assert.deepEqual(rows, ['stream_limit']);
    // Another principal still gets a slot.
    assert.notEqual(step(candidate('client:b').stream), REFUSED);
  });

  it('gives the slot back once, however often release is called', () => {
    const { step } = stepWith(10, 1);
    const slot = step(candidate('client:a').stream);
    assert.ok(slot !== REFUSED && slot.release !== undefined);
    assert.equal(step(candidate('client:a').stream), REFUSED);
    slot.release();
    slot.release();
    const again = step(candidate('client:a').stream);
    assert.notEqual(again, REFUSED);
    assert.equal(step(candidate('client:a').stream), REFUSED);
  });

  it('the global cap refuses everyone, naming limits.maxStreams', () => {
    const { step } = stepWith(2, 5);
    assert.notEqual(step(candidate('client:a').stream), REFUSED);
    assert.notEqual(step(candidate('client:b').stream), REFUSED);
    const late = candidate('client:c');
    assert.equal(step(late.stream), REFUSED);
    assert.match(late.refused[0]?.message ?? '', /limits\.maxStreams = 2/);
  });
});
