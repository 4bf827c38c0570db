/**
 * The per-task write queue: the only writer of running turns to the store. Each change makes
 * the newest state current at once and queues its durable write behind the earlier ones; a
 * turn's last state that the store refused is written again later, with backoff.
 *
 * @example
 * ```ts
 * const writes = new TaskWrites(store, registry, log);
 * writes.commit(live, { ...live.task, artifacts });
 * await flushed(live); // rejects when the newest write failed
 * ```
 */
import type { Task } from '../../protocol/model.js';
import { CREATED, type TaskStore } from '../store.js';
import { NO_WRITES, type LiveTasks, type QueuedWrites } from './live.js';
import { describe, type ServiceLogger } from './log.js';
import type { Span } from '@opentelemetry/api';
import { errorCode } from '../../errors/index.js';
import { startHeldChild } from '../../telemetry/held.js';
import { ATTR, failSpan, SPAN } from '../../telemetry/tracer.js';

/** The span of a task write: a child of the turn's span (telemetry/held.ts). */
const STORE_PUT = SPAN.store('put');

/** Rewrites of a refused final state: 250 ms, doubling to 5 s, about 5 minutes in all. */
const WRITE_RETRY_FIRST_MS = 250;
const WRITE_RETRY_MAX_MS = 5_000;
const MAX_WRITE_RETRIES = 64;

/**
 * Writes running turns' tasks in order, one write per burst of changes.
 *
 * @example
 * ```ts
 * writes.commit(live, live.task);
 * await live.writes;
 * ```
 */
export class TaskWrites {
  readonly #store: TaskStore;
  readonly #live: LiveTasks;
  readonly #log: ServiceLogger;
  /** Pending rewrites of final states the store refused (see #writeLater). */
  readonly #retryTimers = new Set<NodeJS.Timeout>();
  #closed = false;

  constructor(store: TaskStore, live: LiveTasks, log: ServiceLogger) {
    this.#store = store;
    this.#live = live;
    this.#log = log;
  }

  /**
   * Makes `task` the newest state now, and queues its durable write behind earlier ones.
   * Changes that arrive while a write is queued ride along with it: the store sees the
   * newest state in order, with one write per burst instead of one per chunk.
   */
  commit(live: QueuedWrites, task: Task): void {
    live.task = task;
    if (live.writeQueued) return;
    live.writeQueued = true;
    const store = this.#store;
    live.writes = live.writes.then(async () => {
      live.writeQueued = false;
      const span = startHeldChild(live, STORE_PUT);
      if (span !== undefined) noteWrite(span, live);
      try {
        // Until a put succeeds, every put is the first: a refused new task stays refused.
        await store.put(live.owner, live.task, live.stored ? undefined : CREATED);
        live.stored = true;
        live.writeFailed = false;
        live.writeError = undefined;
      } catch (error) {
        live.writeFailed = true;
        live.writeError = error;
        if (span !== undefined) failSpan(span, errorCode(error) ?? 'store_write_failed');
      } finally {
        span?.end();
      }
    });
  }

  /**
   * The one write of a turn that ran to its outcome in one synchronous step (see
   * TaskService#sendReady): every change it made rode along with `writeQueued` held, so
   * nothing was queued. Rejects with what the store threw.
   */
  putNewest(live: QueuedWrites): Promise<void> {
    // The turn's only write: nothing writes the task after it, so `stored` need not follow.
    const span = startHeldChild(live, STORE_PUT);
    if (span === undefined) return this.#store.put(live.owner, live.task, live.stored ? undefined : CREATED);
    noteWrite(span, live);
    return this.#store.put(live.owner, live.task, live.stored ? undefined : CREATED).then(
      () => span.end(),
      (error: unknown) => {
        failSpan(span, errorCode(error) ?? 'store_write_failed');
        span.end();
        throw error;
      },
    );
  }

  /**
   * The turn is over: once its queued writes landed, a refused last state is logged and
   * written again later. Nothing to watch when no write was ever queued.
   */
  settle(live: QueuedWrites): void {
    if (live.writes === NO_WRITES) return;
    void live.writes.then(() => {
      if (live.writeFailed) {
        this.#log('error', 'task_store_write_failed', { taskId: live.task.id, error: describe(live.writeError) });
        this.#writeLater(live.owner, live.task, 0);
      }
    });
  }

  /** Drops the pending rewrites (shutdown). */
  close(): void {
    this.#closed = true;
    for (const timer of this.#retryTimers) clearTimeout(timer);
    this.#retryTimers.clear();
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
    if (this.#live.get(task.id) !== undefined) return;
    try {
      const stored = await this.#store.get(owner, task.id);
      if (stored !== undefined && stored.status.timestamp > task.status.timestamp) return;
      if (this.#live.get(task.id) !== undefined) return;
      await this.#store.put(owner, task);
      this.#log('warn', 'task_store_write_recovered', { taskId: task.id, attempts: attempt + 1 });
    } catch {
      this.#writeLater(owner, task, attempt + 1);
    }
  }
}

/**
 * Resolves once the queued store writes landed; rejects when the newest one failed.
 *
 * @example
 * ```ts
 * await flushed(live);
 * return live.task;
 * ```
 */
export async function flushed(live: QueuedWrites): Promise<void> {
  await live.writes;
  if (live.writeFailed) throw live.writeError;
}

/** A write's span notes the task and the state written; nothing of its content. */
function noteWrite(span: Span, live: QueuedWrites): void {
  if (span.isRecording()) span.setAttributes({ [ATTR.taskId]: live.task.id, [ATTR.state]: live.task.status.state });
}
