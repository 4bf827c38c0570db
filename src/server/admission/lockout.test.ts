import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AuthFailureLimiter } from '../limits/address-failures.js';
import { REFUSED } from './compose.js';
import { countFailure, createLockout, type LockoutSubject } from './lockout.js';

describe('lockout', () => {
  it('passes an address that has not failed, at once, with the clock reading taken', () => {
    const authFailures = new AuthFailureLimiter({ limit: 2 });
    const lockout = createLockout<LockoutSubject>({ authFailures, now: () => 1_000, refuseLocked: assert.fail });
    const subject = { remote: '127.0.0.1', now: 0 };
    assert.equal(lockout(subject), subject);
    assert.equal(subject.now, 1_000);
  });

  it('refuses an address over its failures with the seconds left, until the window closes', () => {
    const authFailures = new AuthFailureLimiter({ limit: 2 });
    let time = 0;
    const refused: number[] = [];
    const lockout = createLockout<LockoutSubject>({
      authFailures,
      now: () => time,
      refuseLocked: (_subject, seconds) => refused.push(seconds),
    });
    const subject = { remote: '198.51.100.7', now: 0 };
    for (let attempt = 0; attempt < 3; attempt++) {
      assert.equal(
        countFailure(authFailures, subject, () => undefined),
        REFUSED,
      );
    }
    time = 1_000;
    assert.equal(lockout(subject), REFUSED);
    assert.ok(refused.length === 1 && (refused[0] as number) > 0);
    time = 120_000;
    assert.equal(lockout(subject), subject);
  });

  it('countFailure counts before it answers; a shared lockout’s answer is awaited first', async () => {
    const order: string[] = [];
    const shared = {
      isLocked: () => Promise.resolve(0),
      recordFailure: () => new Promise<number>((resolve) => setImmediate(() => (order.push('counted'), resolve(1)))),
    };
    const answered = countFailure(shared, { remote: undefined, now: 0 }, () => order.push('401'));
    assert.equal(await answered, REFUSED);
    assert.deepEqual(order, ['counted', '401']);
    const lockout = createLockout<LockoutSubject>({ authFailures: shared, now: () => 0, refuseLocked: assert.fail });
    const subject = { remote: '127.0.0.1', now: 5 };
    assert.equal(await lockout(subject), subject);
  });
});
