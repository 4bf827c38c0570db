/**
 * The task service: owner-scoped tasks, the lifecycle state machine, and the executor bridge
 * that turns a backend's events into task state and stream events. It never sees a dialect,
 * an HTTP request or a token: callers hand it a principal key and an agent.
 *
 * @example
 * ```ts
 * const service = new TaskService({ store: new MemoryTaskStore() });
 * const result = await service.send(caller, { message, configuration: { returnImmediately: false } });
 * ```
 */
import type { AgentEvent, AgentTurn, ApprovedAction, PersonAnswer } from '../agents/backend.js';
import { A2AError } from '../protocol/errors.js';
import {
  isInterruptedState,
  isTerminalState,
  type Artifact,
  type ListTasksParams,
  type ListTasksResult,
  type Message,
  type SendParams,
  type SendResult,
  type StreamEvent,
  type Task,
  type TaskState,
  type TaskStatus,
} from '../protocol/model.js';
import { isoNow, newId } from './ids.js';
import { LocalTaskEventBus, type TaskEventBus } from './events.js';
import {
  replyChars,
  type ReplyScrubber,
  type TaskLifecycleEvent,
  type TaskObserver,
  type ParkingGate,
  type ParkOutcome,
  type TaskOutcomeReason,
  type TurnGrant,
  type TurnPolicy,
  type TurnPrompt,
} from './policy.js';
import { EventQueue } from './queue.js';
import { deriveSessionId, OUTBOUND_ID_PREFIX } from './session.js';
import { readSessionHistory } from './session-history.js';
import type { TaskStore } from './store.js';
import { isStoreUnavailable } from './stores/errors.js';
import { AirlockError } from '../errors/index.js';
import type { CallContext } from './call-context.js';

export type { CallContext } from './call-context.js';

/** Structured log sink; the service reports backend failures here, never to callers. */
export type ServiceLogger = (level: 'warn' | 'error', event: string, fields: Record<string, unknown>) => void;

export interface TaskServiceOptions {
  store: TaskStore;
  bus?: TaskEventBus;
  logger?: ServiceLogger;
  /** Admission, prompt, tools and reply scrubbing for every turn; none = everything admitted as is. */
  policy?: TurnPolicy;
  /** Told of every task's submission and outcome (audit). */
  observe?: TaskObserver;
  /**
   * Where a turn that needs a person goes: guarded actions (`propose-action`) and remote
   * agents' questions (`ask-person`). Without one, every proposal fails its task.
   */
  gate?: ParkingGate;
  /** For tests. */
  now?: () => Date;
  /**
   * With a shared bus (one that has `requestCancel`): how often a subscription to a task whose
   * turn runs on another replica re-reads the store, so that it still ends when the bus lost
   * the final event (an outage, or the replica died). Default 1 000 ms.
   */
  remoteTaskPollMs?: number;
  /**
   * With a shared bus: how long CancelTask waits for the replica running the task to cancel it
   * before it stores `canceled` itself (that replica is taken to be gone). Default 2 000 ms.
   */
  remoteCancelWaitMs?: number;
}

/** A task with a turn running in this process. `task` is always the newest state. */
interface LiveTask {
  owner: string;
  task: Task;
  ctx: CallContext;
  /** What admission granted the turn; undefined once given back. */
  grant: TurnGrant | undefined;
  /** Characters of the caller's message (audit). */
  inputChars: number;
  /** Removes configured secrets from reply text (kept after the grant is given back). */
  scrubber: ReplyScrubber | undefined;
  /** The reply being streamed through the scrubber, once the first chunk arrived. */
  scrubStream: ReturnType<ReplyScrubber['stream']> | undefined;
  /** Key in the service's running-contexts map, when this turn holds its context. */
  contextKey: string | undefined;
  /** The submitted row was written, and no outcome row yet. */
  observed: boolean;
  /**
   * Created on demand: when the backend first reads `turn.signal`, or when the turn is aborted.
   * Most turns never look at their signal, and an AbortSignal is costly to create.
   */
  controller: AbortController | undefined;
  /** True once the turn was aborted (canceled, not stored, shut down); never goes back. */
  aborted: boolean;
  /** The reason the turn was aborted with, for a signal created after the abort. */
  abortReason: Error | undefined;
  /** The turn's events, once the backend was asked for them. */
  source: TurnSource | undefined;
  /** Store writes, chained so they land in order. Never rejects: see `writeFailed`. */
  writes: Promise<void>;
  /** A write is queued and has not started: it will take whatever `task` is then. */
  writeQueued: boolean;
  /** The newest finished write failed; cleared by the next write that succeeds. */
  writeFailed: boolean;
  /** What the failed write threw. */
  writeError: unknown;
  /** The task reached a terminal or interrupted state (its final status event was published). */
  paused: boolean;
  /** Wakes a blocking send waiting for `paused`. */
  onPause: (() => void) | undefined;
  /** The id of the artifact text chunks go to, once the first chunk arrived. */
  replyArtifactId?: string;
  /** The action this turn may take (approved by the person, or allowed by the ladder). */
  approvedAction?: ApprovedAction;
  /** The person's answer to a remote agent's question, for the turn that resumes with it. */
  personAnswer?: PersonAnswer;
  /** An allowed action the next turn starts with, at once (set by #apply, read by the drive loop). */
  continueWith?: ApprovedAction;
  /** Actions allowed without asking in this turn so far (bounded: see MAX_ALLOWED_ACTIONS). */
  allowedActions?: number;
}

/** A message on a task parked on the person that does not run anything (re-parked, or failed). */
class ParkedAnswer extends AirlockError {
  readonly code = 'parked_answer';
  constructor(readonly task: Task) {
    super('parked');
  }
}

/** Rewrites of a refused final state: 250 ms, doubling to 5 s, about 5 minutes in all. */
const WRITE_RETRY_FIRST_MS = 250;
const WRITE_RETRY_MAX_MS = 5_000;
const MAX_WRITE_RETRIES = 64;

/** Actions one turn may take without asking (L1, L2) before it is stopped: no endless loop. */
const MAX_ALLOWED_ACTIONS = 8;

/** The turn as the bridge builds it: its lazy properties read this state (see newTurn). */
interface BridgeTurn extends AgentTurn {
  readonly [TURN_STATE]: TurnState;
}

/** What a turn's lazy properties are derived from. */
interface TurnState {
  readonly ctx: CallContext;
  readonly live: LiveTask;
  sessionId: string | undefined;
  prompt: TurnPrompt | undefined;
  readonly buildPrompt: (() => TurnPrompt) | undefined;
  readonly store: TaskStore;
  history: AgentTurn['history'];
}

const TURN_STATE = Symbol('airlock.turnState');

/** A backend's events: pulled synchronously when the backend offers them that way (`runSync`). */
type TurnSource = { sync: true; iterator: Iterator<AgentEvent> } | { sync: false; iterator: AsyncIterator<AgentEvent> };

const MAX_CONTEXT_ID = 256;
/** Most principals whose owner keys #ownerOf keeps. */
const OWNER_CACHE_LIMIT = 1024;

export class TaskService {
  readonly #store: TaskStore;
  readonly #bus: TaskEventBus;
  readonly #log: ServiceLogger;
  readonly #now: (() => Date) | undefined;
  readonly #live = new Map<string, LiveTask>();
  /** Running turns by owner and contextId: one running task per context. */
  readonly #runningContexts = new Map<string, LiveTask>();
  readonly #policy: TurnPolicy | undefined;
  readonly #observe: TaskObserver | undefined;
  readonly #gate: ParkingGate | undefined;
  /** Pending rewrites of final states the store refused (see #writeLater). */
  readonly #retryTimers = new Set<NodeJS.Timeout>();
  #closed = false;
  /** Owner keys by principal key, then agent slug (see #ownerOf). */
  readonly #owners = new Map<string, Map<string, string>>();
  /** The bus is shared by replicas: a task not running here may be running on another one. */
  readonly #shared: boolean;
  readonly #remoteTaskPollMs: number;
  readonly #remoteCancelWaitMs: number;
  /** Stops listening for other replicas' cancel requests. */
  readonly #stopCancelRequests: (() => void) | undefined;

  constructor(options: TaskServiceOptions) {
    this.#store = options.store;
    this.#bus = options.bus ?? new LocalTaskEventBus();
    this.#log = options.logger ?? (() => undefined);
    this.#now = options.now;
    this.#policy = options.policy;
    this.#observe = options.observe;
    this.#gate = options.gate;
    this.#shared = this.#bus.requestCancel !== undefined;
    this.#remoteTaskPollMs = options.remoteTaskPollMs ?? 1_000;
    this.#remoteCancelWaitMs = options.remoteCancelWaitMs ?? 2_000;
    this.#stopCancelRequests = this.#bus.onCancelRequest?.((taskId) => this.#cancelRequested(taskId));
  }

  /** SendMessage: starts or resumes a task; blocks until terminal or interrupted unless told not to. */
  send(ctx: CallContext, params: SendParams): Promise<SendResult> {
    const resuming = params.message.taskId !== undefined;
    const sent =
      ctx.backend.runSync !== undefined && !params.configuration.returnImmediately
        ? this.#sendReady(ctx, params, resuming)
        : this.#sendTurn(ctx, params, resuming);
    if (!resuming || this.#gate === undefined) return sent;
    return sent.catch((error: unknown) => {
      if (!(error instanceof ParkedAnswer)) throw error;
      return { kind: 'task', task: withHistory(error.task, params.configuration.historyLength) };
    });
  }

  async #sendTurn(ctx: CallContext, params: SendParams, resuming: boolean): Promise<SendResult> {
    const incoming = params.message;
    const live = await this.#start(ctx, incoming, resuming, true);
    const source = this.#open(ctx, live, resuming);
    const historyLength = params.configuration.historyLength;
    if (params.configuration.returnImmediately) {
      await this.#acknowledge(live);
      const snapshot = live.task;
      this.#drive(live, undefined, ctx);
      return { kind: 'task', task: withHistory(snapshot, historyLength) };
    }
    const first = source.sync
      ? this.#firstSync(ctx, live, source.iterator)
      : await this.#firstAsync(ctx, live, source.iterator);
    if (!resuming && isDirectReply(first)) return { kind: 'message', message: this.#directReply(live, source, first) };
    await this.#acknowledge(live);
    this.#drive(live, first, ctx);
    if (!live.paused) {
      await new Promise<void>((resolve) => {
        live.onPause = resolve;
      });
    }
    await flushed(live);
    return { kind: 'task', task: withHistory(live.task, historyLength) };
  }

  /**
   * A blocking send to a backend whose events are all ready (`runSync`). Its turn runs to its
   * outcome in one synchronous step, so no other request can see the task before it pauses or
   * ends. The task is therefore stored once, in the state it reached, and that write is made
   * before the caller hears of the task and refused exactly as #acknowledge refuses: the task
   * is still stored before it is acknowledged. A new task is not even listed as running (nobody
   * can know its id yet); a resumed one is, so that a concurrent resume is refused as busy.
   */
  async #sendReady(ctx: CallContext, params: SendParams, resuming: boolean): Promise<SendResult> {
    const incoming = params.message;
    const live = await this.#start(ctx, incoming, resuming, false);
    // #open takes `runSync` whenever the backend has it: the source is synchronous.
    const source = this.#open(ctx, live, resuming) as Extract<TurnSource, { sync: true }>;
    const first = this.#firstSync(ctx, live, source.iterator);
    if (!resuming && isDirectReply(first)) return { kind: 'message', message: this.#directReply(live, source, first) };
    // The turn's one write, made below: every change until then rides along with it.
    live.writeQueued = true;
    this.#drive(live, first, ctx);
    live.writeQueued = false;
    try {
      await this.#store.put(live.owner, live.task);
    } catch (error) {
      this.#emitOutcome(live, 'failed', 'internal_error', true);
      throw storeRefusal(error);
    }
    return { kind: 'task', task: withHistory(live.task, params.configuration.historyLength) };
  }

  /** SendStreamingMessage: the Task first (or a single Message), then its updates until it pauses or ends. */
  async stream(ctx: CallContext, params: SendParams): Promise<AsyncIterable<StreamEvent>> {
    // Streams always follow the turn: returnImmediately has no meaning here (§3.2.2).
    const incoming = params.message;
    const resuming = incoming.taskId !== undefined;
    let live: LiveTask;
    try {
      live = await this.#start(ctx, incoming, resuming, true);
    } catch (error) {
      if (error instanceof ParkedAnswer) return eventsOf({ kind: 'task', task: error.task });
      throw error;
    }
    const source = this.#open(ctx, live, resuming);
    const first = source.sync
      ? this.#firstSync(ctx, live, source.iterator)
      : await this.#firstAsync(ctx, live, source.iterator);
    if (!resuming && isDirectReply(first)) {
      return eventsOf({ kind: 'message', message: this.#directReply(live, source, first) });
    }
    await this.#acknowledge(live);
    const queue = this.#follow(live.task.id);
    queue.first({ kind: 'task', task: withHistory(live.task, params.configuration.historyLength) });
    this.#drive(live, first, ctx);
    return queue.events;
  }

  /** GetTask. Another owner's task is answered exactly like a missing one. */
  async get(ctx: CallContext, id: string, historyLength?: number): Promise<Task> {
    const task = await this.#find(this.#ownerOf(ctx), id);
    if (task === undefined) throw new A2AError('TASK_NOT_FOUND');
    return withHistory(task, historyLength);
  }

  /** ListTasks, newest first, only the caller's own tasks. */
  async list(ctx: CallContext, params: ListTasksParams): Promise<ListTasksResult> {
    const page = await this.#store.list(this.#ownerOf(ctx), {
      pageSize: params.pageSize,
      ...(params.contextId !== undefined && { contextId: params.contextId }),
      ...(params.status !== undefined && { status: params.status }),
      ...(params.pageToken !== undefined && { pageToken: params.pageToken }),
      ...(params.statusTimestampAfter !== undefined && { statusTimestampAfter: params.statusTimestampAfter }),
    });
    const tasks = page.tasks.map((stored) => {
      const task = this.#fresher(stored);
      const trimmed = withHistory(task, params.historyLength);
      return params.includeArtifacts ? trimmed : { ...trimmed, artifacts: [] };
    });
    return { tasks, nextPageToken: page.nextPageToken, pageSize: params.pageSize, totalSize: page.totalSize };
  }

  /** CancelTask: aborts the running turn; -32002 for a task that already ended. */
  async cancel(ctx: CallContext, id: string): Promise<Task> {
    const owner = this.#ownerOf(ctx);
    let live = this.#liveFor(owner, id);
    if (live === undefined) {
      let stored = await this.#find(owner, id);
      if (stored === undefined) throw new A2AError('TASK_NOT_FOUND');
      // A resume may have started while we read the store.
      live = this.#liveFor(owner, id);
      if (live === undefined && this.#shared && isRunningState(stored.status.state)) {
        // Its turn may run on another replica: that one cancels it, as a local cancel would.
        const elsewhere = await this.#cancelElsewhere(owner, stored);
        if (elsewhere.canceled) return elsewhere.task;
        // Nobody answered (the replica running it is gone) or the turn paused: decided here.
        stored = elsewhere.task;
        live = this.#liveFor(owner, id);
      }
      if (live === undefined) {
        if (isTerminalState(stored.status.state)) throw notCancelable(stored.status.state);
        const canceled = this.#withStatus(stored, 'canceled');
        await this.#store.put(owner, canceled);
        this.#bus.publish(id, statusEvent(canceled, true));
        this.#observe?.({
          type: 'canceled',
          ctx,
          taskId: id,
          contextId: canceled.contextId,
          inputChars: 0,
          outputChars: replyChars(canceled),
          reason: 'canceled_by_client',
        });
        this.#releaseInterrupted(ctx, canceled);
        this.#gate?.withdraw(owner, id);
        return canceled;
      }
    }
    if (isTerminalState(live.task.status.state)) throw notCancelable(live.task.status.state);
    return this.#cancelLive(live);
  }

  /** Cancels a turn running here: CancelTask on this replica, or a cancel request from another. */
  async #cancelLive(live: LiveTask): Promise<Task> {
    abortTurn(live, new Error('task canceled'));
    this.#commit(live, this.#withStatus(live.task, 'canceled'));
    this.#bus.publish(live.task.id, statusEvent(live.task, true));
    this.#emitOutcome(live, 'canceled', 'canceled_by_client');
    pause(live);
    this.#release(live);
    await flushed(live);
    return live.task;
  }

  /** Another replica asks to cancel a task: done if its turn runs here, else not our business. */
  #cancelRequested(taskId: string): void {
    const live = this.#live.get(taskId);
    if (live === undefined || isTerminalState(live.task.status.state)) return;
    this.#cancelLive(live).catch((error: unknown) => {
      this.#log('error', 'task_store_write_failed', { taskId, error: describe(error) });
    });
  }

  /**
   * Asks the replicas to cancel a task whose turn is not running here, and waits (at most
   * remoteCancelWaitMs) for the final status event of the one running it. `canceled` with the
   * task as stored once that replica committed it; otherwise the newest stored task, for the
   * caller to decide on: nobody answered (the replica running it is gone, or the bus is down),
   * or the turn paused for input before the request reached it.
   *
   * @throws A2AError TASK_NOT_CANCELABLE when the turn ended otherwise first; TASK_NOT_FOUND
   *   when the task vanished meanwhile.
   */
  async #cancelElsewhere(owner: string, stored: Task): Promise<{ canceled: boolean; task: Task }> {
    const id = stored.id;
    const deadline = Date.now() + this.#remoteCancelWaitMs;
    const status = await new Promise<TaskStatus | undefined>((resolve) => {
      const stop = this.#bus.subscribe(id, (event) => {
        if (event.kind !== 'status-update' || !event.final) return;
        clearTimeout(timer);
        stop();
        resolve(event.status);
      });
      const timer = setTimeout(() => {
        stop();
        resolve(undefined);
      }, this.#remoteCancelWaitMs);
      // Listening first: the answer cannot come before the question, but it can come at once.
      this.#bus.requestCancel?.(id);
    });
    if (status === undefined || !isTerminalState(status.state)) {
      const fresh = await this.#store.get(owner, id);
      if (fresh === undefined) throw new A2AError('TASK_NOT_FOUND');
      return { canceled: false, task: fresh };
    }
    if (status.state !== 'canceled') throw notCancelable(status.state);
    const settled = await this.#storedTerminal(owner, id, deadline);
    return { canceled: true, task: settled ?? { ...stored, status } };
  }

  /**
   * The stored task once the store shows it ended, read again every 20 ms until `deadline`
   * (epoch ms); undefined if it did not by then (or the store failed). A replica publishes a
   * task's final event before its write lands: a replica that heard the event waits for the
   * write this way, so that a GetTask right after its answer agrees with it.
   */
  async #storedTerminal(owner: string, id: string, deadline: number): Promise<Task | undefined> {
    for (;;) {
      const fresh = await this.#store.get(owner, id).catch(() => undefined);
      if (fresh !== undefined && isTerminalState(fresh.status.state)) return fresh;
      if (Date.now() >= deadline) return undefined;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Tells the backend a waiting task it may hold something for is canceled (see cancelInterrupted). */
  #releaseInterrupted(ctx: CallContext, task: Task): void {
    const backend = ctx.backend;
    if (backend.cancelInterrupted === undefined) return;
    const sessionId = deriveSessionId(ctx.principalKey, ctx.agentSlug, task.contextId);
    backend.cancelInterrupted({ sessionId, taskId: task.id }).catch((error: unknown) => {
      this.#log('warn', 'backend_cancel_failed', { taskId: task.id, error: describe(error) });
    });
  }

  /**
   * SubscribeToTask: a snapshot first, then every update until the task ends: unlike a
   * send's stream, a subscription stays open across input-required and the turn that
   * answers it. -32004 for a task that already ended.
   */
  async subscribe(ctx: CallContext, id: string): Promise<AsyncIterable<StreamEvent>> {
    const owner = this.#ownerOf(ctx);
    let task = this.#liveFor(owner, id)?.task;
    if (task === undefined) {
      task = await this.#find(owner, id);
      if (task === undefined) throw new A2AError('TASK_NOT_FOUND');
    }
    if (isTerminalState(task.status.state)) throw terminalSubscribe();
    // A task not running here may run on another replica: its events come over the shared bus,
    // and the store is watched in case the bus loses the last one.
    const remote = this.#shared && this.#liveFor(owner, id) === undefined;
    const queue = this.#follow(id, 'terminal', remote ? owner : undefined);
    // A turn may have moved on while the store was read: the newest state is the snapshot.
    queue.first({ kind: 'task', task: this.#liveFor(owner, id)?.task ?? task });
    return queue.events;
  }

  /** Aborts every running turn (shutdown). */
  async close(): Promise<void> {
    this.#closed = true;
    for (const timer of this.#retryTimers) clearTimeout(timer);
    this.#retryTimers.clear();
    this.#stopCancelRequests?.();
    const pending: Promise<void>[] = [];
    for (const live of this.#live.values()) {
      abortTurn(live, new Error('gateway shutting down'));
      this.#commit(live, this.#withStatus(live.task, 'failed', 'The gateway shut down before the task finished.'));
      this.#bus.publish(live.task.id, statusEvent(live.task, true));
      this.#emitOutcome(live, 'failed', 'shutdown');
      pause(live);
      this.#release(live);
      pending.push(flushed(live));
    }
    this.#live.clear();
    this.#runningContexts.clear();
    await Promise.allSettled(pending);
  }

  /** How many turns run right now (for limits and tests). */
  get running(): number {
    return this.#live.size;
  }

  // -------------------------------------------------------------------------------------------

  /**
   * Hands the turn to the backend: builds the turn and asks for its events. The first event is
   * pulled by the caller (#firstSync/#firstAsync), so that a direct Message reply can be
   * returned without ever creating a task.
   */
  #open(ctx: CallContext, live: LiveTask, resuming: boolean, releaseOnThrow = true): TurnSource {
    const turn = newTurn(ctx, live, resuming, live.grant, this.#store);
    const backend = ctx.backend;
    let source: TurnSource;
    try {
      source =
        backend.runSync !== undefined
          ? { sync: true, iterator: backend.runSync(turn)[Symbol.iterator]() }
          : { sync: false, iterator: backend.run(turn)[Symbol.asyncIterator]() };
    } catch (error) {
      // A backend that throws before its first event: the task must not stay live.
      if (releaseOnThrow) this.#release(live);
      throw error;
    }
    live.source = source;
    return source;
  }

  /** The turn's first event; a backend that throws fails the turn (the detail is logged). */
  #firstSync(ctx: CallContext, live: LiveTask, iterator: Iterator<AgentEvent>): IteratorResult<AgentEvent> {
    try {
      return iterator.next();
    } catch (error) {
      this.#logBackendError(ctx, live.task.id, error);
      return BACKEND_FAILED;
    }
  }

  async #firstAsync(
    ctx: CallContext,
    live: LiveTask,
    iterator: AsyncIterator<AgentEvent>,
  ): Promise<IteratorResult<AgentEvent>> {
    try {
      return await iterator.next();
    } catch (error) {
      this.#logBackendError(ctx, live.task.id, error);
      return BACKEND_FAILED;
    }
  }

  /** A direct reply: the task is dropped before anyone heard of it, and the turn ends. */
  #directReply(live: LiveTask, source: TurnSource, first: { value: { parts: Message['parts'] } }): Message {
    const parts = scrubParts(live, first.value.parts);
    this.#release(live);
    live.source = undefined;
    closeSource(source);
    if (live.observed) {
      live.observed = false;
      this.#observe?.({
        type: 'completed',
        ctx: live.ctx,
        taskId: live.task.id,
        contextId: live.task.contextId,
        inputChars: live.inputChars,
        outputChars: partsChars(parts),
      });
    }
    return { messageId: newId(), role: 'agent', parts, contextId: live.task.contextId };
  }

  /**
   * Stores the task before anyone hears of it. If the store refuses (full, or down), the
   * turn is abandoned and the caller gets the store's error instead of a task id that
   * leads nowhere.
   */
  async #acknowledge(live: LiveTask): Promise<void> {
    this.#commit(live, live.task);
    await live.writes;
    if (!live.writeFailed) return;
    const error = live.writeError;
    abortTurn(live, new Error('task could not be stored'));
    this.#emitOutcome(live, 'failed', 'internal_error');
    this.#release(live);
    const source = live.source;
    live.source = undefined;
    if (source !== undefined) closeSource(source);
    throw storeRefusal(error);
  }

  /**
   * Admits the turn (policy), then creates or resumes its task. The grant is given back if the
   * task cannot start; the submitted row is written once it can.
   */
  async #start(ctx: CallContext, incoming: Message, resuming: boolean, track: boolean): Promise<LiveTask> {
    const owner = this.#ownerOf(ctx);
    const admitted = this.#policy?.admit(ctx, incoming, resuming);
    // A cap shared by replicas answers asynchronously; a local one without a turn of the loop.
    const grant = admitted instanceof Promise ? await admitted : admitted;
    let live: LiveTask;
    try {
      live = resuming
        ? await this.#resume(owner, ctx, incoming, grant)
        : this.#create(owner, ctx, incoming, track, grant);
    } catch (error) {
      grant?.release();
      throw error;
    }
    if (this.#observe !== undefined) {
      try {
        this.#observe({
          type: 'submitted',
          ctx,
          taskId: live.task.id,
          contextId: live.task.contextId,
          inputChars: live.inputChars,
          outputChars: 0,
        });
      } catch (error) {
        // Not recorded, not run: an unaudited task must not start.
        this.#release(live);
        throw error;
      }
      live.observed = true;
    }
    return live;
  }

  /** A new task; `track` lists it as running (see #sendReady for when it need not be). */
  #create(owner: string, ctx: CallContext, incoming: Message, track: boolean, grant: TurnGrant | undefined): LiveTask {
    const contextId = incoming.contextId ?? newId();
    if (contextId.length > MAX_CONTEXT_ID)
      throw new A2AError('INVALID_PARAMS', 'Invalid params: contextId is too long');
    // Only a caller-named context can be busy: a fresh one has never been seen.
    if (incoming.contextId !== undefined) this.#checkContextFree(owner, contextId);
    const id = newId();
    const message = withIds(incoming, id, contextId);
    const task: Task = {
      id,
      contextId,
      status: { state: 'submitted', timestamp: this.#timestamp() },
      artifacts: [],
      history: [message],
    };
    return this.#register(owner, ctx, task, track, grant, incoming);
  }

  /** -32004 when another turn of this owner runs in the context (one running task per context). */
  #checkContextFree(owner: string, contextId: string): void {
    if (this.#runningContexts.has(contextKeyOf(owner, contextId))) {
      throw new A2AError(
        'UNSUPPORTED_OPERATION',
        'Another task is still running in this contextId; wait for it to finish or ask for input, or use a new contextId',
      );
    }
  }

  async #resume(owner: string, ctx: CallContext, incoming: Message, grant: TurnGrant | undefined): Promise<LiveTask> {
    const id = incoming.taskId as string;
    if (this.#liveFor(owner, id) !== undefined) throw busy();
    const stored = await this.#find(owner, id);
    if (stored === undefined) throw new A2AError('TASK_NOT_FOUND');
    if (incoming.contextId !== undefined && incoming.contextId !== stored.contextId) {
      throw new A2AError('INVALID_PARAMS', 'Invalid params: message.contextId does not match the task’s contextId', {
        field: 'message.contextId',
      });
    }
    if (isTerminalState(stored.status.state)) {
      throw new A2AError(
        'UNSUPPORTED_OPERATION',
        `Task is ${stored.status.state} and cannot take more messages; send a new message in the same contextId instead`,
      );
    }
    if (!isInterruptedState(stored.status.state) || this.#liveFor(owner, id) !== undefined) throw busy();
    this.#checkContextFree(owner, stored.contextId);
    const parked = this.#gate === undefined ? undefined : await this.#gate.resume(ctx, owner, stored);
    if (parked !== undefined && parked.kind !== 'not_parked' && parked.kind !== 'resume') {
      // A message on a task parked on the person is not a decision: nothing runs.
      if (parked.kind === 'repark') throw new ParkedAnswer(stored);
      const failed = this.#withStatus(stored, 'failed', parked.message);
      await this.#store.put(owner, failed);
      this.#bus.publish(id, statusEvent(failed, true));
      this.#observe?.({
        type: 'failed',
        ctx,
        taskId: id,
        contextId: failed.contextId,
        inputChars: 0,
        outputChars: replyChars(failed),
        reason: parked.reason,
      });
      throw new ParkedAnswer(failed);
    }
    const message = withIds(incoming, id, stored.contextId);
    const resumed: Task = {
      ...stored,
      history: [...stored.history, message],
      status: { state: 'working', timestamp: this.#timestamp() },
    };
    const live = this.#register(owner, ctx, resumed, true, grant, incoming);
    if (parked?.kind === 'resume') {
      if (parked.action !== undefined) live.approvedAction = parked.action;
      if (parked.answer !== undefined) live.personAnswer = parked.answer;
    }
    return live;
  }

  #register(
    owner: string,
    ctx: CallContext,
    task: Task,
    track: boolean,
    grant: TurnGrant | undefined,
    incoming: Message,
  ): LiveTask {
    const live: LiveTask = {
      owner,
      task,
      ctx,
      grant,
      inputChars: grant === undefined ? textChars(incoming.parts) : grant.inputChars,
      scrubber: grant?.scrubber,
      scrubStream: undefined,
      contextKey: undefined,
      observed: false,
      controller: undefined,
      aborted: false,
      abortReason: undefined,
      source: undefined,
      writes: RESOLVED,
      writeQueued: false,
      writeFailed: false,
      writeError: undefined,
      paused: false,
      onPause: undefined,
    };
    if (track) {
      this.#live.set(task.id, live);
      const key = contextKeyOf(owner, task.contextId);
      live.contextKey = key;
      this.#runningContexts.set(key, live);
    }
    return live;
  }

  /** The turn no longer runs: it leaves the live set, frees its context and gives back its grant. */
  #release(live: LiveTask): void {
    if (this.#live.get(live.task.id) === live) this.#live.delete(live.task.id);
    const key = live.contextKey;
    if (key !== undefined) {
      live.contextKey = undefined;
      if (this.#runningContexts.get(key) === live) this.#runningContexts.delete(key);
    }
    const grant = live.grant;
    if (grant !== undefined) {
      live.grant = undefined;
      grant.release();
    }
  }

  /** Writes the outcome row for a task whose submitted row was written (once). */
  #emitOutcome(
    live: LiveTask,
    type: Exclude<TaskLifecycleEvent['type'], 'submitted'>,
    reason?: TaskOutcomeReason,
    again = false,
  ): void {
    if (!live.observed && !again) return;
    live.observed = false;
    this.#observe?.({
      type,
      ctx: live.ctx,
      taskId: live.task.id,
      contextId: live.task.contextId,
      inputChars: live.inputChars,
      outputChars: replyChars(live.task),
      ...(reason !== undefined && { reason }),
    });
  }

  /**
   * Runs the turn to its outcome. Never throws: failures become a failed task. A synchronous
   * source is pulled without awaiting, so such a turn is over when this returns.
   */
  #drive(live: LiveTask, first: IteratorResult<AgentEvent> | undefined, ctx: CallContext): void {
    const source = live.source;
    // No source: the turn was refused, or canceled before it could start.
    if (source === undefined || live.aborted) return;
    if (source.sync) this.#driveSync(live, source.iterator, first, ctx);
    else void this.#driveAsync(live, source.iterator, first, ctx);
  }

  #driveSync(
    live: LiveTask,
    iterator: Iterator<AgentEvent>,
    first: IteratorResult<AgentEvent> | undefined,
    ctx: CallContext,
  ): void {
    try {
      if (live.task.status.state !== 'working') this.#transition(live, 'working');
      let next = first ?? iterator.next();
      while (!live.aborted) {
        if (next.done === true) {
          this.#finish(live, 'failed', NO_OUTCOME);
          break;
        }
        if (this.#apply(live, next.value)) {
          // An action the ladder allows without asking: the backend's next turn takes it.
          const source = this.#continueTurn(ctx, live);
          if (source === undefined || !source.sync) break;
          iterator = source.iterator;
        }
        next = iterator.next();
      }
    } catch (error) {
      this.#turnFailed(live, ctx, error);
    } finally {
      this.#endTurn(live);
    }
  }

  async #driveAsync(
    live: LiveTask,
    iterator: AsyncIterator<AgentEvent>,
    first: IteratorResult<AgentEvent> | undefined,
    ctx: CallContext,
  ): Promise<void> {
    try {
      if (live.task.status.state !== 'working') this.#transition(live, 'working');
      let next = first ?? (await iterator.next());
      while (!live.aborted) {
        if (next.done === true) {
          this.#finish(live, 'failed', NO_OUTCOME);
          break;
        }
        if (this.#apply(live, next.value)) {
          const source = this.#continueTurn(ctx, live);
          if (source === undefined || source.sync) break;
          iterator = source.iterator;
        }
        next = await iterator.next();
      }
    } catch (error) {
      this.#turnFailed(live, ctx, error);
    } finally {
      this.#endTurn(live);
    }
  }

  /** A backend that threw: the turn fails with a generic reason, the detail goes to the log. */
  #turnFailed(live: LiveTask, ctx: CallContext, error: unknown): void {
    if (live.aborted) return;
    this.#logBackendError(ctx, live.task.id, error);
    this.#finish(live, 'failed', BACKEND_FAILURE, undefined, 'agent_failed');
  }

  /** The turn is over: the task leaves the live set and the backend may clean up. */
  #endTurn(live: LiveTask): void {
    this.#release(live);
    const source = live.source;
    live.source = undefined;
    // Nothing to watch when no write was ever queued (#sendReady makes its own and reports it).
    if (live.writes !== RESOLVED) {
      void live.writes.then(() => {
        if (live.writeFailed) {
          this.#log('error', 'task_store_write_failed', { taskId: live.task.id, error: describe(live.writeError) });
          this.#writeLater(live.owner, live.task, 0);
        }
      });
    }
    if (source !== undefined) closeSource(source);
  }

  /**
   * A turn's last state that the store refused (an outage): written again with backoff until
   * the store takes it, so the task does not stay `working` for whoever polls it. Dropped when a
   * newer turn of the task runs here, or the store already holds a newer state.
   */
  #writeLater(owner: string, task: Task, attempt: number): void {
    if (this.#closed || attempt >= MAX_WRITE_RETRIES) {
      if (!this.#closed) this.#log('error', 'task_store_write_abandoned', { taskId: task.id });
      return;
    }
    const delay = Math.min(WRITE_RETRY_FIRST_MS * 2 ** attempt, WRITE_RETRY_MAX_MS);
    const timer = setTimeout(() => {
      this.#retryTimers.delete(timer);
      void this.#retryWrite(owner, task, attempt);
    }, delay);
    timer.unref();
    this.#retryTimers.add(timer);
  }

  async #retryWrite(owner: string, task: Task, attempt: number): Promise<void> {
    if (this.#live.has(task.id)) return;
    try {
      const stored = await this.#store.get(owner, task.id);
      if (stored !== undefined && stored.status.timestamp > task.status.timestamp) return;
      if (this.#live.has(task.id)) return;
      await this.#store.put(owner, task);
      this.#log('warn', 'task_store_write_recovered', { taskId: task.id, attempts: attempt + 1 });
    } catch {
      this.#writeLater(owner, task, attempt + 1);
    }
  }

  /** Applies one backend event. Returns true when the turn reached its outcome. */
  #apply(live: LiveTask, event: AgentEvent): boolean {
    switch (event.type) {
      case 'working':
        this.#transition(live, 'working', scrubText(live, event.text));
        return false;
      case 'text':
        this.#appendText(live, event.text, event.last === true);
        return false;
      case 'artifact': {
        const artifact: Artifact = {
          ...event.artifact,
          parts: scrubParts(live, event.artifact.parts),
          artifactId: event.artifact.artifactId ?? newId(),
        };
        this.#commit(live, { ...live.task, artifacts: [...live.task.artifacts, artifact] });
        this.#bus.publish(live.task.id, {
          kind: 'artifact-update',
          taskId: live.task.id,
          contextId: live.task.contextId,
          artifact,
          lastChunk: true,
        });
        return false;
      }
      case 'message':
        // Too late for a direct reply: the task exists, so the message becomes its result.
        this.#finish(live, 'completed', undefined, scrubParts(live, event.parts));
        return true;
      case 'completed':
        this.#finish(live, 'completed', scrubText(live, event.text));
        return true;
      case 'input-required':
        this.#finish(live, 'input-required', scrubText(live, event.question));
        return true;
      case 'rejected':
        this.#finish(live, 'rejected', scrubText(live, event.reason));
        return true;
      case 'failed':
        this.#finish(live, 'failed', scrubText(live, event.reason), undefined, 'agent_failed');
        return true;
      case 'propose-action':
        return this.#parked(
          live,
          this.#gate === undefined
            ? {
                kind: 'refuse',
                message: 'The agent proposed a guarded action, and this gateway has no approvals configured.',
                reason: 'action_refused',
              }
            : this.#gate.propose(live.ctx, live.owner, live.task, event.action),
        );
      case 'ask-person':
        return this.#parked(
          live,
          this.#gate === undefined
            ? { kind: 'park', parts: [{ kind: 'text', text: event.remote.question }] }
            : this.#gate.ask(live.ctx, live.owner, live.task, event.remote),
        );
    }
  }

  /** Applies the gate's answer to a turn that needs a person. Always ends the turn. */
  #parked(live: LiveTask, outcome: ParkOutcome): true {
    switch (outcome.kind) {
      case 'park':
        this.#finish(live, 'input-required', undefined, scrubParts(live, outcome.parts));
        break;
      case 'refuse':
        this.#finish(live, 'failed', outcome.message, undefined, outcome.reason);
        break;
      case 'allow': {
        const allowed = (live.allowedActions ?? 0) + 1;
        live.allowedActions = allowed;
        if (allowed > MAX_ALLOWED_ACTIONS) {
          this.#finish(
            live,
            'failed',
            `The agent proposed more than ${MAX_ALLOWED_ACTIONS} actions in one turn.`,
            undefined,
            'action_refused',
          );
        } else {
          live.continueWith = outcome.action;
        }
        break;
      }
    }
    return true;
  }

  /**
   * After an event that ended the turn: when it allowed an action, a new turn of the backend
   * starts with it (same task, same state) and its events are returned; otherwise undefined.
   */
  #continueTurn(ctx: CallContext, live: LiveTask): TurnSource | undefined {
    const action = live.continueWith;
    if (action === undefined || live.aborted) return undefined;
    live.continueWith = undefined;
    live.approvedAction = action;
    const previous = live.source;
    if (previous !== undefined) closeSource(previous);
    live.source = undefined;
    try {
      return (live.source = this.#open(ctx, live, true, false));
    } catch (error) {
      this.#turnFailed(live, ctx, error);
      return undefined;
    }
  }

  /** Text chunks go to one reply artifact: the first creates it, the rest append. */
  #appendText(live: LiveTask, chunk: string, last: boolean): void {
    let text = chunk;
    const scrubber = live.scrubber;
    if (scrubber !== undefined) {
      // Held-back text (a possible secret's start) goes out with a later chunk or the flush.
      const stream = (live.scrubStream ??= scrubber.stream());
      text = stream.push(chunk);
      if (last) {
        text += stream.flush();
        live.scrubStream = undefined;
      }
      if (text.length === 0 && !last) return;
    }
    const task = live.task;
    let artifactId = live.replyArtifactId;
    let artifacts: Artifact[];
    let append: boolean;
    if (artifactId === undefined) {
      artifactId = newId();
      live.replyArtifactId = artifactId;
      artifacts = [...task.artifacts, { artifactId, name: 'reply', parts: [{ kind: 'text', text }] }];
      append = false;
    } else {
      // The stored artifact keeps one growing text part; streamed chunks carry only the new text.
      const id = artifactId;
      artifacts = task.artifacts.map((artifact) => {
        if (artifact.artifactId !== id) return artifact;
        const head = artifact.parts[0];
        const joined = head !== undefined && head.kind === 'text' ? head.text + text : text;
        return { ...artifact, parts: [{ kind: 'text', text: joined }] };
      });
      append = true;
    }
    this.#commit(live, { ...task, artifacts });
    this.#bus.publish(task.id, {
      kind: 'artifact-update',
      taskId: task.id,
      contextId: task.contextId,
      artifact: { artifactId, name: 'reply', parts: [{ kind: 'text', text }] },
      append,
      lastChunk: last,
    });
  }

  #transition(live: LiveTask, state: TaskState, text?: string): void {
    this.#commit(live, this.#withStatus(live.task, state, text));
    this.#bus.publish(live.task.id, statusEvent(live.task, false));
  }

  /** Moves to a terminal or interrupted state; the stream ends after this event. */
  #finish(live: LiveTask, state: TaskState, text?: string, parts?: Message['parts'], reason?: TaskOutcomeReason): void {
    // Reply text the scrubber still holds back goes out before the final status.
    const held = live.scrubStream;
    if (held !== undefined) {
      live.scrubStream = undefined;
      const rest = held.flush();
      if (rest.length > 0) this.#appendText(live, rest, true);
    }
    this.#commit(live, this.#withStatus(live.task, state, text, parts));
    this.#bus.publish(live.task.id, statusEvent(live.task, true));
    this.#emitOutcome(live, outcomeOf(state), reason);
    pause(live);
  }

  #withStatus(task: Task, state: TaskState, text?: string, parts?: Message['parts']): Task {
    const status: TaskStatus = { state, timestamp: this.#timestamp() };
    let history = task.history;
    const replyParts = parts ?? (text !== undefined && text.length > 0 ? [{ kind: 'text' as const, text }] : undefined);
    if (replyParts !== undefined) {
      const message: Message = {
        messageId: newId(),
        role: 'agent',
        parts: replyParts,
        taskId: task.id,
        contextId: task.contextId,
      };
      status.message = message;
      history = [...history, message];
    }
    return { ...task, status, history };
  }

  /**
   * Makes `task` the newest state now, and queues its durable write behind earlier ones.
   * Changes that arrive while a write is queued ride along with it: the store sees the
   * newest state in order, with one write per burst instead of one per chunk.
   */
  #commit(live: LiveTask, task: Task): void {
    live.task = task;
    if (live.writeQueued) return;
    live.writeQueued = true;
    const store = this.#store;
    live.writes = live.writes.then(async () => {
      live.writeQueued = false;
      try {
        await store.put(live.owner, live.task);
        live.writeFailed = false;
        live.writeError = undefined;
      } catch (error) {
        live.writeFailed = true;
        live.writeError = error;
      }
    });
  }

  /** The status timestamp for a change made now: ISO 8601 UTC with milliseconds. */
  #timestamp(): string {
    return this.#now === undefined ? isoNow() : this.#now().toISOString();
  }

  /**
   * A stream of a task's events. It ends after the turn's final status event (`'pause'`: a
   * send's stream) or only once the task is terminal (`'terminal'`: a subscription, where an
   * interrupted state is not the end, so its `final` flag is cleared).
   */
  #follow(
    taskId: string,
    until: 'pause' | 'terminal' = 'pause',
    remoteOwner?: string,
  ): { first: (event: StreamEvent) => void; events: AsyncIterable<StreamEvent> } {
    const queue = new EventQueue<StreamEvent>();
    const onEvent = (event: StreamEvent): void => {
      if (event.kind !== 'status-update') {
        queue.push(event);
        return;
      }
      const ends = until === 'pause' ? event.final : isTerminalState(event.status.state);
      const shown = ends === event.final ? event : { ...event, final: ends };
      if (!ends) {
        queue.push(shown);
        return;
      }
      stop();
      if (remoteOwner === undefined) {
        queue.push(shown);
        queue.end();
        return;
      }
      // Another replica's final event travels ahead of its store write: the stream ends once
      // the store agrees (at most a second later), so that a GetTask right after it agrees too.
      void this.#storedTerminal(remoteOwner, taskId, Date.now() + 1_000).then(() => {
        queue.push(shown);
        queue.end();
      });
    };
    const stopListening = this.#bus.subscribe(taskId, onEvent);
    let watch: NodeJS.Timeout | undefined;
    const stop = (): void => {
      stopListening();
      clearInterval(watch);
    };
    if (remoteOwner !== undefined) {
      watch = this.#watchStored(remoteOwner, taskId, onEvent, () => {
        stop();
        queue.end();
      });
    }
    let firstSent = false;
    const events: AsyncIterable<StreamEvent> = {
      [Symbol.asyncIterator]: () => {
        const inner = queue[Symbol.asyncIterator]();
        return {
          next: () => inner.next(),
          return: async (value?: unknown) => {
            // The caller went away: stop listening. The task itself keeps running.
            stop();
            queue.end();
            return { done: true, value: value as StreamEvent };
          },
        };
      },
    };
    return {
      first: (event) => {
        if (firstSent) return;
        firstSent = true;
        queue.push(event);
      },
      events,
    };
  }

  /**
   * Re-reads a task that runs on another replica every remoteTaskPollMs, for a subscription that
   * must end even if the bus lost the final event. A terminal state is delivered one period after
   * it is first seen, so that the bus's own events (the last chunks, then the final status) come
   * first when they are on their way. A task that is gone ends the subscription; a store that
   * fails is tried again on the next period.
   */
  #watchStored(owner: string, taskId: string, deliver: (event: StreamEvent) => void, gone: () => void): NodeJS.Timeout {
    let reading = false;
    let terminalSeen = false;
    const timer = setInterval(() => {
      if (reading) return;
      reading = true;
      this.#store
        .get(owner, taskId)
        .then(
          (stored) => {
            if (stored === undefined) return gone();
            if (!isTerminalState(stored.status.state)) terminalSeen = false;
            else if (!terminalSeen) terminalSeen = true;
            else deliver(statusEvent(stored, true));
          },
          () => undefined,
        )
        .finally(() => {
          reading = false;
        });
    }, this.#remoteTaskPollMs);
    // A subscription alone must not keep the process alive.
    timer.unref();
    return timer;
  }

  /**
   * Tasks belong to a principal at one agent: the same client sees separate task lists per
   * agent. One string per owner, kept and shared by all its tasks, rather than a new one per
   * request that every store lookup must flatten and hash again (bounded: a flood of
   * principals only empties the cache).
   */
  #ownerOf(ctx: CallContext): string {
    let byAgent = this.#owners.get(ctx.principalKey);
    if (byAgent === undefined) {
      if (this.#owners.size >= OWNER_CACHE_LIMIT) this.#owners.clear();
      byAgent = new Map();
      this.#owners.set(ctx.principalKey, byAgent);
    }
    let owner = byAgent.get(ctx.agentSlug);
    if (owner === undefined) {
      owner = `${ctx.principalKey}@${ctx.agentSlug}`;
      byAgent.set(ctx.agentSlug, owner);
    }
    return owner;
  }

  #liveFor(owner: string, id: string): LiveTask | undefined {
    const live = this.#live.get(id);
    return live !== undefined && live.owner === owner ? live : undefined;
  }

  async #find(owner: string, id: string): Promise<Task | undefined> {
    if (id.startsWith(OUTBOUND_ID_PREFIX)) return undefined;
    const live = this.#liveFor(owner, id);
    if (live !== undefined) return live.task;
    return this.#store.get(owner, id);
  }

  #fresher(stored: Task): Task {
    return this.#live.get(stored.id)?.task ?? stored;
  }

  #logBackendError(ctx: CallContext, taskId: string, error: unknown): void {
    this.#log('error', 'agent_backend_failed', {
      agent: ctx.agentSlug,
      backend: ctx.backend.kind,
      taskId,
      error: describe(error),
    });
  }
}

const RESOLVED: Promise<void> = Promise.resolve();

const BACKEND_FAILURE = 'The agent failed to process the message.';
const NO_OUTCOME = 'The agent ended its turn without a result.';
/** What a backend that throws before its first event amounts to. Shared: it is only read. */
const BACKEND_FAILED: IteratorResult<AgentEvent> = Object.freeze({
  done: false,
  value: Object.freeze({ type: 'failed', reason: BACKEND_FAILURE }),
});

/** A first event that is a direct Message reply (no task). */
function isDirectReply(
  first: IteratorResult<AgentEvent>,
): first is IteratorYieldResult<Extract<AgentEvent, { type: 'message' }>> {
  return first.done !== true && first.value.type === 'message';
}

/**
 * The turn's derived properties are own accessors whose getters are these shared functions.
 * Getters written in an object literal would be new closures per turn, held by accessor records
 * that V8 allocates in the old generation: every young object those closures reach (the whole
 * task) would then survive young-generation collections and be promoted, and cost a major
 * collection later. Own and enumerable (sessionId, signal), so `{ ...turn }` still copies them.
 */
const SESSION_ID_ACCESSOR: PropertyDescriptor = {
  enumerable: true,
  configurable: true,
  // Derived on first use: most turns of simple backends never ask for it.
  get(this: BridgeTurn): string {
    const state = this[TURN_STATE];
    return (state.sessionId ??= deriveSessionId(state.ctx.principalKey, state.ctx.agentSlug, this.contextId));
  },
};
const SIGNAL_ACCESSOR: PropertyDescriptor = {
  enumerable: true,
  configurable: true,
  // Created on first read: see LiveTask.controller.
  get(this: BridgeTurn): AbortSignal {
    return signalOf(this[TURN_STATE].live);
  },
};
/**
 * Not enumerable: `{ ...turn }` copies the live signal but would copy `aborted` as a frozen
 * value, so a copy leaves it out and `isAborted` reads the copy's signal instead.
 */
const ABORTED_ACCESSOR: PropertyDescriptor = {
  enumerable: false,
  configurable: true,
  get(this: BridgeTurn): boolean {
    return this[TURN_STATE].live.aborted;
  },
};

function newTurn(
  ctx: CallContext,
  live: LiveTask,
  resuming: boolean,
  grant: TurnGrant | undefined,
  store: TaskStore,
): BridgeTurn {
  const task = live.task;
  const state: TurnState = {
    ctx,
    live,
    sessionId: undefined,
    prompt: undefined,
    buildPrompt: grant?.prompt,
    store,
    history: undefined,
  };
  const turn = {
    taskId: task.id,
    contextId: task.contextId,
    message: task.history[task.history.length - 1] as Message,
    task,
    resumed: resuming,
    tools: grant?.tools ?? NO_TOOLS,
    [TURN_STATE]: state,
  };
  Object.defineProperty(turn, 'sessionId', SESSION_ID_ACCESSOR);
  Object.defineProperty(turn, 'signal', SIGNAL_ACCESSOR);
  Object.defineProperty(turn, 'aborted', ABORTED_ACCESSOR);
  Object.defineProperty(turn, 'history', HISTORY_ACCESSOR);
  if (grant?.prompt !== undefined) Object.defineProperty(turn, 'prompt', PROMPT_ACCESSOR);
  // Only the turns that resume a parked task carry these: the common turn's literal stays a plain
  // object literal (a conditional spread in it is compiled to a slower generic copy).
  const extra = turn as { approvedAction?: ApprovedAction; personAnswer?: PersonAnswer };
  if (live.approvedAction !== undefined) extra.approvedAction = live.approvedAction;
  if (live.personAnswer !== undefined) extra.personAnswer = live.personAnswer;
  return turn as unknown as BridgeTurn;
}

const NO_TOOLS: readonly string[] = Object.freeze([]);

/**
 * The session's earlier conversation, read from the store when asked (see AgentTurn.history). A
 * function bound on first read, so that `const { history } = turn` works too.
 */
const HISTORY_ACCESSOR: PropertyDescriptor = {
  enumerable: true,
  configurable: true,
  get(this: BridgeTurn): AgentTurn['history'] {
    const state = this[TURN_STATE];
    const { live, store } = state;
    return (state.history ??= (limits) => readSessionHistory(store, live.owner, live.task, limits));
  },
};

/** The framed prompt, built on first read (see TurnGrant.prompt). */
const PROMPT_ACCESSOR: PropertyDescriptor = {
  enumerable: true,
  configurable: true,
  get(this: BridgeTurn): TurnPrompt | undefined {
    const state = this[TURN_STATE];
    if (state.prompt === undefined && state.buildPrompt !== undefined) state.prompt = state.buildPrompt();
    return state.prompt;
  },
};

/** The lifecycle event a final status amounts to. */
function outcomeOf(state: TaskState): Exclude<TaskLifecycleEvent['type'], 'submitted'> {
  switch (state) {
    case 'completed':
    case 'input-required':
    case 'rejected':
    case 'canceled':
      return state;
    default:
      return 'failed';
  }
}

function contextKeyOf(owner: string, contextId: string): string {
  return `${owner}\n${contextId}`;
}

function textChars(parts: Message['parts']): number {
  let chars = 0;
  for (const part of parts) if (part.kind === 'text') chars += part.text.length;
  return chars;
}

const partsChars = textChars;

/** Scrubs configured secrets from text, when the turn has a scrubber. */
function scrubText(live: LiveTask, text: string | undefined): string | undefined {
  const scrubber = live.scrubber;
  return scrubber === undefined || text === undefined ? text : scrubber.scrub(text);
}

/** The same parts with every text part scrubbed (other kinds are our own agents' output, kept). */
function scrubParts(live: LiveTask, parts: Message['parts']): Message['parts'] {
  const scrubber = live.scrubber;
  if (scrubber === undefined) return parts;
  return parts.map((part) => (part.kind === 'text' ? { ...part, text: scrubber.scrub(part.text) } : part));
}

/** Resolves once the queued store writes landed; rejects when the newest one failed. */
async function flushed(live: LiveTask): Promise<void> {
  await live.writes;
  if (live.writeFailed) throw live.writeError;
}

/** Aborts the turn: its signal if the backend has one, and every later read of it. */
function abortTurn(live: LiveTask, reason: Error): void {
  if (live.aborted) return;
  live.aborted = true;
  live.abortReason = reason;
  live.controller?.abort(reason);
}

/** The turn's AbortSignal, created on first use (already aborted if the turn was). */
function signalOf(live: LiveTask): AbortSignal {
  let controller = live.controller;
  if (controller === undefined) {
    controller = new AbortController();
    live.controller = controller;
    if (live.aborted) controller.abort(live.abortReason);
  }
  return controller.signal;
}

/** Marks the task paused or ended, and wakes the blocking send that waits for it. */
function pause(live: LiveTask): void {
  live.paused = true;
  const wake = live.onPause;
  if (wake === undefined) return;
  live.onPause = undefined;
  wake();
}

/** Lets the backend run its `finally` blocks; it may already be finished. */
function closeSource(source: TurnSource): void {
  if (source.sync) {
    try {
      source.iterator.return?.();
    } catch {
      /* the turn is over: a failing clean-up changes nothing */
    }
    return;
  }
  void Promise.resolve(source.iterator.return?.()).catch(() => undefined);
}

/** The caller's message as stored: the same fields, with the task and context ids set. */
function withIds(incoming: Message, taskId: string, contextId: string): Message {
  // Field by field: adding keys to a spread (`{ ...incoming, taskId }`) is slow in V8.
  const message: Message = {
    messageId: incoming.messageId,
    role: incoming.role,
    parts: incoming.parts,
    contextId,
    taskId,
  };
  if (incoming.metadata !== undefined) message.metadata = incoming.metadata;
  if (incoming.extensions !== undefined) message.extensions = incoming.extensions;
  if (incoming.referenceTaskIds !== undefined) message.referenceTaskIds = incoming.referenceTaskIds;
  return message;
}

function statusEvent(task: Task, final: boolean): StreamEvent {
  return { kind: 'status-update', taskId: task.id, contextId: task.contextId, status: task.status, final };
}

/** What a task left running by a process that is gone says when it is failed at startup. */
export const RESTART_FAILURE_TEXT = 'The gateway restarted before the task finished; send the message again.';

/**
 * The failed form of a task that a previous process left `submitted` or `working` (restart
 * safety: see TaskStore.failRunning). Its history gains the agent message saying why.
 *
 * @example
 * ```ts
 * await store.failRunning?.((task) => failedByRestart(task));
 * ```
 */
export function failedByRestart(task: Task): Task {
  const message: Message = {
    messageId: newId(),
    role: 'agent',
    parts: [{ kind: 'text', text: RESTART_FAILURE_TEXT }],
    taskId: task.id,
    contextId: task.contextId,
  };
  return { ...task, status: { state: 'failed', timestamp: isoNow(), message }, history: [...task.history, message] };
}

/** historyLength: unset keeps all, 0 drops all, N keeps the N newest. */
export function withHistory(task: Task, historyLength: number | undefined): Task {
  if (historyLength === undefined || task.history.length <= historyLength) return task;
  return { ...task, history: historyLength === 0 ? [] : task.history.slice(-historyLength) };
}

/**
 * What a caller hears when its new task could not be stored. A store that is unavailable is
 * passed on as it is: the server answers it as retryable (see server/rpc.ts and rest/ask.ts).
 */
function storeRefusal(error: unknown): Error {
  if (error instanceof A2AError || isStoreUnavailable(error)) return error;
  return new A2AError('INTERNAL', 'The task could not be stored; try again later');
}

/** A turn is (or should be) running for the task: it has not ended nor paused for its caller. */
function isRunningState(state: TaskState): boolean {
  return !isTerminalState(state) && !isInterruptedState(state);
}

function notCancelable(state: TaskState): A2AError {
  return new A2AError('TASK_NOT_CANCELABLE', `Task cannot be canceled: it is already ${state}`);
}

function terminalSubscribe(): A2AError {
  return new A2AError('UNSUPPORTED_OPERATION', 'Task has already ended; there is nothing to subscribe to');
}

function busy(): A2AError {
  return new A2AError('UNSUPPORTED_OPERATION', 'Task is still running; wait for it to ask for input or end');
}

async function* eventsOf(...events: StreamEvent[]): AsyncIterable<StreamEvent> {
  yield* events;
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
