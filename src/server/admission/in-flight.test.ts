import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Message } from '../../protocol/model.js';
import { CapacityError } from '../../tasks/policy.js';
import { CONCURRENCY_RETRY_AFTER_SECONDS } from '../limits/concurrency.js';
import { REFUSED } from './compose.js';
import { createInFlightStep } from './in-flight.js';
import type { TurnCandidate } from './turn.js';

const LIMITS = { maxConcurrentTasks: 2, maxConcurrentTasksPerPrincipal: 1 } as never;
const MESSAGE: Message = { messageId: 'm', role: 'user', parts: [{ kind: 'text', text: 'hello hunter2' }] };

function candidate(principalKey = 'client:a', message: Message | null = MESSAGE) {
  const refused: Error[] = [];
  const turn: TurnCandidate = {
    ctx: { principalKey, agentSlug: 'echo', backend: {} as never },
    message: message ?? undefined,
    refuseTurn: (error) => refused.push(error),
    text: 'hello hunter2',
    grant: undefined,
  };
  return { turn, refused };
}

function stepWith(options: { scrubSecrets?: string[]; allowTools?: string[] } = {}) {
  const rows: string[] = [];
  const step = createInFlightStep<TurnCandidate>({
    config: {
      limits: LIMITS,
      agents: [{ slug: 'echo', ...(options.allowTools !== undefined && { allowTools: options.allowTools }) }] as never,
      scrubSecrets: options.scrubSecrets ?? [],
    },
    audit: { rateLimited: (reason: string) => rows.push(reason) },
  });
  return { step, rows };
}

describe('in-flight step', () => {
  it('grants a slot at once: input size, a framed prompt built on demand, release', () => {
    const { step } = stepWith();
    const { turn } = candidate();
    assert.equal(step(turn), turn);
    const grant = turn.grant;
    assert.ok(grant !== undefined);
    assert.equal(grant.inputChars, 'hello hunter2'.length);
    const prompt = grant.prompt?.();
    assert.ok(prompt !== undefined && prompt.user.includes('hello hunter2') && prompt.system.length > 0);
    assert.equal(grant.scrubber, undefined);
    assert.equal(grant.tools, undefined);
    grant.release();
  });

  it('refuses without a slot (per principal, then in total): CapacityError, audited', () => {
    const { step, rows } = stepWith();
    const first = candidate('client:a');
    assert.equal(step(first.turn), first.turn);
    const again = candidate('client:a');
    assert.equal(step(again.turn), REFUSED);
    const error = again.refused[0];
    assert.ok(error instanceof CapacityError);
    assert.equal(error.retryAfterSeconds, CONCURRENCY_RETRY_AFTER_SECONDS);
    assert.deepEqual(rows, ['concurrency_limit']);
    first.turn.grant?.release();
    assert.notEqual(step(candidate('client:a').turn), REFUSED, 'the slot came back');
  });

  it('carries the reply scrubber when secrets are configured', () => {
    const { step } = stepWith({ scrubSecrets: ['correct-horse-battery-staple'] });
    const { turn } = candidate();
    step(turn);
    assert.equal(
      turn.grant?.scrubber?.scrub('the password is correct-horse-battery-staple').includes('correct-horse'),
      false,
    );
  });

  it('passes a request without a message through, holding nothing', () => {
    const { step } = stepWith();
    const { turn } = candidate('client:a', null);
    assert.equal(step(turn), turn);
    assert.equal(turn.grant, undefined);
  });

  it('waits for caps shared by replicas', async () => {
    const step = createInFlightStep<TurnCandidate>({
      config: { limits: LIMITS, agents: [], scrubSecrets: [] },
      audit: {} as never,
      inFlight: { tryAcquire: () => Promise.resolve(() => undefined) },
    });
    const { turn } = candidate();
    assert.equal(await step(turn), turn);
    assert.ok(turn.grant !== undefined);
  });
});
