/**
 * Pending guarded actions and their decisions. The store enforces the approval rules that must
 * hold whoever calls it: only the decider decides, a decision is made once, nothing is decided
 * or used after it expires, and an approval is consumed exactly once, by the task it was
 * proposed on.
 *
 * The interface is async so a shared (PostgreSQL) store can implement it later; the in-memory
 * store does each operation without an `await` between its check and its write, so two calls
 * racing on one action can never both succeed (JavaScript runs one of them to completion first).
 *
 * @example
 * ```ts
 * const store = new MemoryApprovalStore();
 * const action = await store.create({ taskId, owner: principal.key, decider, tool: 'send_email', args, level: 'L4', expiresAt: now + 15 * 60_000 }, now);
 * await store.decide(action.actionId, { kind: 'user', userId: 'alice' }, 'approve', Date.now());
 * await store.consume(action.actionId, taskId, Date.now()); // resumes the turn; a second call throws 'already_consumed'
 * ```
 */
import { randomBytes } from 'node:crypto';
import { mayDecide, type DecisionActor, type Decider } from './decider.js';
import type { AutonomyLevel } from './ladder.js';
import type { JsonValue } from './redact.js';
import { PendingQuota } from './principal-quota.js';
import { TaskIndex } from './task-index.js';
import { AirlockError } from '../errors/index.js';

/**
 * Stable codes of {@link ApprovalError}, for programs, audit rows and HTTP mapping:
 * - `not_found` (404): no such action for this owner/task (or it was swept). Also used for a
 *   task id that does not match, so an action id is only meaningful with its own task.
 * - `not_decider` (403): the actor is not the person entitled to decide.
 * - `already_decided` (409): approved or denied before.
 * - `expired` (410): past `expiresAt`; the task must fail.
 * - `not_approved` (409): consume before a decision; the gateway re-parks the task.
 * - `denied` (409): consume after a denial; the gateway fails the task.
 * - `already_consumed` (409): the approval was used before.
 * - `task_has_open_action` (409): the task already has an undecided or unused action.
 * - `store_full` (503): at capacity even after sweeping expired actions.
 * - `principal_quota` (503): the owner's principal has `approvals.maxPendingPerPrincipal` open
 *   actions (pending, or approved and not yet used) already.
 * - `invalid_action` (500): the gateway handed in something it must not (no decider, bad time).
 *
 * @example
 * ```ts
 * const code: ApprovalErrorCode = 'not_decider';
 * ```
 */
export type ApprovalErrorCode =
  | 'not_found'
  | 'not_decider'
  | 'already_decided'
  | 'expired'
  | 'not_approved'
  | 'denied'
  | 'already_consumed'
  | 'task_has_open_action'
  | 'store_full'
  | 'principal_quota'
  | 'invalid_action';

/**
 * A refused approval operation, with a stable `code` and a one-line message for people. Messages
 * never carry action ids, owner keys, arguments or user ids: they end up in logs.
 *
 * @example
 * ```ts
 * try {
 *   await store.decide(actionId, actor, 'approve', Date.now());
 * } catch (error) {
 *   if (isApprovalError(error, 'not_decider')) return reply403(error.message);
 *   throw error;
 * }
 * ```
 */
export class ApprovalError extends AirlockError {
  readonly code: ApprovalErrorCode;

  constructor(code: ApprovalErrorCode, message: string = APPROVAL_ERROR_MESSAGES[code]) {
    super(message);
    this.code = code;
  }
}

const APPROVAL_ERROR_MESSAGES: Readonly<Record<ApprovalErrorCode, string>> = {
  not_found: 'No such pending action.',
  not_decider: 'Only the person behind this principal may decide this action.',
  already_decided: 'This action has already been decided.',
  expired: 'This action expired before it was decided and used.',
  not_approved: 'This action has not been approved yet.',
  denied: 'This action was denied.',
  already_consumed: 'This approval has already been used.',
  task_has_open_action: 'This task already has a pending action.',
  store_full: 'Too many pending actions; try again later.',
  principal_quota: 'Too many of your actions are waiting for a person (approvals.maxPendingPerPrincipal).',
  invalid_action: 'The pending action is malformed.',
};

/**
 * Whether `error` is an {@link ApprovalError}, optionally with one code.
 *
 * @example
 * ```ts
 * if (isApprovalError(error, 'expired')) failTask('The approval request expired.');
 * ```
 */
export function isApprovalError(error: unknown, code?: ApprovalErrorCode): error is ApprovalError {
  return error instanceof ApprovalError && (code === undefined || error.code === code);
}

/**
 * What the gateway records when a turn proposes an action that needs approval. `args` must
 * already be redacted (redactActionArgs): the store keeps and shows them as given.
 *
 * @example
 * ```ts
 * const input: PendingActionInput = { taskId, owner: principal.key, decider, tool: 'delete_repo', args, level: 'L4', expiresAt: Date.now() + 900_000 };
 * ```
 */
export interface PendingActionInput {
  readonly taskId: string;
  /** The principal key that owns the task; reads are scoped by it. */
  readonly owner: string;
  /** From deciderFor; a `none` decider is refused (the proposal should have been refused). */
  readonly decider: Decider;
  readonly tool: string;
  readonly args: JsonValue;
  readonly level: AutonomyLevel;
  /** Epoch milliseconds; the action can be neither decided nor consumed from then on. */
  readonly expiresAt: number;
}

/**
 * The stored lifecycle state. `expired` is never stored: it is read from the clock
 * ({@link approvalStatus}).
 *
 * @example
 * ```ts
 * const state: StoredApprovalState = 'approved';
 * ```
 */
export type StoredApprovalState = 'pending' | 'approved' | 'denied' | 'consumed';

/**
 * What an action's state is at a given time: the stored state, or `expired` once the deadline
 * has passed on an action not yet finished (pending or approved-but-unused).
 *
 * @example
 * ```ts
 * if (approvalStatus(action, Date.now()) === 'pending') reparkTask();
 * ```
 */
export type ApprovalStatus = StoredApprovalState | 'expired';

/**
 * One guarded action and its decision. Frozen copies are handed out: a caller cannot change the
 * store's record.
 *
 * @example
 * ```ts
 * const action: PendingAction = await store.create(input, Date.now());
 * action.state; // 'pending'
 * ```
 */
export interface PendingAction {
  /** 256 random bits, base64url: unguessable, so knowing one is a capability only with a login. */
  readonly actionId: string;
  readonly taskId: string;
  readonly owner: string;
  readonly decider: Extract<Decider, { kind: 'user' }>;
  readonly tool: string;
  readonly args: JsonValue;
  readonly level: AutonomyLevel;
  readonly createdAt: number;
  readonly expiresAt: number;
  readonly state: StoredApprovalState;
  /** The user who decided, when decided. */
  readonly decidedBy?: string;
  readonly decidedAt?: number;
  readonly consumedAt?: number;
}

/**
 * The state of an action at `now` (see {@link ApprovalStatus}).
 *
 * @example
 * ```ts
 * approvalStatus({ ...action, state: 'pending', expiresAt: 0 }, 1); // 'expired'
 * ```
 */
export function approvalStatus(action: Pick<PendingAction, 'state' | 'expiresAt'>, now: number): ApprovalStatus {
  if ((action.state === 'pending' || action.state === 'approved') && now >= action.expiresAt) return 'expired';
  return action.state;
}

/**
 * A decision a person makes.
 *
 * @example
 * ```ts
 * const decision: ApprovalDecision = 'deny';
 * ```
 */
export type ApprovalDecision = 'approve' | 'deny';

/**
 * Where pending actions live. Every method takes `now` (epoch ms) so expiry is decided by the
 * caller's clock, and tests need no timers.
 *
 * @example
 * ```ts
 * const store: ApprovalStore = new MemoryApprovalStore({ maxActions: 1000 });
 * ```
 */
export interface ApprovalStore {
  /** Records a pending action for a task that has none open. Throws `task_has_open_action`, `store_full`, `invalid_action`. */
  create(input: PendingActionInput, now: number): Promise<PendingAction>;
  /** Drops the open (pending or approved) action of a task, e.g. when the task is canceled. */
  withdraw(owner: string, taskId: string, now: number): Promise<boolean>;
  /** The action, only if `owner` owns it; `undefined` otherwise (never reveals another owner's). */
  get(owner: string, actionId: string): Promise<PendingAction | undefined>;
  /** The latest action proposed on a task (what a resume looks at), owner-scoped. */
  findByTask(owner: string, taskId: string): Promise<PendingAction | undefined>;
  /** Actions awaiting this user's decision at `now`, oldest first (for the console / approvals CLI). */
  listForDecider(userId: string, now: number): Promise<PendingAction[]>;
  /** Approves or denies. Throws `not_found`, `not_decider`, `already_decided`, `expired`. */
  decide(actionId: string, actor: DecisionActor, decision: ApprovalDecision, now: number): Promise<PendingAction>;
  /** Uses an approval, exactly once. Throws `not_found`, `not_approved`, `denied`, `expired`, `already_consumed`. */
  consume(actionId: string, taskId: string, now: number): Promise<PendingAction>;
  /** Drops expired and consumed actions; returns how many were dropped. */
  sweep(now: number): Promise<number>;
}

/**
 * Options of {@link MemoryApprovalStore}.
 *
 * @example
 * ```ts
 * new MemoryApprovalStore({ maxActions: 100, newActionId: () => 'fixed-id-for-a-test' });
 * ```
 */
export interface MemoryApprovalStoreOptions {
  /** The most actions kept at once (default 10 000): a backend cannot grow the store without bound. */
  readonly maxActions?: number;
  /** The most open actions of one principal, over all agents (unset: unbounded; the gateway passes `approvals.maxPendingPerPrincipal`, default 100): see PendingQuota. */
  readonly maxPendingPerPrincipal?: number;
  /** Makes action ids (default: 32 random bytes, base64url). For tests only. */
  readonly newActionId?: () => string;
}

/**
 * A fresh, unguessable action id: 32 bytes from the CSPRNG, base64url (43 characters).
 *
 * @example
 * ```ts
 * newActionId().length; // 43
 * ```
 */
export function newActionId(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * The in-memory {@link ApprovalStore}: one process only (a replicated gateway needs a shared
 * store). Bounded by `maxActions`; when full, expired and consumed actions are swept first, and
 * if it is still full `create` throws `store_full` rather than dropping someone's open action.
 *
 * @example
 * ```ts
 * const store = new MemoryApprovalStore();
 * const pending = await store.listForDecider('alice', Date.now());
 * ```
 */
export class MemoryApprovalStore implements ApprovalStore {
  readonly #actions = new Map<string, PendingAction>();
  /** The latest action on each owner's task. */
  readonly #byTask = new TaskIndex();
  readonly #maxActions: number;
  readonly #perPrincipal: PendingQuota;
  readonly #newActionId: () => string;

  constructor(options: MemoryApprovalStoreOptions = {}) {
    const max = options.maxActions;
    this.#maxActions = typeof max === 'number' && Number.isInteger(max) && max > 0 ? max : 10_000;
    this.#perPrincipal = new PendingQuota(options.maxPendingPerPrincipal);
    this.#newActionId = options.newActionId ?? newActionId;
  }

  /** How many actions are held (for metrics and tests). */
  get size(): number {
    return this.#actions.size;
  }

  async create(input: PendingActionInput, now: number): Promise<PendingAction> {
    return this.createNow(input, now);
  }

  /**
   * `create`, synchronously: the gateway parks a task inside one synchronous step of its turn
   * (a backend whose events are all ready never waits), and this store needs no I/O.
   *
   * @example
   * ```ts
   * const action = store.createNow({ taskId, owner, decider, tool, args, level: 'L4', expiresAt }, Date.now());
   * ```
   */
  createNow(input: PendingActionInput, now: number): PendingAction {
    const { decider } = input;
    if (
      decider?.kind !== 'user' ||
      !nonEmpty(decider.userId) ||
      !nonEmpty(input.taskId) ||
      !nonEmpty(input.owner) ||
      !nonEmpty(input.tool) ||
      !Number.isFinite(input.expiresAt) ||
      !Number.isFinite(now) ||
      input.expiresAt <= now
    ) {
      throw new ApprovalError('invalid_action');
    }
    const previous = this.#latestFor(input.owner, input.taskId);
    if (previous !== undefined) {
      const status = approvalStatus(previous, now);
      if (status === 'pending' || status === 'approved') throw new ApprovalError('task_has_open_action');
    }
    // The caller's own share first: one principal at its quota never makes the store full for others.
    const open = (id: string): boolean => {
      const held = this.#actions.get(id);
      const status = held === undefined ? undefined : approvalStatus(held, now);
      return status === 'pending' || status === 'approved';
    };
    if (!this.#perPrincipal.hasRoom(input.owner, open)) throw new ApprovalError('principal_quota');
    if (this.#actions.size >= this.#maxActions) this.#sweepNow(now);
    if (this.#actions.size >= this.#maxActions) throw new ApprovalError('store_full');

    const actionId = this.#newActionId();
    // A collision of 256 random bits does not happen; an injected generator might repeat.
    if (this.#actions.has(actionId)) throw new ApprovalError('invalid_action');
    const action: PendingAction = Object.freeze({
      actionId,
      taskId: input.taskId,
      owner: input.owner,
      decider: Object.freeze({ kind: 'user', userId: decider.userId, via: decider.via }),
      tool: input.tool,
      args: deepFreeze(structuredClone(input.args)),
      level: input.level,
      createdAt: now,
      expiresAt: input.expiresAt,
      state: 'pending',
    });
    if (previous !== undefined) {
      this.#actions.delete(previous.actionId);
      this.#perPrincipal.remove(previous.owner, previous.actionId);
    }
    this.#actions.set(actionId, action);
    this.#byTask.set(input.owner, input.taskId, actionId);
    this.#perPrincipal.add(input.owner, actionId);
    return action;
  }

  async withdraw(owner: string, taskId: string, now: number): Promise<boolean> {
    const action = this.#latestFor(owner, taskId);
    if (action === undefined) return false;
    const status = approvalStatus(action, now);
    if (status !== 'pending' && status !== 'approved') return false;
    this.#actions.delete(action.actionId);
    this.#byTask.delete(owner, taskId, action.actionId);
    this.#perPrincipal.remove(owner, action.actionId);
    return true;
  }

  /** Any action by id, whoever owns it (the desk checks the person itself). */
  peek(actionId: string): PendingAction | undefined {
    return this.#actions.get(actionId);
  }

  async get(owner: string, actionId: string): Promise<PendingAction | undefined> {
    const action = this.#actions.get(actionId);
    return action !== undefined && action.owner === owner ? action : undefined;
  }

  async findByTask(owner: string, taskId: string): Promise<PendingAction | undefined> {
    return this.#latestFor(owner, taskId);
  }

  async listForDecider(userId: string, now: number): Promise<PendingAction[]> {
    const out: PendingAction[] = [];
    for (const action of this.#actions.values()) {
      if (action.decider.userId === userId && approvalStatus(action, now) === 'pending') out.push(action);
    }
    return out.sort((a, b) => a.createdAt - b.createdAt);
  }

  async decide(
    actionId: string,
    actor: DecisionActor,
    decision: ApprovalDecision,
    now: number,
  ): Promise<PendingAction> {
    const action = this.#actions.get(actionId);
    if (action === undefined) throw new ApprovalError('not_found');
    // Who is asked before what state the action is in: a wrong person learns nothing about it.
    if (!mayDecide(action.decider, actor)) throw new ApprovalError('not_decider');
    if (action.state !== 'pending') throw new ApprovalError('already_decided');
    if (!Number.isFinite(now) || approvalStatus(action, now) === 'expired') throw new ApprovalError('expired');
    if (decision !== 'approve' && decision !== 'deny') throw new ApprovalError('invalid_action');
    const decided: PendingAction = Object.freeze({
      ...action,
      state: decision === 'approve' ? 'approved' : 'denied',
      decidedBy: actor.userId,
      decidedAt: now,
    });
    this.#actions.set(actionId, decided);
    return decided;
  }

  async consume(actionId: string, taskId: string, now: number): Promise<PendingAction> {
    const action = this.#actions.get(actionId);
    if (action === undefined || action.taskId !== taskId) throw new ApprovalError('not_found');
    if (action.state === 'consumed') throw new ApprovalError('already_consumed');
    if (action.state === 'denied') throw new ApprovalError('denied');
    if (!Number.isFinite(now) || approvalStatus(action, now) === 'expired') throw new ApprovalError('expired');
    if (action.state !== 'approved') throw new ApprovalError('not_approved');
    const consumed: PendingAction = Object.freeze({ ...action, state: 'consumed', consumedAt: now });
    this.#actions.set(actionId, consumed);
    return consumed;
  }

  async sweep(now: number): Promise<number> {
    return this.#sweepNow(now);
  }

  /** Drops what can never be used again. Denied actions are kept until they expire, so a resume still reads "denied". */
  #sweepNow(now: number): number {
    let dropped = 0;
    for (const action of this.#actions.values()) {
      if (action.state === 'consumed' || now >= action.expiresAt) {
        this.#actions.delete(action.actionId);
        this.#byTask.delete(action.owner, action.taskId, action.actionId);
        this.#perPrincipal.remove(action.owner, action.actionId);
        dropped++;
      }
    }
    return dropped;
  }

  #latestFor(owner: string, taskId: string): PendingAction | undefined {
    const actionId = this.#byTask.get(owner, taskId);
    return actionId === undefined ? undefined : this.#actions.get(actionId);
  }
}

function nonEmpty(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const item of Object.values(value)) deepFreeze(item);
    Object.freeze(value);
  }
  return value;
}
