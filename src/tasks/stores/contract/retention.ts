/**
 * The contract's retention: the idle TTL (an update restarts it, an expired id is free again),
 * the sweep, and `maxTasks` after a sweep (finished tasks least recently updated go first).
 *
 * @example
 * ```ts
 * describeRetention({ open, numRuns });
 * ```
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Task } from '../../../protocol/model.js';
import { ids, makeTask, walk, type ContractHarness } from './harness.js';

/**
 * Registers the contract's "retention" cases.
 *
 * @example
 * ```ts
 * describeRetention({ open, numRuns: 100 });
 * ```
 */
export function describeRetention({ open }: ContractHarness): void {
  void describe('retention', () => {
    void it('a task idle for the TTL is gone from get and list; an update restarts its TTL', async () => {
      const { store, clock } = await open({ taskTtlMs: 1000 });
      const start = clock.ms;
      await store.put('alice', makeTask({ id: 'idle' }));
      await store.put('alice', makeTask({ id: 'busy' }));
      clock.ms = start + 900;
      await store.put('alice', makeTask({ id: 'busy', at: 1 }));
      clock.ms = start + 999;
      assert.ok(await store.get('alice', 'idle'));
      assert.equal((await store.list('alice', { pageSize: 10 })).totalSize, 2);
      clock.ms = start + 1000;
      assert.equal(await store.get('alice', 'idle'), undefined);
      const page = await store.list('alice', { pageSize: 10 });
      assert.deepEqual(ids(page.tasks), ['busy']);
      assert.equal(page.totalSize, 1);
      assert.equal((await store.list('alice', { pageSize: 10, contextId: 'ctx-1', status: 'working' })).totalSize, 1);
      clock.ms = start + 1900;
      assert.deepEqual(await store.list('alice', { pageSize: 10 }), { tasks: [], nextPageToken: '', totalSize: 0 });
      assert.equal(await store.get('alice', 'busy'), undefined);
    });

    void it('an expired task is gone, so its id can be put again, even by another owner', async () => {
      const { store, clock } = await open({ taskTtlMs: 1000 });
      await store.put('alice', makeTask({ id: 't1' }));
      clock.ms += 1000;
      const bobs = makeTask({ id: 't1', state: 'submitted', at: 3 });
      await store.put('bob', bobs);
      assert.deepEqual(await store.get('bob', 't1'), bobs);
      assert.equal(await store.get('alice', 't1'), undefined);
      assert.equal((await store.list('alice', { pageSize: 10 })).totalSize, 0);
    });

    void it('a sweep drops expired tasks and leaves live ones readable', async () => {
      const { store, clock, sweep } = await open({ taskTtlMs: 1000 });
      const start = clock.ms;
      for (let i = 0; i < 10; i++) {
        clock.ms = start + i;
        await store.put('alice', makeTask({ id: `t${i}`, at: i }));
      }
      clock.ms = start + 1004;
      await sweep();
      assert.deepEqual(ids(await walk(store, 'alice', { pageSize: 3 })), ['t9', 't8', 't7', 't6', 't5']);
      clock.ms = start + 1005;
      await sweep();
      assert.deepEqual(ids(await walk(store, 'alice', { pageSize: 3 })), ['t9', 't8', 't7', 't6']);
    });

    void it('above maxTasks, a sweep leaves the newest tasks: finished ones least recently updated go first, running ones stay', async () => {
      const { store, clock, sweep } = await open({ maxTasks: 3 });
      const put = async (owner: string, task: Task): Promise<void> => {
        clock.ms += 1;
        await store.put(owner, task);
        await sweep();
      };
      await put('alice', makeTask({ id: 'done-old', state: 'completed', at: 1 }));
      await put('alice', makeTask({ id: 'running', state: 'working', at: 2 }));
      await put('bob', makeTask({ id: 'done-new', state: 'failed', at: 3 }));
      await put('alice', makeTask({ id: 'n1', state: 'submitted', at: 4 }));
      assert.equal(await store.get('alice', 'done-old'), undefined);
      assert.ok(await store.get('bob', 'done-new'));
      await put('alice', makeTask({ id: 'n2', state: 'submitted', at: 5 }));
      assert.equal(await store.get('bob', 'done-new'), undefined);
      assert.equal((await store.list('bob', { pageSize: 10 })).totalSize, 0, 'evicted tasks leave every listing');
      assert.deepEqual(ids((await store.list('alice', { pageSize: 10 })).tasks), ['n2', 'n1', 'running']);
    });

    void it('updating a finished task makes it the most recently updated one', async () => {
      const { store, clock, sweep } = await open({ maxTasks: 2 });
      const put = async (task: Task): Promise<void> => {
        clock.ms += 1;
        await store.put('alice', task);
        await sweep();
      };
      await put(makeTask({ id: 'a', state: 'completed', at: 1 }));
      await put(makeTask({ id: 'b', state: 'canceled', at: 2 }));
      await put(makeTask({ id: 'a', state: 'completed', at: 3 }));
      await put(makeTask({ id: 'c', state: 'working', at: 4 }));
      assert.ok(await store.get('alice', 'a'));
      assert.equal(await store.get('alice', 'b'), undefined);
      assert.ok(await store.get('alice', 'c'));
    });
  });
}
