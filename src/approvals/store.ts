/**
 * Pending guarded actions and their decisions. The store enforces the approval rules that must
 * hold whoever calls it: only the decider decides, a decision is made once, nothing is decided
 * or used after it expires, and an approval is consumed exactly once, by the task it was
 * proposed on.
 *
 * Two stores implement it: `memory-store.ts` (one process; each operation has no `await` between
 * its check and its write, so two calls racing on one action can never both succeed) and
 * `records-store.ts` (over a durable task store's records, SQLite or PostgreSQL: the same rules,
 * each change of state a conditional write, so they hold across replicas and restarts).
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
  /** Where it came from (views, audit rows, the resume after the decision). */
  readonly origin?: ActionOrigin;
  /** What is handed back once and never shown: the unredacted arguments, the continuation. */
  readonly kept?: KeptForAction;
}

/**
 * Where an action came from: the task's agent, client and context, the caller (to resume the
 * task as that caller after the decision), and the first line of the request that started the
 * turn (scrubbed, for the person's card).
 *
 * @example
 * ```ts
 * const origin: ActionOrigin = { agent: 'ops', client: 'ops-bot', contextId: 'c-1', caller: { clientId: 'ops-bot', kind: 'client' } };
 * ```
 */
export interface ActionOrigin {
  readonly agent: string;
  readonly client: string;
  readonly contextId: string;
  readonly caller?: {
    readonly clientId: string;
    readonly kind: 'client' | 'service' | 'delegated';
    readonly subject?: string;
  };
  readonly request?: string;
}

/**
 * What the backend proposed, unredacted, and what it kept to go on: handed back once, when the
 * approval is used or the denial reaches the agent ({@link ApprovalStore.take}).
 *
 * @example
 * ```ts
 * const kept: KeptForAction = { args: { path: 'notes.txt', content: 'hello' }, continuation: { round: 2 } };
 * ```
 */
export interface KeptForAction {
  readonly args: unknown;
  readonly continuation?: unknown;
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
  readonly origin?: ActionOrigin;
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
  /**
   * Records a pending action for a task that has none open. Throws `task_has_open_action`,
   * `principal_quota`, `store_full`, `invalid_action`. The memory store answers at once; a
   * durable one once the record is written (the task parks only then).
   */
  create(input: PendingActionInput, now: number): PendingAction | Promise<PendingAction>;
  /** Drops the open (pending or approved) action of a task, e.g. when the task is canceled. */
  withdraw(owner: string, taskId: string, now: number): Promise<boolean>;
  /** The action, only if `owner` owns it; `undefined` otherwise (never reveals another owner's). */
  get(owner: string, actionId: string): Promise<PendingAction | undefined>;
  /** Any action by id, whoever owns it (the desk checks the person itself). */
  find(actionId: string): Promise<PendingAction | undefined>;
  /** The latest action proposed on a task (what a resume looks at), owner-scoped. */
  findByTask(owner: string, taskId: string): Promise<PendingAction | undefined>;
  /** Actions awaiting this user's decision at `now`, oldest first (for the console / approvals CLI). */
  listForDecider(userId: string, now: number): Promise<PendingAction[]>;
  /** Decided (approved or denied), unused and unexpired actions, oldest decision first: what a restart resumes. */
  decidedWaiting(now: number, limit: number): Promise<PendingAction[]>;
  /** Approves or denies. Throws `not_found`, `not_decider`, `already_decided`, `expired`. */
  decide(actionId: string, actor: DecisionActor, decision: ApprovalDecision, now: number): Promise<PendingAction>;
  /** Uses an approval, exactly once. Throws `not_found`, `not_approved`, `denied`, `expired`, `already_consumed`. */
  consume(actionId: string, taskId: string, now: number): Promise<PendingAction>;
  /** What was kept hidden with the action (see KeptForAction), once: later calls get `undefined`. */
  take(actionId: string): Promise<KeptForAction | undefined>;
  /** Drops expired and consumed actions; returns how many were dropped. */
  sweep(now: number): Promise<number>;
  /** Pending, unexpired actions by the agent they came from (`''`: not known), for the metrics. */
  countPending?(now: number): Promise<ReadonlyMap<string, number>>;
}

/**
 * Throws `invalid_action` unless `input` is an action the gateway may record at `now`: a person
 * decides it, it names its task, owner and tool, and it expires later.
 *
 * @example
 * ```ts
 * checkNewAction(input, Date.now());
 * ```
 */
export function checkNewAction(
  input: PendingActionInput,
  now: number,
): asserts input is PendingActionInput & { readonly decider: Extract<Decider, { kind: 'user' }> } {
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
}

/**
 * Why `actor` may not decide `action` at `now`, or `undefined` when it may. Who is asked before
 * what state the action is in: a wrong person learns nothing about it.
 *
 * @example
 * ```ts
 * const refused = decisionRefusal(action, { kind: 'user', userId: 'person:bob' }, 'approve', now); // 'not_decider'
 * ```
 */
export function decisionRefusal(
  action: PendingAction | undefined,
  actor: DecisionActor,
  decision: ApprovalDecision,
  now: number,
): ApprovalErrorCode | undefined {
  if (action === undefined) return 'not_found';
  if (!mayDecide(action.decider, actor)) return 'not_decider';
  if (action.state !== 'pending') return 'already_decided';
  if (!Number.isFinite(now) || approvalStatus(action, now) === 'expired') return 'expired';
  if (decision !== 'approve' && decision !== 'deny') return 'invalid_action';
  return undefined;
}

/**
 * Why `action` may not be used by `taskId` at `now`, or `undefined` when it may.
 *
 * @example
 * ```ts
 * consumeRefusal(action, taskId, now); // 'not_approved' while the person has not decided
 * ```
 */
export function consumeRefusal(
  action: PendingAction | undefined,
  taskId: string,
  now: number,
): ApprovalErrorCode | undefined {
  if (action === undefined || action.taskId !== taskId) return 'not_found';
  if (action.state === 'consumed') return 'already_consumed';
  if (action.state === 'denied') return 'denied';
  if (!Number.isFinite(now) || approvalStatus(action, now) === 'expired') return 'expired';
  if (action.state !== 'approved') return 'not_approved';
  return undefined;
}

/**
 * `value`, frozen all the way down: the stores hand out records nobody can change.
 *
 * @example
 * ```ts
 * const action = deepFreeze({ ...fields, args: structuredClone(args) });
 * ```
 */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const item of Object.values(value)) deepFreeze(item);
    Object.freeze(value);
  }
  return value;
}

function nonEmpty(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
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
