/**
 * The contract's ListTasks: only the caller's tasks, an exact `totalSize`, the order and its
 * ties, every filter, and the checks of `pageSize` and `statusTimestampAfter`. Page tokens and
 * keyset paging are in `paging.ts`, registered in the same "list" group.
 *
 * @example
 * ```ts
 * describeList({ open, numRuns });
 * ```
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TaskQuery } from '../../store.js';
import { assertA2AError, BASE_MS, ids, makeTask, type ContractHarness } from './harness.js';
import { pagingCases } from './paging.js';

/**
 * Registers the contract's "list" cases (with the paging ones).
 *
 * @example
 * ```ts
 * describeList({ open, numRuns: 100 });
 * ```
 */
export function describeList(harness: ContractHarness): void {
  const { open } = harness;
  void describe('list', () => {
    void it('lists only the caller’s tasks, and totalSize does not reveal anyone else’s', async () => {
      const { store } = await open();
      for (let i = 0; i < 3; i++) await store.put('alice', makeTask({ id: `a${i}`, at: i }));
      for (let i = 0; i < 5; i++) await store.put('bob', makeTask({ id: `b${i}`, at: i }));
      const alice = await store.list('alice', { pageSize: 100 });
      assert.deepEqual(ids(alice.tasks), ['a2', 'a1', 'a0']);
      assert.equal(alice.totalSize, 3);
      assert.equal((await store.list('alice', { pageSize: 100, contextId: 'ctx-1' })).totalSize, 3);
      assert.deepEqual(await store.list('carol', { pageSize: 100 }), { tasks: [], nextPageToken: '', totalSize: 0 });
    });

    void it('totalSize is exact right after a write, on every page and filter (a counted total is never stale)', async () => {
      const { store, clock } = await open({ taskTtlMs: 10_000 });
      for (let i = 0; i < 5; i++) await store.put('alice', makeTask({ id: `t${i}`, at: i }));
      const first = await store.list('alice', { pageSize: 2 });
      assert.equal(first.totalSize, 5);
      const second = await store.list('alice', { pageSize: 2, pageToken: first.nextPageToken });
      assert.equal(second.totalSize, 5);
      await store.put('alice', makeTask({ id: 't5', at: 5 }));
      assert.equal((await store.list('alice', { pageSize: 2 })).totalSize, 6);
      assert.equal((await store.list('alice', { pageSize: 2, pageToken: first.nextPageToken })).totalSize, 6);
      await store.put('alice', makeTask({ id: 't0', at: 6, state: 'completed' }));
      assert.equal((await store.list('alice', { pageSize: 2, status: 'working' })).totalSize, 5);
      assert.equal((await store.list('alice', { pageSize: 2, status: 'completed' })).totalSize, 1);
      await store.put('bob', makeTask({ id: 'b0', at: 1 }));
      assert.equal((await store.list('alice', { pageSize: 2 })).totalSize, 6);
      clock.ms += 10_000;
      assert.equal((await store.list('alice', { pageSize: 2 })).totalSize, 0);
    });

    void it('a page token from one owner cannot reach another owner’s tasks', async () => {
      const { store } = await open();
      await store.put('bob', makeTask({ id: 'b1', at: 1 }));
      await store.put('bob', makeTask({ id: 'b2', at: 2 }));
      await store.put('alice', makeTask({ id: 'a1', at: 0 }));
      const bobPage = await store.list('bob', { pageSize: 1 });
      const alicePage = await store.list('alice', { pageSize: 10, pageToken: bobPage.nextPageToken });
      assert.deepEqual(ids(alicePage.tasks), ['a1']);
      assert.equal(alicePage.totalSize, 1);
    });

    void it('newest status first, ties broken by id descending; the last page has an empty token', async () => {
      const { store } = await open();
      await store.put('alice', makeTask({ id: 'x', at: 1000 }));
      await store.put('alice', makeTask({ id: 'a', at: 2000 }));
      await store.put('alice', makeTask({ id: 'b', at: 2000 }));
      await store.put('alice', makeTask({ id: 'c', at: 0 }));
      const first = await store.list('alice', { pageSize: 2 });
      assert.deepEqual(ids(first.tasks), ['b', 'a']);
      assert.notEqual(first.nextPageToken, '');
      assert.equal(first.totalSize, 4);
      const second = await store.list('alice', { pageSize: 2, pageToken: first.nextPageToken });
      assert.deepEqual(ids(second.tasks), ['x', 'c']);
      assert.equal(second.nextPageToken, '', 'no token that would only lead to an empty page');
      assert.equal(second.totalSize, 4);
    });

    void it('an empty pageToken means the first page', async () => {
      const { store } = await open();
      await store.put('alice', makeTask({ id: 't1' }));
      assert.deepEqual(ids((await store.list('alice', { pageSize: 5, pageToken: '' })).tasks), ['t1']);
    });

    void it('filters by contextId, status and statusTimestampAfter (inclusive), alone and combined', async () => {
      const { store } = await open();
      await store.put('alice', makeTask({ id: 't1', contextId: 'c1', state: 'working', at: 1000 }));
      await store.put('alice', makeTask({ id: 't2', contextId: 'c1', state: 'completed', at: 2000 }));
      await store.put('alice', makeTask({ id: 't3', contextId: 'c2', state: 'completed', at: 3000 }));
      await store.put('alice', makeTask({ id: 't4', contextId: 'c2', state: 'working', at: 4000 }));
      const list = async (query: Omit<TaskQuery, 'pageSize'>): Promise<[string[], number]> => {
        const page = await store.list('alice', { pageSize: 100, ...query });
        return [ids(page.tasks), page.totalSize];
      };
      assert.deepEqual(await list({}), [['t4', 't3', 't2', 't1'], 4]);
      assert.deepEqual(await list({ contextId: 'c1' }), [['t2', 't1'], 2]);
      assert.deepEqual(await list({ status: 'completed' }), [['t3', 't2'], 2]);
      assert.deepEqual(await list({ statusTimestampAfter: BASE_MS + 2000 }), [['t4', 't3', 't2'], 3]);
      assert.deepEqual(await list({ statusTimestampAfter: BASE_MS + 2001 }), [['t4', 't3'], 2]);
      assert.deepEqual(await list({ contextId: 'c2', status: 'working' }), [['t4'], 1]);
      assert.deepEqual(await list({ contextId: 'c2', statusTimestampAfter: BASE_MS + 3500 }), [['t4'], 1]);
      assert.deepEqual(await list({ status: 'working', statusTimestampAfter: BASE_MS + 1000 }), [['t4', 't1'], 2]);
      assert.deepEqual(await list({ contextId: 'c1', status: 'completed', statusTimestampAfter: BASE_MS + 2000 }), [
        ['t2'],
        1,
      ]);
      assert.deepEqual(await list({ contextId: 'c3' }), [[], 0]);
      assert.deepEqual(await list({ status: 'rejected' }), [[], 0]);
    });

    void it('statusTimestampAfter may be fractional, negative or far out of any date range', async () => {
      const { store } = await open();
      await store.put('alice', makeTask({ id: 't1', at: 0 }));
      await store.put('alice', makeTask({ id: 't2', at: 1 }));
      const count = async (statusTimestampAfter: number): Promise<number> =>
        (await store.list('alice', { pageSize: 10, statusTimestampAfter })).totalSize;
      assert.equal(await count(BASE_MS + 0.5), 1);
      assert.equal(await count(BASE_MS - 0.5), 2);
      assert.equal(await count(-1e300), 2);
      assert.equal(await count(1e300), 0);
      assert.equal(await count(-Number.MAX_VALUE), 2);
      assert.equal(await count(Number.MAX_SAFE_INTEGER), 0);
    });

    void it('pageSize and statusTimestampAfter out of range are INVALID_PARAMS', async () => {
      const { store } = await open();
      for (const pageSize of [0, 101, 1.5, Number.NaN, -1]) {
        await assert.rejects(store.list('alice', { pageSize }), (error) =>
          assertA2AError(error, 'INVALID_PARAMS', 'pageSize'),
        );
      }
      for (const statusTimestampAfter of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
        await assert.rejects(store.list('alice', { pageSize: 1, statusTimestampAfter }), (error) =>
          assertA2AError(error, 'INVALID_PARAMS', 'statusTimestampAfter'),
        );
      }
    });

    pagingCases(harness);
  });
}
