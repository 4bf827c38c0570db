import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { CONCURRENCY_RETRY_AFTER_SECONDS, InFlightLimiter, type Release } from './concurrency.js';

describe('InFlightLimiter', () => {
  it('refuses a key over its own bound while others still get slots', () => {
    const limiter = new InFlightLimiter({ global: 10, perKey: 2 });
    assert.ok(limiter.tryAcquire('a'));
    assert.ok(limiter.tryAcquire('a'));
    assert.equal(limiter.tryAcquire('a'), null);
    assert.ok(limiter.tryAcquire('b'));
  });

  it('refuses everyone over the global bound', () => {
    const limiter = new InFlightLimiter({ global: 2, perKey: 2 });
    assert.ok(limiter.tryAcquire('a'));
    assert.ok(limiter.tryAcquire('b'));
    assert.equal(limiter.tryAcquire('c'), null);
    assert.equal(limiter.tryAcquire('a'), null);
  });

  it('gives the slot back on release', () => {
    const limiter = new InFlightLimiter({ global: 1, perKey: 1 });
    const release = limiter.tryAcquire('a');
    assert.ok(release);
    release();
    assert.ok(limiter.tryAcquire('a'));
  });

  it('ignores a second release: it must not open a slot someone else holds', () => {
    const limiter = new InFlightLimiter({ global: 2, perKey: 2 });
    const first = limiter.tryAcquire('a')!;
    limiter.tryAcquire('a');
    first();
    first();
    assert.equal(limiter.inFlight, 1);
    assert.equal(limiter.inFlightFor('a'), 1);
    assert.ok(limiter.tryAcquire('a'));
    assert.equal(limiter.tryAcquire('a'), null, 'the double release opened a phantom slot');
  });

  it('forgets a key whose count reaches zero', () => {
    const limiter = new InFlightLimiter({ global: 10, perKey: 10 });
    const releases = [limiter.tryAcquire('a')!, limiter.tryAcquire('a')!, limiter.tryAcquire('b')!];
    assert.equal(limiter.keys, 2);
    for (const release of releases) release();
    assert.equal(limiter.keys, 0);
    assert.equal(limiter.inFlight, 0);
  });

  it('keeps its counts exact under any interleaving of acquires and (repeated) releases', () => {
    type Step = { acquire: true; key: number } | { acquire: false; index: number };
    const step = fc.oneof(
      fc.record({ acquire: fc.constant(true as const), key: fc.integer({ min: 0, max: 3 }) }),
      fc.record({ acquire: fc.constant(false as const), index: fc.nat() }),
    );
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 4 }),
        fc.array(step, { maxLength: 100 }),
        (global, perKey, steps: Step[]) => {
          const limiter = new InFlightLimiter({ global, perKey });
          const issued: { key: string; release: Release }[] = [];
          const held = new Map<string, number>();
          const live = new Set<number>();
          for (const s of steps) {
            if (s.acquire) {
              const key = `k${s.key}`;
              const release = limiter.tryAcquire(key);
              const total = [...held.values()].reduce((a, b) => a + b, 0);
              const mayAcquire = total < global && (held.get(key) ?? 0) < perKey;
              if ((release !== null) !== mayAcquire) return false;
              if (release !== null) {
                live.add(issued.length);
                issued.push({ key, release });
                held.set(key, (held.get(key) ?? 0) + 1);
              }
            } else if (issued.length > 0) {
              const index = s.index % issued.length;
              const { key, release } = issued[index]!;
              release();
              if (live.delete(index)) held.set(key, held.get(key)! - 1);
              if ((held.get(key) ?? 0) === 0) held.delete(key);
            }
            const total = [...held.values()].reduce((a, b) => a + b, 0);
            if (limiter.inFlight !== total || limiter.keys !== held.size) return false;
          }
          return true;
        },
      ),
      { numRuns: 500 },
    );
  });

  it('suggests a one-second Retry-After', () => {
    assert.equal(CONCURRENCY_RETRY_AFTER_SECONDS, 1);
  });

  it('resize (a config reload) keeps the held slots and counts them against the new bounds', () => {
    const limiter = new InFlightLimiter({ global: 4, perKey: 2 });
    const first = limiter.tryAcquire('a');
    assert.ok(limiter.tryAcquire('a'));
    limiter.resize({ global: 4, perKey: 1 });
    assert.equal(limiter.tryAcquire('a'), null);
    assert.ok(limiter.tryAcquire('b'));
    limiter.resize({ global: 3, perKey: 3 });
    assert.equal(limiter.tryAcquire('c'), null);
    first?.();
    assert.ok(limiter.tryAcquire('c'));
    assert.throws(() => limiter.resize({ global: 0, perKey: 1 }), RangeError);
  });

  it('rejects nonsensical bounds', () => {
    assert.throws(() => new InFlightLimiter({ global: 0, perKey: 1 }), RangeError);
    assert.throws(() => new InFlightLimiter({ global: 1, perKey: 0.5 }), RangeError);
  });
});
