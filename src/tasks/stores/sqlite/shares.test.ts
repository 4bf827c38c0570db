/**
 * The SQLite store's shares under bursts: new tasks queued in one event-loop turn are not in
 * the file until the group commit writes them, so a share count adds them. Without that a burst
 * at the quota was counted again every few creations (and admitted past it: the contract's
 * "fair shares" cases). An eviction at the quota is written in the same transaction as the turn's
 * new tasks, and a count in the same turn does not count the tasks it will delete.
 *
 * @example
 * ```sh
 * node --import tsx --test src/tasks/stores/sqlite/shares.test.ts
 * ```
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import type { Task, TaskState } from '../../../protocol/model.js';
import { CapacityError } from '../../policy.js';
import { CREATED } from '../../store.js';
import { SqliteTaskStore, type SqliteTaskStoreOptions } from '../sqlite.js';

const OWNER = 'client:alice@echo';
const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function openStore(
  maxTasksPerPrincipal: number,
  options: Omit<SqliteTaskStoreOptions, 'path'> = {},
): Promise<{ store: SqliteTaskStore; counts: () => number; path: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'airlock-shares-'));
  dirs.push(dir);
  const path = join(dir, 'airlock.db');
  const store = await SqliteTaskStore.open({ path, maxTasksPerPrincipal, ...options });
  // Counts the share counts the store makes (each one reads the principal's index entries).
  const statements = (store as unknown as { shareSql: { counts: { get: (params: unknown) => unknown } } }).shareSql;
  const get = statements.counts.get.bind(statements.counts);
  let made = 0;
  statements.counts.get = (params) => {
    made += 1;
    return get(params);
  };
  return { store, counts: () => made, path };
}

function task(id: string, state: TaskState): Task {
  return { id, contextId: 'c', status: { state, timestamp: new Date().toISOString() }, artifacts: [], history: [] };
}

/** `count` new tasks put in one turn (none awaited before the next is put). */
function burst(store: SqliteTaskStore, prefix: string, count: number, state: TaskState) {
  return Promise.allSettled(
    Array.from({ length: count }, (_, i) => store.put(OWNER, task(`${prefix}${i}`, state), CREATED)),
  );
}

describe('SQLite shares under a burst', () => {
  it('bursts at the quota evict the principal’s own finished tasks with one count per tenth of it', async () => {
    const { store, counts } = await openStore(100);
    try {
      for (let round = 0; round < 10; round++) {
        const results = await burst(store, `r${round}-`, 50, 'completed');
        assert.ok(results.every((result) => result.status === 'fulfilled'));
        assert.ok((await store.countTasks()) <= 100, `round ${round}: ${await store.countTasks()} stored`);
      }
      // 500 creations at a quota of 100, a tenth (10) evicted at a time at the least: about 40
      // counts; recounting every few creations made hundreds.
      assert.ok(counts() <= 50, `${counts()} share counts`);
    } finally {
      await store.close();
    }
  });

  it('an eviction at the quota lands in the transaction of the new task that needed the room', async () => {
    const { store, path } = await openStore(10);
    const reader = new Database(path, { readonly: true });
    const stored = (): number => (reader.prepare('SELECT count(*) AS n FROM tasks').get() as { n: number }).n;
    try {
      for (let i = 0; i < 10; i++) await store.put(OWNER, task(`old-${i}`, 'completed'), CREATED);
      const put = store.put(OWNER, task('new', 'working'), CREATED);
      // Decided, not written: another connection sees the ten tasks, not nine (an eviction
      // committed on its own before the task it made room for).
      assert.equal(stored(), 10);
      await put;
      assert.equal(stored(), 10);
      assert.equal(await store.get(OWNER, 'old-0'), undefined);
      assert.equal((await store.get(OWNER, 'new'))?.id, 'new');
    } finally {
      reader.close();
      await store.close();
    }
  });

  it('counts in one turn leave out the tasks that turn’s evictions will delete', async () => {
    const { store } = await openStore(10);
    try {
      for (let i = 0; i < 10; i++) await store.put(OWNER, task(`old-${i}`, 'completed'), CREATED);
      const results = await burst(store, 'new-', 5, 'working');
      assert.ok(results.every((result) => result.status === 'fulfilled'));
      // Five evicted for five created. Counting the queued evictions' tasks as still there, each
      // count asked for one more than the last: 15 evictions for 5 tasks, 5 left.
      assert.equal(await store.countTasks(), 10);
      for (let i = 0; i < 5; i++) assert.equal((await store.get(OWNER, `new-${i}`))?.id, `new-${i}`);
    } finally {
      await store.close();
    }
  });

  it('an eviction that could not run leaves the principal counted again, not admitted on a bound too low', async () => {
    const { store } = await openStore(100);
    try {
      for (let i = 0; i < 100; i++) await store.put(OWNER, task(`old-${i}`, 'completed'), CREATED);
      // The next eviction fails, in its batch and alone (a disk that refused it twice).
      const statements = (store as unknown as { shareSql: { evictOwnFinished: (params: unknown) => number } }).shareSql;
      const evict = statements.evictOwnFinished;
      let refusals = 2;
      statements.evictOwnFinished = (params) => {
        if (refusals > 0) {
          refusals -= 1;
          throw new Error('disk I/O error');
        }
        return evict(params);
      };
      await store.put(OWNER, task('new-0', 'working'), CREATED);
      assert.equal(refusals, 0);
      assert.equal(await store.countTasks(), 101, 'the task that needed the room was written');
      for (let i = 1; i < 10; i++) await store.put(OWNER, task(`new-${i}`, 'working'), CREATED);
      // Admitted on the bound the lost eviction left (100 - 10 + 1), nine more would make 110.
      assert.ok((await store.countTasks()) <= 100, `${await store.countTasks()} stored at a quota of 100`);
    } finally {
      await store.close();
    }
  });
});

/** How many tasks `owner` holds (live). */
async function held(store: SqliteTaskStore, owner: string): Promise<number> {
  return (await store.list(owner, { pageSize: 100 })).tasks.length;
}

describe('SQLite shares: a tenth given up without a count', () => {
  it('a principal creating finished tasks at its quota is counted once, then gives up a tenth at a time', async () => {
    const { store, counts } = await openStore(100);
    try {
      for (let i = 0; i < 400; i++) {
        await store.put(OWNER, task(`t${i}`, 'completed'), CREATED);
        assert.ok((await store.countTasks()) <= 100, `after ${i + 1}: ${await store.countTasks()} stored`);
      }
      assert.equal(await store.countTasks(), 100);
      // The first creation counts the principal; the 300 past its quota each found a tenth
      // created finished since, without a count (30 counts otherwise).
      assert.equal(counts(), 1);
    } finally {
      await store.close();
    }
  });

  it('tasks created unfinished give nothing up uncounted: the quota still refuses when none is finished', async () => {
    const { store, counts } = await openStore(10);
    try {
      for (let i = 0; i < 10; i++) await store.put(OWNER, task(`w${i}`, 'working'), CREATED);
      await assert.rejects(store.put(OWNER, task('w10', 'working'), CREATED), /none of them is finished/);
      assert.equal(await store.countTasks(), 10);
      assert.equal(counts(), 2);
    } finally {
      await store.close();
    }
  });

  it('once a task counted may have expired, the principal is counted again (no live task evicted early)', async () => {
    let now = 1_000_000;
    const { store } = await openStore(10, { now: () => now, taskTtlMs: 60_000 });
    try {
      for (let i = 0; i < 10; i++) await store.put(OWNER, task(`old-${i}`, 'completed'), CREATED);
      now += 59_000;
      await store.put(OWNER, task('new-0', 'completed'), CREATED); // at the quota: old-0 given up
      now += 2_000; // old-1..old-9 expired; new-0 is the principal's only live task
      await store.put(OWNER, task('new-1', 'completed'), CREATED);
      assert.equal((await store.get(OWNER, 'new-0'))?.id, 'new-0', 'new-0 was evicted while its principal had room');
      assert.equal(await held(store, OWNER), 2);
    } finally {
      await store.close();
    }
  });

  it('after the sweep deletes tasks, every principal is counted again', async () => {
    let now = 1_000_000;
    const { store } = await openStore(10, { now: () => now, maxTasks: 15 });
    try {
      for (let i = 0; i < 10; i++) {
        now += 1;
        await store.put(OWNER, task(`a-${i}`, 'completed'), CREATED);
      }
      for (let i = 0; i < 10; i++) {
        now += 1;
        await store.put('client:bob@echo', task(`b-${i}`, 'completed'), CREATED);
      }
      now += 1;
      assert.equal(store.sweep(), 5, 'the store over maxTasks gives up its five oldest finished: alice’s');
      assert.equal(await held(store, OWNER), 5);
      await store.put(OWNER, task('a-10', 'completed'), CREATED);
      assert.equal(await held(store, OWNER), 6, 'alice, under her quota, lost a task to a bound the sweep made wrong');
    } finally {
      await store.close();
    }
  });

  it('a new task that was not written leaves the principal counted again', async () => {
    const { store } = await openStore(10);
    try {
      for (let i = 0; i < 10; i++) await store.put(OWNER, task(`a-${i}`, 'completed'), CREATED);
      await store.put('client:bob@echo', task('taken', 'completed'), CREATED);
      // At her quota: a tenth given up for a task that is then refused (another owner's id).
      await assert.rejects(store.put(OWNER, task('taken', 'completed'), CREATED));
      assert.equal(await held(store, OWNER), 9);
      await store.put(OWNER, task('a-10', 'completed'), CREATED);
      assert.equal(await held(store, OWNER), 10, 'a bound one too high gave up a task she had room for');
    } finally {
      await store.close();
    }
  });

  it('workers sharing the file count at every tenth, as replicas do', async () => {
    const { store, counts } = await openStore(100, { sharedFile: true });
    try {
      for (let i = 0; i < 400; i++) await store.put(OWNER, task(`t${i}`, 'completed'), CREATED);
      assert.equal(await store.countTasks(), 100);
      assert.ok(counts() >= 31, `${counts()} counts`);
    } finally {
      await store.close();
    }
  });
});

describe('SQLite shares: workers sharing the file', () => {
  it('a bound is counted again once it is a second old, so another worker’s tasks hold the quota', async () => {
    let now = 1_000_000;
    const { store: first, path } = await openStore(10, { sharedFile: true, now: () => now });
    const second = await SqliteTaskStore.open({ path, maxTasksPerPrincipal: 10, sharedFile: true, now: () => now });
    try {
      for (let i = 0; i < 5; i++) await first.put(OWNER, task(`a-${i}`, 'completed'), CREATED);
      for (let i = 0; i < 5; i++) await second.put(OWNER, task(`b-${i}`, 'completed'), CREATED);
      now += 1_000;
      // The first worker's bound (5) does not see the second's five: past a second it counts 10.
      await first.put(OWNER, task('a-5', 'completed'), CREATED);
      assert.equal(await first.countTasks(), 10, 'admitted on a bound that missed the other worker’s tasks');
    } finally {
      await second.close();
      await first.close();
    }
  });
});

describe('SQLite shares: the eviction looks among the store’s oldest finished tasks first', () => {
  /** A store at a quota of 20 (a tenth: 2) on a clock the test moves, one millisecond a put. */
  async function clocked(): Promise<{ store: SqliteTaskStore; put: (owner: string, id: string) => Promise<void> }> {
    let now = 1_000_000;
    const { store } = await openStore(20, { now: () => now });
    return {
      store,
      put: async (owner, id) => {
        now += 1;
        await store.put(owner, task(id, 'completed'), CREATED);
      },
    };
  }
  const ids = async (store: SqliteTaskStore, owner: string): Promise<string[]> =>
    (await store.list(owner, { pageSize: 100 })).tasks.map((stored) => stored.id).sort();

  it('what the window holds of the principal goes first, the rest from its own oldest; no other principal’s task', async () => {
    const { store, put } = await clocked();
    try {
      // The store's age order: a-0, b-0, b-1, b-2, a-1 … a-19. The eviction of 2 reads a window of
      // 4 (a-0 and three of bob's), takes a-0 there, and a-1 from alice's own entries.
      await put(OWNER, 'a-0');
      for (let i = 0; i < 3; i++) await put('client:bob@echo', `b-${i}`);
      for (let i = 1; i < 20; i++) await put(OWNER, `a-${i}`);
      await put(OWNER, 'a-new');
      const alice = await ids(store, OWNER);
      assert.ok(!alice.includes('a-0') && !alice.includes('a-1'), `alice kept ${alice.join(' ')}`);
      assert.ok(alice.includes('a-2') && alice.includes('a-new'));
      assert.equal(alice.length, 19);
      assert.deepEqual(await ids(store, 'client:bob@echo'), ['b-0', 'b-1', 'b-2']);
    } finally {
      await store.close();
    }
  });

  it('a principal whose key extends another’s (client:alice@evil) is never taken for it, in the window or after', async () => {
    const { store, put } = await clocked();
    const nested = 'client:alice@evil@echo';
    try {
      // In alice's owner range, but another principal's: the window holds e-0, a-0, e-1, e-2.
      await put(nested, 'e-0');
      await put(OWNER, 'a-0');
      for (let i = 1; i < 3; i++) await put(nested, `e-${i}`);
      for (let i = 1; i < 20; i++) await put(OWNER, `a-${i}`);
      await put(OWNER, 'a-new');
      assert.deepEqual(await ids(store, nested), ['e-0', 'e-1', 'e-2']);
      const alice = await ids(store, OWNER);
      assert.ok(!alice.includes('a-0') && !alice.includes('a-1'), `alice kept ${alice.join(' ')}`);
      assert.equal(alice.length, 19);
    } finally {
      await store.close();
    }
  });

  it('a principal alone at its quota gives up its oldest in order, tenth after tenth', async () => {
    const { store, put } = await clocked();
    try {
      for (let i = 0; i < 20; i++) await put(OWNER, `a-${String(i).padStart(2, '0')}`);
      for (let i = 20; i < 60; i++) {
        await put(OWNER, `a-${String(i).padStart(2, '0')}`);
        const kept = await ids(store, OWNER);
        // The oldest are gone, two at a time: what is kept is always the newest, contiguous.
        const first = Number(kept[0]!.slice(2));
        assert.deepEqual(
          kept,
          Array.from({ length: i + 1 - first }, (_, k) => `a-${String(first + k).padStart(2, '0')}`),
        );
        assert.ok(kept.length >= 18 && kept.length <= 20, `${kept.length} kept`);
      }
    } finally {
      await store.close();
    }
  });
});

describe('SQLite shares: the eviction order (property)', () => {
  // Three principals, one of whose keys extends another's, and one with two agents (two owner keys).
  const OWNERS = ['client:alice@echo', 'client:alice@other', 'client:alice@evil@echo', 'client:bob@echo'];
  const principalOf = (owner: string): string => owner.slice(0, owner.lastIndexOf('@'));

  it('a principal gives up only its own finished tasks, oldest first, and only at its quota', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(10, 20),
        // Long enough for every principal to pass its quota several times.
        fc.array(fc.record({ owner: fc.constantFrom(...OWNERS), finished: fc.boolean() }), {
          minLength: 40,
          maxLength: 120,
        }),
        async (quota, puts) => {
          let now = 1_000_000;
          const { store } = await openStore(quota, { now: () => now });
          try {
            const accepted: { owner: string; id: string; finished: boolean }[] = [];
            for (const [i, put] of puts.entries()) {
              now += 1;
              const id = `t-${i}`;
              try {
                await store.put(put.owner, task(id, put.finished ? 'completed' : 'working'), CREATED);
                accepted.push({ owner: put.owner, id, finished: put.finished });
              } catch (error) {
                assert.ok(error instanceof CapacityError, String(error));
              }
            }
            const kept = new Set<string>();
            for (const owner of OWNERS)
              for (const stored of (await store.list(owner, { pageSize: 100 })).tasks) kept.add(stored.id);
            for (const principal of new Set(OWNERS.map(principalOf))) {
              const mine = accepted.filter((entry) => principalOf(entry.owner) === principal);
              const held = mine.filter((entry) => kept.has(entry.id));
              assert.ok(held.length <= quota, `${principal}: ${held.length} held at a quota of ${quota}`);
              if (mine.length <= quota)
                assert.equal(held.length, mine.length, `${principal} lost a task below its quota`);
              // Unfinished tasks are never evicted; the finished ones kept are the newest.
              for (const entry of mine)
                if (!entry.finished) assert.ok(kept.has(entry.id), `${entry.id} (working) evicted`);
              const finished = mine.filter((entry) => entry.finished);
              const firstKept = finished.findIndex((entry) => kept.has(entry.id));
              if (firstKept !== -1) {
                for (const entry of finished.slice(firstKept)) {
                  assert.ok(kept.has(entry.id), `${principal}: ${entry.id} evicted before an older finished task`);
                }
              }
            }
          } finally {
            await store.close();
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});
