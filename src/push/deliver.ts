/**
 * Webhook delivery with the memory store: each event a task publishes on the task event bus
 * goes, in order, to every push config of the task (the request itself: `webhook.ts`). The bus
 * listener only appends to a bounded per-task queue, so a slow or dead
 * receiver never blocks the task; one worker per task drains it, retrying with exponential
 * backoff up to `push.maxAttempts`. Every config is validated again before each attempt.
 *
 * In-process: configs registered on this replica are watched by it, and a restart forgets
 * pending events. With a durable store, `outbox-delivery.ts` delivers instead.
 *
 * @example
 * ```ts
 * const delivery = new PushDelivery({ settings, records, bus, client: createGuardedClient({ privateAllow }) });
 * delivery.watch({ taskId, agent: 'echo', client: 'ci' }); // after a config is stored
 * ```
 */
import type { AuditEvent } from '../audit/events.js';
import type { GuardedClient } from '../net/client.js';
import type { StreamEvent } from '../protocol/model.js';
import type { TaskEventBus } from '../tasks/events.js';
import type { PushConfigRecord, PushConfigRecords } from '../tasks/stores/push-records.js';
import type { PushSettings } from './config.js';
import { auditDelivery, isFinal, sendWebhook, type Attempt, type WatchedTask } from './webhook.js';

export type { WatchedTask } from './webhook.js';

/**
 * What delivery needs.
 *
 * @example
 * ```ts
 * const options: PushDeliveryOptions = { settings, records, bus, client, audit: (row) => sink.write(row) };
 * ```
 */
export interface PushDeliveryOptions {
  settings: PushSettings;
  records: PushConfigRecords;
  bus: TaskEventBus;
  /** Built for push alone: `privateAllow` = `push.allowPrivate`. */
  client: GuardedClient;
  audit?: (event: AuditEvent) => void;
  /** Waits between attempts (tests shorten it through `retryBaseMs`). */
  sleep?: (ms: number) => Promise<void>;
}

interface TaskQueue {
  readonly task: WatchedTask;
  readonly events: StreamEvent[];
  unsubscribe: () => void;
  running: boolean;
}

/**
 * Delivers task events to their webhooks.
 *
 * @example
 * ```ts
 * delivery.watch({ taskId, agent: 'echo' });
 * await delivery.close(); // stops watching; attempts in flight end at their timeouts
 * ```
 */
export class PushDelivery {
  readonly #options: PushDeliveryOptions;
  readonly #queues = new Map<string, TaskQueue>();
  readonly #sleep: (ms: number) => Promise<void>;
  #closed = false;

  constructor(options: PushDeliveryOptions) {
    this.#options = options;
    this.#sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms).unref()));
  }

  /** Starts forwarding the task's events (idempotent). */
  watch(task: WatchedTask): void {
    if (this.#closed || this.#queues.has(task.taskId)) return;
    const queue: TaskQueue = { task, events: [], unsubscribe: () => undefined, running: false };
    this.#queues.set(task.taskId, queue);
    queue.unsubscribe = this.#options.bus.subscribe(task.taskId, (event) => this.#enqueue(queue, event));
  }

  /** How many tasks are watched (for tests and metrics). */
  get watching(): number {
    return this.#queues.size;
  }

  /** Stops every watch; queued events are dropped. */
  close(): Promise<void> {
    this.#closed = true;
    for (const queue of this.#queues.values()) {
      queue.unsubscribe();
      queue.events.length = 0;
    }
    this.#queues.clear();
    return Promise.resolve();
  }

  /** The bus listener: synchronous and bounded, never waits for a receiver. */
  #enqueue(queue: TaskQueue, event: StreamEvent): void {
    if (queue.events.length >= this.#options.settings.maxQueuedEvents) {
      this.#audit(queue.task, undefined, { kind: 'failed', reason: 'queue_full' });
      return;
    }
    queue.events.push(event);
    if (!queue.running) {
      queue.running = true;
      void this.#drain(queue);
    }
  }

  async #drain(queue: TaskQueue): Promise<void> {
    try {
      for (let event = queue.events.shift(); event !== undefined; event = queue.events.shift()) {
        const configs = await this.#options.records.forTask(queue.task.taskId);
        // One receiver after the other keeps each receiver's events in order.
        for (const record of configs) await this.#deliver(queue.task, record, event);
        if (isFinal(event)) {
          this.#stop(queue);
          await this.#options.records.dropTask(queue.task.taskId);
          return;
        }
      }
    } catch {
      // A store failure loses this batch (audited per event in the durable increment).
    } finally {
      queue.running = false;
    }
    if (queue.events.length > 0 && this.#queues.get(queue.task.taskId) === queue) {
      queue.running = true;
      void this.#drain(queue);
    }
  }

  #stop(queue: TaskQueue): void {
    queue.unsubscribe();
    queue.events.length = 0;
    if (this.#queues.get(queue.task.taskId) === queue) this.#queues.delete(queue.task.taskId);
  }

  async #deliver(task: WatchedTask, record: PushConfigRecord, event: StreamEvent): Promise<void> {
    const { settings } = this.#options;
    for (let attempt = 1; ; attempt++) {
      const started = Date.now();
      const outcome = await this.#attempt(record, event);
      if (outcome.kind !== 'retry' || attempt >= settings.maxAttempts || this.#closed) {
        const final: Attempt = outcome.kind === 'retry' ? { kind: 'failed', reason: outcome.reason } : outcome;
        this.#audit(task, record, final, Date.now() - started);
        return;
      }
      const backoff = settings.retryBaseMs * 2 ** (attempt - 1);
      await this.#sleep(backoff + Math.floor(Math.random() * (backoff / 4)));
    }
  }

  #attempt(record: PushConfigRecord, event: StreamEvent): Promise<Attempt> {
    return sendWebhook(this.#options.settings, this.#options.client, record, event);
  }

  #audit(task: WatchedTask, record: PushConfigRecord | undefined, outcome: Attempt, durationMs?: number): void {
    auditDelivery(this.#options.audit, task, record, outcome, durationMs);
  }
}
