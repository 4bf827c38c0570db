/**
 * The TaskStore contract suite's harness: what a store factory gets and returns, the hand-moved
 * clock, the task builder and the small helpers every behaviour file uses.
 *
 * @example
 * ```ts
 * const { store, clock, sweep } = await harness.open({ maxTasks: 3 });
 * await store.put('alice', makeTask({ id: 't1', state: 'completed', at: 5 }));
 * ```
 */
import assert from 'node:assert/strict';
import { A2AError } from '../../../protocol/errors.js';
import type { Task, TaskState } from '../../../protocol/model.js';
import type { TaskQuery, TaskStore } from '../../store.js';
import type { FairShareLimits } from '../fair-shares.js';

/**
 * What a store factory gets: retention settings and the clock the test moves by hand.
 *
 * @example
 * ```ts
 * const options: TaskStoreTestOptions = { now: () => clock.ms, maxTasks: 3 };
 * ```
 */
export interface TaskStoreTestOptions extends FairShareLimits {
  /** Clock for the idle TTL (and `updated_at`), in ms; the suite starts it at a 2026 wall-clock time. */
  now: () => number;
  maxTasks?: number;
  taskTtlMs?: number;
}

/**
 * A store under test and how to drive it.
 *
 * @example
 * ```ts
 * const underTest: TaskStoreUnderTest = { store, sweep: async () => void (await store.sweep()), cleanup: () => store.close() };
 * ```
 */
export interface TaskStoreUnderTest {
  store: TaskStore;
  /** Runs one retention sweep now (the suite calls it until it reports nothing more to do). */
  sweep: () => Promise<number | void>;
  /** Closes the store and removes whatever it left behind (files, schemas). */
  cleanup: () => Promise<void>;
}

/**
 * Makes a fresh, empty store for one test.
 *
 * @example
 * ```ts
 * const make: MakeTaskStore = async (options) => ({ store: new MemoryTaskStore(options), sweep: async () => 0, cleanup: async () => {} });
 * ```
 */
export type MakeTaskStore = (options: TaskStoreTestOptions) => Promise<TaskStoreUnderTest>;

/**
 * How hard the properties try. A database store pays a round trip per call, so its suite may
 * run fewer cases than the memory store's.
 *
 * @example
 * ```ts
 * const settings: TaskStoreContractSettings = { numRuns: 100 };
 * ```
 */
export interface TaskStoreContractSettings {
  /** fast-check runs per property. Default 100. */
  numRuns?: number;
}

/** Status timestamps are offsets from this (`makeTask`'s `at`). */
export const BASE_MS = Date.parse('2026-01-01T00:00:00.000Z');
/** Where the hand-moved clock starts: a plausible wall-clock time, as durable stores keep it. */
export const CLOCK_START_MS = Date.parse('2026-06-01T00:00:00.000Z');
export const HOUR_MS = 60 * 60_000;

/**
 * A task to put: its id, and optionally its context, state and status timestamp.
 *
 * @example
 * ```ts
 * const spec: TaskSpec = { id: 't1', contextId: 'c1', state: 'completed', at: 5 };
 * ```
 */
export interface TaskSpec {
  id: string;
  contextId?: string;
  state?: TaskState;
  /** Status timestamp, as an offset in ms from BASE_MS. */
  at?: number;
}

/**
 * A task with empty artifacts and history (context `ctx-1`, `working`, at BASE_MS by default).
 *
 * @example
 * ```ts
 * makeTask({ id: 't1', state: 'completed', at: 1000 });
 * ```
 */
export function makeTask({ id, contextId = 'ctx-1', state = 'working', at = 0 }: TaskSpec): Task {
  return {
    id,
    contextId,
    status: { state, timestamp: new Date(BASE_MS + at).toISOString() },
    artifacts: [],
    history: [],
  };
}

/**
 * The ids of tasks, in order.
 *
 * @example
 * ```ts
 * assert.deepEqual(ids(page.tasks), ['t2', 't1']);
 * ```
 */
export function ids(tasks: readonly Task[]): string[] {
  return tasks.map((task) => task.id);
}

/**
 * Every task of a listing, following the page tokens to the end.
 *
 * @example
 * ```ts
 * const all = await walk(store, 'alice', { pageSize: 3 });
 * ```
 */
export async function walk(store: TaskStore, owner: string, query: TaskQuery): Promise<Task[]> {
  const seen: Task[] = [];
  let pageToken: string | undefined;
  for (let pages = 0; ; pages++) {
    assert.ok(pages <= 1_000, 'a walk must end');
    const page = await store.list(owner, { ...query, pageToken });
    seen.push(...page.tasks);
    if (page.nextPageToken === '') return seen;
    pageToken = page.nextPageToken;
  }
}

/**
 * An `assert.rejects` predicate: an A2AError with this code (and field).
 *
 * @example
 * ```ts
 * await assert.rejects(store.list('alice', { pageSize: 0 }), (error) => assertA2AError(error, 'INVALID_PARAMS', 'pageSize'));
 * ```
 */
export function assertA2AError(error: unknown, code: string, field?: string): true {
  assert.ok(error instanceof A2AError, `expected an A2AError, got ${String(error)}`);
  assert.equal(error.code, code);
  if (field !== undefined) assert.equal(error.field, field);
  return true;
}

/**
 * A fresh store for one test, with a hand-moved clock, closed and removed after the test.
 * `sweep` runs the store's retention sweep until it has nothing more to do.
 *
 * @example
 * ```ts
 * const { store, clock, sweep } = await open({ taskTtlMs: 1000 });
 * ```
 */
export type OpenStore = (
  options?: Omit<TaskStoreTestOptions, 'now'>,
) => Promise<{ store: TaskStore; clock: { ms: number }; sweep: () => Promise<void> }>;

/**
 * What each behaviour file of the suite gets: how to open a store, and how hard properties try.
 *
 * @example
 * ```ts
 * describeRetention({ open, numRuns: 100 });
 * ```
 */
export interface ContractHarness {
  readonly open: OpenStore;
  readonly numRuns: number;
}
