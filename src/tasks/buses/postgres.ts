/**
 * The task event bus over PostgreSQL LISTEN/NOTIFY, for replicas that share a PostgreSQL task
 * store and no Redis. Each process holds one dedicated connection (not a pool's): it LISTENs on
 * the gateway's channel and sends this process's NOTIFYs, so they leave in publish order.
 *
 * - Channel: `airlock_events`, or `airlock_events_<schema>` when the store uses a schema other
 *   than `public`, so that gateways sharing a database through different schemas do not hear
 *   each other.
 * - Payloads: frames (see `frames.ts`). A NOTIFY payload must be under 8000 bytes: larger events
 *   are cut into several frames sent in one statement (one transaction, so they are delivered
 *   together and in order) and joined by the receivers.
 * - Batching: messages published while a NOTIFY statement is on its way go together in the next
 *   one (`SELECT pg_notify(channel, frame) FROM unnest(frames)`): one round trip for a burst.
 * - Faults: a lost connection (server restart, `pg_terminate_backend`, network) is reopened with
 *   exponential backoff and jitter, and LISTEN is issued again; a health query every
 *   `healthCheckIntervalMs` finds connections that died silently. Every statement has a
 *   timeout, so nothing waits on a server that stopped answering.
 *
 * @example
 * ```ts
 * const bus = createPostgresTaskEventBus({ url: process.env.DATABASE_URL!, schema: 'airlock', logger });
 * const gateway = createGateway(config, { logger, store, bus });
 * // …
 * await gateway.close(); // closes the bus too
 * ```
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import type { ClientConfig, Pool } from 'pg';
import { asStoreError } from '../stores/postgres.js';
import { isStoreUnavailable } from '../stores/errors.js';
import { POSTGRES_MAX_PAYLOAD_BYTES } from './frames.js';
import { SharedTaskEventBus, type BusTransport, type SharedBusOptions, type TransportHandlers } from './shared.js';

/**
 * Options of {@link createPostgresTaskEventBus}: `url` or `pool` (whose connection settings the
 * bus copies for its own connection; the pool itself is left alone).
 *
 * @example
 * ```ts
 * const options: PostgresTaskEventBusOptions = { pool: store.pool, schema: 'airlock', logger };
 * ```
 */
export interface PostgresTaskEventBusOptions extends SharedBusOptions {
  /** A libpq connection URL. */
  url?: string;
  /** A pool whose connection settings the bus copies (when `url` is not given). */
  pool?: Pool;
  /** The task store's schema: it names the channel (see {@link postgresEventChannel}). */
  schema?: string;
  /** The channel itself, overriding the one derived from `schema`. `[a-z_][a-z0-9_]*`, at most 63. */
  channel?: string;
  /** Connecting longer than this fails the attempt (and another follows). Default 5 000 ms. */
  connectTimeoutMs?: number;
  /** One NOTIFY batch or health query longer than this drops the connection. Default 5 000 ms. */
  statementTimeoutMs?: number;
  /** First reconnect delay; doubles per failed attempt up to the maximum. Default 100 ms. */
  reconnectMinDelayMs?: number;
  /** Longest reconnect delay. Default 5 000 ms. */
  reconnectMaxDelayMs?: number;
  /** How often an idle connection is checked with `SELECT 1`. Default 10 000 ms. */
  healthCheckIntervalMs?: number;
}

const CHANNEL_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;
const CHANNEL_BASE = 'airlock_events';
const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
const DEFAULT_STATEMENT_TIMEOUT_MS = 5_000;
const DEFAULT_RECONNECT_MIN_MS = 100;
const DEFAULT_RECONNECT_MAX_MS = 5_000;
const DEFAULT_HEALTH_CHECK_MS = 10_000;
/** One statement sends a whole batch, in array order. Named: prepared once per connection. */
const NOTIFY_BATCH = {
  name: 'airlock_bus_notify',
  text: 'SELECT count(pg_notify($1, frame)) AS sent FROM unnest($2::text[]) AS batch (frame)',
};

/**
 * The channel a gateway's replicas share: `airlock_events` for the `public` schema (or none),
 * `airlock_events_<schema>` otherwise (a hash of the schema when that would exceed 63 bytes).
 *
 * @example
 * ```ts
 * postgresEventChannel();           // 'airlock_events'
 * postgresEventChannel('tenant_a'); // 'airlock_events_tenant_a'
 * ```
 */
export function postgresEventChannel(schema?: string): string {
  if (schema === undefined || schema === 'public') return CHANNEL_BASE;
  const channel = `${CHANNEL_BASE}_${schema}`;
  if (CHANNEL_PATTERN.test(channel)) return channel;
  return `${CHANNEL_BASE}_${createHash('sha256').update(schema).digest('hex').slice(0, 32)}`;
}

/**
 * A {@link SharedTaskEventBus} over PostgreSQL, with what tests and metrics may want to know of
 * its connection.
 *
 * @example
 * ```ts
 * const bus = createPostgresTaskEventBus({ url });
 * console.log(bus.channel, bus.backendPid);
 * ```
 */
export class PostgresTaskEventBus extends SharedTaskEventBus {
  /** The LISTEN/NOTIFY channel. */
  readonly channel: string;
  readonly #transport: PostgresBusTransport;

  constructor(transport: PostgresBusTransport, options: SharedBusOptions) {
    super(transport, { ...options, name: 'postgres' });
    this.channel = transport.channel;
    this.#transport = transport;
  }

  /** The server process of the listening connection (`pg_backend_pid()`), while connected. */
  get backendPid(): number | undefined {
    return this.#transport.backendPid;
  }
}

/**
 * Creates a task event bus over PostgreSQL LISTEN/NOTIFY and starts connecting (it does not
 * wait: publishes queue up until the connection is there, and local listeners never wait).
 *
 * @throws RangeError for a missing url/pool, a bad channel or bad timings.
 * @example
 * ```ts
 * const bus = createPostgresTaskEventBus({ url: 'postgres://airlock@db/airlock', schema: 'airlock' });
 * ```
 */
export function createPostgresTaskEventBus(options: PostgresTaskEventBusOptions): PostgresTaskEventBus {
  const channel = options.channel ?? postgresEventChannel(options.schema);
  if (!CHANNEL_PATTERN.test(channel)) throw new RangeError(`channel must match ${CHANNEL_PATTERN.source}`);
  let connection: ClientConfig;
  if (options.url !== undefined) connection = { connectionString: options.url };
  else if (options.pool !== undefined) connection = connectionOf(options.pool);
  else throw new RangeError('createPostgresTaskEventBus needs a url or a pool');
  const settings: TransportSettings = {
    connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    statementTimeoutMs: options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS,
    reconnectMinDelayMs: options.reconnectMinDelayMs ?? DEFAULT_RECONNECT_MIN_MS,
    reconnectMaxDelayMs: options.reconnectMaxDelayMs ?? DEFAULT_RECONNECT_MAX_MS,
    healthCheckIntervalMs: options.healthCheckIntervalMs ?? DEFAULT_HEALTH_CHECK_MS,
  };
  for (const [name, value] of Object.entries(settings)) {
    if (!(Number.isSafeInteger(value) && value >= 1)) throw new RangeError(`${name} must be a positive integer`);
  }
  return new PostgresTaskEventBus(new PostgresBusTransport(connection, channel, settings), options);
}

/** A pool's connection settings, without its pooling ones. */
function connectionOf(pool: Pool): ClientConfig {
  const { connectionString, host, port, user, password, database, ssl } = pool.options;
  return { connectionString, host, port, user, password, database, ssl };
}

interface TransportSettings {
  connectTimeoutMs: number;
  statementTimeoutMs: number;
  reconnectMinDelayMs: number;
  reconnectMaxDelayMs: number;
  healthCheckIntervalMs: number;
}

/**
 * One dedicated connection that LISTENs and NOTIFYs, reopened whenever it is lost. See the
 * module comment.
 *
 * @example
 * ```ts
 * const transport = new PostgresBusTransport({ connectionString: url }, 'airlock_events', settings);
 * ```
 */
export class PostgresBusTransport implements BusTransport {
  readonly maxFrameBytes = POSTGRES_MAX_PAYLOAD_BYTES;
  readonly channel: string;
  readonly #connection: ClientConfig;
  readonly #settings: TransportSettings;
  #handlers: TransportHandlers | undefined;
  /** The connection in use, once LISTEN succeeded on it. */
  #client: pg.Client | undefined;
  #backendPid: number | undefined;
  #attempt = 0;
  #retryTimer: NodeJS.Timeout | undefined;
  #healthTimer: NodeJS.Timeout | undefined;
  #busy = false;
  #closed = false;

  constructor(connection: ClientConfig, channel: string, settings: TransportSettings) {
    this.#connection = connection;
    this.channel = channel;
    this.#settings = settings;
  }

  get ready(): boolean {
    return this.#client !== undefined;
  }

  get backendPid(): number | undefined {
    return this.#backendPid;
  }

  start(handlers: TransportHandlers): void {
    this.#handlers = handlers;
    void this.#connect();
    this.#healthTimer = setInterval(() => this.#checkHealth(), this.#settings.healthCheckIntervalMs).unref();
  }

  async send(frames: readonly string[]): Promise<void> {
    const client = this.#client;
    if (client === undefined) throw new Error('the event bus connection is down');
    this.#busy = true;
    try {
      await client.query({ ...NOTIFY_BATCH, values: [this.channel, frames] });
    } catch (error) {
      // A connection-level failure (or a timeout: the server may be gone) ends this connection;
      // the bus keeps the batch for the next one.
      if (isStoreUnavailable(asStoreError(error))) this.#lost(client, error);
      throw error;
    } finally {
      this.#busy = false;
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retryTimer);
    clearInterval(this.#healthTimer);
    const client = this.#client;
    this.#client = undefined;
    this.#backendPid = undefined;
    if (client !== undefined) await endQuietly(client);
  }

  async #connect(): Promise<void> {
    if (this.#closed) return;
    const { connectTimeoutMs, statementTimeoutMs } = this.#settings;
    const client = new pg.Client({
      ...this.#connection,
      connectionTimeoutMillis: connectTimeoutMs,
      statement_timeout: statementTimeoutMs,
      // The client gives up too when the server goes silent (a dead network cancels nothing).
      query_timeout: statementTimeoutMs + 1_000,
      keepAlive: true,
      application_name: `airlock:bus:${this.channel}`,
    });
    // Listeners first: an unheard 'error' event would crash the process.
    client.on('error', (error) => this.#lost(client, error));
    client.on('end', () => this.#lost(client, new Error('the event bus connection ended')));
    client.on('notification', (notification) => {
      // Frames may arrive between LISTEN and the moment the connection is declared up: kept.
      if ((client as LostMark)[LOST] === true || notification.channel !== this.channel) return;
      const payload = notification.payload;
      if (payload !== undefined && payload.length > 0) this.#handlers?.onFrame(payload);
    });
    try {
      await client.connect();
      // The channel matches CHANNEL_PATTERN: quoting it is all the escaping it needs.
      await client.query(`LISTEN "${this.channel}"`);
      const pid = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      this.#backendPid = pid.rows[0]?.pid;
    } catch (error) {
      this.#lost(client, error);
      return;
    }
    if (this.#closed) {
      await endQuietly(client);
      return;
    }
    this.#client = client;
    this.#attempt = 0;
    this.#handlers?.onUp();
  }

  /** The connection failed or ended: forget it, tell the bus, and try again after a backoff. */
  #lost(client: pg.Client, error: unknown): void {
    const tracked = client as LostMark;
    if (tracked[LOST] === true) return;
    tracked[LOST] = true;
    if (this.#client === client) {
      this.#client = undefined;
      this.#backendPid = undefined;
    }
    void endQuietly(client);
    if (this.#closed) return;
    this.#handlers?.onDown(error);
    const { reconnectMinDelayMs, reconnectMaxDelayMs } = this.#settings;
    const ceiling = Math.min(reconnectMaxDelayMs, reconnectMinDelayMs * 2 ** Math.min(this.#attempt, 20));
    this.#attempt++;
    // Full jitter in the upper half: replicas that lost the server together do not return together.
    const wait = Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
    clearTimeout(this.#retryTimer);
    this.#retryTimer = setTimeout(() => void this.#connect(), wait).unref();
  }

  /** Finds a connection that died without a word (a dropped network keeps TCP quiet). */
  #checkHealth(): void {
    const client = this.#client;
    if (client === undefined || this.#busy) return;
    client.query('SELECT 1').catch((error: unknown) => this.#lost(client, error));
  }
}

const LOST = Symbol('airlock.busConnectionLost');
/** A connection marked once it was given up, so that its late events are ignored. */
type LostMark = pg.Client & { [LOST]?: boolean };

async function endQuietly(client: pg.Client): Promise<void> {
  // A client that already failed may never answer end(): it is not waited for long.
  await Promise.race([
    client.end().catch(() => undefined),
    new Promise((resolve) => setTimeout(resolve, 1_000).unref()),
  ]);
}
