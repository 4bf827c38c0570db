/**
 * What the shared task event buses (PostgreSQL LISTEN/NOTIFY, Redis pub/sub) have in common: a
 * {@link TaskEventBus} that delivers to this process's listeners synchronously, exactly as the
 * one-process bus does, and fans every message out to the other replicas through a
 * {@link BusTransport}. The transport only moves frames (see `frames.ts`); this class numbers
 * and cuts messages, queues them while the connection is down, drops its own echoes and hands
 * received events to local listeners.
 *
 * Failure model: publishing never throws and never waits. While the transport is down, local
 * delivery goes on; outgoing messages wait in a bounded queue (`maxQueuedBytes`, oldest kept,
 * newest dropped when full) and go out in order once it is back. Messages other replicas sent
 * meanwhile are lost to this one: a subscriber following a task that runs elsewhere must not
 * rely on the bus alone (the task service re-reads the store now and then; see
 * `TaskServiceOptions.remoteTaskPollMs`). The outage is logged once when it starts and once
 * when it ends.
 *
 * @example
 * ```ts
 * const bus = new SharedTaskEventBus(transport, { logger, name: 'postgres' });
 * bus.subscribe(taskId, (event) => console.log(event.kind)); // events from every replica
 * bus.publish(taskId, event);                                // local listeners now, others soon
 * await bus.close();
 * ```
 */
import type { StreamEvent } from '../../protocol/model.js';
import { LocalTaskEventBus, type CancelRequestListener, type TaskEventBus, type TaskEventListener } from '../events.js';
import { BusMessageTooLargeError, FrameDecoder, FrameEncoder, newOrigin, type BusMessage } from './frames.js';

/**
 * Where a bus writes its log lines: the server's logger fits as is.
 *
 * @example
 * ```ts
 * const logger: BusLogger = { info: console.log, warn: console.warn, error: console.error };
 * ```
 */
export interface BusLogger {
  info(fields: Record<string, unknown>): void;
  warn(fields: Record<string, unknown>): void;
  error(fields: Record<string, unknown>): void;
}

/**
 * What a transport tells its bus.
 *
 * @example
 * ```ts
 * transport.start({ onFrame: (frame) => bus.receive(frame), onUp: () => flush(), onDown: (error) => log(error) });
 * ```
 */
export interface TransportHandlers {
  /** A frame another (or this) process sent. */
  onFrame(frame: string): void;
  /** Connected (again): frames can be sent, and received ones are flowing. */
  onUp(): void;
  /** The connection was lost or could not be made; the transport is already retrying. */
  onDown(error: unknown): void;
}

/**
 * Moves frames between replicas. Implementations: PostgreSQL (`postgres.ts`), Redis (`redis.ts`).
 *
 * @example
 * ```ts
 * const transport: BusTransport = new PostgresBusTransport(config, 'airlock_events', settings);
 * ```
 */
export interface BusTransport {
  /** Largest frame the transport carries, in UTF-8 bytes. */
  readonly maxFrameBytes: number;
  /** True while frames can be sent. */
  readonly ready: boolean;
  /** Connects, and keeps reconnecting with backoff until closed. Called once. */
  start(handlers: TransportHandlers): void;
  /**
   * Sends frames in order, all in one go (the frames of one message must not be separated).
   * Rejects when they were not sent; `ready` is false afterwards if the connection is the cause.
   */
  send(frames: readonly string[]): Promise<void>;
  close(): Promise<void>;
}

/**
 * Tuning shared by both buses.
 *
 * @example
 * ```ts
 * const options: SharedBusOptions = { maxEventBytes: 1 << 20, maxQueuedBytes: 16 << 20 };
 * ```
 */
export interface SharedBusOptions {
  /** Where outages and dropped messages are reported. Default: nowhere. */
  logger?: BusLogger;
  /** Events whose JSON is larger than this go to local listeners only. Default 4 MiB. */
  maxEventBytes?: number;
  /** Outgoing frames kept while the connection is down; newer messages are dropped beyond it. Default 16 MiB. */
  maxQueuedBytes?: number;
  /** How long close() waits for queued messages to go out. Default 2 000 ms. */
  closeTimeoutMs?: number;
}

/**
 * Counters of one bus, for tests and metrics.
 *
 * @example
 * ```ts
 * const { sent, received, dropped } = bus.stats;
 * ```
 */
export interface SharedBusStats {
  /** Messages handed to the transport. */
  sent: number;
  /** Messages from other replicas delivered to local listeners. */
  received: number;
  /** Messages never sent: over maxEventBytes, queue full, or refused by the server. */
  dropped: number;
  /** Frames that could not be read. */
  malformed: number;
}

const DEFAULT_MAX_EVENT_BYTES = 4 * 1024 * 1024;
const DEFAULT_MAX_QUEUED_BYTES = 16 * 1024 * 1024;
const DEFAULT_CLOSE_TIMEOUT_MS = 2_000;
/** One send carries at most this much, so one slow batch does not hold back everything. */
const MAX_BATCH_BYTES = 512 * 1024;
const MAX_BATCH_FRAMES = 1_000;

/** A message's frames, queued as one unit. */
interface Outgoing {
  frames: string[];
  bytes: number;
}

/**
 * A task event bus shared by replicas through a {@link BusTransport}. See the module comment.
 *
 * @example
 * ```ts
 * const bus = new SharedTaskEventBus(new RedisBusTransport(settings), { logger });
 * const service = new TaskService({ store, bus });
 * ```
 */
export class SharedTaskEventBus implements TaskEventBus {
  /** This bus's origin id: frames carrying it are its own echoes. */
  readonly origin: string;
  readonly #name: string;
  readonly #transport: BusTransport;
  readonly #local = new LocalTaskEventBus();
  readonly #cancelListeners = new Set<CancelRequestListener>();
  readonly #lagListeners = new Set<(seconds: number) => void>();
  /** Listeners per task id: a received event for a task nobody here follows is not even parsed. */
  readonly #listening = new Map<string, number>();
  readonly #encoder: FrameEncoder;
  readonly #decoder: FrameDecoder;
  readonly #log: BusLogger | undefined;
  readonly #maxQueuedBytes: number;
  readonly #closeTimeoutMs: number;
  readonly #stats = { sent: 0, received: 0, dropped: 0 };
  #queue: Outgoing[] = [];
  #head = 0;
  #queuedBytes = 0;
  #sending: Promise<void> | undefined;
  /** Since when the transport is down (epoch ms), or undefined while it is up. */
  #downSince: number | undefined;
  #droppedWhileDown = 0;
  /** The current outage was logged (its end will be too). */
  #outageLogged = false;
  #tooLargeLogged = false;
  #closed = false;

  constructor(transport: BusTransport, options: SharedBusOptions & { name: string }) {
    this.origin = newOrigin();
    this.#name = options.name;
    this.#transport = transport;
    this.#log = options.logger;
    this.#maxQueuedBytes = options.maxQueuedBytes ?? DEFAULT_MAX_QUEUED_BYTES;
    this.#closeTimeoutMs = options.closeTimeoutMs ?? DEFAULT_CLOSE_TIMEOUT_MS;
    const maxEventBytes = options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES;
    for (const [name, value] of [
      ['maxEventBytes', maxEventBytes],
      ['maxQueuedBytes', this.#maxQueuedBytes],
      ['closeTimeoutMs', this.#closeTimeoutMs],
    ] as const) {
      if (!(Number.isSafeInteger(value) && value >= 1)) throw new RangeError(`${name} must be a positive integer`);
    }
    this.#encoder = new FrameEncoder({
      origin: this.origin,
      maxFrameBytes: transport.maxFrameBytes,
      maxMessageBytes: maxEventBytes,
    });
    this.#decoder = new FrameDecoder({ self: this.origin });
    // Counted as down until the first connection: publishes queue up meanwhile.
    this.#downSince = Date.now();
    transport.start({
      onFrame: (frame) => this.#receive(frame),
      onUp: () => this.#up(),
      onDown: (error) => this.#down(error),
    });
  }

  publish(taskId: string, event: StreamEvent): void {
    this.#local.publish(taskId, event);
    this.#send({ kind: 'event', taskId, event });
  }

  subscribe(taskId: string, listener: TaskEventListener): () => void {
    this.#listening.set(taskId, (this.#listening.get(taskId) ?? 0) + 1);
    const stop = this.#local.subscribe(taskId, listener);
    let stopped = false;
    return () => {
      if (stopped) return;
      stopped = true;
      stop();
      const left = (this.#listening.get(taskId) ?? 1) - 1;
      if (left <= 0) this.#listening.delete(taskId);
      else this.#listening.set(taskId, left);
    };
  }

  requestCancel(taskId: string): void {
    this.#deliverCancel(taskId);
    this.#send({ kind: 'cancel', taskId });
  }

  onCancelRequest(listener: CancelRequestListener): () => void {
    // A wrapper per registration, so that registering one function twice needs two removals.
    const entry: CancelRequestListener = (taskId) => listener(taskId);
    this.#cancelListeners.add(entry);
    return () => {
      this.#cancelListeners.delete(entry);
    };
  }

  /**
   * Tells `listener` how long each message from another replica took from its publish to its
   * receipt here, in seconds (the metrics' `airlock_event_bus_lag_seconds`). The two ends read
   * different clocks: a negative difference (skew) is reported as 0. Messages from replicas of a
   * version that writes no publish time are not reported.
   *
   * @returns a function that stops the reports.
   * @example
   * ```ts
   * const stop = bus.onReceiptLag((seconds) => lag.observe(seconds, bus.kind));
   * ```
   */
  onReceiptLag(listener: (seconds: number) => void): () => void {
    const entry = (seconds: number): void => listener(seconds);
    this.#lagListeners.add(entry);
    return () => {
      this.#lagListeners.delete(entry);
    };
  }

  /** The transport's kind: `postgres` or `redis`. */
  get kind(): string {
    return this.#name;
  }

  /** True while the bus is connected both ways: it sends, and hears the other replicas. */
  get connected(): boolean {
    return this.#downSince === undefined && this.#transport.ready;
  }

  /** Counters since the bus was made. */
  get stats(): SharedBusStats {
    return { ...this.#stats, malformed: this.#decoder.malformed };
  }

  /**
   * Resolves once every queued message went out (or `timeoutMs` passed): for tests that must
   * know another replica can have received what this one published.
   *
   * @example
   * ```ts
   * bus.publish(taskId, event);
   * await bus.flushed();
   * ```
   */
  async flushed(timeoutMs = this.#closeTimeoutMs): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.#head < this.#queue.length || this.#sending !== undefined) {
      if (Date.now() >= deadline) return false;
      if (this.#sending !== undefined) await Promise.race([this.#sending, delay(deadline - Date.now())]);
      else await delay(Math.min(20, deadline - Date.now()));
    }
    return true;
  }

  /** Sends what is queued (up to closeTimeoutMs, if connected), then disconnects. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    // Waiting for a connection that is down would only delay the shutdown.
    const flushed = this.#transport.ready ? await this.flushed() : false;
    this.#closed = true;
    if (!flushed) {
      const left = this.#queue.length - this.#head;
      if (left > 0) this.#log?.warn({ event: 'task_event_bus_close_unsent', bus: this.#name, messages: left });
    }
    this.#queue = [];
    this.#head = 0;
    this.#queuedBytes = 0;
    await this.#transport.close();
  }

  #deliverCancel(taskId: string): void {
    for (const listener of this.#cancelListeners) {
      // A listener that throws must not stop the others.
      try {
        listener(taskId);
      } catch {
        /* listeners own their errors */
      }
    }
  }

  #send(message: BusMessage): void {
    if (this.#closed) return;
    let frames: string[];
    try {
      frames = this.#encoder.encode(message);
    } catch (error) {
      this.#stats.dropped++;
      if (!this.#tooLargeLogged) {
        // Once per bus: an agent that sends huge events would otherwise flood the log.
        this.#tooLargeLogged = true;
        this.#log?.warn({
          event: 'task_event_bus_event_too_large',
          bus: this.#name,
          bytes: error instanceof BusMessageTooLargeError ? error.bytes : undefined,
          error: describe(error),
        });
      }
      return;
    }
    let bytes = 0;
    for (const frame of frames) bytes += frame.length;
    if (this.#queuedBytes + bytes > this.#maxQueuedBytes) {
      this.#stats.dropped++;
      this.#droppedWhileDown++;
      return;
    }
    this.#queue.push({ frames, bytes });
    this.#queuedBytes += bytes;
    this.#kick();
  }

  #kick(): void {
    if (this.#sending !== undefined || this.#closed || !this.#transport.ready) return;
    if (this.#head >= this.#queue.length) return;
    this.#sending = this.#drain().finally(() => {
      this.#sending = undefined;
      // More may have been queued while the last batch was on its way.
      this.#kick();
    });
  }

  /** Sends queued messages in batches while the transport is up. Never rejects. */
  async #drain(): Promise<void> {
    while (this.#head < this.#queue.length && this.#transport.ready && !this.#closed) {
      const batch: string[] = [];
      let batchBytes = 0;
      let taken = 0;
      for (let i = this.#head; i < this.#queue.length; i++) {
        const message = this.#queue[i] as Outgoing;
        // Whole messages only; the first one goes even when it is larger than a batch.
        if (
          taken > 0 &&
          (batchBytes + message.bytes > MAX_BATCH_BYTES || batch.length + message.frames.length > MAX_BATCH_FRAMES)
        ) {
          break;
        }
        for (const frame of message.frames) batch.push(frame);
        batchBytes += message.bytes;
        taken++;
      }
      let delivered = true;
      try {
        await this.#transport.send(batch);
      } catch (error) {
        // The connection broke: the batch stays queued and goes again once it is back (receivers
        // drop what they already had, by sequence number). Otherwise the server refused the
        // batch itself: sending it again would fail again.
        if (!this.#transport.ready) return;
        this.#log?.error({ event: 'task_event_bus_send_failed', bus: this.#name, error: describe(error) });
        delivered = false;
      }
      if (delivered) this.#stats.sent += taken;
      else this.#stats.dropped += taken;
      this.#head += taken;
      this.#queuedBytes -= batchBytes;
      if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
        this.#queue = this.#queue.slice(this.#head);
        this.#head = 0;
      }
    }
  }

  #receive(frame: string): void {
    const message = this.#decoder.accept(frame);
    if (message === undefined) return;
    this.#stats.received++;
    if (message.sentAt !== undefined && this.#lagListeners.size > 0) this.#reportLag(message.sentAt);
    if (message.kind === 'cancel') {
      this.#deliverCancel(message.taskId);
      return;
    }
    if (!this.#listening.has(message.taskId)) return;
    const event = this.#decoder.parseEvent(message.body);
    if (event !== undefined) this.#local.publish(message.taskId, event);
  }

  #reportLag(sentAt: number): void {
    const seconds = Math.max(0, Date.now() - sentAt) / 1000;
    for (const listener of this.#lagListeners) {
      try {
        listener(seconds);
      } catch {
        /* a metric never stops delivery */
      }
    }
  }

  #up(): void {
    const since = this.#downSince;
    this.#downSince = undefined;
    // A message cut short by the outage will never be completed.
    this.#decoder.reset();
    if (this.#outageLogged) {
      this.#outageLogged = false;
      this.#log?.info({
        event: 'task_event_bus_reconnected',
        bus: this.#name,
        downMs: since === undefined ? 0 : Date.now() - since,
        dropped: this.#droppedWhileDown,
      });
    }
    this.#droppedWhileDown = 0;
    this.#kick();
  }

  /** Logged once per outage: the transport keeps retrying quietly until it is back. */
  #down(error: unknown): void {
    this.#downSince ??= Date.now();
    if (this.#outageLogged) return;
    this.#outageLogged = true;
    this.#log?.warn({
      event: 'task_event_bus_disconnected',
      bus: this.#name,
      error: describe(error),
      note: 'local delivery continues; reconnecting with backoff',
    });
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

function delay(ms: number): Promise<void> {
  // unref: a wait that lost its race must not keep the process alive.
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)).unref());
}
