/**
 * Webhook delivery: each event a task publishes on the task event bus goes, in order, to every
 * push config of the task, POSTed through the guarded outbound client (resolved-address check
 * at connect, no redirects, no proxy variables, byte-capped answer, connect/read/total
 * timeouts). The bus listener only appends to a bounded per-task queue, so a slow or dead
 * receiver never blocks the task; one worker per task drains it, retrying with exponential
 * backoff up to `push.maxAttempts`. Every config is validated again before each attempt.
 *
 * The body is the event in the dialect the config was created in (v1.0: a StreamResponse,
 * `application/a2a+json`; v0.3: the `kind`-tagged event, `application/json`), with the config's
 * `token` in `X-A2A-Notification-Token` and its authentication as `Authorization`. Audit rows
 * name the webhook's host only, never its path, query, token or credentials.
 *
 * This increment is in-process: configs registered on this replica are watched by it, and a
 * restart forgets pending events (the durable outbox is the next increment).
 *
 * @example
 * ```ts
 * const delivery = new PushDelivery({ settings, records, bus, client: createGuardedClient({ privateAllow }) });
 * delivery.watch({ taskId, agent: 'echo', client: 'ci' }); // after a config is stored
 * ```
 */
import type { AuditEvent } from '../audit/events.js';
import { auditTime } from '../audit/events.js';
import type { GuardedClient } from '../net/client.js';
import { isOutboundError } from '../net/errors.js';
import type { Dialect } from '../protocol/dialect.js';
import { A2AError } from '../protocol/errors.js';
import { isTerminalState, type StreamEvent } from '../protocol/model.js';
import { v03 } from '../protocol/v03/index.js';
import { v10 } from '../protocol/v10/index.js';
import type { TaskEventBus } from '../tasks/events.js';
import type { PushConfigRecord, PushConfigRecords } from '../tasks/stores/push-records.js';
import type { PushSettings } from './config.js';
import { checkPushConfig } from './validate.js';

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

/**
 * The task to watch, and who it belongs to (for audit rows).
 *
 * @example
 * ```ts
 * const watched: WatchedTask = { taskId: 't-1', agent: 'echo', client: 'ci' };
 * ```
 */
export interface WatchedTask {
  taskId: string;
  agent: string;
  client?: string;
}

interface TaskQueue {
  readonly task: WatchedTask;
  readonly events: StreamEvent[];
  unsubscribe: () => void;
  running: boolean;
}

type Attempt =
  | { kind: 'delivered' }
  | { kind: 'retry' | 'failed'; reason: FailedReason }
  | { kind: 'refused'; reason: RefusedReason };
type FailedReason = Extract<AuditEvent, { type: 'a2a.push.failed' }>['reason'];
type RefusedReason = Extract<AuditEvent, { type: 'a2a.push.refused' }>['reason'];

const DIALECTS: Readonly<Record<PushConfigRecord['dialect'], Dialect>> = { '1.0': v10, '0.3': v03 };
const CONTENT_TYPES: Readonly<Record<PushConfigRecord['dialect'], string>> = {
  '1.0': 'application/a2a+json',
  '0.3': 'application/json',
};
const REFUSED_CODES = new Set([
  'insecure_url',
  'url_has_credentials',
  'address_blocked',
  'redirect_refused',
  'proxy_refused',
]);
const RETRIED_STATUSES = new Set([408, 425, 429, 500, 502, 503, 504]);

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

  async #attempt(record: PushConfigRecord, event: StreamEvent): Promise<Attempt> {
    const { settings, client } = this.#options;
    const { config } = record;
    try {
      // Judged again at every delivery: the policy may have changed since the config was set.
      checkPushConfig(config, settings);
    } catch (error) {
      if (error instanceof A2AError) return { kind: 'refused', reason: 'invalid_config' };
      throw error;
    }
    const headers: Record<string, string> = { 'content-type': CONTENT_TYPES[record.dialect] };
    if (config.token !== undefined) headers['x-a2a-notification-token'] = config.token;
    const auth = config.authentication;
    if (auth !== undefined)
      headers.authorization = auth.credentials === undefined ? auth.scheme : `${auth.scheme} ${auth.credentials}`;
    try {
      const response = await client.request({
        method: 'POST',
        url: config.url,
        headers,
        body: JSON.stringify(DIALECTS[record.dialect].encodeStreamEvent(event)),
        maxResponseBytes: settings.maxResponseBytes,
        timeouts: {
          connectMs: settings.connectTimeoutMs,
          readMs: settings.readTimeoutMs,
          totalMs: settings.totalTimeoutMs,
        },
        privateNetwork: settings.allowPrivate.length > 0,
      });
      if (response.status >= 200 && response.status < 300) return { kind: 'delivered' };
      return { kind: RETRIED_STATUSES.has(response.status) ? 'retry' : 'failed', reason: 'http_status' };
    } catch (error) {
      if (!isOutboundError(error)) return { kind: 'retry', reason: 'network_error' };
      if (REFUSED_CODES.has(error.code)) return { kind: 'refused', reason: error.code as RefusedReason };
      if (error.code === 'response_too_large') return { kind: 'failed', reason: 'response_too_large' };
      if (error.code === 'invalid_response') return { kind: 'failed', reason: 'invalid_response' };
      return { kind: 'retry', reason: error.code === 'request_timeout' ? 'request_timeout' : 'network_error' };
    }
  }

  #audit(task: WatchedTask, record: PushConfigRecord | undefined, outcome: Attempt, durationMs?: number): void {
    const sink = this.#options.audit;
    if (sink === undefined) return;
    const common = {
      time: auditTime(),
      agent: task.agent,
      taskId: task.taskId,
      host: hostOf(record),
      ...(task.client !== undefined && { client: task.client }),
    };
    const duration = durationMs === undefined ? {} : { durationMs: Math.max(0, Math.round(durationMs)) };
    try {
      if (outcome.kind === 'delivered') sink({ type: 'a2a.push.delivered', outcome: 'ok', ...common, ...duration });
      else if (outcome.kind === 'refused')
        sink({ type: 'a2a.push.refused', outcome: 'denied', ...common, reason: outcome.reason });
      else sink({ type: 'a2a.push.failed', outcome: 'error', ...common, ...duration, reason: outcome.reason });
    } catch {
      // The audit trail reports its own failures; delivery goes on.
    }
  }
}

/** The host as written in the URL (`-` when there is none to name). Never path, query or credentials. */
function hostOf(record: PushConfigRecord | undefined): string {
  if (record === undefined) return '-';
  try {
    const host = new URL(record.config.url).host;
    return /^[\x21-\x7e]{1,256}$/.test(host) ? host : '-';
  } catch {
    return '-';
  }
}

/** The last event of a task's life: a terminal status. Interrupted tasks go on. */
function isFinal(event: StreamEvent): boolean {
  if (event.kind === 'status-update') return isTerminalState(event.status.state);
  if (event.kind === 'task') return isTerminalState(event.task.status.state);
  return false;
}
