/**
 * Retention every task store shares: the defaults (10 000 tasks, 60 minutes idle, a sweep a
 * minute) and the checks of the values a configuration or a test hands a store.
 *
 * @example
 * ```ts
 * checkRetention('SqliteTaskStore', { maxTasks: 0, taskTtlMs: DEFAULT_TTL_MS, sweepIntervalMs: 60_000 });
 * // RangeError: SqliteTaskStore: maxTasks must be a positive integer
 * ```
 */

/** Retention when the options leave it out (the config loader applies the same). */
export const DEFAULT_MAX_TASKS = 10_000;
export const DEFAULT_TTL_MS = 60 * 60_000;
/** How often the retention sweep runs, and how many tasks one batch drops. */
export const DEFAULT_SWEEP_INTERVAL_MS = 60_000;
export const DEFAULT_SWEEP_BATCH = 1_000;
/** The largest delay `setInterval` honours; longer ones silently become 1 ms. */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * A store's retention settings, resolved (defaults applied).
 *
 * @example
 * ```ts
 * const retention: Retention = { maxTasks: 10_000, taskTtlMs: 3_600_000, sweepIntervalMs: 60_000, sweepBatch: 1_000 };
 * ```
 */
export interface Retention {
  readonly maxTasks: number;
  readonly taskTtlMs: number;
  readonly sweepIntervalMs: number;
  /** Durable stores only: most rows one sweep batch deletes. */
  readonly sweepBatch?: number;
}

/**
 * Refuses retention values a store cannot honour, naming the store and the option.
 *
 * @throws RangeError for a `maxTasks` or `sweepBatch` that is not a positive integer, a
 *   `taskTtlMs` that is not positive, or a `sweepIntervalMs` outside (0, {@link MAX_TIMER_MS}].
 * @example
 * ```ts
 * checkRetention('MemoryTaskStore', { maxTasks: 100, taskTtlMs: 60_000, sweepIntervalMs: 1_000 });
 * ```
 */
export function checkRetention(storeName: string, retention: Retention): void {
  const { maxTasks, taskTtlMs, sweepIntervalMs, sweepBatch } = retention;
  if (!Number.isSafeInteger(maxTasks) || maxTasks < 1) {
    throw new RangeError(`${storeName}: maxTasks must be a positive integer`);
  }
  if (!(taskTtlMs > 0)) throw new RangeError(`${storeName}: taskTtlMs must be positive`);
  if (!(sweepIntervalMs > 0 && sweepIntervalMs <= MAX_TIMER_MS)) {
    throw new RangeError(`${storeName}: sweepIntervalMs must be in (0, ${MAX_TIMER_MS}]`);
  }
  if (sweepBatch !== undefined && (!Number.isSafeInteger(sweepBatch) || sweepBatch < 1)) {
    throw new RangeError(`${storeName}: sweepBatch must be a positive integer`);
  }
}

/**
 * Retention options with the defaults applied (`sweepBatch` too), checked.
 *
 * @throws RangeError as {@link checkRetention}.
 * @example
 * ```ts
 * resolveRetention('PostgresTaskStore', { maxTasks: 50_000 }); // { maxTasks: 50000, taskTtlMs: 3600000, … }
 * ```
 */
export function resolveRetention(storeName: string, options: Partial<Retention>): Required<Retention> {
  const retention: Required<Retention> = {
    maxTasks: options.maxTasks ?? DEFAULT_MAX_TASKS,
    taskTtlMs: options.taskTtlMs ?? DEFAULT_TTL_MS,
    sweepIntervalMs: options.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS,
    sweepBatch: options.sweepBatch ?? DEFAULT_SWEEP_BATCH,
  };
  checkRetention(storeName, retention);
  return retention;
}
