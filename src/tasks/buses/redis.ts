/**
 * The task event bus over Redis pub/sub (`@redis/client`), for replicas that share a Redis.
 * Two connections per process: one publishes (commands leave in order on it, so this process's
 * messages arrive in publish order), one is subscribed to the gateway's channel (a subscribed
 * connection can do nothing else).
 *
 * - Payloads: the same frames as the PostgreSQL bus (see `frames.ts`), never cut: Redis takes
 *   messages up to 512 MB, and `maxEventBytes` bounds them well below that.
 * - Faults: both connections reconnect by themselves with exponential backoff and jitter, and
 *   the subscriber subscribes again. Commands are not queued while disconnected (the bus keeps
 *   its own bounded queue), and a PING every `healthCheckIntervalMs` finds dead connections.
 *
 * @example
 * ```ts
 * const bus = createRedisTaskEventBus({ url: 'redis://127.0.0.1:6379', logger });
 * const gateway = createGateway(config, { logger, store, bus });
 * ```
 */
import { randomBytes } from 'node:crypto';
import { createClient } from '@redis/client';
import { SharedTaskEventBus, type BusTransport, type SharedBusOptions, type TransportHandlers } from './shared.js';

/**
 * Options of {@link createRedisTaskEventBus}.
 *
 * @example
 * ```ts
 * const options: RedisTaskEventBusOptions = { url: 'redis://cache:6379/0', channel: 'airlock:prod:events' };
 * ```
 */
export interface RedisTaskEventBusOptions extends SharedBusOptions {
  /** `redis[s]://[[user][:password]@][host][:port][/db]`. */
  url: string;
  /** The pub/sub channel the gateway's replicas share. Default `airlock:events`. */
  channel?: string;
  /** Connecting longer than this fails the attempt (and another follows). Default 5 000 ms. */
  connectTimeoutMs?: number;
  /** A publish not answered within this is given up (the batch is dropped). Default 5 000 ms. */
  commandTimeoutMs?: number;
  /** First reconnect delay; doubles per failed attempt up to the maximum. Default 100 ms. */
  reconnectMinDelayMs?: number;
  /** Longest reconnect delay. Default 5 000 ms. */
  reconnectMaxDelayMs?: number;
  /** PING interval on both connections. Default 10 000 ms. */
  healthCheckIntervalMs?: number;
}

const DEFAULT_CHANNEL = 'airlock:events';

/**
 * Creates a task event bus over Redis pub/sub and starts connecting (it does not wait).
 *
 * @throws RangeError for bad timings or an empty channel.
 * @example
 * ```ts
 * const bus = createRedisTaskEventBus({ url: process.env.REDIS_URL! });
 * ```
 */
export function createRedisTaskEventBus(options: RedisTaskEventBusOptions): RedisTaskEventBus {
  const channel = options.channel ?? DEFAULT_CHANNEL;
  if (channel.length === 0) throw new RangeError('channel must not be empty');
  const settings: RedisTransportSettings = {
    connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
    commandTimeoutMs: options.commandTimeoutMs ?? 5_000,
    reconnectMinDelayMs: options.reconnectMinDelayMs ?? 100,
    reconnectMaxDelayMs: options.reconnectMaxDelayMs ?? 5_000,
    healthCheckIntervalMs: options.healthCheckIntervalMs ?? 10_000,
  };
  for (const [name, value] of Object.entries(settings)) {
    if (!(Number.isSafeInteger(value) && value >= 1)) throw new RangeError(`${name} must be a positive integer`);
  }
  return new RedisTaskEventBus(new RedisBusTransport(options.url, channel, settings), options);
}

/**
 * A {@link SharedTaskEventBus} over Redis, with the names its connections give themselves
 * (`CLIENT SETNAME`), so that an operator can tell them apart in `CLIENT LIST`.
 *
 * @example
 * ```ts
 * const bus = createRedisTaskEventBus({ url });
 * console.log(bus.clientNames); // ['airlock-bus-3f9c0e1d-pub', 'airlock-bus-3f9c0e1d-sub']
 * ```
 */
export class RedisTaskEventBus extends SharedTaskEventBus {
  /** The pub/sub channel. */
  readonly channel: string;
  /** The publishing and the subscribed connection's client names. */
  readonly clientNames: readonly [string, string];

  constructor(transport: RedisBusTransport, options: SharedBusOptions) {
    super(transport, { ...options, name: 'redis' });
    this.channel = transport.channel;
    this.clientNames = transport.clientNames;
  }
}

interface RedisTransportSettings {
  connectTimeoutMs: number;
  commandTimeoutMs: number;
  reconnectMinDelayMs: number;
  reconnectMaxDelayMs: number;
  healthCheckIntervalMs: number;
}

type RedisClient = ReturnType<typeof createClient>;

/**
 * A publishing and a subscribed Redis connection. See the module comment.
 *
 * @example
 * ```ts
 * const transport = new RedisBusTransport('redis://127.0.0.1:6379', 'airlock:events', settings);
 * ```
 */
export class RedisBusTransport implements BusTransport {
  readonly maxFrameBytes = Number.POSITIVE_INFINITY;
  readonly channel: string;
  readonly clientNames: readonly [string, string];
  readonly #publisher: RedisClient;
  readonly #subscriber: RedisClient;
  readonly #commandTimeoutMs: number;
  #handlers: TransportHandlers | undefined;
  #subscribed = false;
  #up = false;
  #closed = false;

  constructor(url: string, channel: string, settings: RedisTransportSettings) {
    this.channel = channel;
    this.#commandTimeoutMs = settings.commandTimeoutMs;
    const id = randomBytes(4).toString('hex');
    this.clientNames = [`airlock-bus-${id}-pub`, `airlock-bus-${id}-sub`];
    const { reconnectMinDelayMs, reconnectMaxDelayMs } = settings;
    this.#publisher = createClient({
      url,
      name: this.clientNames[0],
      // The bus queues what it could not send; the client must fail fast instead of queueing too.
      disableOfflineQueue: true,
      pingInterval: settings.healthCheckIntervalMs,
      socket: {
        connectTimeout: settings.connectTimeoutMs,
        reconnectStrategy: (retries) => {
          const ceiling = Math.min(reconnectMaxDelayMs, reconnectMinDelayMs * 2 ** Math.min(retries, 20));
          return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
        },
      },
    });
    this.#subscriber = this.#publisher.duplicate({ name: this.clientNames[1] });
  }

  get ready(): boolean {
    return this.#publisher.isReady;
  }

  start(handlers: TransportHandlers): void {
    this.#handlers = handlers;
    for (const client of [this.#publisher, this.#subscriber]) {
      // An unheard 'error' event would crash the process; every one means "not connected now".
      client.on('error', (error: unknown) => this.#changed(error));
      client.on('ready', () => this.#changed(undefined));
      client.on('end', () => this.#changed(new Error('the event bus connection ended')));
    }
    this.#publisher.connect().catch((error: unknown) => this.#changed(error));
    this.#subscriber
      .connect()
      .then(() =>
        // The client subscribes again by itself after every reconnect.
        this.#subscriber.subscribe(this.channel, (message) => this.#handlers?.onFrame(message)),
      )
      .then(() => {
        this.#subscribed = true;
        this.#changed(undefined);
      })
      .catch((error: unknown) => this.#changed(error));
  }

  async send(frames: readonly string[]): Promise<void> {
    // Issued in one go: the client writes them in this order on one connection.
    const sent = Promise.all(frames.map((frame) => this.#publisher.publish(this.channel, frame)));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`Redis did not answer within ${this.#commandTimeoutMs} ms`)),
        this.#commandTimeoutMs,
      );
    });
    try {
      await Promise.race([sent, timeout]);
    } finally {
      clearTimeout(timer);
      // A late rejection of the abandoned publishes must not go unhandled.
      sent.catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const client of [this.#subscriber, this.#publisher]) {
      // destroy(): close() would wait for a server that may be gone.
      if (client.isOpen) client.destroy();
    }
  }

  /** Re-derives up/down from both connections and tells the bus when it changed. */
  #changed(error: unknown): void {
    if (this.#closed) return;
    const up = this.#publisher.isReady && this.#subscriber.isReady && this.#subscribed;
    if (up === this.#up) {
      if (!up && error !== undefined) this.#handlers?.onDown(error);
      return;
    }
    this.#up = up;
    if (up) this.#handlers?.onUp();
    else this.#handlers?.onDown(error ?? new Error('the event bus connection is down'));
  }
}
