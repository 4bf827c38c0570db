/**
 * The client side of a query's time limit, for a whole pool: one timer, not one per query.
 *
 * The server ends a slow statement itself (`statement_timeout`), but not one it never hears of,
 * nor an answer lost on a dead network: the client gives up too, a grace period later. pg's own
 * `query_timeout` does that with a timer per query, and under load that timer keeps the batch a
 * group commit has in flight alive past collections: the PostgreSQL row promoted 1.94 KB a
 * request with it and 1.05 KB without (`--trace-gc-nvp`, 2026-12-04; docs/PERFORMANCE-LOG.md, "One
 * read timer per pool"). Here each query notes the tick it started in, one
 * unref'd interval counts ticks while the pool has connections, and a query still running after
 * its limit has its connection destroyed: it and every query queued on that connection fail
 * (`QueryReadTimeoutError`, a `StoreUnavailableError`), and the pool drops that connection.
 *
 * @example
 * ```ts
 * const watchdog = new QueryWatchdog(7_000);
 * const pool = new pg.Pool({ ...config, Client: watchdog.clientClass() });
 * watchdog.attach(pool);
 * ```
 */
import pg from 'pg';
import type { ClientConfig, Pool } from 'pg';
import { StoreUnavailableError } from '../errors.js';

/** A query being watched. */
interface WatchedQuery {
  readonly client: pg.Client;
  /** The tick it started in. */
  readonly started: number;
  /** How long it may go unanswered, and that in ticks (see QueryWatchdog's #limitOf). */
  readonly limit: Limit;
  timedOut: boolean;
}

interface Limit {
  readonly ms: number;
  readonly ticks: number;
}

type QueryCallback = (error: Error | null | undefined, result?: unknown) => void;
type QueryFunction = (this: pg.Client, config: unknown, values?: unknown, callback?: unknown) => unknown;

/** At most this long between two checks: a query fails between its limit and limit + 2 ticks. */
const MAX_TICK_MS = 1_000;

/**
 * The error of a query that the server did not answer within its limit: the store is unavailable
 * (retryable), and the connection it ran on is gone.
 *
 * @example
 * ```ts
 * if (error instanceof QueryReadTimeoutError) retryLater();
 * ```
 */
export class QueryReadTimeoutError extends StoreUnavailableError {
  constructor(limitMs: number) {
    super(`PostgreSQL did not answer a query within ${limitMs} ms`);
  }
}

/**
 * Watches every query of the pools' clients made by {@link clientClass}.
 *
 * @example
 * ```ts
 * const watchdog = new QueryWatchdog(statementTimeoutMs + 2_000);
 * ```
 */
export class QueryWatchdog {
  readonly #tickMs: number;
  readonly #limit: Limit;
  readonly #running = new Set<WatchedQuery>();
  /** Clients given a longer limit for a while (a migration). */
  readonly #longer = new WeakMap<pg.Client, Limit>();
  #ticks = 0;
  #clients = 0;
  #timer: NodeJS.Timeout | undefined;

  /** `limitMs`: how long a query may go unanswered. */
  constructor(limitMs: number) {
    this.#tickMs = Math.max(10, Math.min(MAX_TICK_MS, Math.ceil(limitMs / 4)));
    this.#limit = this.#limitOf(limitMs);
  }

  /**
   * pg's Client, with each query (but a stream's, or one with its own `query_timeout`, which pg
   * times itself) watched here. Give it to the pool as `Client`.
   */
  clientClass(): new (config?: ClientConfig) => pg.Client {
    const query = Reflect.get(pg.Client.prototype, 'query') as QueryFunction;
    const run = this.#run;
    class WatchedClient extends pg.Client {}
    const watched: QueryFunction = function (config, values, callback) {
      if (!isPlainQuery(config)) return query.call(this, config, values, callback);
      return run(this, query, config, values, callback);
    };
    Object.defineProperty(WatchedClient.prototype, 'query', { value: watched, writable: true, configurable: true });
    return WatchedClient;
  }

  /** Counts the pool's connections: the interval runs only while it has some (an ended pool has none). */
  attach(pool: Pool): void {
    pool.on('connect', () => {
      this.#clients += 1;
      this.#timer ??= setInterval(() => this.#tick(), this.#tickMs).unref();
    });
    pool.on('remove', () => {
      this.#clients -= 1;
      if (this.#clients > 0 || this.#timer === undefined) return;
      clearInterval(this.#timer);
      this.#timer = undefined;
    });
  }

  /**
   * Gives the queries `client` starts from now on `limitMs` instead of the pool's limit (a
   * migration's session runs with a longer statement timeout); `undefined` takes it back.
   *
   * @example
   * ```ts
   * watchdog.allow(client, migrationTimeoutMs + 2_000);
   * try { await migrate(client); } finally { watchdog.allow(client, undefined); }
   * ```
   */
  allow(client: pg.Client, limitMs: number | undefined): void {
    if (limitMs === undefined) this.#longer.delete(client);
    else this.#longer.set(client, this.#limitOf(limitMs));
  }

  /** How many queries are being watched (tests). */
  get running(): number {
    return this.#running.size;
  }

  readonly #run = (
    client: pg.Client,
    query: QueryFunction,
    config: unknown,
    values: unknown,
    callback: unknown,
  ): unknown => {
    const limit = this.#longer.get(client) ?? this.#limit;
    const watch: WatchedQuery = { client, started: this.#ticks, limit, timedOut: false };
    this.#running.add(watch);
    const done = (error: unknown): unknown => {
      this.#running.delete(watch);
      return watch.timedOut ? new QueryReadTimeoutError(limit.ms) : error;
    };
    if (typeof values === 'function') {
      callback = values;
      values = undefined;
    }
    if (typeof callback === 'function') {
      const answer = callback as QueryCallback;
      return query.call(client, config, values, (error: Error | null | undefined, result?: unknown) =>
        answer(done(error) as Error | null | undefined, result),
      );
    }
    return (query.call(client, config, values) as Promise<unknown>).then(
      (result) => {
        this.#running.delete(watch);
        return result;
      },
      (error: unknown) => {
        throw done(error);
      },
    );
  };

  /** A query started `n` ticks ago has run at least `n - 1` whole ticks: it fails once `n` = ticks. */
  #limitOf(ms: number): Limit {
    return { ms, ticks: Math.ceil(ms / this.#tickMs) + 1 };
  }

  #tick(): void {
    this.#ticks += 1;
    for (const watch of this.#running) {
      if (this.#ticks - watch.started < watch.limit.ticks) continue;
      watch.timedOut = true;
      this.#running.delete(watch);
      // Every query on this connection fails with this error, and the pool (told of it by the
      // client's error event, or on release) closes the connection instead of reusing it.
      watch.client.connection.stream.destroy(new QueryReadTimeoutError(watch.limit.ms));
    }
  }
}

/** A text or config query (not a stream or cursor), without a `query_timeout` of its own. */
function isPlainQuery(config: unknown): boolean {
  if (typeof config === 'string') return true;
  if (typeof config !== 'object' || config === null) return false;
  const fields = config as { submit?: unknown; query_timeout?: unknown };
  return typeof fields.submit !== 'function' && fields.query_timeout === undefined;
}
