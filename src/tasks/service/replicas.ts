/**
 * Replica follow-up, with a shared bus (one that has `requestCancel`): a task whose turn runs
 * on another replica is canceled by asking that replica, and followed by watching the store
 * too, in case the bus loses its final event (an outage, or the replica died).
 *
 * @example
 * ```ts
 * const replicas = new Replicas(parts, { pollMs: 1_000, cancelWaitMs: 2_000 });
 * const { canceled, task } = await replicas.cancelElsewhere(owner, stored);
 * ```
 */
import { A2AError } from '../../protocol/errors.js';
import { isTerminalState, type StreamEvent, type Task, type TaskStatus } from '../../protocol/model.js';
import { notCancelable, statusEvent } from './lifecycle.js';
import type { ServiceParts } from './parts.js';

/**
 * How a service follows tasks that run on other replicas.
 *
 * @example
 * ```ts
 * if (replicas.shared && registry.for(owner, id) === undefined) await replicas.cancelElsewhere(owner, stored);
 * ```
 */
export class Replicas {
  /** The bus is shared by replicas: a task not running here may be running on another one. */
  readonly shared: boolean;
  readonly #parts: ServiceParts;
  readonly #pollMs: number;
  readonly #cancelWaitMs: number;

  constructor(parts: ServiceParts, timing: { pollMs: number; cancelWaitMs: number }) {
    this.#parts = parts;
    this.shared = parts.bus.requestCancel !== undefined;
    this.#pollMs = timing.pollMs;
    this.#cancelWaitMs = timing.cancelWaitMs;
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
  async cancelElsewhere(owner: string, stored: Task): Promise<{ canceled: boolean; task: Task }> {
    const { bus, store } = this.#parts;
    const id = stored.id;
    const deadline = Date.now() + this.#cancelWaitMs;
    const status = await new Promise<TaskStatus | undefined>((resolve) => {
      const stop = bus.subscribe(id, (event) => {
        if (event.kind !== 'status-update' || !event.final) return;
        clearTimeout(timer);
        stop();
        resolve(event.status);
      });
      const timer = setTimeout(() => {
        stop();
        resolve(undefined);
      }, this.#cancelWaitMs);
      // Listening first: the answer cannot come before the question, but it can come at once.
      bus.requestCancel?.(id);
    });
    if (status === undefined || !isTerminalState(status.state)) {
      const fresh = await store.get(owner, id);
      if (fresh === undefined) throw new A2AError('TASK_NOT_FOUND');
      return { canceled: false, task: fresh };
    }
    if (status.state !== 'canceled') throw notCancelable(status.state);
    const settled = await this.storedTerminal(owner, id, deadline);
    return { canceled: true, task: settled ?? { ...stored, status } };
  }

  /**
   * The stored task once the store shows it ended, read again every 20 ms until `deadline`
   * (epoch ms); undefined if it did not by then (or the store failed). A replica publishes a
   * task's final event before its write lands: a replica that heard the event waits for the
   * write this way, so that a GetTask right after its answer agrees with it.
   */
  async storedTerminal(owner: string, id: string, deadline: number): Promise<Task | undefined> {
    for (;;) {
      const fresh = await this.#parts.store.get(owner, id).catch(() => undefined);
      if (fresh !== undefined && isTerminalState(fresh.status.state)) return fresh;
      if (Date.now() >= deadline) return undefined;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /**
   * Re-reads a task that runs on another replica every remoteTaskPollMs, for a subscription that
   * must end even if the bus lost the final event. A terminal state is delivered one period after
   * it is first seen, so that the bus's own events (the last chunks, then the final status) come
   * first when they are on their way. A task that is gone ends the subscription; a store that
   * fails is tried again on the next period.
   */
  watchStored(owner: string, taskId: string, deliver: (event: StreamEvent) => void, gone: () => void): NodeJS.Timeout {
    let reading = false;
    let terminalSeen = false;
    const timer = setInterval(() => {
      if (reading) return;
      reading = true;
      this.#parts.store
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
    }, this.#pollMs);
    // A subscription alone must not keep the process alive.
    timer.unref();
    return timer;
  }
}
