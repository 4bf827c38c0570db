/**
 * ShareBounds: when a database store may skip counting a principal. Upper bounds admit only
 * inside both quotas; the lower bound of finished tasks lets a principal at its quota give up
 * its tenth uncounted only while it surely holds that many, in a store that sees every write.
 *
 * @example
 * ```sh
 * node --import tsx --test src/tasks/stores/share-bounds.test.ts
 * ```
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ShareBounds } from './share-bounds.js';

const LIMITS = { maxTasksPerPrincipal: 10, maxParkedPerPrincipal: 3 };

describe('ShareBounds', () => {
  it('admits only what it has counted, while inside both quotas; every write only raises the bound', () => {
    const bounds = new ShareBounds();
    assert.equal(bounds.admits('a', LIMITS, 0), false, 'unknown: count first');
    bounds.counted('a', 8, 1, 0);
    assert.equal(bounds.admits('a', LIMITS, 0), true);
    bounds.created('a');
    assert.equal(bounds.admits('a', LIMITS, 0), true);
    bounds.created('a');
    assert.equal(bounds.admits('a', LIMITS, 0), false, 'at 10: count again');
    bounds.counted('b', 0, 2, 0);
    bounds.parkedWrite('b');
    assert.equal(bounds.admits('b', LIMITS, 0), false, 'parked bound at 3');
  });

  it('a bound older than its maximum age is counted again (other replicas write too)', () => {
    const bounds = new ShareBounds(1_000);
    bounds.counted('a', 0, 0, 5_000);
    assert.equal(bounds.admits('a', LIMITS, 5_999), true);
    assert.equal(bounds.admits('a', LIMITS, 6_000), false);
  });
});

/** A principal counted at 10 tasks at t=0, every task live until t=60 s, then `finished` created finished. */
function atQuota(finished: number, options: { soleWriter?: boolean } = { soleWriter: true }): ShareBounds {
  const bounds = new ShareBounds(Number.POSITIVE_INFINITY, options);
  bounds.counted('a', 10 - finished, 0, 0, 60_000);
  for (let i = 0; i < finished; i++) {
    bounds.created('a');
    bounds.createdFinished('a');
  }
  return bounds;
}

describe('ShareBounds.evictionWithoutCount', () => {
  it('a principal at its quota with a tenth created finished since its count gives it up uncounted', () => {
    const bounds = atQuota(3);
    assert.equal(bounds.admits('a', LIMITS, 1_000), false);
    assert.equal(bounds.evictionWithoutCount('a', LIMITS, 1_000), 1, 'a tenth of 10');
    assert.equal(bounds.admits('a', LIMITS, 1_000), false, 'the new task fills the room it made: 10 again');
    assert.equal(bounds.evictionWithoutCount('a', LIMITS, 1_000), 1);
    assert.equal(bounds.evictionWithoutCount('a', LIMITS, 1_000), 1);
    assert.equal(bounds.evictionWithoutCount('a', LIMITS, 1_000), 0, 'the three are spent: count it');
  });

  it('never for a store that does not see every write (replicas, workers sharing a file)', () => {
    assert.equal(atQuota(5, {}).evictionWithoutCount('a', LIMITS, 1_000), 0);
  });

  it('never once a task counted may have expired: the eviction would take live tasks it need not', () => {
    const bounds = atQuota(5);
    assert.equal(bounds.evictionWithoutCount('a', LIMITS, 59_999), 1);
    assert.equal(bounds.evictionWithoutCount('a', LIMITS, 60_000), 0);
  });

  it('never at the parked quota, never for a principal not counted, never after forget or forgetAll', () => {
    const parked = atQuota(5);
    for (let i = 0; i < 3; i++) parked.parkedWrite('a');
    assert.equal(parked.evictionWithoutCount('a', LIMITS, 0), 0);
    assert.equal(atQuota(5).evictionWithoutCount('b', LIMITS, 0), 0);
    const forgotten = atQuota(5);
    forgotten.forget('a');
    assert.equal(forgotten.evictionWithoutCount('a', LIMITS, 0), 0);
    const swept = atQuota(5);
    swept.forgetAll();
    assert.equal(swept.evictionWithoutCount('a', LIMITS, 0), 0);
  });

  it('a count starts the lower bound again from nothing (the count saw only the file)', () => {
    const bounds = atQuota(5);
    bounds.counted('a', 10, 0, 0, 60_000);
    assert.equal(bounds.evictionWithoutCount('a', LIMITS, 0), 0);
  });

  it('property: what it gives up uncounted never exceeds what was created finished since the count', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('created-finished', 'created', 'parked', 'evict'), { maxLength: 200 }),
        (steps) => {
          const bounds = new ShareBounds(Number.POSITIVE_INFINITY, { soleWriter: true });
          bounds.counted('a', 10, 0, 0, Number.POSITIVE_INFINITY);
          let credit = 0;
          for (const step of steps) {
            if (step === 'created-finished') {
              bounds.created('a');
              bounds.createdFinished('a');
              credit += 1;
            } else if (step === 'created') bounds.created('a');
            else if (step === 'parked') bounds.parkedWrite('a');
            else {
              const given = bounds.evictionWithoutCount('a', LIMITS, 0);
              credit -= given;
              assert.ok(credit >= 0, 'gave up more than it surely holds');
            }
          }
        },
      ),
    );
  });
});
