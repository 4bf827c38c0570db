/**
 * Remote agents' questions waiting for a person. When an upstream agent answers a relayed turn
 * with `input-required` or `auth-required` and approvals are configured, the relay backend ends
 * the turn with `ask-person`; the gateway parks the inbound task on a question recorded here,
 * the person answers it out of band (console, `/approvals`), and the next message on the task
 * sends the person's answer on the same remote task. The caller's own reply never answers the
 * remote: only a person does, through the same path as an approval.
 *
 * The store enforces the rules that must hold whoever calls it (the same as the approval store):
 * only the decider answers, an answer is given once, nothing is answered or used after it
 * expires, and an answer is consumed exactly once, by the task it was asked on.
 *
 * Every method is synchronous: the gate records the question inside one synchronous step, and
 * no `await` can come between a check and its write, so two racing calls never both succeed.
 *
 * @example
 * ```ts
 * const questions = new MemoryQuestionStore();
 * const asked = questions.create({ taskId, owner: principal.key, decider, agent: 'guarded', remoteAgent: 'travel', remoteTaskId, remoteContextId, state: 'input-required', question: 'Which day?', expiresAt: now + 15 * 60_000 }, now);
 * questions.answer(asked.questionId, 'alice', 'Tuesday', Date.now());
 * questions.consume(asked.questionId, taskId, Date.now()).answer; // 'Tuesday'; a second call throws 'already_consumed'
 * ```
 */
import { mayDecide, type Decider } from './decider.js';
import type { RemoteQuestionView } from './desk.js';
import { PendingQuota } from './principal-quota.js';
import { ApprovalError, newActionId, type ApprovalErrorCode } from './store.js';
import { TaskIndex } from './task-index.js';

/**
 * The longest question kept, in characters: a longer one is cut, ending with
 * {@link QUESTION_CUT_NOTE}, within this length.
 *
 * @example
 * ```ts
 * questions.create({ ...input, question: 'x'.repeat(10_000) }, now).question.length; // 8192
 * ```
 */
export const MAX_QUESTION_CHARS = 8192;

/**
 * The longest answer a person may give, in characters (at least one).
 *
 * @example
 * ```ts
 * if (text.length > MAX_ANSWER_CHARS) return reply400();
 * ```
 */
export const MAX_ANSWER_CHARS = 8192;

/**
 * Ends a question cut at {@link MAX_QUESTION_CHARS}.
 *
 * @example
 * ```ts
 * record.question.endsWith(QUESTION_CUT_NOTE); // the remote asked more than 8192 characters
 * ```
 */
export const QUESTION_CUT_NOTE = '\n[Airlock: the question was cut]';

/** Latest valid epoch milliseconds of a `Date` (so every time shown can be written as ISO 8601). */
const MAX_TIME_MS = 8.64e15;

/**
 * Messages of the {@link ApprovalError}s this store throws, about a question rather than an
 * action. Like the approval messages they never carry ids, owner keys, user ids or text.
 */
const QUESTION_ERROR_MESSAGES: Readonly<Partial<Record<ApprovalErrorCode, string>>> = {
  not_found: 'No such pending question.',
  not_decider: 'Only the person behind this principal may answer this question.',
  already_decided: 'This question has already been answered.',
  expired: 'This question expired before it was answered and used.',
  not_approved: 'This question has not been answered yet.',
  already_consumed: 'This answer has already been used.',
  task_has_open_action: 'This task already has a pending question.',
  store_full: 'Too many pending questions; try again later.',
  principal_quota: 'Too many of your questions are waiting for a person (approvals.maxPendingPerPrincipal).',
  invalid_action: 'The question or the answer is malformed.',
};

function questionError(code: ApprovalErrorCode): ApprovalError {
  return new ApprovalError(code, QUESTION_ERROR_MESSAGES[code]);
}

/**
 * What the gateway records when a relay backend ends a turn with `ask-person`. `question` is
 * the relay's already filtered text (markers neutralised, emails and tokens redacted).
 *
 * @example
 * ```ts
 * const input: PendingQuestionInput = { taskId, owner: principal.key, decider, agent: 'guarded', remoteAgent: 'travel', remoteTaskId: 'up-1', remoteContextId: 'up-ctx', state: 'input-required', question: 'Which day?', expiresAt: Date.now() + 900_000 };
 * ```
 */
export interface PendingQuestionInput {
  /** The inbound task parked on the question. */
  readonly taskId: string;
  /** The principal key that owns the task; reads are scoped by it. */
  readonly owner: string;
  /** From deciderFor; a `none` decider is refused (nobody could ever answer). */
  readonly decider: Decider;
  /** The inbound agent's slug. */
  readonly agent: string;
  /** The registry name of the remote agent that asked, and its task and context. */
  readonly remoteAgent: string;
  readonly remoteTaskId: string;
  readonly remoteContextId: string;
  readonly state: 'input-required' | 'auth-required';
  /** Untrusted text; cut at {@link MAX_QUESTION_CHARS}. */
  readonly question: string;
  /** Epoch milliseconds; the question can be neither answered nor its answer used from then on. */
  readonly expiresAt: number;
}

/**
 * The stored lifecycle state. `expired` is never stored: it is read from the clock
 * ({@link questionStatus}).
 *
 * @example
 * ```ts
 * const state: StoredQuestionState = 'answered';
 * ```
 */
export type StoredQuestionState = 'pending' | 'answered' | 'consumed';

/**
 * What a question's state is at a given time: the stored state, or `expired` once the deadline
 * has passed on a question whose answer was not used yet.
 *
 * @example
 * ```ts
 * if (questionStatus(record, Date.now()) === 'pending') reparkTask();
 * ```
 */
export type QuestionStatus = StoredQuestionState | 'expired';

/**
 * One remote question and its answer. Frozen copies are handed out: a caller cannot change the
 * store's record.
 *
 * @example
 * ```ts
 * const record: PendingQuestion = questions.create(input, Date.now());
 * record.status; // 'pending'
 * ```
 */
export interface PendingQuestion {
  /** 256 random bits, base64url: unguessable, so knowing one is a capability only with a login. */
  readonly questionId: string;
  readonly taskId: string;
  readonly owner: string;
  readonly decider: Extract<Decider, { kind: 'user' }>;
  /** The inbound agent's slug. */
  readonly agent: string;
  readonly remoteAgent: string;
  readonly remoteTaskId: string;
  readonly remoteContextId: string;
  readonly state: 'input-required' | 'auth-required';
  readonly question: string;
  readonly createdAt: number;
  readonly expiresAt: number;
  readonly status: StoredQuestionState;
  /** The person's answer, once given (sent on the remote task; never shown in views). */
  readonly answer?: string;
  /** The user who answered, and when. */
  readonly answeredBy?: string;
  readonly answeredAt?: number;
  readonly consumedAt?: number;
}

/**
 * The state of a question at `now` (see {@link QuestionStatus}): `expired` from `expiresAt` on,
 * unless its answer was used.
 *
 * @example
 * ```ts
 * questionStatus({ status: 'answered', expiresAt: 10 }, 10); // 'expired'
 * questionStatus({ status: 'consumed', expiresAt: 10 }, 11); // 'consumed'
 * ```
 */
export function questionStatus(record: Pick<PendingQuestion, 'status' | 'expiresAt'>, now: number): QuestionStatus {
  if (record.status !== 'consumed' && !(now < record.expiresAt)) return 'expired';
  return record.status;
}

/**
 * The question as a person sees it (the desk's {@link RemoteQuestionView}): ids, the remote's
 * question as untrusted text, status and ISO 8601 times. Never the owner key or the answer.
 *
 * @example
 * ```ts
 * questionView(record, Date.now()).status; // 'pending'
 * ```
 */
export function questionView(record: PendingQuestion, now: number): RemoteQuestionView {
  return {
    questionId: record.questionId,
    taskId: record.taskId,
    agent: record.agent,
    remoteAgent: record.remoteAgent,
    remoteTaskId: record.remoteTaskId,
    remoteContextId: record.remoteContextId,
    state: record.state,
    question: record.question,
    status: questionStatus(record, now),
    createdAt: new Date(record.createdAt).toISOString(),
    expiresAt: new Date(record.expiresAt).toISOString(),
  };
}

/**
 * Where remote questions live. Every method takes `now` (epoch ms) where time matters, so
 * expiry is decided by the caller's clock and tests need no timers. Synchronous (see the module
 * comment). Errors are {@link ApprovalError}s with the approval store's codes.
 *
 * @example
 * ```ts
 * const store: QuestionStore = new MemoryQuestionStore({ maxQuestions: 1000 });
 * ```
 */
export interface QuestionStore {
  /** Records a question for a task that has none open. Throws `task_has_open_action`, `store_full`, `invalid_action`. */
  create(input: PendingQuestionInput, now: number): PendingQuestion;
  /** The question, only if `owner` owns it; `undefined` otherwise (never reveals another owner's). */
  get(owner: string, questionId: string): PendingQuestion | undefined;
  /** The latest question asked on a task (what a resume looks at), owner-scoped. */
  findByTask(owner: string, taskId: string): PendingQuestion | undefined;
  /** Questions awaiting this user's answer at `now`, oldest first (for the console / approvals CLI). */
  listForDecider(userId: string, now: number): PendingQuestion[];
  /** Records the person's answer. Throws `not_found`, `not_decider`, `already_decided`, `expired`, `invalid_action`. */
  answer(questionId: string, userId: string, text: string, now: number): PendingQuestion;
  /** Uses the answer, exactly once. Throws `not_found`, `not_approved`, `expired`, `already_consumed`. */
  consume(questionId: string, taskId: string, now: number): PendingQuestion;
  /** Drops the task's question unless its answer was used (the task was canceled); returns what was dropped. */
  withdraw(owner: string, taskId: string): PendingQuestion | undefined;
  /** Drops expired and consumed questions; returns how many were dropped. */
  sweep(now: number): number;
  /** The same as {@link questionStatus}. */
  status(record: Pick<PendingQuestion, 'status' | 'expiresAt'>, now: number): QuestionStatus;
  /** The same as {@link questionView}. */
  questionView(record: PendingQuestion, now: number): RemoteQuestionView;
}

/**
 * Options of {@link MemoryQuestionStore}.
 *
 * @example
 * ```ts
 * new MemoryQuestionStore({ maxQuestions: 100, newQuestionId: () => 'fixed-id-for-a-test' });
 * ```
 */
export interface MemoryQuestionStoreOptions {
  /** The most questions kept at once (default 10 000): a remote agent cannot grow the store without bound. */
  readonly maxQuestions?: number;
  /** The most open questions of one principal, over all agents (unset: unbounded; the gateway passes `approvals.maxPendingPerPrincipal`, default 100): see PendingQuota. */
  readonly maxPendingPerPrincipal?: number;
  /** Makes question ids (default: `newActionId`, 32 random bytes, base64url). For tests only. */
  readonly newQuestionId?: () => string;
}

/**
 * The in-memory {@link QuestionStore}: one process only. Bounded by `maxQuestions`; when full,
 * expired and consumed questions are swept first, and if it is still full `create` throws
 * `store_full` rather than dropping someone's open question.
 *
 * @example
 * ```ts
 * const questions = new MemoryQuestionStore();
 * const waiting = questions.listForDecider('alice', Date.now()).map((q) => questions.questionView(q, Date.now()));
 * ```
 */
export class MemoryQuestionStore implements QuestionStore {
  readonly #questions = new Map<string, PendingQuestion>();
  /** The latest question on each owner's task. */
  readonly #byTask = new TaskIndex();
  readonly #maxQuestions: number;
  readonly #perPrincipal: PendingQuota;
  readonly #newQuestionId: () => string;

  constructor(options: MemoryQuestionStoreOptions = {}) {
    const max = options.maxQuestions;
    this.#maxQuestions = typeof max === 'number' && Number.isInteger(max) && max > 0 ? max : 10_000;
    this.#perPrincipal = new PendingQuota(options.maxPendingPerPrincipal);
    this.#newQuestionId = options.newQuestionId ?? newActionId;
  }

  /** How many questions are held (for metrics and tests). */
  get size(): number {
    return this.#questions.size;
  }

  create(input: PendingQuestionInput, now: number): PendingQuestion {
    const { decider } = input;
    if (
      decider?.kind !== 'user' ||
      !nonEmpty(decider.userId) ||
      !nonEmpty(input.taskId) ||
      !nonEmpty(input.owner) ||
      !nonEmpty(input.agent) ||
      !nonEmpty(input.remoteAgent) ||
      !nonEmpty(input.remoteTaskId) ||
      !nonEmpty(input.remoteContextId) ||
      (input.state !== 'input-required' && input.state !== 'auth-required') ||
      !nonEmpty(input.question) ||
      !validTime(now) ||
      !validTime(input.expiresAt) ||
      input.expiresAt <= now
    ) {
      throw questionError('invalid_action');
    }
    const previous = this.#latestFor(input.owner, input.taskId);
    if (previous !== undefined) {
      const status = questionStatus(previous, now);
      if (status === 'pending' || status === 'answered') throw questionError('task_has_open_action');
    }
    // The caller's own share first: one principal at its quota never makes the store full for others.
    const open = (id: string): boolean => {
      const held = this.#questions.get(id);
      const status = held === undefined ? undefined : questionStatus(held, now);
      return status === 'pending' || status === 'answered';
    };
    if (!this.#perPrincipal.hasRoom(input.owner, open)) throw questionError('principal_quota');
    if (this.#questions.size >= this.#maxQuestions) this.#sweepNow(now);
    if (this.#questions.size >= this.#maxQuestions) throw questionError('store_full');

    const questionId = this.#newQuestionId();
    // A collision of 256 random bits does not happen; an injected generator might repeat.
    if (this.#questions.has(questionId)) throw questionError('invalid_action');
    const record: PendingQuestion = Object.freeze({
      questionId,
      taskId: input.taskId,
      owner: input.owner,
      decider: Object.freeze({ kind: 'user', userId: decider.userId, via: decider.via }),
      agent: input.agent,
      remoteAgent: input.remoteAgent,
      remoteTaskId: input.remoteTaskId,
      remoteContextId: input.remoteContextId,
      state: input.state,
      question: capQuestion(input.question),
      createdAt: now,
      expiresAt: input.expiresAt,
      status: 'pending',
    });
    // A finished question on the task (its answer used, or expired) is replaced, not kept.
    if (previous !== undefined) this.#drop(previous);
    this.#questions.set(questionId, record);
    this.#byTask.set(input.owner, input.taskId, questionId);
    this.#perPrincipal.add(input.owner, questionId);
    return record;
  }

  get(owner: string, questionId: string): PendingQuestion | undefined {
    const record = this.#questions.get(questionId);
    return record !== undefined && record.owner === owner ? record : undefined;
  }

  findByTask(owner: string, taskId: string): PendingQuestion | undefined {
    return this.#latestFor(owner, taskId);
  }

  listForDecider(userId: string, now: number): PendingQuestion[] {
    const out: PendingQuestion[] = [];
    for (const record of this.#questions.values()) {
      if (record.decider.userId === userId && questionStatus(record, now) === 'pending') out.push(record);
    }
    return out.sort((a, b) => a.createdAt - b.createdAt);
  }

  answer(questionId: string, userId: string, text: string, now: number): PendingQuestion {
    const record = this.#questions.get(questionId);
    if (record === undefined) throw questionError('not_found');
    // Who is asked before what state the question is in: a wrong person learns nothing about it.
    if (!mayDecide(record.decider, { kind: 'user', userId })) throw questionError('not_decider');
    if (record.status !== 'pending') throw questionError('already_decided');
    if (!Number.isFinite(now) || questionStatus(record, now) === 'expired') throw questionError('expired');
    if (typeof text !== 'string' || text.length === 0 || text.length > MAX_ANSWER_CHARS) {
      throw questionError('invalid_action');
    }
    const answered: PendingQuestion = Object.freeze({
      ...record,
      status: 'answered',
      answer: text,
      answeredBy: userId,
      answeredAt: now,
    });
    this.#questions.set(questionId, answered);
    return answered;
  }

  consume(questionId: string, taskId: string, now: number): PendingQuestion {
    const record = this.#questions.get(questionId);
    if (record === undefined || record.taskId !== taskId) throw questionError('not_found');
    if (record.status === 'consumed') throw questionError('already_consumed');
    if (!Number.isFinite(now) || questionStatus(record, now) === 'expired') throw questionError('expired');
    if (record.status !== 'answered') throw questionError('not_approved');
    const consumed: PendingQuestion = Object.freeze({ ...record, status: 'consumed', consumedAt: now });
    this.#questions.set(questionId, consumed);
    return consumed;
  }

  withdraw(owner: string, taskId: string): PendingQuestion | undefined {
    const record = this.#latestFor(owner, taskId);
    if (record === undefined || record.status === 'consumed') return undefined;
    this.#drop(record);
    return record;
  }

  sweep(now: number): number {
    return this.#sweepNow(now);
  }

  status(record: Pick<PendingQuestion, 'status' | 'expiresAt'>, now: number): QuestionStatus {
    return questionStatus(record, now);
  }

  questionView(record: PendingQuestion, now: number): RemoteQuestionView {
    return questionView(record, now);
  }

  /** Drops what can never be used again: consumed answers and expired questions. */
  #sweepNow(now: number): number {
    let dropped = 0;
    for (const record of this.#questions.values()) {
      if (record.status === 'consumed' || !(now < record.expiresAt)) {
        this.#drop(record);
        dropped++;
      }
    }
    return dropped;
  }

  #drop(record: PendingQuestion): void {
    this.#questions.delete(record.questionId);
    this.#byTask.delete(record.owner, record.taskId, record.questionId);
    this.#perPrincipal.remove(record.owner, record.questionId);
  }

  #latestFor(owner: string, taskId: string): PendingQuestion | undefined {
    const questionId = this.#byTask.get(owner, taskId);
    return questionId === undefined ? undefined : this.#questions.get(questionId);
  }
}

function nonEmpty(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

function validTime(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && Math.abs(value) <= MAX_TIME_MS;
}

/** The question within {@link MAX_QUESTION_CHARS}, never cutting a surrogate pair in half. */
function capQuestion(question: string): string {
  if (question.length <= MAX_QUESTION_CHARS) return question;
  let end = MAX_QUESTION_CHARS - QUESTION_CUT_NOTE.length;
  const code = question.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return question.slice(0, end) + QUESTION_CUT_NOTE;
}
