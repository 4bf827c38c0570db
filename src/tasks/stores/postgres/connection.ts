/**
 * The PostgreSQL store's connection pool: how it is opened (timeouts, keep-alive, the
 * application name), how one connection is checked out for a transaction or a session lock,
 * and how the migrations run on it.
 *
 * @example
 * ```ts
 * const pool = createPool(options, 'airlock', onBackgroundError);
 * const report = await migrateWithPool(pool, 'airlock');
 * ```
 */
import pg from 'pg';
import type { Pool, PoolClient } from 'pg';
import { DEFAULT_MIGRATION_TIMEOUT_MS, migratePostgres } from '../migrations/postgres.js';
import type { MigrationReport } from '../migrations/plan.js';
import { asStoreError } from './errors.js';
import type { PostgresTaskStoreOptions } from './options.js';
import { QueryWatchdog } from './watchdog.js';

const DEFAULT_POOL_SIZE = 10;
const DEFAULT_STATEMENT_TIMEOUT_MS = 5_000;
const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
/** How much longer than its statement timeout the client waits for an answer (a network gone silent). */
const READ_GRACE_MS = 2_000;
/** Each pool's watchdog, for the migration's longer limit. */
const watchdogs = new WeakMap<Pool, QueryWatchdog>();
/** Idle connections are closed after this, so a quiet replica holds few. */
const IDLE_TIMEOUT_MS = 30_000;

/**
 * A pool for one schema. Errors of idle clients go to `onIdleError` (ignored when absent).
 *
 * @example
 * ```ts
 * const pool = createPool({ url, poolSize: 20 }, 'public', (error) => log.warn({ error }));
 * ```
 */
export function createPool(
  options: Partial<PostgresTaskStoreOptions>,
  schema: string,
  onIdleError: ((error: unknown) => void) | undefined,
): Pool {
  const statementTimeoutMs = options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  // The client gives up too if the server goes silent (a dead network does not cancel anything):
  // one watchdog for the pool, where pg's query_timeout would start a timer per query.
  const watchdog = new QueryWatchdog(statementTimeoutMs + READ_GRACE_MS);
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize ?? DEFAULT_POOL_SIZE,
    connectionTimeoutMillis: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    idleTimeoutMillis: IDLE_TIMEOUT_MS,
    statement_timeout: statementTimeoutMs,
    Client: watchdog.clientClass(),
    // A transaction left open by a bug must not hold locks and a connection for ever.
    idle_in_transaction_session_timeout: 60_000,
    application_name: `airlock:${schema}`,
    keepAlive: true,
    allowExitOnIdle: true,
  });
  // An idle client's error (the server restarted) would otherwise crash the process. The pool has
  // already dropped that client and opens a fresh one on the next query.
  pool.on('error', (error) => (onIdleError ?? ignore)(error));
  watchdog.attach(pool);
  watchdogs.set(pool, watchdog);
  return pool;
}

function ignore(): void {}

/**
 * Applies pending migrations on one pooled connection.
 *
 * @throws StoreUnavailableError if the database cannot be reached; StoreSchemaError if the
 *   schema was written by a newer Airlock.
 * @example
 * ```ts
 * const report = await migrateWithPool(pool, 'public'); // { engine: 'postgres', version: 1, applied: [] }
 * ```
 */
export async function migrateWithPool(pool: Pool, schema: string): Promise<MigrationReport> {
  const watchdog = watchdogs.get(pool);
  return withPooledClient(pool, async (client) => {
    // The migration's session has its own, longer statement timeout (another replica's run may
    // hold the lock, a migration may rewrite a large table): the client waits as long.
    watchdog?.allow(client, DEFAULT_MIGRATION_TIMEOUT_MS + READ_GRACE_MS);
    try {
      return await migratePostgres(client, schema);
    } finally {
      watchdog?.allow(client, undefined);
    }
  });
}

/**
 * Runs `work` on one pooled connection (for transactions and session locks). While checked out,
 * a client has no listener for its `error` event, and an unheard `error` event (the server
 * closing the connection) would crash the process: one is attached for the duration. A client
 * that failed in any way is released with the error, so the pool closes it instead of reusing it.
 *
 * @example
 * ```ts
 * await withPooledClient(pool, async (client) => client.query('SELECT 1'));
 * ```
 */
export async function withPooledClient<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  let client: PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw asStoreError(error);
  }
  let broken: Error | undefined;
  const onError = (error: Error): void => {
    broken = error;
  };
  client.on('error', onError);
  try {
    const result = await work(client);
    client.removeListener('error', onError);
    client.release(broken);
    return result;
  } catch (error) {
    client.removeListener('error', onError);
    client.release(broken ?? (error instanceof Error ? error : true));
    throw asStoreError(error);
  }
}
