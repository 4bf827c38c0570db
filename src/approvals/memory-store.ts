/**
 * The in-memory approval store: one process, bounded, each operation without an `await` between
 * its check and its write (see store.ts for the rules every store holds).
 *
 * @example
 * ```ts
 * const store = new MemoryApprovalStore({ maxActions: 1000 });
 * const action = store.createNow(input, Date.now());
 * ```
 */
import type { DecisionActor } from './decider.js';
import { PendingQuota } from './principal-quota.js';
import {
  ApprovalError,
  approvalStatus,
  checkNewAction,
  deepFreeze,
  consumeRefusal,
  decisionRefusal,
  newActionId,
  type ApprovalDecision,
  type ApprovalStore,
  type KeptForAction,
  type PendingAction,
  type PendingActionInput,
} from './store.js';
import { TaskIndex } from './task-index.js';

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
  /** What each action keeps hidden until it is taken (unredacted arguments, continuation). */
  readonly #kept = new Map<string, KeptForAction>();
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

  create(input: PendingActionInput, now: number): PendingAction {
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
    checkNewAction(input, now);
    const { decider } = input;
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
      ...(input.origin !== undefined && { origin: deepFreeze(structuredClone(input.origin)) }),
    });
    if (previous !== undefined) this.#forget(previous);
    this.#actions.set(actionId, action);
    if (input.kept !== undefined) this.#kept.set(actionId, input.kept);
    this.#byTask.set(input.owner, input.taskId, actionId);
    this.#perPrincipal.add(input.owner, actionId);
    return action;
  }

  async withdraw(owner: string, taskId: string, now: number): Promise<boolean> {
    const action = this.#latestFor(owner, taskId);
    if (action === undefined) return false;
    const status = approvalStatus(action, now);
    if (status !== 'pending' && status !== 'approved') return false;
    this.#forget(action);
    return true;
  }

  /** Any action by id, whoever owns it, at once (the origin book prunes with it). */
  peek(actionId: string): PendingAction | undefined {
    return this.#actions.get(actionId);
  }

  async find(actionId: string): Promise<PendingAction | undefined> {
    return this.#actions.get(actionId);
  }

  async take(actionId: string): Promise<KeptForAction | undefined> {
    const kept = this.#kept.get(actionId);
    this.#kept.delete(actionId);
    return kept;
  }

  async decidedWaiting(now: number, limit: number): Promise<PendingAction[]> {
    const out: PendingAction[] = [];
    for (const action of this.#actions.values()) {
      const status = approvalStatus(action, now);
      if (status === 'approved' || (status === 'denied' && now < action.expiresAt)) out.push(action);
    }
    return out.sort((a, b) => (a.decidedAt ?? 0) - (b.decidedAt ?? 0)).slice(0, Math.max(0, limit));
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
    const refused = decisionRefusal(action, actor, decision, now);
    if (refused !== undefined || action === undefined) throw new ApprovalError(refused ?? 'not_found');
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
    const refused = consumeRefusal(action, taskId, now);
    if (refused !== undefined || action === undefined) throw new ApprovalError(refused ?? 'not_found');
    const consumed: PendingAction = Object.freeze({ ...action, state: 'consumed', consumedAt: now });
    this.#actions.set(actionId, consumed);
    return consumed;
  }

  async countPending(now: number): Promise<ReadonlyMap<string, number>> {
    const counts = new Map<string, number>();
    for (const action of this.#actions.values()) {
      if (approvalStatus(action, now) !== 'pending') continue;
      const agent = action.origin?.agent ?? '';
      counts.set(agent, (counts.get(agent) ?? 0) + 1);
    }
    return counts;
  }

  async sweep(now: number): Promise<number> {
    return this.#sweepNow(now);
  }

  /** Drops what can never be used again. Denied actions are kept until they expire, so a resume still reads "denied". */
  #sweepNow(now: number): number {
    let dropped = 0;
    for (const action of this.#actions.values()) {
      if (action.state === 'consumed' || now >= action.expiresAt) {
        this.#forget(action);
        dropped++;
      }
    }
    return dropped;
  }

  #forget(action: PendingAction): void {
    this.#actions.delete(action.actionId);
    this.#kept.delete(action.actionId);
    this.#byTask.delete(action.owner, action.taskId, action.actionId);
    this.#perPrincipal.remove(action.owner, action.actionId);
  }

  #latestFor(owner: string, taskId: string): PendingAction | undefined {
    const actionId = this.#byTask.get(owner, taskId);
    return actionId === undefined ? undefined : this.#actions.get(actionId);
  }
}
