/**
 * What the two database stores (SQLite, PostgreSQL) must agree on: the byte bounds of the keys
 * they index, the retention defaults, the sweep pacing, and the four filter shapes of ListTasks
 * that each has one index (and one statement) for.
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

/**
 * UTF-8 bytes of an owner key, task id and context id. PostgreSQL refuses a B-tree entry over
 * about 2.7 kB, and the context index holds all three: 1 024 + 640 + 640 leaves room for the rest.
 * SQLite keeps the same bounds, so a task that fits one store fits the other.
 */
export const MAX_OWNER_BYTES = 1_024;
export const MAX_ID_BYTES = 640;

/** Retention when the options leave it out (the config loader applies the same). */
export const DEFAULT_MAX_TASKS = 10_000;
export const DEFAULT_TTL_MS = 60 * 60_000;
/** How often the retention sweep runs, how many rows one batch deletes, how many batches one run takes. */
export const DEFAULT_SWEEP_INTERVAL_MS = 60_000;
export const DEFAULT_SWEEP_BATCH = 1_000;
export const MAX_BATCHES_PER_SWEEP = 10;
/** The largest delay `setInterval` honours; longer ones silently become 1 ms. */
export const MAX_TIMER_MS = 2_147_483_647;

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
