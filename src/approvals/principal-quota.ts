/**
 * How many actions (or questions) one principal has awaiting a person, against
 * `approvals.maxPendingPerPrincipal`: one client's backend cannot fill the store that every
 * other client's proposals need. Counted by principal over all agents (`principalOfOwner`).
 *
 * The store adds an id when it records one and removes it when it drops one; an id whose record
 * was decided, used or has expired (still held) is pruned only when the principal is at its
 * quota, so a check costs O(1) until then and O(quota) at it.
 *
 * @example
 * ```ts
 * const quota = new PendingQuota(100);
 * if (!quota.hasRoom(owner, (id) => isOpen(id))) throw new ApprovalError('principal_quota');
 * quota.add(owner, actionId);
 * ```
 */
import { principalOfOwner } from '../tasks/stores/principal.js';

/** `approvals.maxPendingPerPrincipal` when nothing is configured. */
export const DEFAULT_MAX_PENDING_PER_PRINCIPAL = 100;

export class PendingQuota {
  readonly max: number;
  readonly #ids = new Map<string, Set<string>>();

  /** `max` unset (or not a positive integer): no per-principal bound (the gateway always passes the configured one). */
  constructor(max: number | undefined) {
    this.max = typeof max === 'number' && Number.isInteger(max) && max > 0 ? max : Number.POSITIVE_INFINITY;
  }

  /** Whether the owner's principal may have one more; prunes ids `isOpen` says are no longer open. */
  hasRoom(owner: string, isOpen: (id: string) => boolean): boolean {
    const ids = this.#ids.get(principalOfOwner(owner));
    if (ids === undefined || ids.size < this.max) return true;
    for (const id of ids) if (!isOpen(id)) ids.delete(id);
    return ids.size < this.max;
  }

  add(owner: string, id: string): void {
    const key = principalOfOwner(owner);
    let ids = this.#ids.get(key);
    if (ids === undefined) {
      ids = new Set();
      this.#ids.set(key, ids);
    }
    ids.add(id);
  }

  remove(owner: string, id: string): void {
    const key = principalOfOwner(owner);
    const ids = this.#ids.get(key);
    if (ids === undefined) return;
    ids.delete(id);
    if (ids.size === 0) this.#ids.delete(key);
  }
}
