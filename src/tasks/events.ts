/**
 * The task event bus: how a running turn tells streams and blocking sends what happened.
 * In one process it is a map of listener sets; a shared database's or Redis's pub/sub can
 * implement the same interface when several replicas serve one store.
 *
 * The local bus queues nothing: it calls each listener synchronously, so a slow reader can
 * never make it grow. A listener that hands events on to a reader owns a bounded queue (the
 * streams' EventQueue drops a reader past its bound and unsubscribes it); the shared buses
 * bound their outgoing queue in bytes (`buses/shared.ts`).
 *
 * @example
 * ```ts
 * const bus = new LocalTaskEventBus();
 * const stop = bus.subscribe(taskId, (event) => console.log(event.kind));
 * bus.publish(taskId, { kind: 'status-update', ... });
 * stop();
 * ```
 */
import type { StreamEvent } from '../protocol/model.js';

export type TaskEventListener = (event: StreamEvent) => void;

/**
 * Told that some replica asked for a task to be canceled (see {@link TaskEventBus.requestCancel}).
 *
 * @example
 * ```ts
 * const listener: CancelRequestListener = (taskId) => service.cancelIfRunningHere(taskId);
 * ```
 */
export type CancelRequestListener = (taskId: string) => void;

export interface TaskEventBus {
  /** Delivers to this process's listeners synchronously, and to other replicas' if the bus is shared. */
  publish(taskId: string, event: StreamEvent): void;
  /** Returns the function that unsubscribes. */
  subscribe(taskId: string, listener: TaskEventListener): () => void;
  /**
   * Shared buses only (several replicas): asks every replica, this one included, to cancel the
   * task if its turn runs there. Fire and forget: the replica that runs it answers by publishing
   * the task's terminal status event. A bus without it is a one-process bus.
   */
  requestCancel?(taskId: string): void;
  /** Shared buses only: told of every cancel request. Returns the function that unsubscribes. */
  onCancelRequest?(listener: CancelRequestListener): () => void;
  /** Frees connections and timers (a shared bus); publishing afterwards only delivers locally. */
  close?(): Promise<void>;
}

export class LocalTaskEventBus implements TaskEventBus {
  readonly #listeners = new Map<string, Set<TaskEventListener>>();

  publish(taskId: string, event: StreamEvent): void {
    const set = this.#listeners.get(taskId);
    if (set === undefined) return;
    for (const listener of set) {
      // A listener that throws must not stop the others or the turn that published.
      try {
        listener(event);
      } catch {
        /* listeners own their errors */
      }
    }
  }

  subscribe(taskId: string, listener: TaskEventListener): () => void {
    let set = this.#listeners.get(taskId);
    if (set === undefined) {
      set = new Set();
      this.#listeners.set(taskId, set);
    }
    set.add(listener);
    return () => {
      const current = this.#listeners.get(taskId);
      if (current === undefined) return;
      current.delete(listener);
      if (current.size === 0) this.#listeners.delete(taskId);
    };
  }

  /** Number of tasks with at least one listener (for tests and metrics). */
  get size(): number {
    return this.#listeners.size;
  }
}
