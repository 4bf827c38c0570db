/**
 * The contract's fair shares: a new task (`put` with `CREATED`) is held to its principal's quota
 * over all its agents; at the quota its own oldest finished task makes room, never another
 * principal's; with none finished, or over the parked quota, it is refused with a CapacityError
 * naming the quota (reported as an event) and nothing is evicted; updates are never refused;
 * a parked task idle for the parked TTL is failed by the sweep, saying why (reported too).
 *
 * @example
 * ```ts
 * describeShares({ open, numRuns });
 * ```
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CapacityError } from '../../policy.js';
import { CREATED } from '../../store.js';
import { PARKED_EXPIRED_TEXT, type TaskStoreEvent } from '../fair-shares.js';
import { makeTask, type ContractHarness } from './harness.js';

/** Two agents of one principal, and another principal whose key has the first as a prefix. */
const ALICE_ECHO = 'client:alice@echo';
const ALICE_WRITER = 'client:alice@writer';
const ALICE_MAIL = 'client:alice@example.com@echo';
const BOB = 'client:bob@echo';

function refusedFor(quota: string): (error: unknown) => true {
  return (error) => {
    assert.ok(error instanceof CapacityError, `expected a CapacityError, got ${String(error)}`);
    assert.equal(error.quota, quota);
    assert.match(error.message, quota === 'task_quota' ? /maxTasksPerPrincipal/ : /maxParkedTasksPerPrincipal/);
    return true;
  };
}

/**
 * Registers the contract's "fair shares" cases.
 *
 * @example
 * ```ts
 * describeShares({ open, numRuns: 100 });
 * ```
 */
export function describeShares({ open }: ContractHarness): void {
  void describe('fair shares', () => {
    void it('at its task quota a principal gives up its own oldest finished task, over all its agents', async () => {
      const { store, clock } = await open({ maxTasksPerPrincipal: 3 });
      const put = async (owner: string, id: string, state: 'completed' | 'working'): Promise<void> => {
        clock.ms += 1;
        await store.put(owner, makeTask({ id, state }), CREATED);
      };
      await put(BOB, 'bob-done', 'completed');
      await put(ALICE_ECHO, 'a-done-old', 'completed');
      await put(ALICE_WRITER, 'a-done-new', 'completed');
      await put(ALICE_ECHO, 'a-running', 'working');
      await put(ALICE_WRITER, 'a-new', 'working');
      assert.equal(await store.get(ALICE_ECHO, 'a-done-old'), undefined, 'its own oldest finished task went');
      assert.ok(await store.get(ALICE_WRITER, 'a-done-new'));
      assert.ok(await store.get(ALICE_WRITER, 'a-new'));
      assert.ok(await store.get(BOB, 'bob-done'), "another principal's task stays");
    });

    void it('with nothing finished, a new task over the quota is refused naming it; updates still land', async () => {
      const events: TaskStoreEvent[] = [];
      const { store, clock } = await open({ maxTasksPerPrincipal: 2, onEvent: (event) => events.push(event) });
      await store.put(ALICE_ECHO, makeTask({ id: 'a1' }), CREATED);
      await store.put(ALICE_WRITER, makeTask({ id: 'a2' }), CREATED);
      await store.put(BOB, makeTask({ id: 'b1', state: 'completed' }), CREATED);
      clock.ms += 1;
      await assert.rejects(store.put(ALICE_ECHO, makeTask({ id: 'a3' }), CREATED), refusedFor('task_quota'));
      assert.equal(await store.get(ALICE_ECHO, 'a3'), undefined);
      assert.ok(await store.get(BOB, 'b1'), 'nothing of anyone else was evicted for it');
      assert.deepEqual(events, [{ type: 'refused', owner: ALICE_ECHO, quota: 'task_quota' }]);
      await store.put(ALICE_ECHO, makeTask({ id: 'a1', state: 'completed', at: 1 }));
      assert.equal((await store.get(ALICE_ECHO, 'a1'))?.status.state, 'completed');
      await store.put(BOB, makeTask({ id: 'b2' }), CREATED);
      assert.ok(await store.get(BOB, 'b2'), 'another principal still creates tasks');
    });

    void it('new tasks put at once (none awaited) are held to the quota too: the rest are refused', async () => {
      // A durable store writes a turn's puts together: a count that missed the ones not yet
      // written admitted the whole burst.
      const { store } = await open({ maxTasksPerPrincipal: 10 });
      const results = await Promise.allSettled(
        Array.from({ length: 20 }, (_, i) => store.put(ALICE_ECHO, makeTask({ id: `burst-${i}` }), CREATED)),
      );
      assert.equal(results.filter((result) => result.status === 'fulfilled').length, 10);
      for (const result of results) if (result.status === 'rejected') refusedFor('task_quota')(result.reason);
      assert.equal((await store.list(ALICE_ECHO, { pageSize: 100 })).totalSize, 10);
    });

    void it('a principal whose key has another as its prefix has a share of its own', async () => {
      const { store } = await open({ maxTasksPerPrincipal: 1 });
      await store.put(ALICE_ECHO, makeTask({ id: 'a1' }), CREATED);
      await store.put(ALICE_MAIL, makeTask({ id: 'm1' }), CREATED);
      await assert.rejects(store.put(ALICE_MAIL, makeTask({ id: 'm2' }), CREATED), refusedFor('task_quota'));
      await assert.rejects(store.put(ALICE_WRITER, makeTask({ id: 'a2' }), CREATED), refusedFor('task_quota'));
    });

    void it('over its parked quota a principal is refused a new task; others are not', async () => {
      const { store } = await open({ maxParkedTasksPerPrincipal: 2 });
      await store.put(ALICE_ECHO, makeTask({ id: 'p1', state: 'input-required' }), CREATED);
      await store.put(ALICE_WRITER, makeTask({ id: 'p2', state: 'auth-required' }), CREATED);
      await assert.rejects(store.put(ALICE_ECHO, makeTask({ id: 'a3' }), CREATED), refusedFor('parked_quota'));
      await store.put(BOB, makeTask({ id: 'b1' }), CREATED);
      await store.put(ALICE_ECHO, makeTask({ id: 'p1', state: 'completed', at: 1 }));
      await store.put(ALICE_ECHO, makeTask({ id: 'a3' }), CREATED);
      assert.ok(await store.get(ALICE_ECHO, 'a3'), 'answering one frees the share');
    });

    void it('a parked task idle for the parked TTL is failed by the sweep, saying why; a touched one waits', async () => {
      const events: TaskStoreEvent[] = [];
      const { store, clock, sweep } = await open({
        parkedTtlMs: 1_000,
        taskTtlMs: 60_000,
        onEvent: (event) => events.push(event),
      });
      const start = clock.ms;
      await store.put(ALICE_ECHO, makeTask({ id: 'idle', state: 'input-required' }), CREATED);
      await store.put(ALICE_ECHO, makeTask({ id: 'touched', state: 'input-required' }), CREATED);
      await store.put(BOB, makeTask({ id: 'running' }), CREATED);
      clock.ms = start + 900;
      await store.put(ALICE_ECHO, makeTask({ id: 'touched', state: 'input-required', at: 1 }));
      clock.ms = start + 1_000;
      await sweep();
      const idle = await store.get(ALICE_ECHO, 'idle');
      assert.equal(idle?.status.state, 'failed');
      assert.equal(
        idle?.status.message?.parts[0]?.kind === 'text' && idle.status.message.parts[0].text,
        PARKED_EXPIRED_TEXT,
      );
      assert.equal((await store.get(ALICE_ECHO, 'touched'))?.status.state, 'input-required');
      assert.equal((await store.get(BOB, 'running'))?.status.state, 'working', 'running tasks are not parked');
      assert.deepEqual(
        events.map((event) =>
          event.type === 'parked_expired' ? [event.owner, event.task.id, event.task.status.state] : event,
        ),
        [[ALICE_ECHO, 'idle', 'failed']],
      );
      assert.equal((await store.list(ALICE_ECHO, { pageSize: 10, status: 'failed' })).totalSize, 1);
    });
  });
}
