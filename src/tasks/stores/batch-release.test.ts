import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inBatchRelease, releaseBatch } from './batch-release.js';

describe('batch release', () => {
  it("is true in the released callers' continuations, however deep their microtasks go, and false once they have run", async () => {
    const seen: boolean[] = [];
    let resolve!: () => void;
    const put = new Promise<void>((settle) => (resolve = settle));
    const caller = (async () => {
      await put;
      seen.push(inBatchRelease());
      for (let hop = 0; hop < 20; hop++) await Promise.resolve();
      seen.push(inBatchRelease());
    })();
    assert.equal(inBatchRelease(), false);
    await new Promise<void>((done) =>
      setImmediate(() => {
        releaseBatch(resolve);
        done();
      }),
    );
    await caller;
    await new Promise<void>((done) => process.nextTick(done));
    assert.deepEqual(seen, [true, true]);
    assert.equal(inBatchRelease(), false, 'cleared once the microtasks ran out');
  });

  it('is false outside a release, and a release inside a release changes nothing', async () => {
    assert.equal(inBatchRelease(), false);
    let inner: boolean | undefined;
    releaseBatch(() => releaseBatch(() => (inner = inBatchRelease())));
    assert.equal(inner, true);
    await new Promise<void>((done) => setImmediate(done));
    assert.equal(inBatchRelease(), false);
  });
});
