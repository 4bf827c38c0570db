/**
 * Turn leases: how replicas sharing a store learn that a turn's replica died. A replica takes a
 * lease when a turn starts running there, renews all of its leases together while it lives, and
 * releases each when its turn pauses or ends. A lease not renewed within its TTL has lapsed: one
 * surviving replica claims it (exactly one, however many sweep at once) and fails the task.
 *
 * Only a store that several replicas share implements it (PostgreSQL, `postgres/leases.ts`).
 * The memory store has none, and SQLite none either: one process serves the file, and restart
 * safety (`TaskStore.failRunning`) fails what a dead process left running.
 *
 * @example
 * ```ts
 * const leases = store.leases; // undefined unless the store is shared
 * await leases?.take(task.id, owner, replicaId, 30_000);
 * const claimed = await leases?.sweepLapsed(replicaId, 30_000, 100);
 * ```
 */

/**
 * A lease one sweep claimed: the task whose replica stopped renewing it.
 *
 * @example
 * ```ts
 * const lapsed: LapsedLease = { taskId: 't-1', owner: 'client:a:-:x@echo', replicaId: 'r-dead' };
 * ```
 */
export interface LapsedLease {
  readonly taskId: string;
  /** The task's owner key (the store is owner-scoped: the task is read and written with it). */
  readonly owner: string;
  /** The replica that held the lease and stopped renewing it. */
  readonly replicaId: string;
}

/**
 * The lease statements a shared store offers. Expiry is judged by the store's clock, never a
 * replica's. Every method may reject with the store's errors (StoreUnavailableError).
 *
 * @example
 * ```ts
 * await leases.take(taskId, owner, replicaId, ttlMs);
 * const lost = await leases.renew(replicaId, [taskId], ttlMs); // ids no longer ours
 * await leases.release(taskId, replicaId);
 * ```
 */
export interface TurnLeases {
  /**
   * Holds the task's lease for `replicaId` until now + `ttlMs` (taken over from whoever held it:
   * a new turn on a task runs where it was started).
   */
  take(taskId: string, owner: string, replicaId: string, ttlMs: number): Promise<void>;
  /**
   * Pushes the expiry of this replica's leases on `taskIds` to now + `ttlMs`, in one statement.
   * Resolves with the ids among them this replica no longer holds (claimed by a sweeper after a
   * pause longer than the TTL, or never taken).
   */
  renew(replicaId: string, taskIds: readonly string[], ttlMs: number): Promise<string[]>;
  /** Drops the task's lease if `replicaId` holds it (no error when it is gone). */
  release(taskId: string, replicaId: string): Promise<void>;
  /**
   * Claims up to `limit` lapsed leases for `replicaId`, atomically (of several sweepers each lease
   * goes to one), and holds them for `claimTtlMs`: a sweeper that dies before it settles them
   * leaves them to lapse again. `now` replaces the store's clock (tests).
   */
  sweepLapsed(replicaId: string, claimTtlMs: number, limit: number, now?: Date): Promise<LapsedLease[]>;
}
