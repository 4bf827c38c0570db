import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { RateLimiter } from './rate.js';

const MINUTE = 60_000;

/** Takes `count` requests for `key` at `now` and returns how many were admitted. */
function burst(limiter: RateLimiter, key: string, now: number, count: number): number {
  let admitted = 0;
  for (let i = 0; i < count; i++) if (limiter.take(key, now) === true) admitted++;
  return admitted;
}

describe('RateLimiter', () => {
  // Non-integer intervals (7, 600 000 / 7 …) and epoch-sized clocks are where float rounding bites.
  for (const limit of [1, 2, 7, 600, 9_999, 1_000_000]) {
    for (const start of [0, 1_767_225_600_123.456]) {
      it(`admits a burst of exactly ${limit} and refuses the next (clock at ${start})`, () => {
        const limiter = new RateLimiter({ limit });
        assert.equal(burst(limiter, 'k', start, limit), limit);
        const verdict = limiter.take('k', start);
        assert.equal(typeof verdict, 'number', 'the request after the burst must be refused');
        assert.ok(Number.isInteger(verdict) && (verdict as number) >= 1);
      });
    }
  }

  it('holds a caller sending at twice the rate to the limit per minute', () => {
    const limiter = new RateLimiter({ limit: 600 });
    let admitted = 0;
    // Ten minutes at one request per 50 ms (1 200 a minute). Without the limiter all 12 000 pass.
    for (let i = 0; i < 12_000; i++) if (limiter.take('k', i * 50) === true) admitted++;
    // The opening burst plus one per 100 ms over the 600 s.
    assert.ok(admitted <= 600 + 6_000, `admitted ${admitted}`);
    assert.ok(admitted >= 6_000, `admitted ${admitted}`);
  });

  it('gives an honest Retry-After: retrying after that many seconds is admitted', () => {
    const limiter = new RateLimiter({ limit: 3 });
    burst(limiter, 'k', 1000, 3);
    const verdict = limiter.take('k', 1000);
    assert.equal(verdict, 20);
    assert.equal(limiter.take('k', 1000 + 19_000), 1);
    assert.equal(limiter.take('k', 1000 + 20_000), true);
  });

  it('never answers less than one second, even for a sub-second wait', () => {
    const limiter = new RateLimiter({ limit: 600 }); // one request per 100 ms once the burst is spent
    burst(limiter, 'k', 0, 600);
    assert.equal(limiter.take('k', 0), 1);
  });

  it('does not lengthen the wait while a refused caller keeps hammering', () => {
    const limiter = new RateLimiter({ limit: 2 });
    burst(limiter, 'k', 0, 2);
    for (let i = 0; i < 100; i++) limiter.take('k', i * 10);
    assert.equal(limiter.take('k', 30_000), true);
  });

  it('refills smoothly after a burst: one request per window / limit', () => {
    const limiter = new RateLimiter({ limit: 4 }); // 15 s per request
    burst(limiter, 'k', 0, 4);
    assert.notEqual(limiter.take('k', 14_999), true);
    assert.equal(limiter.take('k', 15_000), true);
    assert.notEqual(limiter.take('k', 15_001), true);
  });

  it('restores a full burst after a window of idleness', () => {
    const limiter = new RateLimiter({ limit: 5 });
    burst(limiter, 'k', 0, 5);
    assert.equal(burst(limiter, 'k', MINUTE, 10), 5);
  });

  it('keeps keys apart', () => {
    const limiter = new RateLimiter({ limit: 1 });
    assert.equal(limiter.take('a', 0), true);
    assert.notEqual(limiter.take('a', 0), true);
    assert.equal(limiter.take('b', 0), true);
  });

  it('admits at most 2 × limit − 1 in any sliding window, and the limit per window in the long run', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20 }),
        fc.array(fc.integer({ min: 0, max: 20_000 }), { minLength: 1, maxLength: 300 }),
        (limit, gaps) => {
          const limiter = new RateLimiter({ limit });
          const admitted: number[] = [];
          let now = 0;
          for (const gap of gaps) {
            now += gap;
            if (limiter.take('k', now) === true) admitted.push(now);
          }
          let lo = 0;
          for (let hi = 0; hi < admitted.length; hi++) {
            while ((admitted[hi] as number) - (admitted[lo] as number) >= MINUTE) lo++;
            if (hi - lo + 1 > 2 * limit - 1) return false;
          }
          // Over the whole run: the burst plus one per interval since the first request.
          const span = now - (admitted[0] ?? 0);
          return admitted.length <= limit + Math.floor(span / (MINUTE / limit)) + 1;
        },
      ),
      { numRuns: 300 },
    );
  });

  it('admits a retry made exactly when the Retry-After says, whatever came before', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 50 }),
        fc.array(fc.integer({ min: 0, max: 5_000 }), { maxLength: 200 }),
        (limit, gaps) => {
          const limiter = new RateLimiter({ limit });
          let now = 0;
          for (let i = 0; i < gaps.length; i++) {
            now += gaps[i] as number;
            const verdict = limiter.take('k', now);
            if (verdict !== true) {
              if (verdict < 1 || !Number.isInteger(verdict)) return false;
              // A twin brought to the same state (refusals change nothing) answers the retry.
              const twin = new RateLimiter({ limit });
              let t = 0;
              for (let j = 0; j < i; j++) twin.take('k', (t += gaps[j] as number));
              if (twin.take('k', now + verdict * 1000) !== true) return false;
            }
          }
          return true;
        },
      ),
      { numRuns: 100 },
    );
  });

  describe('memory bound', () => {
    it('never remembers more than maxKeys keys', () => {
      const limiter = new RateLimiter({ limit: 10, maxKeys: 100 });
      for (let i = 0; i < 10_000; i++) limiter.take(`k${i}`, i);
      assert.equal(limiter.size, 100);
    });

    it('drops a recovered key before a busy one, even when the busy one is older', () => {
      const limiter = new RateLimiter({ limit: 4, maxKeys: 3 }); // 15 s per request
      burst(limiter, 'busy', 0, 4); // one request back at 15 s, full at 60 s
      limiter.take('recovered', 1); // full again at 15.001 s
      limiter.take('other', 15_001);
      limiter.take('new', 15_001);
      assert.equal(limiter.size, 3);
      // 'busy' is still remembered: one request, not a fresh burst of four.
      assert.equal(burst(limiter, 'busy', 15_001, 4), 1);
    });

    it('drops the least recently admitted key when none has recovered', () => {
      const limiter = new RateLimiter({ limit: 1, maxKeys: 2 });
      limiter.take('a', 0);
      limiter.take('b', 1);
      limiter.take('c', 2); // evicts a
      assert.equal(limiter.take('a', 3), true, 'a was forgotten, so it starts afresh');
      assert.notEqual(limiter.take('c', 3), true, 'c is remembered');
    });

    it('orders keys by last admission, not first sight', () => {
      const limiter = new RateLimiter({ limit: 1, maxKeys: 2 });
      limiter.take('a', 0);
      limiter.take('b', 1);
      assert.equal(limiter.take('a', 60_000), true); // a is now the most recently admitted
      limiter.take('c', 60_000.5); // neither has recovered: b, the least recently admitted, goes
      assert.notEqual(limiter.take('a', 60_000.5), true, 'a is remembered');
      assert.equal(limiter.take('b', 60_000.5), true, 'b was forgotten, so it starts afresh');
    });
  });

  it('rejects nonsensical options', () => {
    assert.throws(() => new RateLimiter({ limit: 0 }), RangeError);
    assert.throws(() => new RateLimiter({ limit: 1.5 }), RangeError);
    assert.throws(() => new RateLimiter({ limit: 1, windowMs: 0 }), RangeError);
    assert.throws(() => new RateLimiter({ limit: 1, maxKeys: 0 }), RangeError);
  });
});
