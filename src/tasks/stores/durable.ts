/**
 * What the two database stores (SQLite, PostgreSQL) must agree on: the byte bounds of the keys
 * they index, the sweep pacing, the four filter shapes of ListTasks that each has one index
 * (and one statement) for, their clock, and the errors and checks of a put and of `failRunning`.
 * Their retention settings are in `retention.ts` (shared with the memory store), their ListTasks
 * in `durable-list.ts`.
 *
 * @example
 * ```ts
 * checkStorableKeys('SqliteTaskStore', owner, task); // throws TaskStoreInputError `unstorable_key`
 * filterShapeOf('ctx-1', undefined);                  // 'context'
 * ```
 */
import type { Task, TaskState } from '../../protocol/model.js';
import { TaskStoreInputError } from './errors.js';
import { isStorableKey } from './page-token.js';

/** The retention defaults, where the config loader reads them. */
export { DEFAULT_MAX_TASKS, DEFAULT_TTL_MS } from './retention.js';

/**
 * UTF-8 bytes of an owner key, task id and context id. PostgreSQL refuses a B-tree entry over
 * about 2.7 kB, and the context index holds all three: 1 024 + 640 + 640 leaves room for the rest.
 * SQLite keeps the same bounds, so a task that fits one store fits the other.
 */
export const MAX_OWNER_BYTES = 1_024;
export const MAX_ID_BYTES = 640;

/** How many batches one sweep run takes at most (each deletes up to `sweepBatch` rows). */
export const MAX_BATCHES_PER_SWEEP = 10;

/**
 * A database store's clock: whole ms (the columns are integers), and never backwards, so that a
 * step back of the wall clock cannot revive an expired task.
 *
 * @example
 * ```ts
 * const clock = new WholeMsClock(Date.now);
 * clock.now(); // 1767225600000
 * ```
 */
export class WholeMsClock {
  readonly #read: () => number;
  #last = Number.NEGATIVE_INFINITY;

  constructor(read: () => number) {
    this.#read = read;
  }

  now(): number {
    this.#last = Math.max(this.#last, Math.floor(this.#read()));
    return this.#last;
  }
}

/**
 * The refusal of a put whose id is another owner's live task. Deliberately vague: the message
 * may be logged, and owner keys are principals.
 *
 * @example
 * ```ts
 * waiter.reject(ownerConflict('PostgresTaskStore'));
 * ```
 */
export function ownerConflict(storeName: string): TaskStoreInputError {
  return new TaskStoreInputError('owner_conflict', `${storeName}: a task id cannot move to another owner`);
}

/**
 * `failRunning`'s replacement for one stored running task: `settle` applied to the parsed body.
 *
 * @throws Error if `settle` changed the task id.
 * @example
 * ```ts
 * const replacement = settleStoredTask('SqliteTaskStore', settle, row.owner, row.body);
 * ```
 */
export function settleStoredTask(
  storeName: string,
  settle: (task: Task, owner: string) => Task,
  owner: string,
  body: string,
): Task {
  const task = JSON.parse(body) as Task;
  const replacement = settle(task, owner);
  if (replacement.id !== task.id) throw new Error(`${storeName}: failRunning's settle must keep the task id`);
  return replacement;
}

/** Which ListTasks filters are set; each shape has its own index. */
export type FilterShape = 'owner' | 'context' | 'state' | 'contextState';

/**
 * The filter shape of a ListTasks query.
 *
 * @example
 * ```ts
 * filterShapeOf(undefined, 'working'); // 'state'
 * ```
 */
export function filterShapeOf(contextId: string | undefined, state: TaskState | undefined): FilterShape {
  if (contextId === undefined) return state === undefined ? 'owner' : 'state';
  return state === undefined ? 'context' : 'contextState';
}

/**
 * Refuses keys a database store cannot index: text with NUL or lone surrogates, or longer than
 * the bounds above.
 *
 * @example
 * ```ts
 * checkStorableKeys('PostgresTaskStore', 'client:a::@echo', task);
 * ```
 */
export function checkStorableKeys(storeName: string, owner: string, task: Task): void {
  if (
    !isStorableKey(owner, MAX_OWNER_BYTES) ||
    !isStorableKey(task.id, MAX_ID_BYTES) ||
    !isStorableKey(task.contextId, MAX_ID_BYTES)
  ) {
    throw new TaskStoreInputError(
      'unstorable_key',
      `${storeName}: owner, task id and context id must be text without NUL or lone surrogates, at most ${MAX_OWNER_BYTES}, ${MAX_ID_BYTES} and ${MAX_ID_BYTES} bytes`,
    );
  }
}

/** How long a counted `totalSize` is reused while the owner's tasks do not change here. */
export const TOTAL_SIZE_TTL_MS = 1_000;
const MAX_CACHED_TOTALS = 10_000;

/**
 * ListTasks' `totalSize`, counted once and reused for {@link TOTAL_SIZE_TTL_MS}: the count is
 * O(matching rows), the page O(log n + page), so paging through a large list would otherwise
 * cost a full count per page. Exact within this process: every write of an owner's task
 * (`changed`) and every deletion (`clear`) starts a new generation, and a count read before a
 * change is never stored after it. Writes made by other replicas show within the TTL.
 *
 * @example
 * ```ts
 * const at = totals.generation(owner);
 * const cached = totals.get(owner, at, filters, now);
 * const { count, oldest } = cached === undefined ? countRows() : { count: cached, oldest: 0 };
 * if (cached === undefined) totals.set(owner, at, filters, count, now, oldest + ttlMs);
 * ```
 */
export class TotalSizeCache {
  readonly #counts = new Map<string, { readonly count: number; readonly at: number; readonly until: number }>();
  readonly #generations = new Map<string, number>();
  #epoch = 0;

  /** The owner's current generation: pass it to `get` and `set` of one list. */
  generation(owner: string): number {
    return this.#epoch * 2 ** 26 + (this.#generations.get(owner) ?? 0);
  }

  get(owner: string, generation: number, filters: readonly unknown[], now: number): number | undefined {
    if (generation !== this.generation(owner)) return undefined;
    const hit = this.#counts.get(keyOf(owner, generation, filters));
    return hit !== undefined && now >= hit.at && now - hit.at < TOTAL_SIZE_TTL_MS && now < hit.until
      ? hit.count
      : undefined;
  }

  /**
   * Keeps a count read at `generation`, unless the owner's tasks changed since. `until`: when the
   * first counted task expires (its `updated_at` + TTL), after which the count would be too high.
   */
  set(owner: string, generation: number, filters: readonly unknown[], count: number, now: number, until: number): void {
    if (generation !== this.generation(owner)) return;
    if (this.#counts.size >= MAX_CACHED_TOTALS) this.#counts.clear();
    this.#counts.set(keyOf(owner, generation, filters), { count, at: now, until });
  }

  /** One of the owner's tasks was written: its counts are stale. */
  changed(owner: string): void {
    if (this.#generations.size >= MAX_CACHED_TOTALS) this.clear();
    this.#generations.set(owner, (this.#generations.get(owner) ?? 0) + 1);
  }

  /** Tasks were deleted (any owner's): every count is stale. */
  clear(): void {
    this.#counts.clear();
    this.#generations.clear();
    this.#epoch++;
  }
}

function keyOf(owner: string, generation: number, filters: readonly unknown[]): string {
  return JSON.stringify([owner, generation, ...filters]);
}
