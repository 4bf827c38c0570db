/**
 * The approvals service: where a turn that needs a person goes (the task service's
 * `ParkingGate`), and what the person's surfaces call (`ApprovalDesk`). It applies the pure
 * rules of this folder — the ladder, who decides, redaction, the resume rule — around the two
 * in-memory stores, and writes an audit row for every proposal, decision and use.
 *
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
import type { ApprovedAction, ProposedAction, RemoteQuestion } from '../agents/backend.js';
import type { AuditEvent, AuditTime } from '../audit/events.js';
import type { Part, Task } from '../protocol/model.js';
import type { ParkOutcome, ParkingGate, ResumeOutcome, TaskLifecycleEvent } from '../tasks/policy.js';
import type { CallContext } from '../tasks/call-context.js';
import { deciderFor, type ClientOwners, type Decider } from './decider.js';
import {
  levelView,
  type ApprovalDesk,
  type ApprovalView,
  type PersonAuditRow,
  type PersonTaskView,
  type RemoteQuestionView,
} from './desk.js';
import { decideProposal, parseLevel, type AutonomyLevel } from './ladder.js';
import { actionDataPart } from './part.js';
import { MemoryQuestionStore, questionView, type PendingQuestion } from './questions.js';
import { redactActionArgs, type JsonValue } from './redact.js';
import { resumeStep } from './resume.js';
import {
  ApprovalError,
  approvalStatus,
  isApprovalError,
  MemoryApprovalStore,
  newActionId,
  type ApprovalDecision,
  type PendingAction,
} from './store.js';

/** Writes one audit row; `required` rows that cannot be written throw (nothing is done unaudited). */
export type ApprovalAuditWriter = (event: AuditEvent, required: boolean) => void;

export interface ApprovalServiceOptions {
  /** `approvals` as loaded; absent = approvals off (acting proposals are refused). */
  readonly settings?: {
    readonly ttlMs: number;
    readonly serviceMaxLevel: 'L1' | 'L2';
    readonly maxPending: number;
  };
  /** The highest level each agent may act at (`agents[].actions.maxLevel`); default L2. */
  readonly agentMaxLevels: ReadonlyMap<string, AutonomyLevel>;
  /** Client id → the owning person's user id (`person:<id>`). */
  readonly clientOwners: ClientOwners;
  /** Values redacted from proposed arguments (the configured scrub secrets). */
  readonly secrets: readonly string[];
  readonly audit?: ApprovalAuditWriter;
  /** The gateway's base URL, for `approve_url` (the public URL when configured). */
  readonly baseUrl: () => string;
  /** Epoch milliseconds; for tests. */
  readonly now?: () => number;
}

/** Where an action or question came from (for views, audit rows and pruning). */
interface Origin {
  readonly kind: 'action' | 'question';
  readonly owner: string;
  readonly taskId: string;
  readonly agent: string;
  readonly client: string;
  readonly contextId: string;
}

/** A parked task's data part names what it waits for. */
type ParkedOn = { readonly kind: 'action'; readonly id: string } | { readonly kind: 'question'; readonly id: string };

/** Tool names a proposal may carry (the audit log and the console show them). */
const TOOL_NAME = /^[A-Za-z0-9_.:-]{1,128}$/;
/** Per person: tasks remembered for the console, and audit rows. */
const TASKS_PER_PERSON = 50;
const ROWS_PER_PERSON = 100;
/** People remembered at once (the oldest is forgotten first). */
const MAX_PEOPLE = 10_000;
const DEFAULT_AGENT_MAX_LEVEL: AutonomyLevel = 'L2';
const NO_APPROVALS_TTL_MS = 60_000;

export class ApprovalService implements ParkingGate, ApprovalDesk {
  readonly #enabled: boolean;
  readonly #ttlMs: number;
  readonly #serviceMaxLevel: 'L1' | 'L2';
  readonly #agentMaxLevels: ReadonlyMap<string, AutonomyLevel>;
  readonly #clientOwners: ClientOwners;
  readonly #secrets: readonly string[];
  readonly #audit: ApprovalAuditWriter | undefined;
  readonly #baseUrl: () => string;
  readonly #now: () => number;
  readonly #actions: MemoryApprovalStore;
  readonly #questions: MemoryQuestionStore;
  /** What the backend proposed, unredacted, until the approval is used (it gets them back). */
  readonly #originalArgs = new Map<string, unknown>();
  /** Where each action / question came from, for views and audit rows. */
  readonly #origins = new Map<string, Origin>();
  /** taskId → the latest action proposed on it (for the console's task list). */
  readonly #actionByTask = new Map<string, string>();
  /** Above this many remembered origins, the ones whose action or question is gone are dropped. */
  readonly #pruneAt: number;
  /** userId → taskId → view (insertion order = age). */
  readonly #tasks = new Map<string, Map<string, PersonTaskView>>();
  /** userId → newest-last audit rows. */
  readonly #rows = new Map<string, PersonAuditRow[]>();
  /** taskId → userId, for routing audit rows to a person (bounded with #tasks). */
  readonly #taskPerson = new Map<string, string>();

  constructor(options: ApprovalServiceOptions) {
    this.#enabled = options.settings !== undefined;
    this.#ttlMs = options.settings?.ttlMs ?? NO_APPROVALS_TTL_MS;
    this.#serviceMaxLevel = options.settings?.serviceMaxLevel ?? 'L2';
    const maxPending = options.settings?.maxPending ?? 10_000;
    this.#agentMaxLevels = options.agentMaxLevels;
    this.#clientOwners = options.clientOwners;
    this.#secrets = options.secrets;
    this.#audit = options.audit;
    this.#baseUrl = options.baseUrl;
    this.#now = options.now ?? Date.now;
    this.#pruneAt = maxPending;
    this.#actions = new MemoryApprovalStore({ maxActions: maxPending });
    this.#questions = new MemoryQuestionStore({ maxQuestions: maxPending });
  }

  /** Actions and questions whose origin is remembered (for metrics and tests; bounded by maxPending). */
  get remembered(): number {
    return this.#origins.size;
  }

  // ---- ParkingGate -------------------------------------------------------------------------

  propose(ctx: CallContext, owner: string, task: Task, proposal: ProposedAction): ParkOutcome {
    const level = parseLevel(proposal.level);
    const tool = typeof proposal.tool === 'string' && TOOL_NAME.test(proposal.tool) ? proposal.tool : undefined;
    if (level === undefined || tool === undefined) {
      return this.#refuse(
        ctx,
        task,
        'invalid_proposal',
        'The agent proposed an action without a valid tool name and autonomy level (L1–L4).',
        tool,
        level,
      );
    }
    const principalKind = ctx.caller?.kind ?? 'service';
    const verdict = decideProposal({
      level,
      agentMaxLevel: this.#agentMaxLevels.get(ctx.agentSlug) ?? DEFAULT_AGENT_MAX_LEVEL,
      principalKind,
      serviceMaxLevel: this.#serviceMaxLevel,
    });
    if (verdict.kind === 'refuse') return this.#refuse(ctx, task, verdict.reason, verdict.message, tool, level);
    if (verdict.kind === 'allow') {
      return { kind: 'allow', action: { actionId: newActionId(), tool, args: proposal.args ?? {}, level } };
    }
    if (!this.#enabled) {
      return this.#refuse(
        ctx,
        task,
        'approvals_off',
        `The action needs a person's approval (${level}), and approvals are not configured on this gateway.`,
        tool,
        level,
      );
    }
    const decider = this.#deciderOf(ctx);
    if (decider.kind !== 'user') {
      return this.#refuse(
        ctx,
        task,
        'no_decider',
        `The action needs a person's approval (${level}), and nobody is configured to approve for this caller.`,
        tool,
        level,
      );
    }
    const now = this.#now();
    this.#prune(now);
    const { value: args } = redactActionArgs(proposal.args ?? {}, { secrets: this.#secrets });
    let action: PendingAction;
    try {
      action = this.#actions.createNow(
        { taskId: task.id, owner, decider, tool, args, level, expiresAt: now + this.#ttlMs },
        now,
      );
    } catch (error) {
      if (isApprovalError(error, 'store_full')) {
        return this.#refuse(ctx, task, 'store_full', 'Too many actions are waiting for approval; try again later.');
      }
      throw error;
    }
    const client = clientOf(ctx);
    this.#writeOrUndo(() => void this.#actions.withdraw(owner, task.id, now), {
      type: 'a2a.approval.requested',
      time: auditNow(now),
      outcome: 'ok',
      client,
      agent: ctx.agentSlug,
      taskId: task.id,
      contextId: task.contextId,
      actionId: action.actionId,
      tool,
      level,
      user: decider.userId,
      ...(ctx.caller !== undefined && { principalKind: ctx.caller.kind }),
    });
    this.#originalArgs.set(action.actionId, proposal.args ?? {});
    this.#origins.set(action.actionId, {
      kind: 'action',
      owner,
      taskId: task.id,
      agent: ctx.agentSlug,
      client,
      contextId: task.contextId,
    });
    this.#actionByTask.set(task.id, action.actionId);
    const url = `${this.#baseUrl()}/approvals/${action.actionId}`;
    const info = levelView(level);
    return {
      kind: 'park',
      parts: [
        {
          kind: 'text',
          text:
            `Approval needed: the agent wants to run "${tool}" (${level}, ${info.levelName}). ` +
            `The person who answers for this caller must approve it (${url}); then send any message on this task to go on. ` +
            'A reply on the task is not an approval.',
        },
        { kind: 'data', data: actionDataPart(action, url) as unknown as JsonValue },
      ],
    };
  }

  ask(ctx: CallContext, owner: string, task: Task, remote: RemoteQuestion): ParkOutcome {
    const decider = this.#enabled ? this.#deciderOf(ctx) : undefined;
    if (decider === undefined || decider.kind !== 'user') {
      // Nobody to ask: the caller gets the question, as any input-required.
      return { kind: 'park', parts: [{ kind: 'text', text: remote.question }] };
    }
    const now = this.#now();
    this.#prune(now);
    let question: PendingQuestion;
    try {
      question = this.#questions.create(
        {
          taskId: task.id,
          owner,
          decider,
          agent: ctx.agentSlug,
          remoteAgent: remote.agent,
          remoteTaskId: remote.taskId,
          remoteContextId: remote.contextId,
          state: remote.state,
          question: remote.question,
          expiresAt: now + this.#ttlMs,
        },
        now,
      );
    } catch (error) {
      if (isApprovalError(error, 'store_full')) {
        return this.#refuse(ctx, task, 'store_full', 'Too many questions are waiting for a person; try again later.');
      }
      throw error;
    }
    const client = clientOf(ctx);
    this.#writeOrUndo(() => void this.#questions.withdraw(owner, task.id), {
      type: 'a2a.question.asked',
      time: auditNow(now),
      outcome: 'ok',
      client,
      agent: ctx.agentSlug,
      taskId: task.id,
      contextId: task.contextId,
      actionId: question.questionId,
      user: decider.userId,
      state: remote.state,
      ...(ctx.caller !== undefined && { principalKind: ctx.caller.kind }),
    });
    this.#origins.set(question.questionId, {
      kind: 'question',
      owner,
      taskId: task.id,
      agent: ctx.agentSlug,
      client,
      contextId: task.contextId,
    });
    const url = `${this.#baseUrl()}/console`;
    return {
      kind: 'park',
      parts: [
        {
          kind: 'text',
          text:
            `The remote agent "${remote.agent}" asked a question that the person who answers for this caller must answer (${url}); ` +
            'then send any message on this task to go on. A reply on the task is not an answer.',
        },
        {
          kind: 'data',
          data: {
            question_id: question.questionId,
            remote_agent: remote.agent,
            remote_task_id: remote.taskId,
            remote_context_id: remote.contextId,
            state: remote.state,
            expires_at: new Date(question.expiresAt).toISOString(),
            answer_url: url,
          },
        },
      ],
    };
  }

  async resume(ctx: CallContext, owner: string, task: Task): Promise<ResumeOutcome> {
    const parked = parkedOn(task);
    if (parked === undefined) return { kind: 'not_parked' };
    const now = this.#now();
    return parked.kind === 'action'
      ? this.#resumeAction(ctx, owner, task, parked.id, now)
      : this.#resumeQuestion(ctx, owner, task, parked.id, now);
  }

  withdraw(owner: string, taskId: string): void {
    const now = this.#now();
    void this.#actions.withdraw(owner, taskId, now);
    this.#questions.withdraw(owner, taskId);
  }

  /** Told of every task's lifecycle: remembers the tasks of principals a person answers for. */
  observeTask(event: TaskLifecycleEvent): void {
    if (!this.#enabled) return;
    const decider = this.#deciderOf(event.ctx);
    if (decider.kind !== 'user') return;
    const userId = decider.userId;
    let tasks = this.#tasks.get(userId);
    if (tasks === undefined) {
      if (this.#tasks.size >= MAX_PEOPLE) this.#forgetOldestPerson();
      this.#tasks.set(userId, (tasks = new Map<string, PersonTaskView>()));
    }
    const time = new Date(this.#now()).toISOString();
    const previous = tasks.get(event.taskId);
    const view: PersonTaskView = {
      taskId: event.taskId,
      contextId: event.contextId,
      agent: event.ctx.agentSlug,
      client: clientOf(event.ctx),
      state: event.type,
      createdAt: previous?.createdAt ?? time,
      updatedAt: time,
    };
    tasks.delete(event.taskId);
    tasks.set(event.taskId, view);
    this.#taskPerson.set(event.taskId, userId);
    if (tasks.size > TASKS_PER_PERSON) {
      const oldest = tasks.keys().next().value as string;
      tasks.delete(oldest);
      this.#taskPerson.delete(oldest);
    }
  }

  /** Told of every audit row: keeps the rows about a person's tasks and decisions for the console. */
  observeAuditRow(event: AuditEvent): void {
    if (!this.#enabled) return;
    const row = event as unknown as Record<string, unknown>;
    const user = typeof row.user === 'string' ? row.user : undefined;
    const taskId = typeof row.taskId === 'string' ? row.taskId : undefined;
    const userId = user ?? (taskId === undefined ? undefined : this.#taskPerson.get(taskId));
    if (userId === undefined) return;
    let rows = this.#rows.get(userId);
    if (rows === undefined) {
      if (this.#rows.size >= MAX_PEOPLE) this.#rows.delete(this.#rows.keys().next().value as string);
      this.#rows.set(userId, (rows = []));
    }
    rows.push(event);
    if (rows.length > ROWS_PER_PERSON) rows.splice(0, rows.length - ROWS_PER_PERSON);
  }

  // ---- ApprovalDesk ------------------------------------------------------------------------

  async pending(userId: string): Promise<ApprovalView[]> {
    const now = this.#now();
    return (await this.#actions.listForDecider(userId, now)).map((action) => this.#view(action, now));
  }

  async get(userId: string, actionId: string): Promise<ApprovalView | undefined> {
    const action = this.#actions.peek(actionId);
    if (action === undefined || action.decider.userId !== userId) return undefined;
    return this.#view(action, this.#now());
  }

  async decide(actionId: string, userId: string, decision: ApprovalDecision, remote?: string): Promise<ApprovalView> {
    const now = this.#now();
    let decided: PendingAction;
    try {
      decided = await this.#actions.decide(actionId, { kind: 'user', userId }, decision, now);
    } catch (error) {
      if (error instanceof ApprovalError) this.#decisionRefused(userId, error, actionId, remote, now);
      throw error;
    }
    const origin = this.#origins.get(actionId);
    this.#write(
      {
        type: 'a2a.approval.decided',
        time: auditNow(now),
        outcome: decision === 'approve' ? 'ok' : 'denied',
        user: userId,
        actionId,
        taskId: decided.taskId,
        agent: origin?.agent ?? '-',
        reason: decision === 'approve' ? 'approved' : 'denied',
        tool: decided.tool,
        level: decided.level,
        ...(origin !== undefined && { client: origin.client }),
        ...(remote !== undefined && { remote }),
      },
      false,
    );
    return this.#view(decided, now);
  }

  async recentTasks(userId: string, limit: number): Promise<PersonTaskView[]> {
    const tasks = this.#tasks.get(userId);
    if (tasks === undefined) return [];
    const out: PersonTaskView[] = [];
    for (const view of tasks.values()) out.push(view);
    out.reverse();
    return out.slice(0, Math.max(0, limit)).map((view) => {
      const open = this.#openActionOn(view.taskId);
      return open === undefined ? view : { ...view, actionId: open };
    });
  }

  async auditTail(userId: string, limit: number): Promise<PersonAuditRow[]> {
    const rows = this.#rows.get(userId) ?? [];
    return rows.slice(-Math.max(0, limit)).reverse();
  }

  async questions(userId: string): Promise<RemoteQuestionView[]> {
    const now = this.#now();
    return this.#questions.listForDecider(userId, now).map((question) => questionView(question, now));
  }

  async answer(questionId: string, userId: string, text: string, remote?: string): Promise<RemoteQuestionView> {
    const now = this.#now();
    let answered: PendingQuestion;
    try {
      answered = this.#questions.answer(questionId, userId, text, now);
    } catch (error) {
      if (error instanceof ApprovalError) this.#decisionRefused(userId, error, questionId, remote, now);
      throw error;
    }
    this.#write(
      {
        type: 'a2a.question.answered',
        time: auditNow(now),
        outcome: 'ok',
        user: userId,
        actionId: questionId,
        taskId: answered.taskId,
        agent: answered.agent,
        ...(remote !== undefined && { remote }),
      },
      false,
    );
    return questionView(answered, now);
  }

  // ---- internals ---------------------------------------------------------------------------

  async #resumeAction(
    ctx: CallContext,
    owner: string,
    task: Task,
    actionId: string,
    now: number,
  ): Promise<ResumeOutcome> {
    const found = await this.#actions.findByTask(owner, task.id);
    const action = found?.actionId === actionId ? found : undefined;
    const step = resumeStep(action, now, { parked: true });
    switch (step.kind) {
      case 'repark':
        this.#reparked(ctx, task, actionId, now);
        return { kind: 'repark' };
      case 'fail':
        this.#originalArgs.delete(actionId);
        return { kind: 'fail', message: step.message, reason: step.reason };
      case 'not_parked':
        // Already used: a second resume must not run the action again.
        return { kind: 'fail', message: 'The approval of this action was already used.', reason: 'action_expired' };
      case 'resume':
        break;
    }
    let consumed: PendingAction;
    try {
      consumed = await this.#actions.consume(actionId, task.id, now);
    } catch (error) {
      // A concurrent resume won the approval: this one runs nothing.
      if (isApprovalError(error, 'already_consumed')) return { kind: 'repark' };
      throw error;
    }
    const args = this.#originalArgs.get(actionId) ?? consumed.args;
    this.#originalArgs.delete(actionId);
    this.#write(
      {
        type: 'a2a.approval.consumed',
        time: auditNow(now),
        outcome: 'ok',
        client: clientOf(ctx),
        agent: ctx.agentSlug,
        taskId: task.id,
        contextId: task.contextId,
        actionId,
        tool: consumed.tool,
        level: consumed.level,
        ...(consumed.decidedBy !== undefined && { user: consumed.decidedBy }),
        ...(ctx.caller !== undefined && { principalKind: ctx.caller.kind }),
      },
      true,
    );
    const approved: ApprovedAction = {
      actionId,
      tool: consumed.tool,
      args,
      level: consumed.level,
      ...(consumed.decidedBy !== undefined && { approvedBy: consumed.decidedBy }),
    };
    return { kind: 'resume', action: approved };
  }

  async #resumeQuestion(
    ctx: CallContext,
    owner: string,
    task: Task,
    questionId: string,
    now: number,
  ): Promise<ResumeOutcome> {
    const found = this.#questions.findByTask(owner, task.id);
    if (found === undefined || found.questionId !== questionId) {
      return {
        kind: 'fail',
        message: 'The remote agent’s question was not answered in time and has expired.',
        reason: 'action_expired',
      };
    }
    const status = this.#questions.status(found, now);
    if (status === 'pending') {
      this.#reparked(ctx, task, questionId, now);
      return { kind: 'repark' };
    }
    if (status !== 'answered') {
      return {
        kind: 'fail',
        message: 'The remote agent’s question was not answered in time and has expired.',
        reason: 'action_expired',
      };
    }
    let consumed: PendingQuestion;
    try {
      consumed = this.#questions.consume(questionId, task.id, now);
    } catch (error) {
      if (isApprovalError(error, 'already_consumed')) return { kind: 'repark' };
      throw error;
    }
    this.#write(
      {
        type: 'a2a.question.consumed',
        time: auditNow(now),
        outcome: 'ok',
        client: clientOf(ctx),
        agent: ctx.agentSlug,
        taskId: task.id,
        contextId: task.contextId,
        actionId: questionId,
        ...(consumed.answeredBy !== undefined && { user: consumed.answeredBy }),
        ...(ctx.caller !== undefined && { principalKind: ctx.caller.kind }),
      },
      true,
    );
    return {
      kind: 'resume',
      answer: { questionId, text: consumed.answer ?? '', answeredBy: consumed.answeredBy ?? '' },
    };
  }

  #reparked(ctx: CallContext, task: Task, actionId: string, now: number): void {
    this.#write(
      {
        type: 'a2a.approval.reparked',
        time: auditNow(now),
        outcome: 'denied',
        client: clientOf(ctx),
        agent: ctx.agentSlug,
        taskId: task.id,
        contextId: task.contextId,
        actionId,
        reason: 'not_decided',
        ...(ctx.caller !== undefined && { principalKind: ctx.caller.kind }),
      },
      false,
    );
  }

  #refuse(
    ctx: CallContext,
    task: Task,
    reason:
      | 'level_above_agent_max'
      | 'service_principal_capped'
      | 'no_decider'
      | 'invalid_proposal'
      | 'approvals_off'
      | 'store_full',
    message: string,
    tool?: string,
    level?: AutonomyLevel,
  ): ParkOutcome {
    this.#write(
      {
        type: 'a2a.approval.refused',
        time: auditNow(this.#now()),
        outcome: 'denied',
        client: clientOf(ctx),
        agent: ctx.agentSlug,
        taskId: task.id,
        contextId: task.contextId,
        reason,
        ...(tool !== undefined && { tool }),
        ...(level !== undefined && { level }),
        ...(ctx.caller !== undefined && { principalKind: ctx.caller.kind }),
      },
      false,
    );
    return { kind: 'refuse', message, reason: 'action_refused' };
  }

  #decisionRefused(userId: string, error: ApprovalError, id: string, remote: string | undefined, now: number): void {
    const code = error.code;
    if (
      code !== 'not_found' &&
      code !== 'not_decider' &&
      code !== 'already_decided' &&
      code !== 'expired' &&
      code !== 'invalid_action' &&
      code !== 'already_consumed'
    ) {
      return;
    }
    this.#write(
      {
        type: 'a2a.approval.decision_refused',
        time: auditNow(now),
        outcome: 'denied',
        user: userId,
        reason: code,
        // An id the person typed is recorded only when it has the shape of one of ours.
        ...(ACTION_ID.test(id) && { actionId: id }),
        ...(remote !== undefined && { remote }),
      },
      false,
    );
  }

  #deciderOf(ctx: CallContext): Decider {
    const caller = ctx.caller;
    if (caller === undefined) return { kind: 'none', reason: 'service_principal' };
    const decider = deciderFor(
      { kind: caller.kind, clientId: caller.clientId, subject: caller.subject ?? '', key: ctx.principalKey },
      this.#clientOwners,
    );
    // Configured people and JWT subjects are separate namespaces (see personUserId).
    if (decider.kind === 'user' && decider.via === 'delegating_user') {
      return { ...decider, userId: `jwt:${decider.userId}` };
    }
    return decider;
  }

  #view(action: PendingAction, now: number): ApprovalView {
    const origin = this.#origins.get(action.actionId);
    return {
      actionId: action.actionId,
      taskId: action.taskId,
      contextId: origin?.contextId ?? '',
      agent: origin?.agent ?? '',
      client: origin?.client ?? '',
      tool: action.tool,
      args: action.args,
      level: action.level,
      ...levelView(action.level),
      status: approvalStatus(action, now),
      createdAt: new Date(action.createdAt).toISOString(),
      expiresAt: new Date(action.expiresAt).toISOString(),
      ...(action.decidedAt !== undefined && { decidedAt: new Date(action.decidedAt).toISOString() }),
    };
  }

  #openActionOn(taskId: string): string | undefined {
    const actionId = this.#actionByTask.get(taskId);
    const action = actionId === undefined ? undefined : this.#actions.peek(actionId);
    return action !== undefined && approvalStatus(action, this.#now()) === 'pending' ? actionId : undefined;
  }

  /**
   * Keeps what this service remembers beside the stores bounded: once it holds as many origins
   * as the stores may hold records, the stores are swept and the origins (and unredacted
   * arguments) of actions and questions no longer there are dropped.
   */
  #prune(now: number): void {
    if (this.#origins.size < this.#pruneAt) return;
    void this.#actions.sweep(now);
    this.#questions.sweep(now);
    for (const [id, origin] of this.#origins) {
      const alive =
        origin.kind === 'action'
          ? this.#actions.peek(id) !== undefined
          : this.#questions.get(origin.owner, id) !== undefined;
      if (alive) continue;
      this.#origins.delete(id);
      this.#originalArgs.delete(id);
      if (this.#actionByTask.get(origin.taskId) === id) this.#actionByTask.delete(origin.taskId);
    }
  }

  #forgetOldestPerson(): void {
    const oldest = this.#tasks.keys().next().value as string;
    const tasks = this.#tasks.get(oldest);
    if (tasks !== undefined) for (const taskId of tasks.keys()) this.#taskPerson.delete(taskId);
    this.#tasks.delete(oldest);
  }

  #write(event: AuditEvent, required: boolean): void {
    this.#audit?.(event, required);
  }

  /** A required row; when it cannot be written, what it records is undone and the error goes on. */
  #writeOrUndo(undo: () => void, event: AuditEvent): void {
    try {
      this.#audit?.(event, true);
    } catch (error) {
      undo();
      throw error;
    }
  }
}

/** What a parked task waits for, read from its status message's data part. */
export function parkedOn(task: Task): ParkedOn | undefined {
  const state = task.status.state;
  if (state !== 'input-required' && state !== 'auth-required') return undefined;
  const parts: readonly Part[] = task.status.message?.parts ?? [];
  for (const part of parts) {
    if (part.kind !== 'data' || part.data === null || typeof part.data !== 'object' || Array.isArray(part.data)) {
      continue;
    }
    const data = part.data as Record<string, unknown>;
    if (typeof data.action_id === 'string') return { kind: 'action', id: data.action_id };
    if (typeof data.question_id === 'string') return { kind: 'question', id: data.question_id };
  }
  return undefined;
}

/** Our ids: 32 random bytes, base64url. */
const ACTION_ID = /^[A-Za-z0-9_-]{43}$/;
const AUDITABLE_ID = /^[\x21-\x7e]{1,256}$/;

function clientOf(ctx: CallContext): string {
  const id = ctx.caller?.clientId;
  return id !== undefined && AUDITABLE_ID.test(id) ? id : '-';
}

function auditNow(now: number): AuditTime {
  return new Date(now).toISOString() as AuditTime;
}
