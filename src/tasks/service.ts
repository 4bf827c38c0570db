/**
 * The task service: owner-scoped tasks, the lifecycle state machine, and the executor bridge
 * that turns a backend's events into task state and stream events. It never sees a dialect,
 * an HTTP request or a token: callers hand it a principal key and an agent, and what their
 * admission granted the turn. This file is the public face; the pieces live in service/.
 *
 * @example
 * ```ts
 * const service = new TaskService({ store: new MemoryTaskStore() });
 * const result = await service.send(caller, { message, configuration: { returnImmediately: false } });
 * ```
 */
import type { AgentEvent } from '../agents/backend.js';
import { A2AError } from '../protocol/errors.js';
import {
  isTerminalState,
  type ListTasksParams,
  type ListTasksResult,
  type SendParams,
  type SendResult,
  type StreamEvent,
  type Task,
} from '../protocol/model.js';
import type { CallContext } from './call-context.js';
import { LocalTaskEventBus, type TaskEventBus } from './events.js';
import { isoNow } from './ids.js';
import { OwnerKeys } from './owners.js';
import { replyChars, type ParkingGate, type TaskObserver, type TurnGrant } from './policy.js';
import { isDirectReply, TurnBridge } from './service/bridge.js';
import { followTask } from './service/follow.js';
import {
  eventsOf,
  isRunningState,
  notCancelable,
  statusEvent,
  storeRefusal,
  terminalSubscribe,
  withHistory,
  withStatus,
} from './service/lifecycle.js';
import { REPLICA_LOST_TEXT, TurnLeaseKeeper, type TurnLeaseOptions } from './service/leases.js';
import { emitOutcome, LiveTasks, type LiveTask } from './service/live.js';
import { describe, type ServiceLogger } from './service/log.js';
import type { ServiceParts } from './service/parts.js';
import { taskCaps, type TaskCaps } from './service/caps.js';
import { Replicas } from './service/replicas.js';
import { findStored, ParkedAnswer, TurnStarter } from './service/start.js';
import { flushed, TaskWrites } from './service/writes.js';
import { deriveSessionId } from './session.js';
import type { TaskStore } from './store.js';

export type { CallContext } from './call-context.js';
export type { ServiceLogger } from './service/log.js';
export { failedByRestart, RESTART_FAILURE_TEXT, withHistory } from './service/lifecycle.js';
export { DEFAULT_TASK_CAPS, type TaskCaps } from './service/caps.js';
export { REPLICA_LOST_TEXT, type TurnLeaseOptions } from './service/leases.js';

/**
 * How a task service is built. Admission is not here: the caller's admission chain grants each
 * turn, and hands the grant to send/stream.
 *
 * @example
 * ```ts
 * const options: TaskServiceOptions = { store, bus, observe: audit.taskObserver(), gate: approvals };
 * ```
 */
export interface TaskServiceOptions {
  store: TaskStore;
  bus?: TaskEventBus;
  logger?: ServiceLogger;
  /** Told of every task's submission and outcome (audit). */
  observe?: TaskObserver;
  /**
   * When `observe` writes its rows in groups (audit group commit): undefined when they are out,
   * else a promise settled once they are. A turn runs only after its submitted row is out; a
   * rejection refuses the turn with that error (nothing runs unaudited).
   */
  observed?: () => Promise<void> | undefined;
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
  /**
   * What one task may keep (defaults: DEFAULT_TASK_CAPS): the newest `maxHistoryMessages`
   * messages of its history, and `maxTaskOutputBytes` of backend output over all its turns (the
   * turn that passes it fails). The gateway passes its config's `limits`.
   */
  limits?: Partial<TaskCaps>;
  /**
   * Turn leases, when several replicas share the store (see service/leases.ts): each running
   * turn holds one, and a task whose replica stopped renewing it is failed by another replica.
   */
  leases?: TurnLeaseOptions;
}

/**
 * SendMessage, SendStreamingMessage, GetTask, ListTasks, CancelTask and SubscribeToTask for
 * the caller's own tasks.
 *
 * @example
 * ```ts
 * const service = new TaskService({ store });
 * const stream = await service.stream(ctx, params, grant); // grant: from the admission chain
 * ```
 */
export class TaskService {
  readonly #parts: ServiceParts;
  readonly #owners = new OwnerKeys();
  readonly #starter: TurnStarter;
  readonly #bridge: TurnBridge;
  readonly #replicas: Replicas;
  /** Stops listening for other replicas' cancel requests. */
  readonly #stopCancelRequests: (() => void) | undefined;
  /** This replica's turn leases, with a shared store. */
  readonly #leases: TurnLeaseKeeper | undefined;

  constructor(options: TaskServiceOptions) {
    const store = options.store;
    const log = options.logger ?? (() => undefined);
    const now = options.now;
    const live = new LiveTasks();
    this.#parts = {
      store,
      bus: options.bus ?? new LocalTaskEventBus(),
      log,
      observe: options.observe,
      observed: options.observed,
      gate: options.gate,
      timestamp: now === undefined ? isoNow : () => now().toISOString(),
      live,
      writes: new TaskWrites(store, live, log),
      caps: taskCaps(options.limits),
    };
    this.#starter = new TurnStarter(this.#parts);
    this.#bridge = new TurnBridge(this.#parts);
    this.#replicas = new Replicas(this.#parts, {
      pollMs: options.remoteTaskPollMs ?? 1_000,
      cancelWaitMs: options.remoteCancelWaitMs ?? 2_000,
    });
    this.#stopCancelRequests = this.#parts.bus.onCancelRequest?.((taskId) => this.#cancelRequested(taskId));
    if (options.leases !== undefined) {
      // Another replica failed the task while this one stood still: the turn stops here too.
      const stopLost = (lost: LiveTask): void =>
        this.#bridge.stop(lost, new Error('turn lease lost'), 'failed', REPLICA_LOST_TEXT, 'replica_lost');
      this.#leases = new TurnLeaseKeeper(this.#parts, options.leases, stopLost);
      live.listener = this.#leases;
      this.#leases.start();
    }
  }

  /** This replica's turn leases (tests): their id and a sweep on demand. */
  get leases(): TurnLeaseKeeper | undefined {
    return this.#leases;
  }

  /**
   * SendMessage: starts or resumes a task; blocks until terminal or interrupted unless told not
   * to. `grant` is what the caller's admission granted the turn (given back once the turn ends
   * or cannot start); none = admitted as is.
   */
  send(ctx: CallContext, params: SendParams, grant?: TurnGrant): Promise<SendResult> {
    const resuming = params.message.taskId !== undefined;
    const sent =
      ctx.backend.runSync !== undefined && !params.configuration.returnImmediately
        ? this.#sendReady(ctx, params, resuming, grant)
        : this.#sendTurn(ctx, params, resuming, grant);
    if (!resuming || this.#parts.gate === undefined) return sent;
    return sent.catch(async (error: unknown) => {
      if (!(error instanceof ParkedAnswer)) throw error;
      // A blocking send waits for a turn the gateway resumed, as it waits for its own.
      const task =
        error.moving && !params.configuration.returnImmediately
          ? await this.#pausedTask(this.#owners.of(ctx), error.task)
          : error.task;
      return { kind: 'task', task: withHistory(task, params.configuration.historyLength) };
    });
  }

  async #sendTurn(ctx: CallContext, params: SendParams, resuming: boolean, grant?: TurnGrant): Promise<SendResult> {
    const live = await this.#starter.start(ctx, this.#owners.of(ctx), params.message, resuming, true, grant);
    const source = this.#bridge.open(live, resuming);
    const historyLength = params.configuration.historyLength;
    if (params.configuration.returnImmediately) {
      await this.#bridge.acknowledge(live);
      const snapshot = live.task;
      void this.#bridge.drive(live, undefined);
      return { kind: 'task', task: withHistory(snapshot, historyLength) };
    }
    const pulled = this.#bridge.first(live, source);
    const first = pulled instanceof Promise ? await pulled : pulled;
    if (!resuming && isDirectReply(first)) {
      return { kind: 'message', message: this.#bridge.directReply(live, source, first) };
    }
    await this.#bridge.acknowledge(live);
    void this.#bridge.drive(live, first);
    if (!live.paused) {
      await new Promise<void>((resolve) => {
        live.onPause = resolve;
      });
    }
    await flushed(live);
    return { kind: 'task', task: withHistory(live.task, historyLength) };
  }

  /** The task once the turn running it here pauses or ends (at once if it already has). */
  async #pausedTask(owner: string, snapshot: Task): Promise<Task> {
    const stream = followTask(this.#parts.bus, this.#replicas, snapshot.id, 'pause');
    const events = stream.events[Symbol.asyncIterator]();
    // Subscribed first, then looked: a turn that paused in between is simply not live any more.
    const live = this.#parts.live.for(owner, snapshot.id);
    if (live === undefined) {
      await events.return?.();
      return (await findStored(this.#parts, owner, snapshot.id)) ?? snapshot;
    }
    while (!(await events.next()).done);
    await flushed(live).catch(() => undefined);
    return live.task;
  }

  /**
   * A blocking send to a backend whose events are all ready (`runSync`). Its turn runs to its
   * outcome in one synchronous step, so no other request can see the task before it pauses or
   * ends. The task is therefore stored once, in the state it reached, and that write is made
   * before the caller hears of the task and refused exactly as acknowledge refuses: the task
   * is still stored before it is acknowledged. A new task is not even listed as running (nobody
   * can know its id yet); a resumed one is, so that a concurrent resume is refused as busy.
   */
  async #sendReady(ctx: CallContext, params: SendParams, resuming: boolean, grant?: TurnGrant): Promise<SendResult> {
    const live = await this.#starter.start(ctx, this.#owners.of(ctx), params.message, resuming, false, grant);
    // open takes `runSync` whenever the backend has it: the source and its first event are synchronous.
    const source = this.#bridge.open(live, resuming);
    const first = this.#bridge.first(live, source) as IteratorResult<AgentEvent>;
    if (!resuming && isDirectReply(first)) {
      return { kind: 'message', message: this.#bridge.directReply(live, source, first) };
    }
    // The turn's one write, made below: every change until then rides along with it.
    live.writeQueued = true;
    const recording = this.#bridge.drive(live, first);
    // Only a turn that proposed an action a durable store records first is not over yet.
    if (recording !== undefined) await recording;
    live.writeQueued = false;
    try {
      await this.#parts.writes.putNewest(live);
    } catch (error) {
      emitOutcome(this.#parts.observe, live, 'failed', 'internal_error', true);
      throw storeRefusal(error);
    }
    return { kind: 'task', task: withHistory(live.task, params.configuration.historyLength) };
  }

  /**
   * SendStreamingMessage: the Task first (or a single Message), then its updates until it
   * pauses or ends. `grant` as for send.
   */
  async stream(ctx: CallContext, params: SendParams, grant?: TurnGrant): Promise<AsyncIterable<StreamEvent>> {
    // Streams always follow the turn: returnImmediately has no meaning here (§3.2.2).
    const incoming = params.message;
    const resuming = incoming.taskId !== undefined;
    let live: LiveTask;
    try {
      live = await this.#starter.start(ctx, this.#owners.of(ctx), incoming, resuming, true, grant);
    } catch (error) {
      if (error instanceof ParkedAnswer) return eventsOf({ kind: 'task', task: error.task });
      throw error;
    }
    const source = this.#bridge.open(live, resuming);
    const pulled = this.#bridge.first(live, source);
    const first = pulled instanceof Promise ? await pulled : pulled;
    if (!resuming && isDirectReply(first)) {
      return eventsOf({ kind: 'message', message: this.#bridge.directReply(live, source, first) });
    }
    await this.#bridge.acknowledge(live);
    const queue = followTask(this.#parts.bus, this.#replicas, live.task.id);
    queue.first({ kind: 'task', task: withHistory(live.task, params.configuration.historyLength) });
    void this.#bridge.drive(live, first);
    return queue.events;
  }

  /**
   * Resumes a task parked on the person once the person decided: the gateway starts the turn,
   * not a message of the caller, with what `grant` gives it (the caller's turns' tools and
   * scrubbing, a concurrency slot). The caller sees the task move on through GetTask,
   * SubscribeToTask or a stream. Resolves with the task as the turn starts, or as the decision
   * left it (failed by a denial, or still parked); rejects as a resume would (busy: the caller's
   * own message got there first; not found).
   *
   * @example
   * ```ts
   * await service.resumeDecided(ctx, taskId, grant); // after desk.decide(…, 'approve')
   * ```
   */
  async resumeDecided(ctx: CallContext, taskId: string, grant: TurnGrant): Promise<Task> {
    let live: LiveTask;
    try {
      live = await this.#starter.resumeDecided(ctx, this.#owners.of(ctx), taskId, grant);
    } catch (error) {
      if (error instanceof ParkedAnswer) return error.task;
      throw error;
    }
    this.#bridge.open(live, true);
    await this.#bridge.acknowledge(live);
    void this.#bridge.drive(live, undefined);
    return live.task;
  }

  /** GetTask. Another owner's task is answered exactly like a missing one. */
  async get(ctx: CallContext, id: string, historyLength?: number): Promise<Task> {
    const task = await findStored(this.#parts, this.#owners.of(ctx), id);
    if (task === undefined) throw new A2AError('TASK_NOT_FOUND');
    return withHistory(task, historyLength);
  }

  /** ListTasks, newest first, only the caller's own tasks. */
  async list(ctx: CallContext, params: ListTasksParams): Promise<ListTasksResult> {
    const page = await this.#parts.store.list(this.#owners.of(ctx), {
      pageSize: params.pageSize,
      ...(params.contextId !== undefined && { contextId: params.contextId }),
      ...(params.status !== undefined && { status: params.status }),
      ...(params.pageToken !== undefined && { pageToken: params.pageToken }),
      ...(params.statusTimestampAfter !== undefined && { statusTimestampAfter: params.statusTimestampAfter }),
    });
    const tasks = page.tasks.map((stored) => {
      const task = this.#parts.live.get(stored.id)?.task ?? stored;
      const trimmed = withHistory(task, params.historyLength);
      return params.includeArtifacts ? trimmed : { ...trimmed, artifacts: [] };
    });
    return { tasks, nextPageToken: page.nextPageToken, pageSize: params.pageSize, totalSize: page.totalSize };
  }

  /** CancelTask: aborts the running turn; -32002 for a task that already ended. */
  async cancel(ctx: CallContext, id: string): Promise<Task> {
    const owner = this.#owners.of(ctx);
    const registry = this.#parts.live;
    let live = registry.for(owner, id);
    if (live === undefined) {
      let stored = await findStored(this.#parts, owner, id);
      if (stored === undefined) throw new A2AError('TASK_NOT_FOUND');
      // A resume may have started while we read the store.
      live = registry.for(owner, id);
      if (live === undefined && this.#replicas.shared && isRunningState(stored.status.state)) {
        // Its turn may run on another replica: that one cancels it, as a local cancel would.
        const elsewhere = await this.#replicas.cancelElsewhere(owner, stored);
        if (elsewhere.canceled) return elsewhere.task;
        // Nobody answered (the replica running it is gone) or the turn paused: decided here.
        stored = elsewhere.task;
        live = registry.for(owner, id);
      }
      if (live === undefined) return this.#cancelStored(ctx, owner, stored);
    }
    if (isTerminalState(live.task.status.state)) throw notCancelable(live.task.status.state);
    return this.#cancelLive(live);
  }

  /** Cancels a task no turn runs for (interrupted, or left running by a replica that is gone). */
  async #cancelStored(ctx: CallContext, owner: string, stored: Task): Promise<Task> {
    if (isTerminalState(stored.status.state)) throw notCancelable(stored.status.state);
    const { store, bus, observe, gate } = this.#parts;
    const canceled = withStatus(stored, 'canceled', this.#parts.timestamp());
    await store.put(owner, canceled);
    bus.publish(stored.id, statusEvent(canceled, true));
    observe?.({
      type: 'canceled',
      ctx,
      taskId: stored.id,
      contextId: canceled.contextId,
      inputChars: 0,
      outputChars: replyChars(canceled),
      reason: 'canceled_by_client',
    });
    this.#releaseInterrupted(ctx, canceled);
    gate?.withdraw(owner, stored.id);
    return canceled;
  }

  /** Cancels a turn running here: CancelTask on this replica, or a cancel request from another. */
  async #cancelLive(live: LiveTask): Promise<Task> {
    this.#bridge.stop(live, new Error('task canceled'), 'canceled', undefined, 'canceled_by_client');
    await flushed(live);
    return live.task;
  }

  /** Another replica asks to cancel a task: done if its turn runs here, else not our business. */
  #cancelRequested(taskId: string): void {
    const live = this.#parts.live.get(taskId);
    if (live === undefined || isTerminalState(live.task.status.state)) return;
    this.#cancelLive(live).catch((error: unknown) => {
      this.#parts.log('error', 'task_store_write_failed', { taskId, error: describe(error) });
    });
  }

  /** Tells the backend a waiting task it may hold something for is canceled (see cancelInterrupted). */
  #releaseInterrupted(ctx: CallContext, task: Task): void {
    const backend = ctx.backend;
    if (backend.cancelInterrupted === undefined) return;
    const sessionId = deriveSessionId(ctx.principalKey, ctx.agentSlug, task.contextId);
    backend.cancelInterrupted({ sessionId, taskId: task.id }).catch((error: unknown) => {
      this.#parts.log('warn', 'backend_cancel_failed', { taskId: task.id, error: describe(error) });
    });
  }

  /**
   * SubscribeToTask: a snapshot first, then every update until the task ends: unlike a
   * send's stream, a subscription stays open across input-required and the turn that
   * answers it. -32004 for a task that already ended.
   */
  async subscribe(ctx: CallContext, id: string): Promise<AsyncIterable<StreamEvent>> {
    const owner = this.#owners.of(ctx);
    const registry = this.#parts.live;
    let task = registry.for(owner, id)?.task;
    if (task === undefined) {
      task = await findStored(this.#parts, owner, id);
      if (task === undefined) throw new A2AError('TASK_NOT_FOUND');
    }
    if (isTerminalState(task.status.state)) throw terminalSubscribe();
    // A task not running here may run on another replica: its events come over the shared bus,
    // and the store is watched in case the bus loses the last one.
    const remote = this.#replicas.shared && registry.for(owner, id) === undefined;
    const queue = followTask(this.#parts.bus, this.#replicas, id, 'terminal', remote ? owner : undefined);
    // A turn may have moved on while the store was read: the newest state is the snapshot.
    queue.first({ kind: 'task', task: registry.for(owner, id)?.task ?? task });
    return queue.events;
  }

  /** Aborts every running turn (shutdown). */
  async close(): Promise<void> {
    this.#parts.writes.close();
    this.#stopCancelRequests?.();
    const registry = this.#parts.live;
    const pending: Promise<void>[] = [];
    for (const live of [...registry.values()]) {
      const text = 'The gateway shut down before the task finished.';
      this.#bridge.stop(live, new Error('gateway shutting down'), 'failed', text, 'shutdown');
      pending.push(flushed(live));
    }
    registry.clear();
    await Promise.allSettled(pending);
    // After the turns: their leases are released once their last writes landed.
    await this.#leases?.close();
  }

  /** How many turns run right now (for limits and tests). */
  get running(): number {
    return this.#parts.live.size;
  }
}
