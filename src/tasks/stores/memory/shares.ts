/**
 * The memory store's fair shares: per-principal quotas (tasks held, parked tasks held), the
 * eviction order that makes room for a new task (its principal's own finished tasks first,
 * then expired ones, then anyone's finished tasks), the bound on bytes held, and the idle TTL
 * of parked (input- or auth-required) tasks. {@link FairShares} keeps the per-principal counts,
 * the parked list and the byte total; the store tells it of every task it attaches, replaces
 * and detaches, and lends it a {@link ShareHost} to evict and rewrite tasks through.
 *
 * @example
 * ```ts
 * const shares = new FairShares(maxTasks, options, host);
 * const share = shares.makeRoom(owner, nowMs, bytes); // may evict through `host`, or throw CapacityError
 * entry.share = share;
 * entry.bytes = bytes;
 * shares.attached(entry);
 * ```
 */
import { isTerminalState } from '../../../protocol/model.js';
import type { Task, TaskState } from '../../../protocol/model.js';
import type { CapacityError } from '../../policy.js';
import {
  failedByParkedTtl,
  isParked,
  quotaRefusal,
  resolveFairShares,
  type ResolvedFairShares,
  type StoreQuota,
} from '../fair-shares.js';
import { principalOfOwner } from '../principal.js';
import type { Entry, Share } from './entries.js';
import { DEFAULT_MAX_BYTES, type MemoryFairShareLimits } from './limits.js';
import { LinkedList } from './linked-list.js';

/** Error messages name the store, as the store's own do. */
const STORE_NAME = 'MemoryTaskStore';

/**
 * What {@link FairShares} needs of the store: its task count, its eviction candidates, and a
 * way to evict or rewrite a task (which then reports back through `attached`, `replaced` and
 * `detached`). Built once by the store, so that calling through it allocates nothing.
 *
 * @example
 * ```ts
 * const host: ShareHost = {
 *   count: () => entries.size,
 *   firstExpired: (nowMs) => firstExpired(nowMs),
 *   firstFinished: () => terminal.first(),
 *   evict: (entry) => detach(entry),
 *   replace: (entry, task, statusMs, nowMs) => replace(entry, task, statusMs, nowMs),
 * };
 * ```
 */
export interface ShareHost {
  /** How many tasks the store holds. */
  count(): number;
  /** The least recently updated task if it has expired (if it has not, no task has). */
  firstExpired(nowMs: number): Entry | undefined;
  /** The least recently updated finished task, of any principal. */
  firstFinished(): Entry | undefined;
  /** Drops a task from the store. */
  evict(entry: Entry): void;
  /** Updates a stored task in place. */
  replace(entry: Entry, task: Task, statusMs: number, nowMs: number): void;
}

/**
 * Per-principal shares, the parked list and the byte total of one memory store, and the
 * decisions made with them: who gives up a task for a new one, who is refused, which parked
 * task has waited too long. Its tuning and defaults are in `limits.ts`.
 *
 * @example
 * ```ts
 * const shares = new FairShares(10_000, { maxTasksPerPrincipal: 100 }, host);
 * shares.failParked(nowMs, 100); // parked tasks past their TTL become failed
 * ```
 */
export class FairShares {
  readonly maxTasksPerPrincipal: number;
  readonly maxParkedPerPrincipal: number;
  readonly parkedTtlMs: number;
  readonly maxBytes: number;
  private readonly maxTasks: number;
  private readonly limits: ResolvedFairShares;
  private readonly host: ShareHost;
  /** Parked tasks, least recently updated first: their TTL sweep stops at the first live one. */
  private readonly parked = new LinkedList<Entry>();
  /** Principal key → its share; a principal is here exactly while it has a task in the store. */
  private readonly shares = new Map<string, Share>();
  private heldBytes = 0;

  /**
   * `maxTasks` is the store's own bound, already checked by it.
   *
   * @throws RangeError for a quota that is not a positive integer, or a parked TTL that is not positive.
   */
  constructor(maxTasks: number, options: MemoryFairShareLimits, host: ShareHost) {
    this.maxTasks = maxTasks;
    this.limits = resolveFairShares(STORE_NAME, options);
    this.maxTasksPerPrincipal = this.limits.maxTasksPerPrincipal;
    this.maxParkedPerPrincipal = this.limits.maxParkedPerPrincipal;
    this.parkedTtlMs = this.limits.parkedTtlMs;
    this.maxBytes = positiveInteger('maxBytes', options.maxBytes, DEFAULT_MAX_BYTES);
    this.host = host;
  }

  /**
   * The bytes charged against `maxBytes` (approximate JSON size of every task held).
   *
   * @example
   * ```ts
   * metrics.gauge('airlock_task_store_bytes', shares.bytes);
   * ```
   */
  get bytes(): number {
    return this.heldBytes;
  }

  /**
   * Whether a task is parked and has not been updated for `parkedTtlMs`.
   *
   * @example
   * ```ts
   * if (shares.isParkedTooLong(entry, nowMs)) shares.failParkedEntry(entry, nowMs);
   * ```
   */
  isParkedTooLong(entry: Entry, nowMs: number): boolean {
    return entry.parkedNode.linked && nowMs - entry.touchedMs >= this.parkedTtlMs;
  }

  /**
   * Fails up to `limit` parked tasks past their TTL, oldest first; returns how many.
   *
   * @example
   * ```ts
   * const failed = shares.failParked(nowMs, Number.POSITIVE_INFINITY);
   * ```
   */
  failParked(nowMs: number, limit: number): number {
    let failed = 0;
    for (let entry = this.parked.first(); entry !== undefined && failed < limit; entry = this.parked.first()) {
      if (!this.isParkedTooLong(entry, nowMs)) break;
      this.failParkedEntry(entry, nowMs);
      failed++;
    }
    return failed;
  }

  /**
   * A parked task waited too long: it becomes failed (finished, so it can be evicted), and is reported.
   *
   * @example
   * ```ts
   * shares.failParkedEntry(entry, nowMs); // entry.readTask().status.state === 'failed'
   * ```
   */
  failParkedEntry(entry: Entry, nowMs: number): void {
    const timestamp = new Date().toISOString();
    const failed = failedByParkedTtl(entry.readTask(), timestamp);
    this.host.replace(entry, failed, Date.parse(timestamp), nowMs);
    this.limits.onEvent?.({ type: 'parked_expired', owner: entry.owner, task: failed });
  }

  /**
   * Evicts until a new task of `owner` fits, and returns its principal's share. Its principal's
   * quota first: over `maxTasksPerPrincipal`, only its own finished tasks (least recently
   * updated first) make room, and with none it is refused; over `maxParkedTasksPerPrincipal` it
   * is refused. Then the store's bounds (count and bytes): the principal's own finished tasks
   * first, then expired ones, then anyone's finished tasks, least recently updated first.
   *
   * @throws CapacityError naming the quota (or the full store); nothing was evicted for a
   *   principal refused over its own quota.
   * @example
   * ```ts
   * const share = shares.makeRoom(owner, nowMs, heldBytes(task, held));
   * ```
   */
  makeRoom(owner: string, nowMs: number, bytes: number): Share {
    const { host } = this;
    const key = principalOfOwner(owner);
    let share = this.shares.get(key);
    if (share !== undefined) {
      if (share.parked >= this.maxParkedPerPrincipal) throw this.refuse(owner, 'parked_quota');
      while (share.tasks >= this.maxTasksPerPrincipal) {
        const victim = share.terminal.first() ?? host.firstExpired(nowMs);
        if (victim === undefined) throw this.refuse(owner, 'task_quota');
        host.evict(victim);
      }
    }
    while (host.count() >= this.maxTasks || (this.heldBytes + bytes > this.maxBytes && host.count() > 0)) {
      const victim = share?.terminal.first() ?? host.firstExpired(nowMs) ?? host.firstFinished();
      if (victim === undefined) throw this.refuse(owner, 'task_store_full');
      host.evict(victim);
    }
    // An eviction may have emptied the share (and dropped it).
    share = this.shares.get(key);
    if (share === undefined) {
      share = { key, tasks: 0, parked: 0, terminal: new LinkedList() };
      this.shares.set(key, share);
    }
    return share;
  }

  /**
   * After a replacement grew the store past `maxBytes`: finished tasks go, the grown one's
   * principal's first, never the grown one itself. Does nothing within `maxBytes`.
   *
   * @example
   * ```ts
   * shares.shedBytes(existing);
   * ```
   */
  shedBytes(kept: Entry): void {
    const share = kept.share as Share;
    while (this.heldBytes > this.maxBytes) {
      let victim = share.terminal.first() ?? this.host.firstFinished();
      if (victim === kept) victim = undefined;
      if (victim === undefined) return;
      this.host.evict(victim);
    }
  }

  /**
   * Counts a task the store has just attached (its `share` and `bytes` already set).
   *
   * @example
   * ```ts
   * entry.share = share;
   * entry.bytes = bytes;
   * shares.attached(entry);
   * ```
   */
  attached(entry: Entry): void {
    const share = entry.share as Share;
    share.tasks++;
    this.heldBytes += entry.bytes;
    if (isTerminalState(entry.state)) share.terminal.append(entry.shareTerminalNode);
    else if (isParked(entry.state)) {
      this.parked.append(entry.parkedNode);
      share.parked++;
    }
  }

  /**
   * Recounts a task the store is replacing in place, with its new state and size; sets `entry.bytes`.
   *
   * @example
   * ```ts
   * shares.replaced(entry, task.status.state, heldBytes(task, held));
   * ```
   */
  replaced(entry: Entry, state: TaskState, bytes: number): void {
    this.heldBytes += bytes - entry.bytes;
    entry.bytes = bytes;
    const share = entry.share as Share;
    const node = entry.shareTerminalNode;
    if (isTerminalState(state)) {
      if (node.linked) share.terminal.moveToEnd(node);
      else share.terminal.append(node);
    } else if (node.linked) share.terminal.unlink(node);
    if (isParked(state)) {
      if (entry.parkedNode.linked) this.parked.moveToEnd(entry.parkedNode);
      else {
        this.parked.append(entry.parkedNode);
        share.parked++;
      }
    } else if (entry.parkedNode.linked) {
      this.parked.unlink(entry.parkedNode);
      share.parked--;
    }
  }

  /**
   * Uncounts a task the store is dropping; its principal's share goes with its last task.
   *
   * @example
   * ```ts
   * shares.detached(entry);
   * ```
   */
  detached(entry: Entry): void {
    const share = entry.share as Share;
    share.terminal.unlink(entry.shareTerminalNode);
    if (entry.parkedNode.linked) {
      this.parked.unlink(entry.parkedNode);
      share.parked--;
    }
    this.heldBytes -= entry.bytes;
    if (--share.tasks === 0) this.shares.delete(share.key);
  }

  private refuse(owner: string, quota: StoreQuota): CapacityError {
    return quotaRefusal(quota, this.limits, owner);
  }
}

function positiveInteger(name: string, value: number | undefined, fallback: number): number {
  const resolved = value ?? fallback;
  if (!Number.isSafeInteger(resolved) || resolved < 1) {
    throw new RangeError(`${STORE_NAME}: ${name} must be a positive integer`);
  }
  return resolved;
}
