import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Message } from '../../protocol/model.js';
import { CapacityError } from '../../tasks/policy.js';
import { REFUSED } from '../admission/compose.js';
import type { TurnCandidate } from '../admission/turn.js';
import { createDrainStep, Drain, DRAINING_RETRY_AFTER_SECONDS } from './drain.js';
import { createReadiness } from './readiness.js';

function candidate(message: Message | undefined): TurnCandidate & { refused: Error[] } {
  const refused: Error[] = [];
  return {
    ctx: {
      principalKey: 'client:a::a',
      agentSlug: 'echo',
      backend: { kind: 'x', run: async function* () {} },
    },
    message,
    refuseTurn: (error) => refused.push(error),
    text: 'hi',
    grant: undefined,
    refused,
  };
}

const MESSAGE: Message = { messageId: 'm', role: 'user', parts: [{ kind: 'text', text: 'hi' }] };

describe('the drain step', () => {
  it('passes every turn until the drain starts; then refuses new turns with 503 + Retry-After, audited, and passes reads', async () => {
    const drain = new Drain();
    const reasons: string[] = [];
    const step = createDrainStep({ drain, audit: { rateLimited: (reason) => reasons.push(reason) } });
    const before = candidate(MESSAGE);
    assert.equal(step(before), before);
    void drain.run({ running: () => 0, seconds: 0, stopAccepting: () => undefined });
    const turn = candidate(MESSAGE);
    assert.equal(step(turn), REFUSED);
    const [error] = turn.refused;
    assert.ok(error instanceof CapacityError);
    assert.equal(error.retryAfterSeconds, DRAINING_RETRY_AFTER_SECONDS);
    assert.match(error.message, /shutting down/);
    assert.deepEqual(reasons, ['draining']);
    const read = candidate(undefined);
    assert.equal(step(read), read);
  });
});

describe('Drain.run', () => {
  it('waits for the running turns, then stops accepting; says how many were left at the deadline', async () => {
    let count = 3;
    const events: string[] = [];
    const timer = setInterval(() => (count = Math.max(0, count - 1)), 20);
    const left = await new Drain().run({
      running: () => count,
      seconds: 5,
      stopAccepting: () => events.push(`closed at ${count}`),
    });
    clearInterval(timer);
    assert.equal(left, 0);
    assert.deepEqual(events, ['closed at 0']);
    const stuck = await new Drain().run({ running: () => 2, seconds: 0.1, stopAccepting: () => undefined });
    assert.equal(stuck, 2);
  });
});

describe('readiness', () => {
  it('is ready when the store answers; not while draining; not while the store fails; probes at most once a second', async () => {
    let clock = 0;
    let probes = 0;
    let fail = false;
    const drain = { draining: false };
    const readiness = createReadiness({
      drain,
      now: () => clock,
      store: {
        get: async () => {
          probes++;
          if (fail) throw new Error('down');
          return undefined;
        },
      },
    });
    assert.deepEqual(await readiness(), { ready: true });
    await readiness();
    assert.equal(probes, 1, 'cached within the second');
    fail = true;
    clock += 1_000;
    assert.deepEqual(await readiness(), { ready: false, reason: 'store_unavailable' });
    drain.draining = true;
    assert.deepEqual(await readiness(), { ready: false, reason: 'draining' });
  });
});
