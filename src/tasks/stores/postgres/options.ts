/**
 * The PostgreSQL store's options, their defaults and their checks.
 *
 * @example
 * ```ts
 * const settings = resolveOptions({ url, schema: 'airlock' }); // { schema: 'airlock', maxTasks: 10000, … }
 * ```
 */
import type { FairShareLimits } from '../fair-shares.js';
import { resolveRetention, type Retention } from '../retention.js';

/**
 * Tuning for {@link PostgresTaskStore}. Only `url` is required.
 *
 * @example
 * ```ts
 * const options: PostgresTaskStoreOptions = { url: 'postgres://airlock@db/airlock', schema: 'airlock', poolSize: 20 };
 * ```
 */
export interface PostgresTaskStoreOptions extends FairShareLimits {
  /** A libpq connection URL. Its own parameters (sslmode, options, …) win over the defaults below. */
  url: string;
  /** Schema holding the tables, created if missing. `[a-z_][a-z0-9_]*`, at most 63. Default `public`. */
  schema?: string;
  /** Connections at most, per process. Default 10. */
  poolSize?: number;
  /** Server-side limit for one statement. Default 5 000 ms. */
  statementTimeoutMs?: number;
  /** Waiting for a connection (new or from the pool) longer than this fails the call. Default 5 000 ms. */
  connectTimeoutMs?: number;
  /** Tasks kept; the sweep evicts the least recently updated finished ones above it. Default 10 000. */
  maxTasks?: number;
  /** A task not updated (put) for this long is gone. Default 60 minutes. */
  taskTtlMs?: number;
  /** How often the retention sweep runs. Default 60 s. */
  sweepIntervalMs?: number;
  /** Most rows one sweep batch deletes; a full batch is followed by more, up to 10 per run. Default 1 000. */
  sweepBatch?: number;
  /**
   * VACUUM the tasks table after this many rows written or deleted by this process, in the
   * background (see postgres/vacuum.ts); 0 leaves it to autovacuum. Default 20 000.
   */
  vacuumAfterRows?: number;
  /** Clock for `updated_at` and the TTL, epoch ms. Default `Date.now`. */
  now?: () => number;
  /** Told of a failed background sweep or VACUUM and of errors on idle connections. Default: ignored. */
  onBackgroundError?: (error: unknown) => void;
}

/** The class name, in every message the store writes. */
export const STORE_NAME = 'PostgresTaskStore';
const DEFAULT_SCHEMA = 'public';
const SCHEMA_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * The options a store runs on, resolved: the schema and the retention.
 *
 * @example
 * ```ts
 * const { schema, sweepIntervalMs }: Settings = resolveOptions(options);
 * ```
 */
export interface Settings extends Required<Retention> {
  readonly schema: string;
}

/**
 * The options with their defaults applied, checked.
 *
 * @throws RangeError for a schema name outside the pattern, bad retention values, or a pool
 *   size or timeout that is not a positive integer.
 * @example
 * ```ts
 * resolveOptions({ url, schema: 'Airlock' }); // RangeError: PostgresTaskStore: schema must match …
 * ```
 */
export function resolveOptions(options: Partial<PostgresTaskStoreOptions>): Settings {
  const schema = options.schema ?? DEFAULT_SCHEMA;
  if (!SCHEMA_PATTERN.test(schema)) {
    throw new RangeError(`${STORE_NAME}: schema must match ${SCHEMA_PATTERN.source}`);
  }
  const settings: Settings = { schema, ...resolveRetention(STORE_NAME, options) };
  for (const [name, value] of [
    ['poolSize', options.poolSize],
    ['statementTimeoutMs', options.statementTimeoutMs],
    ['connectTimeoutMs', options.connectTimeoutMs],
  ] as const) {
    if (value !== undefined && !(Number.isSafeInteger(value) && value >= 1)) {
      throw new RangeError(`${STORE_NAME}: ${name} must be a positive integer`);
    }
  }
  const vacuum = options.vacuumAfterRows;
  if (vacuum !== undefined && !(Number.isSafeInteger(vacuum) && vacuum >= 0)) {
    throw new RangeError(`${STORE_NAME}: vacuumAfterRows must be 0 (never) or a positive integer`);
  }
  return settings;
}
