/**
 * Webhook delivery through a durable store's outbox (SQLite, PostgreSQL; see
 * `tasks/stores/push-outbox.ts`). Events enter through a tap on the bus the task service
 * publishes on ({@link createPushTap}): only the replica that runs a task publishes its events,
 * so each event is written once, whichever replicas listen on a shared bus. The write fans the
 * event out to the task's configs as they are at that moment; SQLite writes it before `publish`
 * returns, PostgreSQL right after (in publish order per task). The turn never waits for a
 * receiver.
 *
 * Workers claim due rows (the oldest of each task only, so a task's webhooks see its events in
 * order), POST them (`webhook.ts`), then remove the row or give it back with exponential
 * backoff, up to `push.maxAttempts`; the audit rows are those of the memory delivery. Claims are
 * leases: with several replicas on PostgreSQL one delivers each row, and a replica that dies
 * mid-request leaves a lease that expires, then another retries it (at least once). At start
 * the rows a previous process left are delivered: a restart loses no notification written.
 *
 * @example
 * ```ts
 * const tap = createPushTap(bus); // the task service publishes on tap.bus
 * const delivery = new OutboxDelivery({ settings, outbox: store.push.outbox, client, audit });
 * tap.attach((taskId, event) => delivery.publish(taskId, event));
 * delivery.start();
 * ```
 */
import { randomUUID } from 'node:crypto';
import type { AuditEvent } from '../audit/events.js';
import type { GuardedClient } from '../net/client.js';
import type { StreamEvent, Task } from '../protocol/model.js';
import type { TaskEventBus } from '../tasks/events.js';
import type { PushOutbox, PushOutboxRow } from '../tasks/stores/push-outbox.js';
import type { PushSettings } from './config.js';
import { auditDelivery, isFinal, sendWebhook, type Attempt } from './webhook.js';

/**
 * A task event bus whose publishes are also told to a listener attached later.
 *
 * @example
 * ```ts
 * const tap = createPushTap(bus);
 * tap.attach((taskId, event) => delivery.publish(taskId, event));
 * ```
 */
export interface PushTap {
  /** The bus to give the task service: the same bus, with publishes told to the listener first. */
  readonly bus: TaskEventBus;
  attach(listener: (taskId: string, event: StreamEvent) => void): void;
}

/**
 * Wraps `bus` (see {@link PushTap}). The optional methods are there only when `bus` has them:
 * their presence is how the gateway tells a shared bus from a local one.
 *
 * @example
 * ```ts
 * const service = new TaskService({ store, bus: createPushTap(bus).bus });
 * ```
 */
export function createPushTap(bus: TaskEventBus): PushTap {
  let listener: ((taskId: string, event: StreamEvent) => void) | undefined;
  const tapped: TaskEventBus = {
    publish: (taskId, event) => {
      try {
        listener?.(taskId, event);
      } catch {
        // Push owns its errors: the turn that published goes on.
      }
      bus.publish(taskId, event);
    },
    subscribe: (taskId, onEvent) => bus.subscribe(taskId, onEvent),
    ...(bus.requestCancel !== undefined && { requestCancel: bus.requestCancel.bind(bus) }),
    ...(bus.onCancelRequest !== undefined && { onCancelRequest: bus.onCancelRequest.bind(bus) }),
    ...(bus.close !== undefined && { close: bus.close.bind(bus) }),
  };
  return {
    bus: tapped,
    attach: (next) => {
      listener = next;
    },
  };
}

/**
 * What {@link OutboxDelivery} needs.
 *
 * @example
 * ```ts
 * const options: OutboxDeliveryOptions = { settings, outbox, client, audit: (row) => sink.write(row) };
 * ```
 */
export interface OutboxDeliveryOptions {
  settings: PushSettings;
  outbox: PushOutbox;
  /** Built for push alone: `privateAllow` = `push.allowPrivate`. */
  client: GuardedClient;
  audit?: (event: AuditEvent) => void;
  /** Told of store failures (never with a secret: store errors name no config). */
  onError?: (error: unknown) => void;
  /** This process as a claimant; a random id by default. */
  claimant?: string;
  /** How often due rows are looked for (retries, rows of other processes). Default: retryBaseMs, 50 ms to 1 s. */
  pollMs?: number;
  /** Rows (of different tasks) in flight at once. Default 16. */
  concurrency?: number;
  now?: () => number;
}

/**
 * Delivers a store's outbox (see the module comment).
 *
 * @example
 * ```ts
 * delivery.start();
 * await delivery.close(); // waits for the requests in flight, leaves the rest for the next start
 * ```
 */
export class OutboxDelivery {
  readonly #options: OutboxDeliveryOptions;
  readonly #claimant: string;
  readonly #pollMs: number;
  readonly #concurrency: number;
  readonly #now: () => number;
  /** Per task, the enqueue in progress: a task's events are written in publish order. */
  readonly #writing = new Map<string, Promise<unknown>>();
  readonly #inFlight = new Set<Promise<void>>();
  #timer: NodeJS.Timeout | undefined;
  #filling = false;
  #again = false;
  #closed = false;

  constructor(options: OutboxDeliveryOptions) {
    this.#options = options;
    this.#claimant = options.claimant ?? randomUUID();
    this.#pollMs = options.pollMs ?? Math.min(1000, Math.max(50, options.settings.retryBaseMs));
    this.#concurrency = options.concurrency ?? 16;
    this.#now = options.now ?? Date.now;
  }

  /** Starts polling: rows left by an earlier process go out now. */
  start(): void {
    if (this.#closed || this.#timer !== undefined) return;
    this.#timer = setInterval(() => this.#wake(), this.#pollMs);
    this.#timer.unref();
    this.#wake();
  }

  /** The tap's listener: writes the event for the task's configs; never throws, never waits. */
  publish(taskId: string, event: StreamEvent): void {
    if (this.#closed) return;
    const input = { taskId, event: JSON.stringify(event), final: isFinal(event) };
    const write = (): Promise<unknown> =>
      this.#options.outbox
        .enqueue(input, this.#now(), this.#options.settings.maxQueuedEvents)
        .then((written) => {
          if (written === 'full') auditDelivery(this.#options.audit, taskOf(taskId), undefined, QUEUE_FULL);
          else if (written > 0) this.#wake();
        })
        .catch((error: unknown) => this.#options.onError?.(error));
    const before = this.#writing.get(taskId);
    // Called at once when nothing of the task is being written: SQLite then writes before we return.
    const done = before === undefined ? write() : before.then(write);
    this.#writing.set(taskId, done);
    void done.finally(() => {
      if (this.#writing.get(taskId) === done) this.#writing.delete(taskId);
    });
  }

  /**
   * A config stored once its task may have ended (an inline config of a send whose turn was
   * quick): if the task is finished, its final state goes to this config once. Waits for the
   * task's events being written first, so that a final event already written is not doubled.
   */
  async storedLate(task: Task, configId: string): Promise<void> {
    await this.#writing.get(task.id);
    const event: StreamEvent = { kind: 'task', task };
    if (!isFinal(event) || this.#closed) return;
    try {
      if (await this.#options.outbox.enqueueFinal(task.id, configId, JSON.stringify(event), this.#now())) this.#wake();
    } catch (error) {
      this.#options.onError?.(error);
    }
  }

  /** Stops claiming; waits for the writes and requests in flight (they end at their timeouts). */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    await Promise.allSettled([...this.#writing.values()]);
    await Promise.allSettled([...this.#inFlight]);
  }

  /** Claims what fits; runs again when asked while it was running. */
  #wake(): void {
    if (this.#closed) return;
    if (this.#filling) {
      this.#again = true;
      return;
    }
    this.#filling = true;
    void this.#fill()
      .catch((error: unknown) => this.#options.onError?.(error))
      .finally(() => {
        this.#filling = false;
        if (this.#again) {
          this.#again = false;
          this.#wake();
        }
      });
  }

  async #fill(): Promise<void> {
    const room = this.#concurrency - this.#inFlight.size;
    if (room <= 0) return;
    const { settings } = this.#options;
    // A lease outlives the longest attempt: the row is not handed to another replica mid-request.
    const leaseMs = settings.totalTimeoutMs * 2 + 5_000;
    const rows = await this.#options.outbox.claim(this.#claimant, this.#now(), leaseMs, room);
    for (const row of rows) {
      const running: Promise<void> = this.#deliver(row)
        .catch((error: unknown) => this.#options.onError?.(error))
        .finally(() => {
          this.#inFlight.delete(running);
          this.#wake();
        });
      this.#inFlight.add(running);
    }
    if (rows.length === room) this.#again = true;
  }

  async #deliver(row: PushOutboxRow): Promise<void> {
    const { outbox, settings, client, audit } = this.#options;
    const task = { taskId: row.taskId, agent: row.agent, ...(row.client !== undefined && { client: row.client }) };
    const record = row.record;
    // Its config was deleted since: nothing to send it to.
    if (record === undefined) return outbox.finish(row.id, this.#claimant);
    const started = this.#now();
    const outcome = await sendWebhook(settings, client, record, JSON.parse(row.event) as StreamEvent);
    const attempt = row.attempts + 1;
    if (outcome.kind === 'retry' && attempt < settings.maxAttempts) {
      // Closing: the row is given back as due, for the next start (or another replica).
      const backoff = settings.retryBaseMs * 2 ** (attempt - 1);
      const at = this.#closed ? this.#now() : this.#now() + backoff + Math.floor(Math.random() * (backoff / 4));
      return outbox.retry(row.id, this.#claimant, at);
    }
    const final: Attempt = outcome.kind === 'retry' ? { kind: 'failed', reason: outcome.reason } : outcome;
    // Removed before the audit row: a row is audited once even if the audit sink is slow.
    await outbox.finish(row.id, this.#claimant);
    auditDelivery(audit, task, record, final, this.#now() - started);
  }
}

const QUEUE_FULL: Attempt = { kind: 'failed', reason: 'queue_full' };

/** The audit subject of an event refused before any row exists (no agent known yet). */
function taskOf(taskId: string): { taskId: string; agent: string } {
  return { taskId, agent: '-' };
}
