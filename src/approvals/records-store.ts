/**
 * The approval store over a durable task store's records (SQLite for one process, PostgreSQL for
 * every replica): pending actions, their decisions and what they keep hidden outlive the
 * process, and any replica lists and decides them. The rules are those of store.ts, checked on
 * what was read; each change of state is then a conditional write, so when another process got
 * there first (or the action expired meanwhile) the write changes nothing and the rule is
 * checked again on what is there now.
 *
 * @example
 * ```ts
 * const actions = new RecordApprovalStore(taskStore.approvals!, { maxActions: 10_000, maxPendingPerPrincipal: 100 });
 * const action = await actions.create(input, Date.now());
 * ```
 */
import type { ApprovalRecord, ApprovalRecords } from '../tasks/stores/approval-records.js';
import type { DecisionActor, Decider } from './decider.js';
import { isAutonomyLevel, type AutonomyLevel } from './ladder.js';
import { DEFAULT_MAX_PENDING_PER_PRINCIPAL } from './principal-quota.js';
import type { JsonValue } from './redact.js';
import {
  ApprovalError,
  checkNewAction,
  deepFreeze,
  consumeRefusal,
  decisionRefusal,
  newActionId,
  type ActionOrigin,
  type ApprovalDecision,
  type ApprovalStore,
  type KeptForAction,
  type PendingAction,
  type PendingActionInput,
} from './store.js';

/** What a record's `body` holds (JSON). */
interface ActionBody {
  readonly tool: string;
  readonly args: JsonValue;
  readonly level: AutonomyLevel;
  readonly via: Extract<Decider, { kind: 'user' }>['via'];
  readonly origin?: ActionOrigin;
}

/**
 * Options of {@link RecordApprovalStore}.
 *
 * @example
 * ```ts
 * const options: RecordApprovalStoreOptions = { maxActions: 10_000, maxPendingPerPrincipal: 100 };
 * ```
 */
export interface RecordApprovalStoreOptions {
  /** Open actions kept at once over every principal (default 10 000). */
  readonly maxActions?: number;
  /** Open actions of one principal (default 100: `approvals.maxPendingPerPrincipal`). */
  readonly maxPendingPerPrincipal?: number;
  /** For tests only. */
  readonly newActionId?: () => string;
}

/** A person's pending list is read in one go: more than this many would not fit a page anyway. */
const MAX_LISTED = 1_000;

/**
 * The {@link ApprovalStore} on {@link ApprovalRecords} (see the module comment).
 *
 * @example
 * ```ts
 * const pending = await new RecordApprovalStore(records).listForDecider('person:alice', Date.now());
 * ```
 */
export class RecordApprovalStore implements ApprovalStore {
  readonly #records: ApprovalRecords;
  readonly #maxOpen: number;
  readonly #maxPerPrincipal: number;
  readonly #newActionId: () => string;

  constructor(records: ApprovalRecords, options: RecordApprovalStoreOptions = {}) {
    this.#records = records;
    this.#maxOpen = positive(options.maxActions, 10_000);
    this.#maxPerPrincipal = positive(options.maxPendingPerPrincipal, DEFAULT_MAX_PENDING_PER_PRINCIPAL);
    this.#newActionId = options.newActionId ?? newActionId;
  }

  async create(input: PendingActionInput, now: number): Promise<PendingAction> {
    checkNewAction(input, now);
    const body: ActionBody = {
      tool: input.tool,
      args: input.args,
      level: input.level,
      via: input.decider.via,
      ...(input.origin !== undefined && { origin: input.origin }),
    };
    const actionId = this.#newActionId();
    const refused = await this.#records.create(
      {
        actionId,
        taskId: input.taskId,
        owner: input.owner,
        decider: input.decider.userId,
        createdAt: now,
        expiresAt: input.expiresAt,
        body: JSON.stringify(body),
        ...(input.kept !== undefined && { kept: JSON.stringify(input.kept) }),
      },
      { maxOpenPerPrincipal: this.#maxPerPrincipal, maxOpen: this.#maxOpen },
      now,
    );
    if (refused !== undefined) throw new ApprovalError(refused);
    const created = await this.#records.get(actionId);
    if (created === undefined) throw new ApprovalError('not_found');
    return actionOf(created);
  }

  async withdraw(owner: string, taskId: string, now: number): Promise<boolean> {
    return this.#records.withdraw(owner, taskId, now);
  }

  async get(owner: string, actionId: string): Promise<PendingAction | undefined> {
    const action = await this.find(actionId);
    return action !== undefined && action.owner === owner ? action : undefined;
  }

  async find(actionId: string): Promise<PendingAction | undefined> {
    const record = await this.#records.get(actionId);
    return record === undefined ? undefined : actionOf(record);
  }

  async findByTask(owner: string, taskId: string): Promise<PendingAction | undefined> {
    const record = await this.#records.latestOnTask(owner, taskId);
    return record === undefined ? undefined : actionOf(record);
  }

  async listForDecider(userId: string, now: number): Promise<PendingAction[]> {
    return (await this.#records.pendingFor(userId, now, MAX_LISTED)).map(actionOf);
  }

  async decidedWaiting(now: number, limit: number): Promise<PendingAction[]> {
    return (await this.#records.decidedWaiting(now, limit)).map(actionOf);
  }

  async decide(
    actionId: string,
    actor: DecisionActor,
    decision: ApprovalDecision,
    now: number,
  ): Promise<PendingAction> {
    const refused = decisionRefusal(await this.find(actionId), actor, decision, now);
    if (refused !== undefined) throw new ApprovalError(refused);
    const decided = await this.#records.transition(
      actionId,
      'pending',
      { state: decision === 'approve' ? 'approved' : 'denied', decidedBy: actor.userId, decidedAt: now },
      now,
    );
    if (decided !== undefined) return actionOf(decided);
    // Decided elsewhere first, or expired meanwhile: say which, as it is now.
    throw new ApprovalError(decisionRefusal(await this.find(actionId), actor, decision, now) ?? 'already_decided');
  }

  async consume(actionId: string, taskId: string, now: number): Promise<PendingAction> {
    const refused = consumeRefusal(await this.find(actionId), taskId, now);
    if (refused !== undefined) throw new ApprovalError(refused);
    const consumed = await this.#records.transition(actionId, 'approved', { state: 'consumed', consumedAt: now }, now);
    if (consumed !== undefined) return actionOf(consumed);
    throw new ApprovalError(consumeRefusal(await this.find(actionId), taskId, now) ?? 'already_consumed');
  }

  async take(actionId: string): Promise<KeptForAction | undefined> {
    const text = await this.#records.takeKept(actionId);
    if (text === undefined) return undefined;
    const kept = JSON.parse(text) as { args?: unknown; continuation?: unknown };
    return { args: kept.args, ...(kept.continuation !== undefined && { continuation: kept.continuation }) };
  }

  async countPending(now: number): Promise<ReadonlyMap<string, number>> {
    return (await this.#records.countPending?.(now)) ?? new Map();
  }

  async sweep(now: number): Promise<number> {
    return this.#records.sweep(now);
  }
}

/** A record as the approval flow sees it; a body this build did not write is refused. */
function actionOf(record: ApprovalRecord): PendingAction {
  const body = JSON.parse(record.body) as Partial<ActionBody>;
  if (typeof body.tool !== 'string' || !isAutonomyLevel(body.level) || body.args === undefined) {
    throw new ApprovalError('invalid_action');
  }
  return deepFreeze({
    actionId: record.actionId,
    taskId: record.taskId,
    owner: record.owner,
    decider: { kind: 'user', userId: record.decider, via: body.via === 'delegating_user' ? body.via : 'client_owner' },
    tool: body.tool,
    args: body.args,
    level: body.level,
    createdAt: record.createdAt,
    expiresAt: record.expiresAt,
    state: record.state,
    ...(record.decidedBy !== undefined && { decidedBy: record.decidedBy }),
    ...(record.decidedAt !== undefined && { decidedAt: record.decidedAt }),
    ...(record.consumedAt !== undefined && { consumedAt: record.consumedAt }),
    ...(body.origin !== undefined && { origin: body.origin }),
  });
}

function positive(value: number | undefined, fallback: number): number {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : fallback;
}
