/**
 * Fair shares, as every store keeps them: the per-principal quotas (tasks held, parked tasks
 * held), the idle TTL of parked (input- or auth-required) tasks, the refusal each quota gives
 * (naming the caller's own quota, never "store full" for everyone), the task a parked TTL
 * leaves behind, and the events the gateway audits. The memory store counts shares in memory
 * (`memory/shares.ts`); the database stores count them with one indexed query when a task is
 * created (`sqlite.ts`, `postgres.ts`), and fail parked tasks in their sweep.
 *
 * @example
 * ```ts
 * const shares = resolveFairShares('SqliteTaskStore', { maxTasksPerPrincipal: 100 });
 * throw quotaRefusal('parked_quota', shares); // CapacityError, 503 + Retry-After: 60
 * ```
 */
import { randomUUID } from 'node:crypto';
import type { Task, TaskState } from '../../protocol/model.js';
import { CapacityError } from '../policy.js';

/**
 * What a store tells its owner about (for the audit trail): a new task refused because its
 * principal is over a quota or the store is full, or a parked task failed by its idle TTL.
 *
 * @example
 * ```ts
 * const event: TaskStoreEvent = { type: 'refused', owner: 'client:a::a@echo', quota: 'parked_quota' };
 * ```
 */
export type TaskStoreEvent =
  | { readonly type: 'refused'; readonly owner: string; readonly quota: StoreQuota }
  | { readonly type: 'parked_expired'; readonly owner: string; readonly task: Task };

/** Which share a refusal is about. */
export type StoreQuota = 'task_quota' | 'parked_quota' | 'task_store_full';

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
 * new SqliteTaskStore({ path, parkedTtlMs: DEFAULT_PARKED_TTL_MS });
 * ```
 */
export const DEFAULT_PARKED_TTL_MS = 30 * 60_000;

/**
 * The fair-share tuning every store takes (part of each store's options). Every field is optional.
 *
 * @example
 * ```ts
 * const limits: FairShareLimits = { maxTasksPerPrincipal: 100, maxParkedTasksPerPrincipal: 10 };
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
  /** Told of every refusal and every parked task failed by its TTL (the gateway audits them). */
  onEvent?: (event: TaskStoreEvent) => void;
}

/**
 * {@link FairShareLimits} with the defaults applied and checked.
 *
 * @example
 * ```ts
 * const { maxTasksPerPrincipal } = resolveFairShares('MemoryTaskStore', {});
 * ```
 */
export interface ResolvedFairShares {
  readonly maxTasksPerPrincipal: number;
  readonly maxParkedPerPrincipal: number;
  readonly parkedTtlMs: number;
  readonly onEvent: ((event: TaskStoreEvent) => void) | undefined;
}

/**
 * Applies the defaults and checks the values.
 *
 * @throws RangeError for a quota that is not a positive integer, or a parked TTL that is not positive.
 * @example
 * ```ts
 * resolveFairShares('PostgresTaskStore', { parkedTtlMs: 60_000 }).parkedTtlMs; // 60000
 * ```
 */
export function resolveFairShares(storeName: string, options: FairShareLimits): ResolvedFairShares {
  const parkedTtlMs = options.parkedTtlMs ?? DEFAULT_PARKED_TTL_MS;
  if (!(parkedTtlMs > 0)) throw new RangeError(`${storeName}: parkedTtlMs must be positive`);
  return {
    maxTasksPerPrincipal: positiveInteger(
      storeName,
      'maxTasksPerPrincipal',
      options.maxTasksPerPrincipal,
      DEFAULT_MAX_TASKS_PER_PRINCIPAL,
    ),
    maxParkedPerPrincipal: positiveInteger(
      storeName,
      'maxParkedTasksPerPrincipal',
      options.maxParkedTasksPerPrincipal,
      DEFAULT_MAX_PARKED_TASKS_PER_PRINCIPAL,
    ),
    parkedTtlMs,
    onEvent: options.onEvent,
  };
}

/** Retry-After of a refusal: running tasks finish in seconds, parked ones wait for a person. */
const TASK_QUOTA_RETRY_AFTER_SECONDS = 5;
const PARKED_QUOTA_RETRY_AFTER_SECONDS = 60;
const STORE_FULL_RETRY_AFTER_SECONDS = 30;

/**
 * The refusal of a new task over `quota`, reported to `shares.onEvent` for `owner`. The message
 * names the caller's own quota and its setting.
 *
 * @example
 * ```ts
 * throw quotaRefusal('task_quota', shares, owner);
 * ```
 */
export function quotaRefusal(quota: StoreQuota, shares: ResolvedFairShares, owner: string): CapacityError {
  shares.onEvent?.({ type: 'refused', owner, quota });
  switch (quota) {
    case 'task_quota':
      return new CapacityError(
        TASK_QUOTA_RETRY_AFTER_SECONDS,
        `You hold ${shares.maxTasksPerPrincipal} tasks and none of them is finished (limits.maxTasksPerPrincipal); wait for one to finish or cancel one`,
        quota,
      );
    case 'parked_quota':
      return new CapacityError(
        PARKED_QUOTA_RETRY_AFTER_SECONDS,
        `You have ${shares.maxParkedPerPrincipal} tasks waiting for input (limits.maxParkedTasksPerPrincipal); answer or cancel one first`,
        quota,
      );
    case 'task_store_full':
      return new CapacityError(
        STORE_FULL_RETRY_AFTER_SECONDS,
        'The task store is full of unfinished tasks (store.maxTasks, store.maxBytes); try again later',
        quota,
      );
  }
}

/**
 * What a principal's share allows for a new task, from its counts (live tasks only): refused
 * over the parked quota; at or over the task quota, `evict` of its own oldest finished tasks
 * first (refused when it has fewer finished ones than it must give up). The database stores
 * evict a tenth of the quota at once when the principal has that many finished tasks, so that
 * a principal that keeps creating at its quota pays for one eviction per tenth, not per task.
 *
 * @example
 * ```ts
 * shareDecision({ tasks: 10, parked: 0, finished: 3 }, shares); // { kind: 'evict', count: 1 } with a quota of 10
 * ```
 */
export function shareDecision(
  counts: { readonly tasks: number; readonly parked: number; readonly finished: number },
  shares: Pick<ResolvedFairShares, 'maxTasksPerPrincipal' | 'maxParkedPerPrincipal'>,
):
  | { readonly kind: 'admit' }
  | { readonly kind: 'evict'; readonly count: number }
  | { readonly kind: 'refuse'; readonly quota: 'task_quota' | 'parked_quota' } {
  if (counts.parked >= shares.maxParkedPerPrincipal) return { kind: 'refuse', quota: 'parked_quota' };
  const over = counts.tasks - shares.maxTasksPerPrincipal + 1;
  if (over <= 0) return { kind: 'admit' };
  if (counts.finished < over) return { kind: 'refuse', quota: 'task_quota' };
  return { kind: 'evict', count: Math.min(counts.finished, Math.max(over, evictionBatch(shares))) };
}

/** At its quota a principal gives up this fraction of it at once (see shareDecision). */
const EVICTION_BATCH_DIVISOR = 10;

/**
 * How many of its own finished tasks a principal at its task quota gives up at once: a tenth
 * of the quota (at least one).
 *
 * @example
 * ```ts
 * evictionBatch({ maxTasksPerPrincipal: 1_000 }); // 100
 * ```
 */
export function evictionBatch(shares: Pick<ResolvedFairShares, 'maxTasksPerPrincipal'>): number {
  return Math.ceil(shares.maxTasksPerPrincipal / EVICTION_BATCH_DIVISOR);
}

/** The status message of a parked task failed by its TTL. */
export const PARKED_EXPIRED_TEXT = 'The task waited too long for input and was failed (store.parkedTtlMinutes).';

/**
 * A parked task that waited too long, as it is kept: failed, with the reason as its status
 * message (and in its history).
 *
 * @example
 * ```ts
 * const failed = failedByParkedTtl(task, new Date().toISOString());
 * failed.status.state; // 'failed'
 * ```
 */
export function failedByParkedTtl(task: Task, timestamp: string): Task {
  const message = {
    messageId: randomUUID(),
    role: 'agent' as const,
    parts: [{ kind: 'text' as const, text: PARKED_EXPIRED_TEXT }],
    taskId: task.id,
    contextId: task.contextId,
  };
  return {
    ...task,
    status: { state: 'failed', timestamp, message },
    ...(task.history !== undefined && { history: [...task.history, message] }),
  };
}

/**
 * Parked: waiting on the caller (input) or on credentials (auth), not running.
 *
 * @example
 * ```ts
 * isParked('input-required'); // true
 * ```
 */
export function isParked(state: TaskState): boolean {
  return state === 'input-required' || state === 'auth-required';
}

/**
 * The owner keys of one principal as a byte range: owner keys are `principalKey@agentSlug` and
 * an agent slug never holds `@` (see `principal.ts`), so every owner of `principal` sorts in
 * [`principal@`, `principalA`) (`A` follows `@`), and a key in that range belongs to it exactly
 * when nothing after `principal@` holds another `@` (`tail` is where that rest starts, 1-based,
 * in characters — code points, as SQL's substr counts them in both engines, not UTF-16 units). Keys compare bytewise in both database stores (BINARY / "C").
 *
 * @example
 * ```ts
 * ownerRangeOf('client:a::a'); // { low: 'client:a::a@', high: 'client:a::aA', tail: 13 }
 * ```
 */
export function ownerRangeOf(principal: string): {
  readonly low: string;
  readonly high: string;
  readonly tail: number;
} {
  return { low: `${principal}@`, high: `${principal}A`, tail: codePointCount(principal) + 2 };
}

function codePointCount(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

function positiveInteger(storeName: string, name: string, value: number | undefined, fallback: number): number {
  const resolved = value ?? fallback;
  if (!Number.isSafeInteger(resolved) || resolved < 1) {
    throw new RangeError(`${storeName}: ${name} must be a positive integer`);
  }
  return resolved;
}
