/**
 * The approvals service: where a turn that needs a person goes (the task service's
 * `ParkingGate`), and what the person's surfaces call (`ApprovalDesk`). It applies the pure
 * rules of this folder — the ladder, who decides, redaction, the resume rule — around the two
 * in-memory stores, and writes an audit row for every proposal, decision and use.
 *
 *
 * The parts: `proposals.ts` (the ladder, parking, using an approval), `decisions.ts` (the
 * person's decisions and views), `question-flow.ts` (remote questions), `origins.ts` (what is
 * remembered beside the stores, and its pruning), `person-activity.ts` (the console's tasks and
 * audit rows), `audit-trail.ts` (the rows they share) and `parked.ts` (what a parked task waits for).
 * Pending actions and questions live in this process: after a restart a parked task finds
 * nothing to resume with and fails as expired (fail closed; docs/APPROVALS.md).
 *
 * @example
 * ```ts
 * const approvals = new ApprovalService({ settings: config.approvals, agents, clientOwners, secrets, audit, baseUrl });
 * const service = new TaskService({ store, gate: approvals });
 * await approvals.decide(actionId, 'person:alice', 'approve');
 * ```
 */
import type { ProposedAction, RemoteQuestion } from '../agents/backend.js';
import type { AuditEvent } from '../audit/events.js';
import type { Task } from '../protocol/model.js';
import type { CallContext } from '../tasks/call-context.js';
import type { ParkOutcome, ParkingGate, ResumeOutcome, TaskLifecycleEvent } from '../tasks/policy.js';
import { ApprovalAuditTrail, clientOf, type ApprovalAuditWriter } from './audit-trail.js';
import { actionFor, decideAction, decidedTaskOf, openActionOn, pendingActions } from './decisions.js';
import type { ClientOwners } from './decider.js';
import type { ApprovalDesk, ApprovalView, PersonAuditRow, PersonTaskView, RemoteQuestionView } from './desk.js';
import { deciderOfCall, type GateState } from './gate-state.js';
import type { AutonomyLevel } from './ladder.js';
import { OriginBook } from './origins.js';
import { parkedOn } from './parked.js';
import { PersonActivity } from './person-activity.js';
import { DEFAULT_MAX_PENDING_PER_PRINCIPAL } from './principal-quota.js';
import { proposeAction, resumeAction } from './proposals.js';
import { answerQuestion, askPerson, questionsFor, resumeQuestion } from './question-flow.js';
import { MemoryQuestionStore } from './questions.js';
import type { ApprovalRecords } from '../tasks/stores/approval-records.js';
import { MemoryApprovalStore } from './memory-store.js';
import { RecordApprovalStore } from './records-store.js';
import type { ApprovalDecision } from './store.js';

export type { ApprovalAuditWriter } from './audit-trail.js';
export { parkedOn, type ParkedOn } from './parked.js';
export type { DecidedTask } from './desk.js';
import type { DecidedTask } from './desk.js';

/**
 * What the approvals service is built from: the `approvals` settings, the agents' and clients'
 * configuration it judges with, and where its audit rows go.
 *
 * @example
 * ```ts
 * const options: ApprovalServiceOptions = { agentMaxLevels: new Map(), clientOwners: new Map(), secrets: [], baseUrl: () => url };
 * ```
 */
export interface ApprovalServiceOptions {
  /** `approvals` as loaded; absent = approvals off (acting proposals are refused). */
  readonly settings?: {
    readonly ttlMs: number;
    readonly serviceMaxLevel: 'L1' | 'L2';
    readonly maxPending: number;
    /** `approvals.maxPendingPerPrincipal`; absent: the default, 100. */
    readonly maxPendingPerPrincipal?: number;
    /** `approvals.console`: `approve_url` then opens the action in the console, a person's page. */
    readonly console?: boolean;
  };
  /** The highest level each agent may act at (`agents[].actions.maxLevel`); default L2. */
  readonly agentMaxLevels: ReadonlyMap<string, AutonomyLevel>;
  /** Agents with `actions.onDenied: continue` (default: none; a denial fails the task). */
  readonly continueOnDenied?: ReadonlySet<string>;
  /** Client id → the owning person's user id (`person:<id>`). */
  readonly clientOwners: ClientOwners;
  /** `auth.jwt.issuer`, when JWTs are verified: delegating users are `jwt:<issuer>#<sub>`. */
  readonly jwtIssuer?: string;
  /** Values redacted from proposed arguments (the configured scrub secrets). */
  readonly secrets: readonly string[];
  readonly audit?: ApprovalAuditWriter;
  /** The gateway's base URL, for `approve_url` (the public URL when configured). */
  readonly baseUrl: () => string;
  /**
   * The durable task store's approval records (SQLite, PostgreSQL): pending actions and their
   * decisions then outlive the process and any replica decides them. Absent: kept in memory.
   */
  readonly records?: ApprovalRecords;
  /** Epoch milliseconds; for tests. */
  readonly now?: () => number;
  /**
   * Told of the task behind each decision (approve, deny) and answer, once it is recorded: the
   * gateway resumes the task itself (`TaskService.resumeDecided`). Never told what was decided.
   */
  readonly onDecided?: (task: DecidedTask) => void;
}

const NO_APPROVALS_TTL_MS = 60_000;

/**
 * The approvals service (see the module comment): the task service's `ParkingGate` and the
 * person's `ApprovalDesk`, over one process's in-memory stores.
 *
 * @example
 * ```ts
 * const approvals = new ApprovalService({ settings, agentMaxLevels, clientOwners, secrets, audit, baseUrl });
 * const outcome = approvals.propose(ctx, owner, task, { tool: 'deploy', level: 'L4' });
 * ```
 */
export class ApprovalService implements ParkingGate, ApprovalDesk {
  readonly #state: GateState;
  readonly #activity = new PersonActivity();

  constructor(options: ApprovalServiceOptions) {
    const now = options.now ?? Date.now;
    const maxPending = options.settings?.maxPending ?? 10_000;
    const maxPendingPerPrincipal = options.settings?.maxPendingPerPrincipal ?? DEFAULT_MAX_PENDING_PER_PRINCIPAL;
    this.#state = {
      enabled: options.settings !== undefined,
      ttlMs: options.settings?.ttlMs ?? NO_APPROVALS_TTL_MS,
      serviceMaxLevel: options.settings?.serviceMaxLevel ?? 'L2',
      agentMaxLevels: options.agentMaxLevels,
      continueOnDenied: options.continueOnDenied ?? new Set(),
      clientOwners: options.clientOwners,
      jwtIssuer: options.jwtIssuer ?? '',
      secrets: options.secrets,
      baseUrl: options.baseUrl,
      consoleLinks: options.settings?.console === true,
      now,
      actions:
        options.records === undefined
          ? new MemoryApprovalStore({ maxActions: maxPending, maxPendingPerPrincipal })
          : new RecordApprovalStore(options.records, { maxActions: maxPending, maxPendingPerPrincipal }),
      questions: new MemoryQuestionStore({ maxQuestions: maxPending, maxPendingPerPrincipal }),
      origins: new OriginBook(maxPending),
      trail: new ApprovalAuditTrail(options.audit, now),
    };
    if (options.onDecided !== undefined) this.#state = { ...this.#state, decided: options.onDecided };
  }

  /**
   * Hands every decided action not used yet to `onDecided`, oldest decision first: after a
   * restart (or a replica that decided and stopped), the gateway resumes those tasks itself.
   * Returns how many it handed on. Nothing to do without a durable store or `onDecided`.
   *
   * @example
   * ```ts
   * await approvals.resumeDecided(); // once, when the gateway starts serving
   * ```
   */
  async resumeDecided(limit = 1_000): Promise<number> {
    const decided = this.#state.decided;
    if (decided === undefined) return 0;
    const waiting = await this.#state.actions.decidedWaiting(this.#state.now(), limit);
    for (const action of waiting) {
      const task = decidedTaskOf(action);
      if (task !== undefined) decided(task);
    }
    return waiting.length;
  }

  /**
   * Actions awaiting a person now, by the agent they came from (`''`: not known): read from the
   * store, so a durable store's count holds across restarts and replicas.
   *
   * @example
   * ```ts
   * const pending = await approvals.pendingByAgent(); // Map { 'ops' => 2 }
   * ```
   */
  async pendingByAgent(): Promise<ReadonlyMap<string, number>> {
    return (await this.#state.actions.countPending?.(this.#state.now())) ?? new Map();
  }

  /** Questions whose origin is remembered (for metrics and tests; bounded by maxPending). */
  get remembered(): number {
    return this.#state.origins.size;
  }

  // ---- ParkingGate -------------------------------------------------------------------------

  propose(
    ctx: CallContext,
    owner: string,
    task: Task,
    proposal: ProposedAction,
    continuation?: unknown,
  ): ParkOutcome | Promise<ParkOutcome> {
    return proposeAction(this.#state, ctx, owner, task, proposal, continuation);
  }

  ask(ctx: CallContext, owner: string, task: Task, remote: RemoteQuestion): ParkOutcome {
    return askPerson(this.#state, ctx, owner, task, remote);
  }

  async resume(ctx: CallContext, owner: string, task: Task): Promise<ResumeOutcome> {
    const parked = parkedOn(task);
    if (parked === undefined) return { kind: 'not_parked' };
    const now = this.#state.now();
    return parked.kind === 'action'
      ? resumeAction(this.#state, ctx, owner, task, parked.id, now)
      : resumeQuestion(this.#state, ctx, owner, task, parked.id, now);
  }

  withdraw(owner: string, taskId: string): void {
    const now = this.#state.now();
    void this.#state.actions.withdraw(owner, taskId, now);
    this.#state.questions.withdraw(owner, taskId);
  }

  /** Told of every task's lifecycle: remembers the tasks of principals a person answers for. */
  observeTask(event: TaskLifecycleEvent): void {
    if (!this.#state.enabled) return;
    const decider = deciderOfCall(event.ctx, this.#state.clientOwners, this.#state.jwtIssuer);
    if (decider.kind !== 'user') return;
    this.#activity.observeTask(decider.userId, event, clientOf(event.ctx), this.#state.now());
  }

  /** Told of every audit row: keeps the rows about a person's tasks and decisions for the console. */
  observeAuditRow(event: AuditEvent): void {
    if (!this.#state.enabled) return;
    this.#activity.observeAuditRow(event);
  }

  // ---- ApprovalDesk ------------------------------------------------------------------------

  async pending(userId: string): Promise<ApprovalView[]> {
    return pendingActions(this.#state, userId);
  }

  async get(userId: string, actionId: string): Promise<ApprovalView | undefined> {
    return actionFor(this.#state, userId, actionId);
  }

  async decide(actionId: string, userId: string, decision: ApprovalDecision, remote?: string): Promise<ApprovalView> {
    return decideAction(this.#state, actionId, userId, decision, remote);
  }

  async recentTasks(userId: string, limit: number): Promise<PersonTaskView[]> {
    const tasks = this.#activity.recentTasks(userId, limit);
    return Promise.all(
      tasks.map(async (view) => {
        const open = await openActionOn(this.#state, view.taskId);
        return open === undefined ? view : { ...view, actionId: open };
      }),
    );
  }

  async auditTail(userId: string, limit: number): Promise<PersonAuditRow[]> {
    return this.#activity.auditTail(userId, limit);
  }

  async questions(userId: string): Promise<RemoteQuestionView[]> {
    return questionsFor(this.#state, userId);
  }

  async answer(questionId: string, userId: string, text: string, remote?: string): Promise<RemoteQuestionView> {
    return answerQuestion(this.#state, questionId, userId, text, remote);
  }
}
