/**
 * Task lifecycle helpers: pure functions from a task to its next state, the stream event that
 * announces it, and the errors a task's state answers with. No I/O, no service state.
 *
 * @example
 * ```ts
 * const done = withStatus(task, 'completed', isoNow(), 'bye');
 * bus.publish(done.id, statusEvent(done, true));
 * ```
 */
import { A2AError } from '../../protocol/errors.js';
import {
  isInterruptedState,
  isTerminalState,
  type Message,
  type StreamEvent,
  type Task,
  type TaskState,
  type TaskStatus,
} from '../../protocol/model.js';
import { isoNow, newId } from '../ids.js';
import { CapacityError, type TaskLifecycleEvent } from '../policy.js';
import { isStoreUnavailable } from '../stores/errors.js';

/**
 * The task in `state` as of `timestamp`; a reply (`parts`, else non-empty `text`) becomes the
 * status message and joins the history.
 *
 * @example
 * ```ts
 * const failed = withStatus(task, 'failed', isoNow(), 'The agent failed to process the message.');
 * ```
 */
export function withStatus(
  task: Task,
  state: TaskState,
  timestamp: string,
  text?: string,
  parts?: Message['parts'],
): Task {
  const status: TaskStatus = { state, timestamp };
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
 * The status-update event announcing the task's current status.
 *
 * @example
 * ```ts
 * bus.publish(task.id, statusEvent(task, true)); // the final event of the turn
 * ```
 */
export function statusEvent(task: Task, final: boolean): StreamEvent {
  return { kind: 'status-update', taskId: task.id, contextId: task.contextId, status: task.status, final };
}

/**
 * The caller's message as stored: the same fields, with the task and context ids set.
 *
 * @example
 * ```ts
 * const stored = withIds(params.message, taskId, contextId);
 * ```
 */
export function withIds(incoming: Message, taskId: string, contextId: string): Message {
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

/**
 * What a task left running by a process that is gone says when it is failed at startup.
 *
 * @example
 * ```ts
 * assert.equal(failedByRestart(task).status.message?.parts[0]?.text, RESTART_FAILURE_TEXT);
 * ```
 */
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

/**
 * historyLength: unset keeps all, 0 drops all, N keeps the N newest.
 *
 * @example
 * ```ts
 * withHistory(task, 1).history; // only the newest message
 * ```
 */
export function withHistory(task: Task, historyLength: number | undefined): Task {
  if (historyLength === undefined || task.history.length <= historyLength) return task;
  return { ...task, history: historyLength === 0 ? [] : task.history.slice(-historyLength) };
}

/**
 * The lifecycle event a final status amounts to.
 *
 * @example
 * ```ts
 * outcomeOf('auth-required'); // 'failed'
 * ```
 */
export function outcomeOf(state: TaskState): Exclude<TaskLifecycleEvent['type'], 'submitted'> {
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

/**
 * Characters of the text parts (audit counts).
 *
 * @example
 * ```ts
 * textChars([{ kind: 'text', text: 'hello' }]); // 5
 * ```
 */
export function textChars(parts: Message['parts']): number {
  let chars = 0;
  for (const part of parts) if (part.kind === 'text') chars += part.text.length;
  return chars;
}

/**
 * A turn is (or should be) running for the task: it has not ended nor paused for its caller.
 *
 * @example
 * ```ts
 * isRunningState('working'); // true
 * ```
 */
export function isRunningState(state: TaskState): boolean {
  return !isTerminalState(state) && !isInterruptedState(state);
}

/**
 * What a caller hears when its new task could not be stored. A store that is unavailable, or
 * a quota refusal (CapacityError), is passed on as it is: the server answers it as retryable (see server/rpc.ts and rest/ask.ts).
 *
 * @example
 * ```ts
 * throw storeRefusal(error);
 * ```
 */
export function storeRefusal(error: unknown): Error {
  if (error instanceof A2AError || error instanceof CapacityError || isStoreUnavailable(error)) return error;
  return new A2AError('INTERNAL', 'The task could not be stored; try again later');
}

/**
 * -32002: the task already ended.
 *
 * @example
 * ```ts
 * throw notCancelable('completed');
 * ```
 */
export function notCancelable(state: TaskState): A2AError {
  return new A2AError('TASK_NOT_CANCELABLE', `Task cannot be canceled: it is already ${state}`);
}

/**
 * -32004 for a subscription to a task that already ended.
 *
 * @example
 * ```ts
 * if (isTerminalState(task.status.state)) throw terminalSubscribe();
 * ```
 */
export function terminalSubscribe(): A2AError {
  return new A2AError('UNSUPPORTED_OPERATION', 'Task has already ended; there is nothing to subscribe to');
}

/**
 * -32004 for a message on a task whose turn still runs.
 *
 * @example
 * ```ts
 * if (registry.has(taskId)) throw busy();
 * ```
 */
export function busy(): A2AError {
  return new A2AError('UNSUPPORTED_OPERATION', 'Task is still running; wait for it to ask for input or end');
}

/**
 * A stream of the given events only (a direct reply, a re-parked task).
 *
 * @example
 * ```ts
 * return eventsOf({ kind: 'task', task });
 * ```
 */
export async function* eventsOf(...events: StreamEvent[]): AsyncIterable<StreamEvent> {
  yield* events;
}
