/**
 * The live-task registry: the tasks whose turn runs in this process, and the contexts they
 * hold (one running task per owner and contextId). A `LiveTask` is one mutable record per
 * turn; its fields are grouped by who reads them (the write queue, the abort signal, the reply
 * text), as interfaces rather than sub-objects: a send makes one record, not four.
 *
 * @example
 * ```ts
 * const registry = new LiveTasks();
 * const live = registry.register(owner, ctx, task, true, grant, message);
 * registry.release(live); // leaves the live set, frees its context, gives back its grant
 * ```
 */
import type { AgentEvent, ApprovedAction, DeniedAction, PersonAnswer } from '../../agents/backend.js';
import { A2AError } from '../../protocol/errors.js';
import type { Message, Task } from '../../protocol/model.js';
import type { CallContext } from '../call-context.js';
import {
  replyChars,
  type ReplyScrubber,
  type TaskLifecycleEvent,
  type TaskObserver,
  type TaskOutcomeReason,
  type TurnGrant,
} from '../policy.js';
import { textChars } from './lifecycle.js';

/**
 * A backend's events: pulled synchronously when the backend offers them that way (`runSync`).
 *
 * @example
 * ```ts
 * const source: TurnSource = { sync: true, iterator: backend.runSync(turn)[Symbol.iterator]() };
 * ```
 */
export type TurnSource =
  { sync: true; iterator: Iterator<AgentEvent> } | { sync: false; iterator: AsyncIterator<AgentEvent> };

/**
 * What the per-task write queue keeps on a live task (see TaskWrites).
 *
 * @example
 * ```ts
 * await live.writes;
 * if (live.writeFailed) throw live.writeError;
 * ```
 */
export interface QueuedWrites {
  readonly owner: string;
  /** Always the newest state. */
  task: Task;
  /** Store writes, chained so they land in order. Never rejects: see `writeFailed`. */
  writes: Promise<void>;
  /** A write is queued and has not started: it will take whatever `task` is then. */
  writeQueued: boolean;
  /** The newest finished write failed; cleared by the next write that succeeds. */
  writeFailed: boolean;
  /** What the failed write threw. */
  writeError: unknown;
  /** The task is in the store (a resumed one, or a new one after its first put). */
  stored: boolean;
}

/**
 * How a turn is aborted (see abortTurn, signalOf).
 *
 * @example
 * ```ts
 * if (live.aborted) return;
 * ```
 */
export interface TurnAbort {
  /**
   * Created on demand: when the backend first reads `turn.signal`, or when the turn is aborted.
   * Most turns never look at their signal, and an AbortSignal is costly to create.
   */
  controller: AbortController | undefined;
  /** True once the turn was aborted (canceled, not stored, shut down); never goes back. */
  aborted: boolean;
  /** The reason the turn was aborted with, for a signal created after the abort. */
  abortReason: Error | undefined;
}

/**
 * The reply text of a turn (see reply.ts).
 *
 * @example
 * ```ts
 * const text = live.scrubber?.scrub(reply) ?? reply;
 * ```
 */
export interface ReplyState {
  /** Removes configured secrets from reply text (kept after the grant is given back). */
  readonly scrubber: ReplyScrubber | undefined;
  /** The reply being streamed through the scrubber, once the first chunk arrived. */
  scrubStream: ReturnType<ReplyScrubber['stream']> | undefined;
  /** The id of the artifact text chunks go to, once the first chunk arrived. */
  replyArtifactId?: string;
  /** Bytes of backend output the task keeps so far, all its turns (see caps.ts); unset = 0. */
  outputBytes?: number;
}

/**
 * A task with a turn running in this process. `task` is always the newest state.
 *
 * @example
 * ```ts
 * const live = registry.for(owner, taskId);
 * if (live !== undefined) return live.task;
 * ```
 */
export interface LiveTask extends QueuedWrites, TurnAbort, ReplyState {
  readonly ctx: CallContext;
  /** What admission granted the turn; undefined once given back. */
  grant: TurnGrant | undefined;
  /** Characters of the caller's message (audit). */
  readonly inputChars: number;
  /** Key in the registry's running-contexts map, when this turn holds its context. */
  contextKey: string | undefined;
  /** The submitted row was written, and no outcome row yet. */
  observed: boolean;
  /** The turn's events, once the backend was asked for them. */
  source: TurnSource | undefined;
  /** The task reached a terminal or interrupted state (its final status event was published). */
  paused: boolean;
  /** Wakes a blocking send waiting for `paused`. */
  onPause: (() => void) | undefined;
  /** The action this turn may take (approved by the person, or allowed by the ladder). */
  approvedAction?: ApprovedAction;
  /** The action the person denied (or that expired), for the turn that goes on without it. */
  deniedAction?: DeniedAction;
  /** The turn's message when the gateway resumed the task (no new message): the caller's last one. */
  turnMessage?: Message;
  /** The person's answer to a remote agent's question, for the turn that resumes with it. */
  personAnswer?: PersonAnswer;
  /** An allowed action the next turn starts with, at once (set by the bridge's apply, read by its drive loop). */
  continueWith?: ApprovedAction;
  /** Actions allowed without asking in this turn so far (bounded: see MAX_ALLOWED_ACTIONS). */
  allowedActions?: number;
}

/**
 * The writes of a live task that never queued one. Shared: only compared and awaited.
 *
 * @example
 * ```ts
 * if (live.writes === NO_WRITES) return; // nothing was ever written for this turn
 * ```
 */
export const NO_WRITES: Promise<void> = Promise.resolve();

/**
 * Told when a turn starts running in this process and when it stops (turn leases, see
 * service/leases.ts): only turns listed as running, once each.
 *
 * @example
 * ```ts
 * registry.listener = { started: (live) => take(live.task.id), ended: (live) => release(live.task.id) };
 * ```
 */
export interface LiveTurnListener {
  started(live: LiveTask): void;
  ended(live: LiveTask): void;
}

/**
 * The turns running in this process, by task id and by owner and context.
 *
 * @example
 * ```ts
 * registry.checkContextFree(owner, contextId); // -32004 when another turn runs there
 * ```
 */
export class LiveTasks {
  readonly #live = new Map<string, LiveTask>();
  /** Running turns by owner and contextId: one running task per context. */
  readonly #runningContexts = new Map<string, LiveTask>();
  /** Told of turns starting and stopping here (set once, by the service). */
  listener: LiveTurnListener | undefined;

  /** How many turns run right now. */
  get size(): number {
    return this.#live.size;
  }

  /** The live task of any owner (replica requests, write retries). */
  get(taskId: string): LiveTask | undefined {
    return this.#live.get(taskId);
  }

  /** The live task, if `owner` owns it: another owner's is not there. */
  for(owner: string, taskId: string): LiveTask | undefined {
    const live = this.#live.get(taskId);
    return live !== undefined && live.owner === owner ? live : undefined;
  }

  /** Every live task (shutdown). */
  values(): IterableIterator<LiveTask> {
    return this.#live.values();
  }

  /**
   * The record of a turn about to run; `track` lists it as running and makes it hold its
   * context (a blocking send to a `runSync` backend need not: see TaskService#sendReady).
   */
  register(
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
      writes: NO_WRITES,
      writeQueued: false,
      writeFailed: false,
      writeError: undefined,
      stored: false,
      paused: false,
      onPause: undefined,
    };
    if (track) {
      this.#live.set(task.id, live);
      const key = contextKeyOf(owner, task.contextId);
      live.contextKey = key;
      this.#runningContexts.set(key, live);
      this.listener?.started(live);
    }
    return live;
  }

  /** -32004 when another turn of this owner runs in the context (one running task per context). */
  checkContextFree(owner: string, contextId: string): void {
    if (this.#runningContexts.has(contextKeyOf(owner, contextId))) {
      throw new A2AError(
        'UNSUPPORTED_OPERATION',
        'Another task is still running in this contextId; wait for it to finish or ask for input, or use a new contextId',
      );
    }
  }

  /** The turn no longer runs: it leaves the live set, frees its context and gives back its grant. */
  release(live: LiveTask): void {
    if (this.#live.get(live.task.id) === live) {
      this.#live.delete(live.task.id);
      this.listener?.ended(live);
    }
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

  /** Forgets every turn (shutdown, once each was released). */
  clear(): void {
    this.#live.clear();
    this.#runningContexts.clear();
  }
}

function contextKeyOf(owner: string, contextId: string): string {
  return `${owner}\n${contextId}`;
}

/**
 * Aborts the turn: its signal if the backend has one, and every later read of it.
 *
 * @example
 * ```ts
 * abortTurn(live, new Error('task canceled'));
 * ```
 */
export function abortTurn(live: LiveTask, reason: Error): void {
  if (live.aborted) return;
  live.aborted = true;
  live.abortReason = reason;
  live.controller?.abort(reason);
}

/**
 * The turn's AbortSignal, created on first use (already aborted if the turn was).
 *
 * @example
 * ```ts
 * const signal = signalOf(live);
 * ```
 */
export function signalOf(live: LiveTask): AbortSignal {
  let controller = live.controller;
  if (controller === undefined) {
    controller = new AbortController();
    live.controller = controller;
    if (live.aborted) controller.abort(live.abortReason);
  }
  return controller.signal;
}

/**
 * Marks the task paused or ended, and wakes the blocking send that waits for it.
 *
 * @example
 * ```ts
 * pause(live);
 * ```
 */
export function pause(live: LiveTask): void {
  live.paused = true;
  const wake = live.onPause;
  if (wake === undefined) return;
  live.onPause = undefined;
  wake();
}

/**
 * Writes the outcome row for a task whose submitted row was written (once; `again` writes one
 * even so: a task whose final write failed after its outcome was reported).
 *
 * @example
 * ```ts
 * emitOutcome(observe, live, 'failed', 'internal_error');
 * ```
 */
export function emitOutcome(
  observe: TaskObserver | undefined,
  live: LiveTask,
  type: Exclude<TaskLifecycleEvent['type'], 'submitted'>,
  reason?: TaskOutcomeReason,
  again = false,
): void {
  if (!live.observed && !again) return;
  live.observed = false;
  observe?.({
    type,
    ctx: live.ctx,
    taskId: live.task.id,
    contextId: live.task.contextId,
    inputChars: live.inputChars,
    outputChars: replyChars(live.task),
    ...(reason !== undefined && { reason }),
  });
}
