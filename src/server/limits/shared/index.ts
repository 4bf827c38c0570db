/**
 * Limits shared by the replicas of one gateway: the request rate per principal, the lockout of
 * addresses that fail authentication, and the caps on tasks in flight (all callers, and per
 * principal). Over Redis when one is configured, else over PostgreSQL (the task store's
 * database). `createGateway({ sharedLimits })` uses them in place of its local limiters.
 *
 * | limit         | shared as                                     | when the store fails           |
 * | ------------- | --------------------------------------------- | ------------------------------ |
 * | rate          | fixed window per principal (rate-limiter-flexible) | local limiter, same size  |
 * | auth lockout  | fixed window per address (rate-limiter-flexible)   | local limiter, same size  |
 * | in flight     | TTL'd leases (a dead replica's run out)       | local caps, same size          |
 *
 * Every shared call has `timeoutMs` to answer; after a failure the store is left alone for
 * `cooldownMs`, so an outage costs one timeout, not one per request. Limits never hang and never
 * fail closed: during an outage each replica enforces them on its own (so the cluster-wide rate
 * can reach replicas × limit), which keeps a Redis outage from locking every client out. Outages
 * are logged once when they start and once when they end.
 *
 * PostgreSQL tables (created at startup if missing, in `schema`): `airlock_rate_limits`,
 * `airlock_auth_failures`, `airlock_inflight_leases`. Redis keys start with `keyPrefix`
 * (default `airlock`): `<prefix>:rate:*`, `<prefix>:authfail:*`, `<prefix>:{inflight}:*`.
 * Principal keys and addresses are stored hashed.
 *
 * @example
 * ```ts
 * const sharedLimits = await createSharedLimits(
 *   config.redis ? { redisUrl: config.redis.url } : { pgUrl: config.store.url, schema: config.store.schema },
 *   config.limits,
 *   { logger },
 * );
 * const gateway = createGateway(config, { logger, store, bus, sharedLimits });
 * // gateway.close() closes sharedLimits too
 * ```
 */
import pg from 'pg';
import type { Pool } from 'pg';
import { RateLimiterPostgres, RateLimiterRedis } from 'rate-limiter-flexible';
import { asStoreError, QueryWatchdog } from '../../../tasks/stores/postgres.js';
import type { AuthFailureLockout } from '../address-failures.js';
import type { InFlightCap } from '../concurrency.js';
import type { RequestRateLimit } from '../rate.js';
import { SharedStoreGuard, type LimitsLogger } from './guard.js';
import { PostgresLeaseStore, RedisLeaseStore, SharedInFlightLimiter, type LeaseStore } from './in-flight.js';
import { SharedAuthFailureLockout, SharedRateLimiter, type PointsStore } from './rate.js';

export { SharedLimitTimeoutError, SharedStoreGuard } from './guard.js';
export type { LimitsLogger } from './guard.js';
export { PostgresLeaseStore, RedisLeaseStore, SharedInFlightLimiter } from './in-flight.js';
export type { LeaseStore, SharedInFlightOptions } from './in-flight.js';
export { SharedAuthFailureLockout, SharedRateLimiter, sharedKey } from './rate.js';
export type { PointsStore } from './rate.js';

/**
 * Where the shared counts live: a Redis URL, or PostgreSQL as a URL (the limits open a small
 * pool of their own: recommended, so that a slow database cannot starve the task store's pool)
 * or a pool to use as is.
 *
 * @example
 * ```ts
 * const where: SharedLimitsStore = { redisUrl: 'redis://cache:6379' };
 * ```
 */
export type SharedLimitsStore =
  { redisUrl: string; keyPrefix?: string } | { pgUrl: string; schema?: string } | { pgPool: Pool; schema?: string };

/**
 * The limits to share, as the config's `limits` section names them.
 *
 * @example
 * ```ts
 * const limits: SharedLimitsConfig = config.limits;
 * ```
 */
export interface SharedLimitsConfig {
  requestsPerMinute: number;
  authFailuresPerMinute: number;
  maxConcurrentTasks: number;
  maxConcurrentTasksPerPrincipal: number;
}

/**
 * Tuning of {@link createSharedLimits}.
 *
 * @example
 * ```ts
 * const options: SharedLimitsOptions = { logger, timeoutMs: 250 };
 * ```
 */
export interface SharedLimitsOptions {
  /** Where outages are reported. */
  logger?: LimitsLogger;
  /** How long one shared call may take before the local fallback answers. Default 500 ms. */
  timeoutMs?: number;
  /** How long the store is left alone after a failure. Default 2 000 ms. */
  cooldownMs?: number;
  /** In-flight lease TTL (renewed every third of it). Default 30 000 ms. */
  leaseTtlMs?: number;
  /** The rate and lockout window, whole seconds in ms. Default 60 000 (the config's "per minute"). */
  windowMs?: number;
  /** How long startup waits for the first connection before going on with local fallback. Default 5 000 ms. */
  connectTimeoutMs?: number;
}

/**
 * The shared limits, ready for `createGateway({ sharedLimits })`.
 *
 * @example
 * ```ts
 * const verdict = await sharedLimits.rate.take(principal.key, performance.now());
 * ```
 */
export interface SharedLimits {
  /** Which store holds the counts. */
  readonly store: 'redis' | 'postgres';
  readonly rate: RequestRateLimit;
  readonly authFailures: AuthFailureLockout;
  readonly inFlight: InFlightCap;
  /** True while the store is failing and the limits answer locally (for health checks and tests). */
  readonly degraded: boolean;
  /** Releases held leases and closes what the limits opened (not a pool they were given). Idempotent. */
  close(): Promise<void>;
}

const RATE_TABLE = 'airlock_rate_limits';
const AUTH_TABLE = 'airlock_auth_failures';
const SCHEMA_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Connects the shared limits to Redis or PostgreSQL. For PostgreSQL, creates the tables if
 * missing (and fails if the database cannot be reached). For Redis, waits up to
 * `connectTimeoutMs` for the connection and otherwise goes on with the local fallback, which
 * gives way to the shared counts as soon as Redis answers.
 *
 * @throws StoreUnavailableError when PostgreSQL cannot be reached to create the tables;
 *   RangeError for bad limits or options.
 * @example
 * ```ts
 * const sharedLimits = await createSharedLimits({ redisUrl: 'redis://127.0.0.1:6379' }, config.limits, { logger });
 * ```
 */
export async function createSharedLimits(
  where: SharedLimitsStore,
  limits: SharedLimitsConfig,
  options: SharedLimitsOptions = {},
): Promise<SharedLimits> {
  const settings = {
    timeoutMs: options.timeoutMs ?? 500,
    cooldownMs: options.cooldownMs ?? 2_000,
    leaseTtlMs: options.leaseTtlMs ?? 30_000,
    windowMs: options.windowMs ?? 60_000,
    connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
  };
  for (const [name, value] of Object.entries({ ...settings, ...limits })) {
    if (!(Number.isSafeInteger(value) && value >= 1)) throw new RangeError(`${name} must be a positive integer`);
  }
  if (settings.windowMs % 1000 !== 0) throw new RangeError('windowMs must be whole seconds');
  const duration = settings.windowMs / 1000;
  if ('redisUrl' in where) {
    const guard = new SharedStoreGuard({ name: 'redis', ...settings, ...loggerOf(options) });
    return openRedis(where.redisUrl, where.keyPrefix ?? 'airlock', limits, settings, duration, guard);
  }
  const guard = new SharedStoreGuard({ name: 'postgres', ...settings, ...loggerOf(options) });
  const schema = where.schema ?? 'public';
  if (!SCHEMA_PATTERN.test(schema)) throw new RangeError(`schema must match ${SCHEMA_PATTERN.source}`);
  const ownPool = 'pgUrl' in where;
  const pool = ownPool ? limitsPool(where.pgUrl, settings.timeoutMs) : where.pgPool;
  try {
    return await openPostgres(pool, ownPool, schema, limits, settings, duration, guard);
  } catch (error) {
    if (ownPool) await pool.end().catch(() => undefined);
    throw asStoreError(error);
  }
}

function loggerOf(options: SharedLimitsOptions): { logger?: LimitsLogger } {
  return options.logger === undefined ? {} : { logger: options.logger };
}

interface Settings {
  timeoutMs: number;
  cooldownMs: number;
  leaseTtlMs: number;
  windowMs: number;
  connectTimeoutMs: number;
}

function build(
  store: 'redis' | 'postgres',
  rateStore: PointsStore,
  authStore: PointsStore,
  leases: LeaseStore,
  limits: SharedLimitsConfig,
  settings: Settings,
  guard: SharedStoreGuard,
  closeStore: () => Promise<void>,
): SharedLimits {
  const windowMs = settings.windowMs;
  const inFlight = new SharedInFlightLimiter(leases, guard, {
    global: limits.maxConcurrentTasks,
    perKey: limits.maxConcurrentTasksPerPrincipal,
    leaseTtlMs: settings.leaseTtlMs,
  });
  let closing: Promise<void> | undefined;
  return {
    store,
    rate: new SharedRateLimiter(rateStore, guard, { limit: limits.requestsPerMinute, windowMs }),
    authFailures: new SharedAuthFailureLockout(authStore, guard, { limit: limits.authFailuresPerMinute, windowMs }),
    inFlight,
    get degraded() {
      return guard.down;
    },
    // Idempotent: the gateway closes them, and so may whoever made them.
    close: () =>
      (closing ??= (async () => {
        await inFlight.close();
        await closeStore();
      })()),
  };
}

async function openRedis(
  url: string,
  keyPrefix: string,
  limits: SharedLimitsConfig,
  settings: Settings,
  duration: number,
  guard: SharedStoreGuard,
): Promise<SharedLimits> {
  // The Redis client is loaded only when limits are shared through Redis (start-up time).
  const { createLimitsRedisClient } = await import('./redis-client.js');
  const client = createLimitsRedisClient(url, settings.connectTimeoutMs);
  const connected = client.connect().then(
    () => true,
    () => false,
  );
  const ready = await Promise.race([connected, delay(settings.connectTimeoutMs).then(() => false)]);
  if (!ready) guard.failed(new Error(`Redis did not connect within ${settings.connectTimeoutMs} ms`));
  const common = { storeClient: client, useRedisPackage: true, rejectIfRedisNotReady: true, duration };
  return build(
    'redis',
    new RateLimiterRedis({ ...common, keyPrefix: `${keyPrefix}:rate`, points: limits.requestsPerMinute }),
    new RateLimiterRedis({ ...common, keyPrefix: `${keyPrefix}:authfail`, points: limits.authFailuresPerMinute }),
    new RedisLeaseStore(client, keyPrefix),
    limits,
    settings,
    guard,
    async () => {
      client.destroy();
    },
  );
}

/** A small pool of the limits' own: short timeouts, so that a slow database fails fast. */
function limitsPool(url: string, timeoutMs: number): Pool {
  // One timer for the pool's queries, where pg's query_timeout would start one per query.
  const watchdog = new QueryWatchdog(Math.max(2_000, timeoutMs * 4));
  const pool = new pg.Pool({
    connectionString: url,
    max: 4,
    connectionTimeoutMillis: Math.max(1_000, timeoutMs * 2),
    idleTimeoutMillis: 30_000,
    statement_timeout: Math.max(1_000, timeoutMs * 2),
    Client: watchdog.clientClass(),
    application_name: 'airlock:limits',
    keepAlive: true,
    allowExitOnIdle: true,
  });
  // An idle connection's error (the server restarted) would otherwise crash the process.
  pool.on('error', () => undefined);
  watchdog.attach(pool);
  return pool;
}

async function openPostgres(
  pool: Pool,
  ownPool: boolean,
  schema: string,
  limits: SharedLimitsConfig,
  settings: Settings,
  duration: number,
  guard: SharedStoreGuard,
): Promise<SharedLimits> {
  const leases = new PostgresLeaseStore(pool, schema);
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    // Replicas starting together must not race on CREATE … IF NOT EXISTS (it is not atomic).
    await client.query(`SELECT pg_advisory_xact_lock(hashtextextended('airlock.shared_limits:${schema}', 0))`);
    await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    for (const table of [RATE_TABLE, AUTH_TABLE]) {
      // rate-limiter-flexible's own layout (it is told the tables exist).
      await client.query(`CREATE TABLE IF NOT EXISTS "${schema}"."${table}" (
        key varchar(255) PRIMARY KEY,
        points integer NOT NULL DEFAULT 0,
        expire bigint
      )`);
    }
    for (const statement of leases.ddl) await client.query(statement);
    await client.query('COMMIT');
    client.release();
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    client.release(error instanceof Error ? error : true);
    throw error;
  }
  const common = {
    storeClient: pool,
    storeType: 'pool',
    schemaName: schema,
    tableCreated: true,
    keyPrefix: '',
    duration,
    clearExpiredByTimeout: true,
  };
  return build(
    'postgres',
    new RateLimiterPostgres({ ...common, tableName: RATE_TABLE, points: limits.requestsPerMinute }),
    new RateLimiterPostgres({ ...common, tableName: AUTH_TABLE, points: limits.authFailuresPerMinute }),
    leases,
    limits,
    settings,
    guard,
    async () => {
      if (ownPool) await pool.end();
    },
  );
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
