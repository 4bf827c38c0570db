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
import { randomUUID } from 'node:crypto';
import type { AgentBackend, AgentEvent, AgentTurn } from '../agents/backend.js';
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
import { LocalTaskEventBus, type TaskEventBus } from './events.js';
import { EventQueue } from './queue.js';
import { deriveSessionId, OUTBOUND_ID_PREFIX } from './session.js';
import type { TaskStore } from './store.js';

/** Who is calling which agent. The owner of every task is derived from both. */
export interface CallContext {
  /** The caller's principal key (`kind:client:actingAgent:subject`). */
  principalKey: string;
  /** The published agent the call was addressed to. */
  agentSlug: string;
  backend: AgentBackend;
}

/** Structured log sink; the service reports backend failures here, never to callers. */
export type ServiceLogger = (level: 'warn' | 'error', event: string, fields: Record<string, unknown>) => void;

export interface TaskServiceOptions {
  store: TaskStore;
  bus?: TaskEventBus;
  logger?: ServiceLogger;
  /** For tests. */
  now?: () => Date;
}

/** A task with a turn running in this process. `task` is always the newest state. */
interface LiveTask {
  owner: string;
  task: Task;
  controller: AbortController;
  /** Store writes, chained so they land in order. Rejects while the newest write failed. */
  writes: Promise<void>;
  /** A write is queued and has not started: it will take whatever `task` is then. */
  writeQueued: boolean;
  /** The id of the artifact text chunks go to, once the first chunk arrived. */
  replyArtifactId?: string;
}

const MAX_CONTEXT_ID = 256;

export class TaskService {
  readonly #store: TaskStore;
  readonly #bus: TaskEventBus;
  readonly #log: ServiceLogger;
  readonly #now: () => Date;
  readonly #live = new Map<string, LiveTask>();

  constructor(options: TaskServiceOptions) {
    this.#store = options.store;
    this.#bus = options.bus ?? new LocalTaskEventBus();
    this.#log = options.logger ?? (() => undefined);
    this.#now = options.now ?? (() => new Date());
  }

  /** SendMessage: starts or resumes a task; blocks until terminal or interrupted unless told not to. */
  async send(ctx: CallContext, params: SendParams): Promise<SendResult> {
    const started = await this.#start(ctx, params);
    if (started.kind === 'message') return started;
    const { live, first } = started;
    const historyLength = params.configuration.historyLength;
    if (params.configuration.returnImmediately) {
      const snapshot = live.task;
      void this.#drive(live, first, ctx);
      return { kind: 'task', task: withHistory(snapshot, historyLength) };
    }
    const settled = this.#waitForPause(live);
    void this.#drive(live, first, ctx);
    await settled;
    await live.writes;
    return { kind: 'task', task: withHistory(live.task, historyLength) };
  }

  /** SendStreamingMessage: the Task first (or a single Message), then its updates until it pauses or ends. */
  async stream(ctx: CallContext, params: SendParams): Promise<AsyncIterable<StreamEvent>> {
    // Streams always follow the turn: returnImmediately has no meaning here (§3.2.2).
    const started = await this.#start(ctx, {
      ...params,
      configuration: { ...params.configuration, returnImmediately: false },
    });
    if (started.kind === 'message') return eventsOf({ kind: 'message', message: started.message });
    const { live, first } = started;
    const queue = this.#follow(live.task.id);
    queue.first({ kind: 'task', task: withHistory(live.task, params.configuration.historyLength) });
    void this.#drive(live, first, ctx);
    return queue.events;
  }

  /** GetTask. Another owner's task is answered exactly like a missing one. */
  async get(ctx: CallContext, id: string, historyLength?: number): Promise<Task> {
    const task = await this.#find(ownerOf(ctx), id);
    if (task === undefined) throw new A2AError('TASK_NOT_FOUND');
    return withHistory(task, historyLength);
  }

  /** ListTasks, newest first, only the caller's own tasks. */
  async list(ctx: CallContext, params: ListTasksParams): Promise<ListTasksResult> {
    const page = await this.#store.list(ownerOf(ctx), {
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
    const owner = ownerOf(ctx);
    let live = this.#liveFor(owner, id);
    if (live === undefined) {
      const stored = await this.#find(owner, id);
      if (stored === undefined) throw new A2AError('TASK_NOT_FOUND');
      // A resume may have started while we read the store.
      live = this.#liveFor(owner, id);
      if (live === undefined) {
        if (isTerminalState(stored.status.state)) throw notCancelable(stored.status.state);
        const canceled = this.#withStatus(stored, 'canceled');
        await this.#store.put(owner, canceled);
        this.#bus.publish(id, statusEvent(canceled, true));
        return canceled;
      }
    }
    if (isTerminalState(live.task.status.state)) throw notCancelable(live.task.status.state);
    live.controller.abort(new Error('task canceled'));
    this.#commit(live, this.#withStatus(live.task, 'canceled'));
    this.#bus.publish(id, statusEvent(live.task, true));
    this.#release(live);
    await live.writes;
    return live.task;
  }

  /**
   * SubscribeToTask: a snapshot first, then every update until the task ends: unlike a
   * send's stream, a subscription stays open across input-required and the turn that
   * answers it. -32004 for a task that already ended.
   */
  async subscribe(ctx: CallContext, id: string): Promise<AsyncIterable<StreamEvent>> {
    const owner = ownerOf(ctx);
    let task = this.#liveFor(owner, id)?.task;
    if (task === undefined) {
      task = await this.#find(owner, id);
      if (task === undefined) throw new A2AError('TASK_NOT_FOUND');
    }
    if (isTerminalState(task.status.state)) throw terminalSubscribe();
    const queue = this.#follow(id, 'terminal');
    // A turn may have moved on while the store was read: the newest state is the snapshot.
    queue.first({ kind: 'task', task: this.#liveFor(owner, id)?.task ?? task });
    return queue.events;
  }

  /** Aborts every running turn (shutdown). */
  async close(): Promise<void> {
    const pending: Promise<void>[] = [];
    for (const live of this.#live.values()) {
      live.controller.abort(new Error('gateway shutting down'));
      this.#commit(live, this.#withStatus(live.task, 'failed', 'The gateway shut down before the task finished.'));
      this.#bus.publish(live.task.id, statusEvent(live.task, true));
      pending.push(live.writes);
    }
    this.#live.clear();
    await Promise.allSettled(pending);
  }

  /** How many turns run right now (for limits and tests). */
  get running(): number {
    return this.#live.size;
  }

  // -------------------------------------------------------------------------------------------

  /**
   * Creates or resumes the task and pulls the backend's first event, so that a direct
   * Message reply can be returned without ever creating a task.
   */
  async #start(
    ctx: CallContext,
    params: SendParams,
  ): Promise<
    | { kind: 'message'; message: Message }
    | { kind: 'task'; live: LiveTask; first: IteratorResult<AgentEvent> | undefined }
  > {
    const owner = ownerOf(ctx);
    const incoming = params.message;
    const resuming = incoming.taskId !== undefined;
    const live = resuming ? await this.#resume(owner, incoming) : this.#create(owner, incoming);
    const task = live.task;
    const userMessage = task.history[task.history.length - 1] as Message;
    let sessionId: string | undefined;
    const turn: AgentTurn = {
      // Derived on first use: most turns of simple backends never ask for it.
      get sessionId() {
        return (sessionId ??= deriveSessionId(ctx.principalKey, ctx.agentSlug, task.contextId));
      },
      taskId: task.id,
      contextId: task.contextId,
      message: userMessage,
      task,
      resumed: resuming,
      signal: live.controller.signal,
    };
    const iterator = ctx.backend.run(turn)[Symbol.asyncIterator]();
    liveIterators.set(live, iterator);

    if (params.configuration.returnImmediately) {
      await this.#acknowledge(live, iterator);
      return { kind: 'task', live, first: undefined };
    }
    let first: IteratorResult<AgentEvent>;
    try {
      first = await iterator.next();
    } catch (error) {
      this.#logBackendError(ctx, task.id, error);
      first = { done: false, value: { type: 'failed', reason: 'The agent failed to process the message.' } };
    }
    if (!first.done && first.value.type === 'message' && !resuming) {
      this.#release(live);
      void iterator.return?.();
      return {
        kind: 'message',
        message: {
          messageId: randomUUID(),
          role: 'agent',
          parts: first.value.parts,
          contextId: task.contextId,
        },
      };
    }
    await this.#acknowledge(live, iterator);
    return { kind: 'task', live, first };
  }

  /**
   * Stores the task before anyone hears of it. If the store refuses (full, or down), the
   * turn is abandoned and the caller gets the store's error instead of a task id that
   * leads nowhere.
   */
  async #acknowledge(live: LiveTask, iterator: AsyncIterator<AgentEvent>): Promise<void> {
    this.#commit(live, live.task);
    try {
      await live.writes;
    } catch (error) {
      live.controller.abort(new Error('task could not be stored'));
      this.#release(live);
      liveIterators.delete(live);
      void Promise.resolve(iterator.return?.()).catch(() => undefined);
      throw error instanceof A2AError
        ? error
        : new A2AError('INTERNAL', 'The task could not be stored; try again later');
    }
  }

  #create(owner: string, incoming: Message): LiveTask {
    const contextId = incoming.contextId ?? randomUUID();
    if (contextId.length > MAX_CONTEXT_ID)
      throw new A2AError('INVALID_PARAMS', 'Invalid params: contextId is too long');
    const id = randomUUID();
    const message: Message = { ...incoming, taskId: id, contextId };
    const task: Task = {
      id,
      contextId,
      status: { state: 'submitted', timestamp: this.#now().toISOString() },
      artifacts: [],
      history: [message],
    };
    return this.#register(owner, task);
  }

  async #resume(owner: string, incoming: Message): Promise<LiveTask> {
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
    const message: Message = { ...incoming, taskId: id, contextId: stored.contextId };
    const resumed: Task = {
      ...stored,
      history: [...stored.history, message],
      status: { state: 'working', timestamp: this.#now().toISOString() },
    };
    return this.#register(owner, resumed);
  }

  #register(owner: string, task: Task): LiveTask {
    const live: LiveTask = {
      owner,
      task,
      controller: new AbortController(),
      writes: Promise.resolve(),
      writeQueued: false,
    };
    this.#live.set(task.id, live);
    return live;
  }

  #release(live: LiveTask): void {
    if (this.#live.get(live.task.id) === live) this.#live.delete(live.task.id);
  }

  /** Runs the turn to its outcome. Never throws: failures become a failed task. */
  async #drive(live: LiveTask, first: IteratorResult<AgentEvent> | undefined, ctx: CallContext): Promise<void> {
    const iterator = liveIterators.get(live);
    if (iterator === undefined) return;
    const signal = live.controller.signal;
    try {
      if (live.task.status.state !== 'working') this.#transition(live, 'working');
      let next = first ?? (await iterator.next());
      while (!signal.aborted) {
        if (next.done === true) {
          this.#finish(live, 'failed', 'The agent ended its turn without a result.');
          break;
        }
        if (this.#apply(live, next.value)) break;
        next = await iterator.next();
      }
    } catch (error) {
      if (!signal.aborted) {
        this.#logBackendError(ctx, live.task.id, error);
        this.#finish(live, 'failed', 'The agent failed to process the message.');
      }
    } finally {
      this.#release(live);
      liveIterators.delete(live);
      live.writes.catch((error: unknown) => {
        this.#log('error', 'task_store_write_failed', { taskId: live.task.id, error: describe(error) });
      });
      // Let the generator run its `finally` blocks; it may already be finished.
      void Promise.resolve(iterator.return?.()).catch(() => undefined);
    }
  }

  /** Applies one backend event. Returns true when the turn reached its outcome. */
  #apply(live: LiveTask, event: AgentEvent): boolean {
    switch (event.type) {
      case 'working':
        this.#transition(live, 'working', event.text);
        return false;
      case 'text':
        this.#appendText(live, event.text, event.last === true);
        return false;
      case 'artifact': {
        const artifact: Artifact = { ...event.artifact, artifactId: event.artifact.artifactId ?? randomUUID() };
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
        this.#finish(live, 'completed', undefined, event.parts);
        return true;
      case 'completed':
        this.#finish(live, 'completed', event.text);
        return true;
      case 'input-required':
        this.#finish(live, 'input-required', event.question);
        return true;
      case 'rejected':
        this.#finish(live, 'rejected', event.reason);
        return true;
      case 'failed':
        this.#finish(live, 'failed', event.reason);
        return true;
    }
  }

  /** Text chunks go to one reply artifact: the first creates it, the rest append. */
  #appendText(live: LiveTask, text: string, last: boolean): void {
    const task = live.task;
    let artifactId = live.replyArtifactId;
    let artifacts: Artifact[];
    let append: boolean;
    if (artifactId === undefined) {
      artifactId = randomUUID();
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
  #finish(live: LiveTask, state: TaskState, text?: string, parts?: Message['parts']): void {
    this.#commit(live, this.#withStatus(live.task, state, text, parts));
    this.#bus.publish(live.task.id, statusEvent(live.task, true));
  }

  #withStatus(task: Task, state: TaskState, text?: string, parts?: Message['parts']): Task {
    const status: TaskStatus = { state, timestamp: this.#now().toISOString() };
    let history = task.history;
    const replyParts = parts ?? (text !== undefined && text.length > 0 ? [{ kind: 'text' as const, text }] : undefined);
    if (replyParts !== undefined) {
      const message: Message = {
        messageId: randomUUID(),
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
    const write = (): Promise<void> => {
      live.writeQueued = false;
      return this.#store.put(live.owner, live.task);
    };
    live.writes = live.writes.then(write, write);
    // Observed by whoever awaits `writes`; this only keeps a failure from going unhandled.
    live.writes.catch(() => undefined);
  }

  /** Resolves when the live task reaches a terminal or interrupted state. */
  #waitForPause(live: LiveTask): Promise<void> {
    return new Promise((resolve) => {
      const stop = this.#bus.subscribe(live.task.id, (event) => {
        if (event.kind === 'status-update' && event.final) {
          stop();
          resolve();
        }
      });
    });
  }

  /**
   * A stream of a task's events. It ends after the turn's final status event (`'pause'`: a
   * send's stream) or only once the task is terminal (`'terminal'`: a subscription, where an
   * interrupted state is not the end, so its `final` flag is cleared).
   */
  #follow(
    taskId: string,
    until: 'pause' | 'terminal' = 'pause',
  ): { first: (event: StreamEvent) => void; events: AsyncIterable<StreamEvent> } {
    const queue = new EventQueue<StreamEvent>();
    const stop = this.#bus.subscribe(taskId, (event) => {
      if (event.kind !== 'status-update') {
        queue.push(event);
        return;
      }
      const ends = until === 'pause' ? event.final : isTerminalState(event.status.state);
      queue.push(ends === event.final ? event : { ...event, final: ends });
      if (ends) {
        stop();
        queue.end();
      }
    });
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

/** Iterators of live turns, kept out of `LiveTask` so the task record stays plain data. */
const liveIterators = new WeakMap<LiveTask, AsyncIterator<AgentEvent>>();

/** Tasks belong to a principal at one agent: the same client sees separate task lists per agent. */
function ownerOf(ctx: CallContext): string {
  return `${ctx.principalKey}@${ctx.agentSlug}`;
}

function statusEvent(task: Task, final: boolean): StreamEvent {
  return { kind: 'status-update', taskId: task.id, contextId: task.contextId, status: task.status, final };
}

/** historyLength: unset keeps all, 0 drops all, N keeps the N newest. */
export function withHistory(task: Task, historyLength: number | undefined): Task {
  if (historyLength === undefined || task.history.length <= historyLength) return task;
  return { ...task, history: historyLength === 0 ? [] : task.history.slice(-historyLength) };
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
