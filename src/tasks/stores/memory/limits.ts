/**
 * The fair-share tuning of the memory store, kept apart from the logic in `shares.ts`: the
 * per-principal quota, parked-TTL and bytes options, their defaults, and the events the store
 * reports. `memory.ts` re-exports all of it.
 *
 * @example
 * ```ts
 * const limits: FairShareLimits = { maxTasksPerPrincipal: DEFAULT_MAX_TASKS_PER_PRINCIPAL, maxBytes: 64 * 1024 * 1024 };
 * ```
 */
import type { Task } from '../../../protocol/model.js';
import type { CapacityError } from '../../policy.js';

/**
 * What the store tells its owner about (for the audit trail): a new task refused because its
 * principal is over a quota or the store is full, or a parked task failed by its idle TTL.
 *
 * @example
 * ```ts
 * const event: MemoryStoreEvent = { type: 'refused', owner: 'client:a::a@echo', quota: 'parked_quota' };
 * ```
 */
export type MemoryStoreEvent =
  | { readonly type: 'refused'; readonly owner: string; readonly quota: CapacityError['quota'] & string }
  | { readonly type: 'parked_expired'; readonly owner: string; readonly task: Task };

/**
 * Default of `maxTasksPerPrincipal` (the config loader applies the same).
 *
 * @example
 * ```ts
 * new MemoryTaskStore({ maxTasksPerPrincipal: DEFAULT_MAX_TASKS_PER_PRINCIPAL });
 * ```
 */
export const DEFAULT_MAX_TASKS_PER_PRINCIPAL = 1_000;
/**
 * Default of `maxParkedTasksPerPrincipal` (the config loader applies the same).
 *
 * @example
 * ```ts
 * new MemoryTaskStore({ maxParkedTasksPerPrincipal: DEFAULT_MAX_PARKED_TASKS_PER_PRINCIPAL });
 * ```
 */
export const DEFAULT_MAX_PARKED_TASKS_PER_PRINCIPAL = 100;
/**
 * Default of `parkedTtlMs`, 30 minutes (the config loader applies the same).
 *
 * @example
 * ```ts
 * new MemoryTaskStore({ parkedTtlMs: DEFAULT_PARKED_TTL_MS });
 * ```
 */
export const DEFAULT_PARKED_TTL_MS = 30 * 60_000;
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
 * const limits: FairShareLimits = { maxTasksPerPrincipal: 100, maxBytes: 64 * 1024 * 1024 };
 * ```
 */
export interface FairShareLimits {
  /**
   * Most tasks one principal holds at once, over all agents (owner keys `principalKey@agent`
   * share one quota). Default 1 000. Over it, the principal's own oldest finished task makes
   * room; with none, its new task is refused with a CapacityError naming the quota.
   */
  maxTasksPerPrincipal?: number;
  /** Most parked (input- or auth-required) tasks one principal holds; a new task is refused over it. Default 100. */
  maxParkedTasksPerPrincipal?: number;
  /** A parked task not updated for this long fails (reason: it waited too long). Default 30 minutes. */
  parkedTtlMs?: number;
  /** Most bytes held (the approximate JSON size of the tasks, see `memory/bytes.ts`). Default 128 MiB. */
  maxBytes?: number;
  /** Told of every refusal and every parked task failed by its TTL (the gateway audits them). */
  onEvent?: (event: MemoryStoreEvent) => void;
}
