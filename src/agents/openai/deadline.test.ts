/**
 * The turn's clock across the tool loop: the first-token timer starts over with each request, the
 * total one spans the whole turn.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as wait } from 'node:timers/promises';
import { TurnDeadline } from './deadline.js';

describe('TurnDeadline', () => {
  it('restarts the first-token timer for the next request', async () => {
    const deadline = new TurnDeadline(new AbortController().signal, { firstTokenMs: 60, totalMs: 5_000 });
    deadline.tokenArrived();
    await wait(100); // a tool runs: no first-token clock
    assert.equal(deadline.signal.aborted, false);
    deadline.requestStarted();
    await wait(120);
    assert.equal(deadline.signal.aborted, true);
    assert.equal(deadline.failure?.code, 'first_token_timeout');
    deadline.dispose();
  });

  it('keeps the total timer running over every request of the turn', async () => {
    const deadline = new TurnDeadline(new AbortController().signal, { firstTokenMs: 1_000, totalMs: 120 });
    for (let i = 0; i < 3; i++) {
      await wait(50);
      deadline.tokenArrived();
      deadline.requestStarted();
    }
    await wait(30);
    assert.equal(deadline.failure?.code, 'total_timeout');
    deadline.requestStarted(); // nothing after the deadline fired
    assert.equal(deadline.failure?.code, 'total_timeout');
    deadline.dispose();
  });
});
