/**
 * One inbound turn relayed to an upstream agent, and the upstream's answer relayed back as
 * agent events.
 *
 * - Sent: the turn's text only, as a new user message (the port builds it). A session's first
 *   turn names no context (the upstream mints one, which is remembered); later turns send the
 *   remembered one; a resumed (input-required) inbound task continues its upstream task. A
 *   resumed turn that carries a person's answer (`turn.personAnswer`) sends that answer, not the
 *   caller's text.
 * - Asked (`askPerson`, set when approvals are configured): the upstream's input-required or
 *   auth-required ends the turn with `ask-person` (the question filtered like any reply text, and
 *   the upstream ids), for a person to answer. A resumed turn without the person's answer sends
 *   nothing: it asks the same question again, so the caller's reply never answers the upstream.
 * - Read: as a stream when the upstream's card says it can stream (each artifact chunk becomes
 *   one text chunk, so chunk counts are kept), else sent and polled (GetTask every
 *   `pollIntervalMs`), relaying what each snapshot adds.
 * - Stopped: at the upstream task's final or interrupted state; when the turn is canceled
 *   (quietly: no event); at `maxWaitMs` (failed); at `maxReplyChars` (cut, with a note). In
 *   every case but the first, an upstream task that may still run is canceled, best effort.
 * - Failures: `{ type: 'failed' }` with the outbound error type and a fixed explanation.
 *
 * @example
 * ```ts
 * for await (const event of relayTurn(turn, { agent, ids, log, slug: 'guarded' })) console.log(event);
 * // { type: 'working', text: 'Looking it up' }
 * // { type: 'text', text: 'Trains leave at 8:04 ' } … { type: 'text', text: 'and 9:04.', last: true }
 * // { type: 'completed' }
 * ```
 */
import { isAborted, sleep, textOf, type AgentEvent, type AgentTurn, type BackendLog } from '../backend.js';
import type { Message, StreamEvent, Task, TaskState, TaskStatus } from '../../protocol/model.js';
import { isInterruptedState, isTerminalState } from '../../protocol/model.js';
import { isUsableUpstreamId, type RememberedQuestion, type UpstreamIds, type WaitingTask } from './ids.js';
import { UpstreamError, type UpstreamAgent, type UpstreamChannel, type UpstreamRequest } from './port.js';
import { ReplyFilter } from './reply.js';
import { capQuestion, NO_TEXT, textOfParts, untilAborted } from './relay-text.js';

/**
 * What {@link relayTurn} works with.
 *
 * @example
 * ```ts
 * const context: RelayContext = { agent: connector.open('travel'), ids: new UpstreamIds(), log, slug: 'guarded' };
 * ```
 */
export interface RelayContext {
  readonly agent: UpstreamAgent;
  readonly ids: UpstreamIds;
  readonly log: BackendLog;
  /** The inbound agent's slug, for log lines. */
  readonly slug: string;
  /**
   * The upstream's questions go to a person (`ask-person`), never to the caller's model; the
   * caller's reply on a waiting task is never relayed (see `BackendContext.askPerson`).
   */
  readonly askPerson?: boolean;
  /** Epoch milliseconds (tests). */
  readonly now?: () => number;
}

/**
 * The reason given when a resumed inbound task's upstream task is no longer known.
 *
 * @example
 * ```ts
 * event.reason === FORGOTTEN_TASK_REASON;
 * ```
 */
export const FORGOTTEN_TASK_REASON =
  'Airlock no longer knows which upstream task this task continues (the gateway restarted, or too many conversations came since); start a new task.';

/**
 * Added to what is left of max_wait_s when a request's own time limit is set: the turn's deadline
 * (which cancels the upstream task and says max_wait_s) must fire first; the transport's limit
 * stays a backstop.
 */
const TRANSPORT_GRACE_MS = 1_000;

const UNEXPECTED_REASON = 'The relay to the upstream agent failed unexpectedly.';
const DEFAULT_QUESTION = 'The upstream agent needs more input.';
const AUTH_QUESTION =
  'The upstream agent asks for authorization (auth-required), which Airlock does not relay. Answer to continue, or cancel the task.';
/** The question a person sees for an auth-required that says nothing. */
const AUTH_PERSON_QUESTION = 'The upstream agent asks for authorization (auth-required).';

export { QUESTION_CUT_NOTE } from './relay-text.js';

/**
 * Relays one turn (see the module comment). Ends without an event when the turn is canceled.
 *
 * @example
 * ```ts
 * const backend: AgentBackend = { kind: 'a2a', run: (turn) => relayTurn(turn, context) };
 * ```
 */
export async function* relayTurn(turn: AgentTurn, context: RelayContext): AsyncGenerator<AgentEvent, void, undefined> {
  if (isAborted(turn)) return;
  const relay = new TurnRelay(turn, context);
  try {
    yield* relay.run();
  } finally {
    await relay.finish();
  }
}

/** What one upstream answer (event, snapshot or message) becomes. */
interface Step {
  readonly events: AgentEvent[];
  /** The turn has its outcome: stop reading. */
  readonly done: boolean;
}

/** The upstream task of this turn, once known. */
interface UpstreamTaskRef {
  readonly id: string;
  contextId: string;
}

/**
 * One relayed turn, as a state machine. It is about 400 lines on purpose: every handler below
 * (stream events, polled snapshots, status, messages, the outcome, the person's question) reads
 * and updates the same few facts of this turn (the upstream task, what was seen and emitted, the
 * reply filter across chunks); split into files they would pass that state back and forth.
 */
class TurnRelay {
  readonly #turn: AgentTurn;
  readonly #context: RelayContext;
  readonly #now: () => number;
  #filter: ReplyFilter;
  readonly #deadline = new AbortController();
  readonly #deadlineAt: number;
  readonly #timer: ReturnType<typeof setTimeout>;
  readonly #signal: AbortSignal;
  /** The upstream context this turn sends (remembered from the session, or the waiting task). */
  readonly #contextId: string | undefined;
  /** The upstream task this turn continues (resumed turns only). */
  readonly #continues: string | undefined;
  /**
   * `askPerson` and a resumed turn without the person's answer: the upstream task still waits
   * for the person, nothing is sent, and its question is asked again.
   */
  readonly #stillWaiting: WaitingTask | undefined;
  /** The channel in use, once connected (the cancel goes through it). */
  #channel: UpstreamChannel | undefined;
  #task: UpstreamTaskRef | undefined;
  /** The upstream task needs no cancel: it reached its final or interrupted state, or ended its side. */
  #settled = false;
  /** Characters of each upstream artifact's text relayed so far (this turn and earlier ones of the task). */
  readonly #relayed: Map<string, number>;
  /** Any event of a task was seen: a Message after it is news, not a direct reply. */
  #sawTaskEvent = false;
  /** A status update was seen: a snapshot's interrupted state is then current, not left from before. */
  #sawStatusUpdate = false;
  /** An interrupted snapshot of a resumed task that may be stale: the outcome if nothing else comes. */
  #staleInterruption: Task | undefined;
  /** An event was handed to the gateway (a direct Message reply must be the first). */
  #emitted = false;
  #lastWorkingText: string | undefined;
  #droppedParts = 0;
  #outcome = 'none';

  constructor(turn: AgentTurn, context: RelayContext) {
    this.#turn = turn;
    this.#context = context;
    this.#now = context.now ?? Date.now;
    const { limits, secrets } = context.agent;
    this.#filter = new ReplyFilter({ maxReplyChars: limits.maxReplyChars, secrets });
    this.#deadlineAt = this.#now() + limits.maxWaitMs;
    this.#timer = setTimeout(() => this.#deadline.abort(new Error('max_wait_s passed')), limits.maxWaitMs);
    this.#signal = AbortSignal.any([turn.signal, this.#deadline.signal]);
    const waiting = turn.resumed ? context.ids.waitingOf(turn.sessionId, turn.taskId) : undefined;
    if (waiting !== undefined && context.askPerson === true && turn.personAnswer === undefined) {
      // Kept as it is (still waiting); no upstream task of this turn, so nothing to cancel.
      this.#stillWaiting = waiting;
      this.#continues = waiting.taskId;
      this.#contextId = waiting.contextId;
      this.#relayed = new Map();
      return;
    }
    this.#stillWaiting = undefined;
    this.#continues = waiting?.taskId;
    this.#contextId = waiting?.contextId ?? context.ids.contextOf(turn.sessionId);
    this.#relayed = new Map(waiting?.relayed ?? []);
    if (waiting !== undefined) {
      this.#task = { id: waiting.taskId, contextId: waiting.contextId };
      // It continues now; remembered again if it asks again.
      context.ids.forgetWaiting(turn.sessionId, turn.taskId);
    }
  }

  async *run(): AsyncGenerator<AgentEvent, void, undefined> {
    if (this.#turn.resumed && this.#continues === undefined) {
      this.#outcome = 'forgotten';
      yield { type: 'failed', reason: FORGOTTEN_TASK_REASON };
      return;
    }
    const stillWaiting = this.#stillWaiting;
    if (stillWaiting !== undefined) {
      // The caller's reply is not the person's answer: it is never sent upstream.
      this.#outcome = 'awaiting_person';
      this.#log('info', 'upstream_question_pending', { why: 'no_person_answer' });
      const question = stillWaiting.question ?? { text: DEFAULT_QUESTION, state: 'input-required' };
      yield this.#askPersonEvent({ id: stillWaiting.taskId, contextId: stillWaiting.contextId }, question);
      return;
    }
    try {
      const channel = await untilAborted(
        this.#context.agent.connect(this.#signal, this.#turn.outboundSubject),
        this.#signal,
      );
      // An OAuth upstream's token is issued while connecting: scrub replies of it too.
      const { limits, secrets } = this.#context.agent;
      this.#filter = new ReplyFilter({ maxReplyChars: limits.maxReplyChars, secrets });
      const steps = channel.streaming ? this.#streamed(channel) : this.#polled(channel);
      for await (const step of steps) {
        for (const event of step.events) {
          yield event;
          this.#emitted = true;
        }
        if (step.done || isAborted(this.#turn)) return;
      }
    } catch (error) {
      const event = this.#failure(error);
      if (event !== undefined) yield event;
    }
  }

  /** Clears the deadline, cancels an upstream task that may still run, and logs what was filtered. */
  async finish(): Promise<void> {
    clearTimeout(this.#timer);
    const task = this.#task;
    const channel = this.#channel;
    // Without a channel nothing was sent this turn (the card was refused): nothing to cancel.
    if (task !== undefined && channel !== undefined && !this.#settled) {
      const why = isAborted(this.#turn) ? 'turn_canceled' : this.#deadline.signal.aborted ? 'max_wait' : this.#outcome;
      const state = await channel.cancel(task.id);
      this.#log('info', 'upstream_task_canceled', { why, state: state ?? 'unknown' });
    }
    // Aborts whatever is still in flight (a stream left early closes with it).
    this.#deadline.abort(new Error('turn over'));
    const { markers, emails, secrets } = this.#filter.counts;
    if (this.#droppedParts > 0) this.#log('warn', 'upstream_parts_dropped', { parts: this.#droppedParts });
    if (markers + emails + secrets > 0) this.#log('info', 'upstream_reply_filtered', { markers, emails, secrets });
  }

  // --- the two ways of reading ------------------------------------------------------------

  async *#streamed(channel: UpstreamChannel): AsyncGenerator<Step, void, undefined> {
    this.#channel = channel;
    const events = channel.stream(this.#request());
    for await (const event of events) {
      const step = this.#onStreamEvent(event);
      yield step;
      if (step.done) return;
    }
    // A resumed task's stream may carry no status update, only the task as it stands.
    const stale = this.#staleInterruption;
    if (stale !== undefined) {
      yield { events: this.#outcomeEvents(stale.status.state, stale.status), done: true };
      return;
    }
    throw new UpstreamError(
      'invalid_response',
      "the upstream agent's event stream ended before its task reached a final or interrupted state",
    );
  }

  async *#polled(channel: UpstreamChannel): AsyncGenerator<Step, void, undefined> {
    this.#channel = channel;
    const sent = await channel.send(this.#request());
    if (sent.kind === 'message') {
      yield this.#onMessage(sent.message);
      return;
    }
    let step = this.#onSnapshot(sent.task, true);
    yield step;
    const { pollIntervalMs, maxWaitMs } = this.#context.agent.limits;
    // A clock that stands still cannot make this loop forever.
    const maxPolls = Math.ceil(maxWaitMs / pollIntervalMs) + 1;
    for (let polls = 0; !step.done; polls++) {
      const remaining = this.#deadlineAt - this.#now();
      if (remaining <= 0 || polls >= maxPolls) this.#deadline.abort(new Error('max_wait_s passed'));
      await sleep(Math.max(0, Math.min(pollIntervalMs, remaining)), this.#signal);
      step = this.#onSnapshot(await channel.getTask(this.#task!.id, this.#signal), true);
      yield step;
    }
  }

  #request(): UpstreamRequest {
    // Continuing a task parked on a person: the person's answer goes, never the caller's text.
    const answer = this.#continues !== undefined ? this.#turn.personAnswer : undefined;
    return {
      text: answer !== undefined ? answer.text : textOf(this.#turn.message),
      ...(this.#continues !== undefined && { taskId: this.#continues }),
      ...(this.#contextId !== undefined && { contextId: this.#contextId }),
      signal: this.#signal,
      timeoutMs: Math.max(1, this.#deadlineAt - this.#now()) + TRANSPORT_GRACE_MS,
      ...(this.#turn.via !== undefined && { via: this.#turn.via }),
    };
  }

  // --- mapping -----------------------------------------------------------------------------

  #onStreamEvent(event: StreamEvent): Step {
    switch (event.kind) {
      case 'message':
        return this.#sawTaskEvent ? this.#progress(event.message) : this.#onMessage(event.message);
      case 'task':
        // A resumed task's stream may open with the task as it stood (still input-required).
        return this.#onSnapshot(event.task, !(this.#continues !== undefined && !this.#sawStatusUpdate));
      case 'status-update':
        this.#learn(event.taskId, event.contextId);
        this.#sawStatusUpdate = true;
        this.#staleInterruption = undefined;
        return this.#onStatus(event.status);
      case 'artifact-update': {
        this.#learn(event.taskId, event.contextId);
        const { text, hasText, dropped } = textOfParts(event.artifact.parts);
        this.#droppedParts += dropped;
        const id = event.artifact.artifactId;
        this.#relayed.set(id, (event.append === true ? (this.#relayed.get(id) ?? 0) : 0) + text.length);
        if (!hasText) return { events: [], done: false };
        // One upstream chunk, one relayed chunk (even when filtering holds all of it back).
        return this.#textStep(text, event.lastChunk === true);
      }
    }
  }

  /** A whole task (a send's answer, a poll, a stream's snapshot): what it adds, then its state. */
  #onSnapshot(task: Task, authoritative: boolean): Step {
    this.#learn(task.id, task.contextId);
    const events: AgentEvent[] = [];
    for (const artifact of task.artifacts) {
      const { text, hasText, dropped } = textOfParts(artifact.parts);
      const before = this.#relayed.get(artifact.artifactId);
      // Parts of an artifact seen before were counted then.
      if (before === undefined) this.#droppedParts += dropped;
      this.#relayed.set(artifact.artifactId, text.length);
      if (!hasText || text.length <= (before ?? 0)) continue;
      const step = this.#textStep(text.slice(before ?? 0), false);
      events.push(...step.events);
      if (step.done) return { events, done: true };
    }
    const state = task.status.state;
    if (!authoritative && isInterruptedState(state)) {
      this.#staleInterruption = task;
      return { events, done: false };
    }
    const status = this.#onStatus(task.status);
    return { events: [...events, ...status.events], done: status.done };
  }

  #onStatus(status: TaskStatus): Step {
    const state = status.state;
    if (isTerminalState(state) || isInterruptedState(state)) {
      return { events: this.#outcomeEvents(state, status), done: true };
    }
    // submitted, working, unknown: only a new note is worth relaying.
    return status.message === undefined ? { events: [], done: false } : this.#progress(status.message);
  }

  /** A note on the task's progress: relayed as `working` when it says something new. */
  #progress(message: Message): Step {
    const { text, dropped } = textOfParts(message.parts);
    this.#droppedParts += dropped;
    if (text.length === 0 || text === this.#lastWorkingText) return { events: [], done: false };
    this.#lastWorkingText = text;
    const filtered = this.#filter.whole(text);
    if (filtered.truncated) return this.#truncated(filtered.text);
    return { events: filtered.text.length > 0 ? [{ type: 'working', text: filtered.text }] : [], done: false };
  }

  /** A direct reply: the turn's first event if it can be, else the reply text of the task. */
  #onMessage(message: Message): Step {
    this.#settled = true;
    this.#context.ids.rememberContext(this.#turn.sessionId, message.contextId);
    const { text, dropped } = textOfParts(message.parts);
    this.#droppedParts += dropped;
    const filtered = this.#filter.whole(text);
    this.#outcome = 'message';
    if (!this.#emitted && this.#task === undefined) {
      return { events: [{ type: 'message', parts: [{ kind: 'text', text: filtered.text }] }], done: true };
    }
    const events: AgentEvent[] = [];
    const held = this.#filter.flush().text;
    if (held.length > 0) events.push({ type: 'text', text: held });
    if (filtered.text.length > 0) events.push({ type: 'text', text: filtered.text, last: true });
    events.push({ type: 'completed' });
    return { events, done: true };
  }

  /** One chunk of reply text (never split, never merged). */
  #textStep(raw: string, last: boolean): Step {
    const filtered = this.#filter.chunk(raw, last);
    if (filtered.truncated) return this.#truncated(filtered.text);
    const event: AgentEvent = last
      ? { type: 'text', text: filtered.text, last: true }
      : { type: 'text', text: filtered.text };
    return { events: [event], done: false };
  }

  /** The reply reached the cap: its cut end (with the note) is the last chunk, and the turn completes. */
  #truncated(text: string): Step {
    this.#outcome = 'reply_cap';
    this.#log('warn', 'upstream_reply_truncated', { maxReplyChars: this.#context.agent.limits.maxReplyChars });
    return { events: [{ type: 'text', text, last: true }, { type: 'completed' }], done: true };
  }

  /** The turn's outcome from a final or interrupted upstream state. */
  #outcomeEvents(state: TaskState, status: TaskStatus): AgentEvent[] {
    this.#settled = true;
    this.#outcome = state;
    const events: AgentEvent[] = [];
    const held = this.#filter.flush();
    if (held.text.length > 0) events.push({ type: 'text', text: held.text, last: true });
    if (held.truncated) return [...events, { type: 'completed' }];
    const { text: rawText, dropped } = status.message === undefined ? NO_TEXT : textOfParts(status.message.parts);
    this.#droppedParts += dropped;
    const said = this.#filter.whole(rawText);
    if (said.truncated) return [...events, { type: 'text', text: said.text, last: true }, { type: 'completed' }];
    const text = said.text;
    const theySaid = text.length > 0 ? ` Its message: ${text}` : '';
    if (this.#context.askPerson === true && (state === 'input-required' || state === 'auth-required')) {
      const fallback = state === 'input-required' ? DEFAULT_QUESTION : AUTH_PERSON_QUESTION;
      events.push(this.#askPerson(state, text.length > 0 ? text : fallback));
      return events;
    }
    switch (state) {
      case 'completed':
        events.push(text.length > 0 ? { type: 'completed', text } : { type: 'completed' });
        break;
      case 'input-required':
        this.#rememberWaiting();
        events.push({ type: 'input-required', question: text.length > 0 ? text : DEFAULT_QUESTION });
        break;
      case 'auth-required':
        this.#rememberWaiting();
        events.push({ type: 'input-required', question: `${AUTH_QUESTION}${theySaid}` });
        break;
      case 'rejected':
        events.push({ type: 'rejected', reason: `The upstream agent rejected the task.${theySaid}` });
        break;
      case 'canceled':
        events.push({ type: 'failed', reason: `The upstream agent canceled the task.${theySaid}` });
        break;
      default:
        events.push({ type: 'failed', reason: `The upstream agent reported that the task failed.${theySaid}` });
        break;
    }
    return events;
  }

  #rememberWaiting(question?: RememberedQuestion): void {
    const task = this.#task;
    if (task === undefined) return;
    this.#context.ids.rememberWaiting(this.#turn.sessionId, this.#turn.taskId, {
      taskId: task.id,
      contextId: task.contextId,
      relayed: [...this.#relayed],
      ...(question !== undefined && { question }),
    });
  }

  /** The upstream task waits for a person: remembered with its question, which ends the turn. */
  #askPerson(state: 'input-required' | 'auth-required', filtered: string): AgentEvent {
    const task = this.#task;
    // Every interrupted state comes with its task's ids (learned first); fail closed otherwise.
    if (task === undefined) return { type: 'failed', reason: UNEXPECTED_REASON };
    const question: RememberedQuestion = { text: capQuestion(filtered), state };
    this.#rememberWaiting(question);
    return this.#askPersonEvent(task, question);
  }

  #askPersonEvent(task: { readonly id: string; readonly contextId: string }, question: RememberedQuestion): AgentEvent {
    return {
      type: 'ask-person',
      remote: {
        question: question.text,
        agent: this.#context.agent.name,
        taskId: task.id,
        contextId: task.contextId,
        state: question.state,
      },
    };
  }

  /** Takes note of the upstream task's ids; an event about another task is not an answer. */
  #learn(taskId: string, contextId: string): void {
    this.#sawTaskEvent = true;
    if (!isUsableUpstreamId(taskId)) {
      throw new UpstreamError('invalid_response', 'the upstream agent sent an unusable task id');
    }
    const known = this.#task;
    if (known === undefined) {
      this.#task = { id: taskId, contextId };
      this.#context.ids.rememberContext(this.#turn.sessionId, contextId);
      return;
    }
    if (known.id !== taskId)
      throw new UpstreamError('invalid_response', 'the upstream agent answered about another task');
    if (contextId !== known.contextId && isUsableUpstreamId(contextId)) {
      known.contextId = contextId;
      this.#context.ids.rememberContext(this.#turn.sessionId, contextId);
    }
  }

  // --- failures -----------------------------------------------------------------------------

  /** The event a failure becomes: none when the turn was canceled (it ends quietly). */
  #failure(error: unknown): AgentEvent | undefined {
    if (isAborted(this.#turn)) {
      this.#outcome = 'canceled';
      return undefined;
    }
    const timedOut = error instanceof UpstreamError && error.type === 'request_timeout';
    if (this.#deadline.signal.aborted || (timedOut && this.#now() >= this.#deadlineAt)) {
      this.#outcome = 'max_wait';
      const seconds = this.#context.agent.limits.maxWaitMs / 1000;
      this.#log('warn', 'upstream_failed', { type: 'request_timeout' });
      return {
        type: 'failed',
        reason: `The upstream agent did not finish within max_wait_s (${seconds} s) (request_timeout); Airlock asked it to cancel the task.`,
      };
    }
    if (error instanceof UpstreamError) {
      this.#outcome = error.type;
      if (error.remoteEnded) this.#settled = true;
      this.#log('warn', 'upstream_failed', { type: error.type });
      return { type: 'failed', reason: `The upstream agent could not be used (${error.type}): ${error.message}.` };
    }
    this.#outcome = 'unexpected';
    this.#log('error', 'upstream_unexpected_error', { error: error instanceof Error ? error.name : typeof error });
    return { type: 'failed', reason: UNEXPECTED_REASON };
  }

  #log(level: 'debug' | 'info' | 'warn' | 'error', event: string, fields: Record<string, string | number>): void {
    try {
      this.#context.log(level, event, { agent: this.#context.slug, upstream: this.#context.agent.name, ...fields });
    } catch {
      /* a failing log sink must not fail the turn */
    }
  }
}
