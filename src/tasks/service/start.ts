/**
 * Starting a turn: a new task, or the resume of an interrupted one, checked against the
 * running contexts and the parking gate, registered as live and reported as submitted. The
 * caller's grant (what admission gave the turn) is given back whenever the turn cannot start.
 *
 * @example
 * ```ts
 * const starter = new TurnStarter(parts);
 * const live = await starter.start(ctx, owner, params.message, false, true, grant);
 * ```
 */
import { AirlockError } from '../../errors/index.js';
import { A2AError } from '../../protocol/errors.js';
import { isInterruptedState, isTerminalState, type Message, type Task } from '../../protocol/model.js';
import type { CallContext } from '../call-context.js';
import { newId, newTaskId } from '../ids.js';
import { OUTBOUND_ID_PREFIX } from '../session.js';
import { replyChars, type TurnGrant } from '../policy.js';
import { busy, statusEvent, withIds, withStatus } from './lifecycle.js';
import type { LiveTask } from './live.js';
import type { ServiceParts } from './parts.js';
import { cappedHistory, storedOutputBytes, withCappedHistory } from './caps.js';

const MAX_CONTEXT_ID = 256;

/**
 * A message on a task parked on the person that does not run anything (re-parked, or failed):
 * the caller gets `task` as it is.
 *
 * @example
 * ```ts
 * if (error instanceof ParkedAnswer) return { kind: 'task', task: error.task };
 * ```
 */
export class ParkedAnswer extends AirlockError {
  readonly code = 'parked_answer';
  /** `moving`: the gateway resumed the task after the person decided, and its turn runs now. */
  constructor(
    readonly task: Task,
    readonly moving = false,
  ) {
    super('parked');
  }
}

/** Tasks the gateway resumed after a decision, remembered at most (the oldest are forgotten). */
const MAX_DECIDED_TASKS = 10_000;

/**
 * Creates or resumes the task of a turn.
 *
 * @example
 * ```ts
 * const live = await new TurnStarter(parts).start(ctx, owner, message, true, true, undefined);
 * ```
 */
export class TurnStarter {
  readonly #parts: ServiceParts;
  /** Task id → owner, of tasks the gateway resumed after the person decided (see #resume). */
  readonly #decided = new Map<string, string>();

  constructor(parts: ServiceParts) {
    this.#parts = parts;
  }

  /**
   * Creates or resumes the turn's task, with what admission granted it (none: admitted as is).
   * The grant is given back if the task cannot start; the submitted row is written once it can.
   * `track` lists a new task as running (see TaskService#sendReady for when it need not be).
   */
  async start(
    ctx: CallContext,
    owner: string,
    incoming: Message,
    resuming: boolean,
    track: boolean,
    grant: TurnGrant | undefined,
  ): Promise<LiveTask> {
    let live: LiveTask;
    try {
      live = resuming
        ? await this.#resume(owner, ctx, incoming.taskId as string, incoming, grant)
        : this.#create(owner, ctx, incoming, track, grant);
    } catch (error) {
      grant?.release();
      throw error;
    }
    return this.#submitted(ctx, live);
  }

  /**
   * Resumes a task parked on the person after the person decided, with no message from the
   * caller: the turn's message is the caller's last one, and the history gains nothing.
   */
  async resumeDecided(ctx: CallContext, owner: string, taskId: string, grant: TurnGrant): Promise<LiveTask> {
    if (this.#decided.size >= MAX_DECIDED_TASKS) this.#decided.delete(this.#decided.keys().next().value as string);
    this.#decided.set(taskId, owner);
    let live: LiveTask;
    try {
      live = await this.#resume(owner, ctx, taskId, undefined, grant);
    } catch (error) {
      grant.release();
      throw error;
    }
    return this.#submitted(ctx, live);
  }

  async #submitted(ctx: CallContext, live: LiveTask): Promise<LiveTask> {
    const observe = this.#parts.observe;
    if (observe !== undefined) {
      try {
        observe({
          type: 'submitted',
          ctx,
          taskId: live.task.id,
          contextId: live.task.contextId,
          inputChars: live.inputChars,
          outputChars: 0,
        });
        // Group commit: the row is out at the end of this turn; the backend runs after that.
        const written = this.#parts.observed?.();
        if (written !== undefined) await written;
      } catch (error) {
        // Not recorded, not run: an unaudited task must not start.
        this.#parts.live.release(live);
        throw error;
      }
      live.observed = true;
    }
    return live;
  }

  #create(owner: string, ctx: CallContext, incoming: Message, track: boolean, grant: TurnGrant | undefined): LiveTask {
    const contextId = incoming.contextId ?? newId();
    if (contextId.length > MAX_CONTEXT_ID)
      throw new A2AError('INVALID_PARAMS', 'Invalid params: contextId is too long');
    // Only a caller-named context can be busy: a fresh one has never been seen.
    if (incoming.contextId !== undefined) this.#parts.live.checkContextFree(owner, contextId);
    const id = newTaskId();
    const message = withIds(incoming, id, contextId);
    const task: Task = {
      id,
      contextId,
      status: { state: 'submitted', timestamp: this.#parts.timestamp() },
      artifacts: [],
      history: [message],
    };
    return this.#parts.live.register(owner, ctx, task, track, grant, incoming);
  }

  async #resume(
    owner: string,
    ctx: CallContext,
    id: string,
    incoming: Message | undefined,
    grant: TurnGrant | undefined,
  ): Promise<LiveTask> {
    const { live: registry, store, gate } = this.#parts;
    if (incoming !== undefined && this.#decided.get(id) === owner) {
      // The person decided and the gateway resumed the task: the caller's "may I go on?" gets
      // the task as it moves on (or as the decision left it), never a busy or ended error.
      const running = registry.for(owner, id);
      const current = running?.task ?? (await findStored(this.#parts, owner, id));
      if (current !== undefined && !isInterruptedState(current.status.state)) {
        throw new ParkedAnswer(current, running !== undefined);
      }
    }
    if (registry.for(owner, id) !== undefined) throw busy();
    const stored = await findStored(this.#parts, owner, id);
    if (stored === undefined) throw new A2AError('TASK_NOT_FOUND');
    if (incoming?.contextId !== undefined && incoming.contextId !== stored.contextId) {
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
    if (!isInterruptedState(stored.status.state) || registry.for(owner, id) !== undefined) throw busy();
    registry.checkContextFree(owner, stored.contextId);
    const parked = gate === undefined ? undefined : await gate.resume(ctx, owner, stored);
    if (parked !== undefined && parked.kind !== 'not_parked' && parked.kind !== 'resume') {
      // A message on a task parked on the person is not a decision: nothing runs.
      if (parked.kind === 'repark') throw new ParkedAnswer(stored);
      const failed = withCappedHistory(
        withStatus(stored, 'failed', this.#parts.timestamp(), parked.message),
        this.#parts.caps.maxHistoryMessages,
      );
      await store.put(owner, failed);
      this.#parts.bus.publish(id, statusEvent(failed, true));
      this.#parts.observe?.({
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
    const resumed: Task = {
      ...stored,
      // A long multi-turn task keeps its newest messages: the oldest go first.
      ...(incoming !== undefined && {
        history: cappedHistory(
          [...stored.history, withIds(incoming, id, stored.contextId)],
          this.#parts.caps.maxHistoryMessages,
        ),
      }),
      status: { state: 'working', timestamp: this.#parts.timestamp() },
    };
    const live = registry.register(owner, ctx, resumed, true, grant, incoming ?? lastCallerMessage(stored));
    // Resumed by the gateway: the turn's message is the caller's last one, not the agent's question.
    if (incoming === undefined) live.turnMessage = lastCallerMessage(stored);
    live.stored = true;
    // The output cap counts every turn of the task: this one starts from what it keeps already.
    const kept = storedOutputBytes(resumed);
    if (kept > 0) live.outputBytes = kept;
    if (parked?.kind === 'resume') {
      if (parked.action !== undefined) live.approvedAction = parked.action;
      if (parked.denied !== undefined) live.deniedAction = parked.denied;
      if (parked.answer !== undefined) live.personAnswer = parked.answer;
    }
    return live;
  }
}

/** The caller's newest message in a task (a task always starts with one). */
function lastCallerMessage(task: Task): Message {
  for (let index = task.history.length - 1; index >= 0; index--) {
    const message = task.history[index] as Message;
    if (message.role === 'user') return message;
  }
  return { messageId: `${task.id}-resume`, role: 'user', parts: [], taskId: task.id, contextId: task.contextId };
}

/**
 * The task as the caller may see it: the live state when its turn runs here, else the store's
 * (an outbound task id is never an inbound task).
 *
 * @example
 * ```ts
 * const task = await findStored(parts, owner, id);
 * if (task === undefined) throw new A2AError('TASK_NOT_FOUND');
 * ```
 */
export async function findStored(parts: ServiceParts, owner: string, id: string): Promise<Task | undefined> {
  if (id.startsWith(OUTBOUND_ID_PREFIX)) return undefined;
  const live = parts.live.for(owner, id);
  if (live !== undefined) return live.task;
  return parts.store.get(owner, id);
}
