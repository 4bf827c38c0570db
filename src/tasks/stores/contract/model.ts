/**
 * The contract suite's reference model, the obvious O(n log n) ListTasks, and the fast-check
 * arbitraries of puts and queries that the paging properties compare a store against it with.
 *
 * @example
 * ```ts
 * const model: Model = new Map();
 * await applyPuts(store, model, puts.map((put) => scopedPut(run, put)));
 * assert.deepEqual(ids(await walk(store, owner, query)), ids(expectedList(model, owner, query)));
 * ```
 */
import fc from 'fast-check';
import { TASK_STATES } from '../../../protocol/model.js';
import type { Task, TaskState } from '../../../protocol/model.js';
import type { TaskQuery, TaskStore } from '../../store.js';
import { BASE_MS, makeTask } from './harness.js';

export type Model = Map<string, { owner: string; task: Task }>;

export function statusMs(task: Task): number {
  return Date.parse(task.status.timestamp);
}

/** Negative if a comes first in list order (newest first, then id descending). */
export function listOrder(a: Task, b: Task): number {
  const aMs = statusMs(a);
  const bMs = statusMs(b);
  if (aMs !== bMs) return bMs - aMs;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

export function expectedList(model: Model, owner: string, query: Omit<TaskQuery, 'pageSize'>): Task[] {
  return [...model.values()]
    .filter((row) => row.owner === owner)
    .map((row) => row.task)
    .filter((task) => query.contextId === undefined || task.contextId === query.contextId)
    .filter((task) => query.status === undefined || task.status.state === query.status)
    .filter((task) => query.statusTimestampAfter === undefined || statusMs(task) >= query.statusTimestampAfter)
    .sort(listOrder);
}

export type Put = { owner: string; task: Task };

/**
 * A put against small pools of owners, ids, contexts and timestamps, so that ties and
 * replacements are common. `run` keeps property runs apart in one shared store.
 */
export function putArbitrary(): fc.Arbitrary<{
  owner: string;
  n: number;
  contextId: string;
  state: TaskState;
  at: number;
}> {
  return fc.record({
    owner: fc.constantFrom('alice', 'bob'),
    n: fc.integer({ min: 0, max: 11 }),
    contextId: fc.constantFrom('c1', 'c2', 'c3'),
    state: fc.constantFrom(...TASK_STATES),
    at: fc.integer({ min: 0, max: 15 }).map((step) => step * 1000),
  });
}

export function scopedPut(
  run: number,
  put: { owner: string; n: number; contextId: string; state: TaskState; at: number },
): Put {
  const owner = `r${run}:${put.owner}`;
  // The id encodes the owner: the same id is never put by two owners, which would be a bug.
  return { owner, task: makeTask({ id: `${owner}-${put.n}`, contextId: put.contextId, state: put.state, at: put.at }) };
}

export const queryArbitrary = fc.record(
  {
    owner: fc.constantFrom('alice', 'bob', 'carol'),
    contextId: fc.constantFrom('c1', 'c2', 'c3'),
    status: fc.constantFrom(...TASK_STATES),
    statusTimestampAfter: fc.integer({ min: -1, max: 16 }).map((step) => BASE_MS + step * 1000),
    pageSize: fc.integer({ min: 1, max: 7 }),
  },
  { requiredKeys: ['owner', 'pageSize'] },
);

export async function applyPuts(store: TaskStore, model: Model, puts: readonly Put[]): Promise<void> {
  for (const { owner, task } of puts) {
    await store.put(owner, task);
    model.set(task.id, { owner, task });
  }
}
