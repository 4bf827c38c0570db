/**
 * The exchange with a remote task once it is under way: polling (GetTask) until it settles,
 * a streamed answer folded into one task, and the best-effort CancelTask when `max_wait_s`
 * runs out. Every failure is a `CallFailure` naming the task when one is known.
 *
 * @example
 * ```ts
 * const exchange = new TaskExchange({ remote, now: Date.now, sleep, log });
 * const task = await exchange.pollUntilSettled(endpoint, sent.task, started);
 * ```
 */
import type { SendParams, SendResult, Task, TaskState } from '../protocol/model.js';
import { isInterruptedState, isTerminalState } from '../protocol/model.js';
import { CallFailure, streamFailure } from './call-failure.js';
import type { ClientLog } from './contracts.js';
import { withTotalTimeout, type RemoteEndpoint as Endpoint, type RemoteRpc } from './remote.js';
import { StreamFold } from './stream-fold.js';

/** A best-effort cancel must not hold the caller long after max_wait_s has already passed. */
const CANCEL_TIMEOUT_MS = 10_000;

/**
 * One exchange with a remote task after the first request: polling it to a settled state,
 * reading a streamed answer, and the best-effort cancel when `max_wait_s` runs out.
 *
 * @example
 * ```ts
 * const exchange = new TaskExchange({ remote: new RemoteRpc(transport), now: Date.now, sleep, log });
 * const task = await exchange.pollUntilSettled(endpoint, first, started);
 * ```
 */
export class TaskExchange {
  readonly #remote: RemoteRpc;
  readonly #now: () => number;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #log: ClientLog;

  constructor(options: { remote: RemoteRpc; now: () => number; sleep: (ms: number) => Promise<void>; log: ClientLog }) {
    this.#remote = options.remote;
    this.#now = options.now;
    this.#sleep = options.sleep;
    this.#log = options.log;
  }

  /**
   * GetTask every `poll_interval_s` until the task is terminal or interrupted; past
   * `max_wait_s` (counted from `start`), a best-effort cancel and a `request_timeout`.
   *
   * @example
   * ```ts
   * const task = await exchange.pollUntilSettled(endpoint, sent.task, started);
   * ```
   */
  async pollUntilSettled(endpoint: Endpoint, first: Task, start: number): Promise<Task> {
    const { pollIntervalMs, maxWaitMs } = endpoint.entry;
    const deadline = start + maxWaitMs;
    // A clock that stands still (or a sleep that returns at once) cannot make this loop forever.
    const maxPolls = Math.ceil(maxWaitMs / pollIntervalMs) + 1;
    let task = first;
    let polls = 0;
    while (!isSettled(task.status.state)) {
      const remaining = deadline - this.#now();
      if (remaining <= 0 || polls >= maxPolls) {
        const state = await this.cancelQuietly(endpoint, task);
        throw new CallFailure('request_timeout', {
          detail: `the remote task did not finish within max_wait_s (${maxWaitMs / 1000} s); Airlock asked the remote to cancel it`,
        }).about({ id: task.id, contextId: task.contextId, state });
      }
      await this.#sleep(Math.min(pollIntervalMs, remaining));
      polls += 1;
      try {
        task = await this.#remote.getTask(endpoint, task.id);
      } catch (error) {
        throw asCallFailure(error, this.#log).about({
          id: task.id,
          contextId: task.contextId,
          state: task.status.state,
        });
      }
    }
    return task;
  }

  /**
   * CancelTask, best effort: the state the remote reports, or the last one known.
   *
   * @example
   * ```ts
   * const state = await exchange.cancelQuietly(endpoint, task);
   * ```
   */
  async cancelQuietly(endpoint: Endpoint, task: Task): Promise<TaskState> {
    const short = withTotalTimeout(endpoint, CANCEL_TIMEOUT_MS);
    try {
      const canceled = await this.#remote.cancelTask(short, task.id);
      return canceled.id === task.id ? canceled.status.state : task.status.state;
    } catch (error) {
      this.#log('a2a.client.cancel_failed', {
        agent: endpoint.entry.name,
        reason: asCallFailure(error, this.#log).errorType,
      });
      return task.status.state;
    }
  }

  /**
   * SendStreamingMessage: reads the SSE answer through the guarded transport's `stream()` with
   * `max_response_bytes` as the cap over the whole stream and what is left of `max_wait_s` as
   * its total timeout. Events are folded into one task (`StreamFold`: artifact `append`, status
   * replaced; linear in the events) until it is terminal or interrupted. A cut, a timeout, a bad event or a stream that ends
   * early fails the call, and a task already known is canceled (best effort).
   *
   * @example
   * ```ts
   * const sent = await exchange.streamSend(endpoint, params, started, undefined);
   * ```
   */
  async streamSend(
    endpoint: Endpoint,
    params: SendParams,
    started: number,
    known: { id: string; contextId: string } | undefined,
  ): Promise<SendResult> {
    const { entry } = endpoint;
    const remaining = Math.max(1, started + entry.maxWaitMs - this.#now());
    const abort = new AbortController();
    const fold = new StreamFold(
      known === undefined
        ? undefined
        : {
            id: known.id,
            contextId: known.contextId,
            status: { state: 'unknown', timestamp: new Date(this.#now()).toISOString() },
            artifacts: [],
            history: [],
          },
      known !== undefined,
    );
    let task: Task | undefined = fold.task;
    let opened = false;
    try {
      const events = await this.#remote.openStream(endpoint, params, { totalMs: remaining, signal: abort.signal });
      opened = true;
      for await (const event of events) {
        if (event.kind === 'message') {
          // A direct answer with no task ends the exchange; on a task it is the task's news.
          if (task === undefined || known !== undefined) {
            if (task !== undefined && event.message.taskId !== undefined && event.message.taskId !== task.id) {
              throw new CallFailure('invalid_response', { detail: 'the remote answered about another task' });
            }
            return { kind: 'message', message: event.message };
          }
          task.status = { ...task.status, message: event.message };
          continue;
        }
        task = fold.add(event);
        if (isSettled(task.status.state)) return { kind: 'task', task };
      }
      throw new CallFailure('invalid_response', {
        detail: 'the event stream ended before the task reached a final or interrupted state',
      });
    } catch (error) {
      const failure = streamFailure(error, entry) ?? asCallFailure(error, this.#log);
      // An error event of an open stream is about the task known so far.
      if (opened && failure.fromRpcError && task !== undefined && failure.taskId === undefined) {
        failure.about({ id: task.id, contextId: task.contextId, state: task.status.state });
      }
      // The remote's own error ends its side of the exchange; anything else, once the stream
      // is open (or the wait for it timed out), leaves a task running that nobody reads.
      const cancel = opened || failure.errorType === 'request_timeout';
      if (task !== undefined && failure.taskId === undefined && cancel) {
        const state = await this.cancelQuietly(endpoint, task);
        failure.about({ id: task.id, contextId: task.contextId, state });
        if (failure.detail === undefined && failure.errorType === 'request_timeout') {
          const timed = new CallFailure('request_timeout', {
            detail: `the remote task did not finish within max_wait_s (${entry.maxWaitMs / 1000} s); Airlock asked the remote to cancel it`,
          });
          throw timed.about({ id: task.id, contextId: task.contextId, state });
        }
      }
      throw failure;
    } finally {
      abort.abort();
    }
  }
}

/**
 * A thrown value as a `CallFailure`: a bug or an unexpected throw is logged by name and
 * reported as a failed exchange, never with its text.
 *
 * @example
 * ```ts
 * catch (error) { const failure = asCallFailure(error, log); }
 * ```
 */
export function asCallFailure(error: unknown, log: ClientLog): CallFailure {
  if (error instanceof CallFailure) return error;
  log('a2a.client.unexpected_error', { error: error instanceof Error ? error.name : typeof error });
  return new CallFailure('invalid_response');
}

/**
 * Terminal, or waiting for the caller: either way the poll loop stops.
 *
 * @example
 * ```ts
 * isSettled('input-required'); // true
 * ```
 */
export function isSettled(state: TaskState): boolean {
  return isTerminalState(state) || isInterruptedState(state);
}
