/**
 * Actions waiting for a person, as a durable task store keeps them: one row per action, shared
 * by every process on the store. The approvals layer (`approvals/records-store.ts`) owns what a
 * row means; the store only keeps rows, answers the few questions the approval flow asks, and
 * makes each change of state conditional, so that of two replicas deciding (or using) one action
 * at once exactly one succeeds.
 *
 * `body` is the approvals layer's JSON (tool, level, redacted arguments, where it came from),
 * stored as given. `kept` holds what must never be shown (the unredacted arguments and the
 * agent's continuation); it is read once ({@link ApprovalRecords.takeKept}) and then cleared.
 *
 * @example
 * ```ts
 * const records = store.approvals; // undefined for the memory store
 * const refused = await records?.create(record, { maxOpenPerPrincipal: 100, maxOpen: 10_000 }, Date.now());
 * ```
 */

/**
 * Where an action is in its life. `expired` is never stored: it is read from the clock.
 *
 * @example
 * ```ts
 * const state: ApprovalRecordState = 'pending';
 * ```
 */
export type ApprovalRecordState = 'pending' | 'approved' | 'denied' | 'consumed';

/**
 * One stored action, as read back.
 *
 * @example
 * ```ts
 * const record: ApprovalRecord = { actionId, taskId, owner, decider: 'person:alice', state: 'pending', createdAt, expiresAt, body };
 * ```
 */
export interface ApprovalRecord {
  readonly actionId: string;
  readonly taskId: string;
  /** The task's owner key; the principal (its quota) is derived from it. */
  readonly owner: string;
  /** The user id of the person who decides. */
  readonly decider: string;
  readonly state: ApprovalRecordState;
  /** Epoch milliseconds. */
  readonly createdAt: number;
  readonly expiresAt: number;
  readonly decidedBy?: string;
  readonly decidedAt?: number;
  readonly consumedAt?: number;
  /** The approvals layer's JSON text, returned exactly as created. */
  readonly body: string;
}

/**
 * A new action: pending, with what is kept hidden beside it.
 *
 * @example
 * ```ts
 * const fresh: NewApprovalRecord = { actionId, taskId, owner, decider, createdAt: now, expiresAt, body, kept };
 * ```
 */
export interface NewApprovalRecord {
  readonly actionId: string;
  readonly taskId: string;
  readonly owner: string;
  readonly decider: string;
  readonly createdAt: number;
  readonly expiresAt: number;
  readonly body: string;
  /** JSON text never shown (unredacted arguments, continuation); cleared once taken. */
  readonly kept?: string;
}

/**
 * Why a new action was not stored: the task has an open one, its principal has as many open as
 * it may, or the store holds as many open actions as it may.
 *
 * @example
 * ```ts
 * if (refused === 'principal_quota') return refusal('approvals.maxPendingPerPrincipal');
 * ```
 */
export type ApprovalCreateRefusal = 'task_has_open_action' | 'principal_quota' | 'store_full';

/**
 * The bounds a new action is held to; "open" is pending, or approved and not used, and not
 * expired.
 *
 * @example
 * ```ts
 * const limits: ApprovalCreateLimits = { maxOpenPerPrincipal: 100, maxOpen: 10_000 };
 * ```
 */
export interface ApprovalCreateLimits {
  readonly maxOpenPerPrincipal: number;
  readonly maxOpen: number;
}

/**
 * A change of state and what comes with it.
 *
 * @example
 * ```ts
 * const change: ApprovalStateChange = { state: 'approved', decidedBy: 'person:alice', decidedAt: Date.now() };
 * ```
 */
export interface ApprovalStateChange {
  readonly state: ApprovalRecordState;
  readonly decidedBy?: string;
  readonly decidedAt?: number;
  readonly consumedAt?: number;
}

/**
 * What a durable task store offers the approval flow (SQLite: one process; PostgreSQL: every
 * replica). Every time is the caller's clock, in epoch milliseconds.
 *
 * @example
 * ```ts
 * const approved = await records.transition(actionId, 'pending', { state: 'approved', decidedBy, decidedAt: now }, now);
 * if (approved === undefined) { /* decided elsewhere first, or expired *\/ }
 * ```
 */
export interface ApprovalRecords {
  /**
   * Stores a pending action unless refused (see {@link ApprovalCreateRefusal}); the task's
   * previous action, finished, is dropped. Checked and written atomically.
   */
  create(
    record: NewApprovalRecord,
    limits: ApprovalCreateLimits,
    now: number,
  ): Promise<ApprovalCreateRefusal | undefined>;
  /** One action by id, whoever owns it. */
  get(actionId: string): Promise<ApprovalRecord | undefined>;
  /** The latest action proposed on the owner's task. */
  latestOnTask(owner: string, taskId: string): Promise<ApprovalRecord | undefined>;
  /** A person's pending, unexpired actions, oldest first, at most `limit`. */
  pendingFor(decider: string, now: number, limit: number): Promise<ApprovalRecord[]>;
  /** Decided (approved or denied), unused and unexpired actions, oldest decision first. */
  decidedWaiting(now: number, limit: number): Promise<ApprovalRecord[]>;
  /**
   * Moves the action from `from` to `change.state` if it is still in `from` and unexpired at
   * `now`, and returns it changed; `undefined` when it was not (another process got there first,
   * or time ran out).
   */
  transition(
    actionId: string,
    from: ApprovalRecordState,
    change: ApprovalStateChange,
    now: number,
  ): Promise<ApprovalRecord | undefined>;
  /** The hidden part, once: later calls get `undefined`. */
  takeKept(actionId: string): Promise<string | undefined>;
  /** Drops the open action of the owner's task (a cancel); whether there was one. */
  withdraw(owner: string, taskId: string, now: number): Promise<boolean>;
  /** Drops used and expired actions (denied ones stay until they expire); how many. */
  sweep(now: number): Promise<number>;
  /**
   * Pending, unexpired actions counted by the agent their body names (`origin.agent`; `''`
   * for none): the metrics' `airlock_approvals_pending`, read at scrape time.
   */
  countPending?(now: number): Promise<ReadonlyMap<string, number>>;
}

/**
 * A row of `approval_actions` as both engines read it (PostgreSQL's BIGINTs arrive as text).
 *
 * @example
 * ```ts
 * const record = approvalRecordOf(row);
 * ```
 */
export interface ApprovalRow {
  action_id: string;
  task_id: string;
  owner: string;
  decider: string;
  state: ApprovalRecordState;
  created_at: number | string;
  expires_at: number | string;
  decided_by: string | null;
  decided_at: number | string | null;
  consumed_at: number | string | null;
  body: string;
}

/**
 * A row as the approvals layer reads it.
 *
 * @example
 * ```ts
 * const record = approvalRecordOf(row);
 * ```
 */
export function approvalRecordOf(row: ApprovalRow): ApprovalRecord {
  return {
    actionId: row.action_id,
    taskId: row.task_id,
    owner: row.owner,
    decider: row.decider,
    state: row.state,
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
    ...(row.decided_by !== null && { decidedBy: row.decided_by }),
    ...(row.decided_at !== null && { decidedAt: Number(row.decided_at) }),
    ...(row.consumed_at !== null && { consumedAt: Number(row.consumed_at) }),
    body: row.body,
  };
}
