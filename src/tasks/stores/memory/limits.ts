/**
 * The memory store's own tuning beside the fair shares every store takes (`../fair-shares.ts`):
 * the bound on bytes held, and its default. `memory.ts` re-exports all of it.
 *
 * @example
 * ```ts
 * const limits: MemoryFairShareLimits = { maxTasksPerPrincipal: 100, maxBytes: 64 * 1024 * 1024 };
 * ```
 */
import type { FairShareLimits, TaskStoreEvent } from '../fair-shares.js';

export {
  DEFAULT_MAX_PARKED_TASKS_PER_PRINCIPAL,
  DEFAULT_MAX_TASKS_PER_PRINCIPAL,
  DEFAULT_PARKED_TTL_MS,
  type FairShareLimits,
} from '../fair-shares.js';

/**
 * What the memory store reports: the events every store reports (the name is kept for the
 * library's users).
 *
 * @example
 * ```ts
 * const event: MemoryStoreEvent = { type: 'refused', owner: 'client:a::a@echo', quota: 'parked_quota' };
 * ```
 */
export type MemoryStoreEvent = TaskStoreEvent;

/**
 * Default of `maxBytes`, 128 MiB (the config loader applies the same).
 *
 * @example
 * ```ts
 * new MemoryTaskStore({ maxBytes: DEFAULT_MAX_BYTES });
 * ```
 */
export const DEFAULT_MAX_BYTES = 128 * 1024 * 1024;

/**
 * The fair-share tuning of the memory store (part of `MemoryTaskStoreOptions`). Every field is optional.
 *
 * @example
 * ```ts
 * const limits: MemoryFairShareLimits = { maxTasksPerPrincipal: 100, maxBytes: 64 * 1024 * 1024 };
 * ```
 */
export interface MemoryFairShareLimits extends FairShareLimits {
  /** Most bytes held (the approximate JSON size of the tasks, see `memory/bytes.ts`). Default 128 MiB. */
  maxBytes?: number;
}
