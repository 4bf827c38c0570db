/**
 * The memory store builds an owner's ListTasks indexes on its first list and keeps them from
 * then on (`indexes.ts`). Differential property: a store that lists only now and then answers
 * every list exactly as one that lists after every put (its indexes built from the start), through
 * replacements, state and timestamp changes, moves between contexts, evictions at the cap and
 * owners whose last task leaves (their indexes dropped and built again); and an owner that never
 * lists gets its indexes when it reaches `INDEX_AT_TASKS` tasks, right from then on.
 *
 * @example
 * ```sh
 * node --import tsx --test src/tasks/stores/memory/indexes.test.ts
 * ```
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { TASK_STATES } from '../../../protocol/model.js';
import type { Task, TaskState } from '../../../protocol/model.js';
import type { TaskPage, TaskQuery } from '../../store.js';
import { ids, walk } from '../contract/harness.js';
import { expectedList, type Model } from '../contract/model.js';
import { MemoryTaskStore } from '../memory.js';
import { INDEX_AT_TASKS } from './indexes.js';

const BASE_MS = Date.parse('2026-01-01T00:00:00.000Z');
const OWNERS = ['alice', 'bob', 'carol@a', 'carol@b'] as const;

type Op =
  | { kind: 'put'; owner: number; n: number; contextId: string; state: TaskState; at: number }
  | { kind: 'list'; owner: number; query: Omit<TaskQuery, 'pageToken'> };

const putOp: fc.Arbitrary<Op> = fc.record({
  kind: fc.constant('put' as const),
  owner: fc.integer({ min: 0, max: OWNERS.length - 1 }),
  n: fc.integer({ min: 0, max: 9 }),
  contextId: fc.constantFrom('c1', 'c2', 'c3'),
  state: fc.constantFrom(...TASK_STATES),
  at: fc.integer({ min: 0, max: 6 }).map((step) => step * 1000),
});

const listOp: fc.Arbitrary<Op> = fc.record({
  kind: fc.constant('list' as const),
  owner: fc.integer({ min: 0, max: OWNERS.length - 1 }),
  query: fc.record(
    {
      contextId: fc.constantFrom('c1', 'c2', 'c3'),
      status: fc.constantFrom(...TASK_STATES),
      statusTimestampAfter: fc.integer({ min: -1, max: 7 }).map((step) => BASE_MS + step * 1000),
      pageSize: fc.integer({ min: 1, max: 5 }),
    },
    { requiredKeys: ['pageSize'] },
  ),
});

function task(op: Extract<Op, { kind: 'put' }>): Task {
  // The id names its owner: one id is never put by two owners.
  return {
    id: `${OWNERS[op.owner]}-${op.n}`,
    contextId: op.contextId,
    status: { state: op.state, timestamp: new Date(BASE_MS + op.at).toISOString() },
    artifacts: [],
    history: [],
  };
}

/** Every page of a listing as the store answered it (tasks, totals and tokens), to the last. */
async function pagesOf(
  store: MemoryTaskStore,
  owner: string,
  query: Omit<TaskQuery, 'pageToken'>,
): Promise<TaskPage[]> {
  const pages: TaskPage[] = [];
  let pageToken: string | undefined;
  do {
    assert.ok(pages.length <= 100, 'a listing must end');
    const page = await store.list(owner, { ...query, pageToken });
    pages.push(page);
    pageToken = page.nextPageToken;
  } while (pageToken !== '');
  return pages;
}

async function outcome(run: () => Promise<unknown>): Promise<unknown> {
  try {
    return { ok: await run() };
  } catch (error) {
    return { error: error instanceof Error ? error.name : String(error) };
  }
}

test('property: indexes built on the first list answer as indexes kept from the start', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.oneof({ arbitrary: putOp, weight: 4 }, { arbitrary: listOp, weight: 1 }), {
        maxLength: 80,
        size: 'max',
      }),
      fc.integer({ min: 3, max: 12 }),
      async (ops, maxTasks) => {
        // A clock that stands still: a list then drops nothing that a put would not.
        const options = { maxTasks, maxTasksPerPrincipal: 5, taskTtlMs: 60_000, now: () => 0 };
        const lazy = new MemoryTaskStore(options);
        const eager = new MemoryTaskStore(options);
        try {
          for (const op of ops) {
            const owner = OWNERS[op.owner]!;
            if (op.kind === 'put') {
              const put = (store: MemoryTaskStore) => () => store.put(owner, task(op));
              assert.deepEqual(await outcome(put(lazy)), await outcome(put(eager)));
              // Every owner with a task is listed: the eager store's indexes always exist.
              for (const other of OWNERS) await eager.list(other, { pageSize: 1 });
            } else {
              assert.deepEqual(await pagesOf(lazy, owner, op.query), await pagesOf(eager, owner, op.query));
            }
          }
          for (const owner of OWNERS) {
            assert.deepEqual(await pagesOf(lazy, owner, { pageSize: 3 }), await pagesOf(eager, owner, { pageSize: 3 }));
          }
        } finally {
          await lazy.close();
          await eager.close();
        }
      },
    ),
    { numRuns: 300 },
  );
});

test('an owner that has never listed gets its first page right after puts, replacements and evictions', async () => {
  const store = new MemoryTaskStore({ maxTasks: 4, now: () => 0 });
  const at = (ms: number): string => new Date(BASE_MS + ms).toISOString();
  const put = (id: string, contextId: string, state: TaskState, ms: number): Promise<void> =>
    store.put('alice', { id, contextId, status: { state, timestamp: at(ms) }, artifacts: [], history: [] });
  await put('t1', 'c1', 'completed', 1000);
  await put('t2', 'c1', 'working', 2000);
  await put('t3', 'c2', 'completed', 3000);
  await put('t2', 'c1', 'completed', 4000);
  await put('t4', 'c2', 'working', 5000);
  await put('t5', 'c3', 'working', 6000); // at the cap: t1, the oldest finished, goes
  const all = await store.list('alice', { pageSize: 10 });
  assert.deepEqual(
    all.tasks.map((t) => t.id),
    ['t5', 't4', 't2', 't3'],
  );
  const c1 = await store.list('alice', { pageSize: 10, contextId: 'c1' });
  assert.deepEqual(
    c1.tasks.map((t) => [t.id, t.status.state]),
    [['t2', 'completed']],
  );
  const done = await store.list('alice', { pageSize: 10, status: 'completed', contextId: 'c2' });
  assert.deepEqual(
    done.tasks.map((t) => t.id),
    ['t3'],
  );
  // Kept up to date from here on.
  await put('t4', 'c2', 'completed', 7000);
  const after = await store.list('alice', { pageSize: 10, status: 'completed', contextId: 'c2' });
  assert.deepEqual(
    after.tasks.map((t) => t.id),
    ['t4', 't3'],
  );
  await store.close();
});

test('an owner that reaches INDEX_AT_TASKS without listing gets its indexes then, and they stay right', async () => {
  const total = INDEX_AT_TASKS + 40;
  const store = new MemoryTaskStore({ maxTasks: total, maxTasksPerPrincipal: total, now: () => 0 });
  const model: Model = new Map();
  const put = async (n: number, state: TaskState, at: number): Promise<void> => {
    const task: Task = {
      id: `t${n}`,
      contextId: `c${n % 7}`,
      status: { state, timestamp: new Date(BASE_MS + at).toISOString() },
      artifacts: [],
      history: [],
    };
    await store.put('alice', task);
    model.set(task.id, { owner: 'alice', task });
  };
  // Before any list: no indexes one task short of the threshold, built at it.
  const indexesOfAlice = (): unknown =>
    (store as unknown as { owners: Map<string, { indexes: unknown }> }).owners.get('alice')?.indexes;
  for (let n = 0; n < total; n++) {
    await put(n, n % 3 === 0 ? 'completed' : 'working', (n * 37) % 1000);
    if (n === INDEX_AT_TASKS - 2) assert.equal(indexesOfAlice(), undefined);
    if (n === INDEX_AT_TASKS - 1) assert.notEqual(indexesOfAlice(), undefined);
  }
  // Replacements after the build: new states, new times, old and new tasks alike.
  for (let n = 0; n < total; n += 13) await put(n, 'failed', 2000 + n);
  for (const query of [
    {},
    { contextId: 'c3' },
    { status: 'working' as const },
    { contextId: 'c5', status: 'failed' as const },
  ]) {
    const listed = ids(await walk(store, 'alice', { ...query, pageSize: 100 }));
    assert.deepEqual(listed, ids(expectedList(model, 'alice', query)), JSON.stringify(query));
  }
  await store.close();
});
