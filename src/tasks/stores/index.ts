/**
 * Picks and opens the task store a configuration asks for: memory (bounded, the default),
 * SQLite (`airlock serve --data <dir>`, one durable process), or PostgreSQL (`DATABASE_URL`,
 * any number of replicas). Durable stores apply their pending migrations before they are
 * returned. The engines are imported on first use, so a memory-only server never loads the
 * native SQLite module or the PostgreSQL driver.
 *
 * @example
 * ```ts
 * const spec = resolveTaskStoreSpec({ configured: config.store, data: options.data, env: process.env });
 * const store = await openTaskStore(spec);
 * logger.info({ store: describeTaskStoreSpec(spec) }, 'task store ready');
 * ```
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { TaskStore } from '../store.js';
import type { MigrationReport } from './migrations/plan.js';
import { DEFAULT_PARKED_TTL_MS, type FairShareLimits, type TaskStoreEvent } from './fair-shares.js';
import { MemoryTaskStore, type MemoryTaskStoreOptions } from './memory.js';

/**
 * What the configuration says about the task store. Retention fields are optional everywhere
 * and default to the memory store's (10 000 tasks, 60 minutes idle).
 *
 * @example
 * ```ts
 * const specs: TaskStoreSpec[] = [
 *   { type: 'memory', maxTasks: 10_000, taskTtlMinutes: 60 },
 *   { type: 'sqlite', path: '/var/lib/airlock/airlock.db' },
 *   { type: 'postgres', url: 'postgres://airlock@db:5432/airlock', poolSize: 20 },
 * ];
 * ```
 */
export type TaskStoreSpec =
  | ({ type: 'memory'; maxBytes?: number } & RetentionSpec)
  | ({ type: 'sqlite'; path: string; synchronous?: 'full' | 'normal' } & RetentionSpec)
  | ({
      type: 'postgres';
      url: string;
      schema?: string;
      poolSize?: number;
      statementTimeoutMs?: number;
      connectTimeoutMs?: number;
      /** VACUUM the tasks table after this many rows written or deleted; 0: leave it to autovacuum. */
      vacuumAfterRows?: number;
    } & RetentionSpec);

/**
 * Retention, as the config file writes it.
 *
 * @example
 * ```ts
 * const retention: RetentionSpec = { maxTasks: 50_000, taskTtlMinutes: 24 * 60 };
 * ```
 */
export interface RetentionSpec {
  maxTasks?: number;
  taskTtlMinutes?: number;
  /** A parked (input- or auth-required) task idle for this long fails. Default 30. */
  parkedTtlMinutes?: number;
}

/**
 * What the process, not the config file, decides: clocks and sweep timing (tests), and where
 * background failures are reported (the server's logger).
 *
 * @example
 * ```ts
 * const options: OpenTaskStoreOptions = { onBackgroundError: (error) => log.warn({ error }, 'task store sweep failed') };
 * ```
 */
export interface OpenTaskStoreOptions {
  /** Retention sweep period. Default 60 s. */
  sweepIntervalMs?: number;
  /** Told of a failed background sweep in a durable store (the next one tries again). */
  onBackgroundError?: (error: unknown) => void;
  /** `limits.maxTasksPerPrincipal` (default 1 000). */
  maxTasksPerPrincipal?: number;
  /** `limits.maxParkedTasksPerPrincipal` (default 100). */
  maxParkedTasksPerPrincipal?: number;
  /**
   * The least idle TTL of parked tasks, in ms, whatever the spec says: a task parked on a
   * person's decision must outlive the decision's own TTL (`approvals.ttl`).
   */
  minParkedTtlMs?: number;
  /** Told of quota refusals and parked tasks failed by their TTL, for the audit trail. */
  onStoreEvent?: (event: TaskStoreEvent) => void;
  /** The SQLite file is written by other processes too (workers, replicas). Default false. */
  sharedFile?: boolean;
}

/**
 * The memory store's own bound from its spec: `maxBytes`.
 *
 * @example
 * ```ts
 * memoryBounds({ type: 'memory', maxBytes: 64 * 1024 * 1024 }); // { maxBytes: 67108864 }
 * ```
 */
export function memoryBounds(
  spec: Extract<TaskStoreSpec, { type: 'memory' }>,
): Pick<MemoryTaskStoreOptions, 'maxBytes'> {
  return spec.maxBytes !== undefined ? { maxBytes: spec.maxBytes } : {};
}

/**
 * The fair shares a store is opened with: the quotas, the parked TTL (the spec's, raised to
 * `minParkedTtlMs`) and where its events go. The same for every store.
 *
 * @example
 * ```ts
 * fairSharesFor({ type: 'sqlite', path, parkedTtlMinutes: 10 }, { minParkedTtlMs: 3_600_000 }).parkedTtlMs; // 3600000
 * ```
 */
export function fairSharesFor(spec: RetentionSpec, options: OpenTaskStoreOptions): FairShareLimits {
  const configured = spec.parkedTtlMinutes !== undefined ? spec.parkedTtlMinutes * 60_000 : DEFAULT_PARKED_TTL_MS;
  return {
    ...(options.maxTasksPerPrincipal !== undefined && { maxTasksPerPrincipal: options.maxTasksPerPrincipal }),
    ...(options.maxParkedTasksPerPrincipal !== undefined && {
      maxParkedTasksPerPrincipal: options.maxParkedTasksPerPrincipal,
    }),
    parkedTtlMs: Math.max(configured, options.minParkedTtlMs ?? 0),
    ...(options.onStoreEvent !== undefined && { onEvent: options.onStoreEvent }),
  };
}

/** The SQLite file `airlock serve --data <dir>` keeps its tasks in. */
export const DATA_DIR_DATABASE_FILE = 'airlock.db';

/**
 * Opens the store a spec describes; for SQLite and PostgreSQL, after applying pending migrations.
 *
 * @throws StoreUnavailableError if the database cannot be reached or opened; StoreSchemaError if
 *   it was written by a newer Airlock; RangeError for bad retention values.
 * @example
 * ```ts
 * const store = await openTaskStore({ type: 'sqlite', path: 'data/airlock.db', maxTasks: 100_000 });
 * ```
 */
export async function openTaskStore(spec: TaskStoreSpec, options: OpenTaskStoreOptions = {}): Promise<TaskStore> {
  const retention = {
    ...(spec.maxTasks !== undefined && { maxTasks: spec.maxTasks }),
    ...(spec.taskTtlMinutes !== undefined && { taskTtlMs: spec.taskTtlMinutes * 60_000 }),
    ...(options.sweepIntervalMs !== undefined && { sweepIntervalMs: options.sweepIntervalMs }),
  };
  const background = options.onBackgroundError !== undefined && { onBackgroundError: options.onBackgroundError };
  switch (spec.type) {
    case 'memory':
      return new MemoryTaskStore({ ...retention, ...memoryBounds(spec), ...fairSharesFor(spec, options) });
    case 'sqlite': {
      const { SqliteTaskStore } = await import('./sqlite.js');
      return SqliteTaskStore.open({
        path: spec.path,
        ...retention,
        ...fairSharesFor(spec, options),
        ...background,
        ...(spec.synchronous !== undefined && { synchronous: spec.synchronous }),
        ...(options.sharedFile === true && { sharedFile: true }),
      });
    }
    case 'postgres': {
      const { PostgresTaskStore } = await import('./postgres.js');
      return PostgresTaskStore.open({
        ...postgresConnection(spec),
        ...retention,
        ...fairSharesFor(spec, options),
        ...background,
        ...(spec.vacuumAfterRows !== undefined && { vacuumAfterRows: spec.vacuumAfterRows }),
      });
    }
  }
}

/**
 * Applies pending migrations for a spec and disconnects (`airlock db migrate`). `undefined` for
 * the memory store, which has no schema.
 *
 * @throws as {@link openTaskStore}.
 * @example
 * ```ts
 * const report = await migrateTaskStore({ type: 'postgres', url });
 * if (report) console.log(`schema at version ${report.version}`);
 * ```
 */
export async function migrateTaskStore(spec: TaskStoreSpec): Promise<MigrationReport | undefined> {
  switch (spec.type) {
    case 'memory':
      return undefined;
    case 'sqlite': {
      const { SqliteTaskStore } = await import('./sqlite.js');
      return SqliteTaskStore.migrateFile(spec.path);
    }
    case 'postgres': {
      const { PostgresTaskStore } = await import('./postgres.js');
      return PostgresTaskStore.migrate(postgresConnection(spec));
    }
  }
}

function postgresConnection(spec: Extract<TaskStoreSpec, { type: 'postgres' }>): {
  url: string;
  schema?: string;
  poolSize?: number;
  statementTimeoutMs?: number;
  connectTimeoutMs?: number;
} {
  return {
    url: spec.url,
    ...(spec.schema !== undefined && { schema: spec.schema }),
    ...(spec.poolSize !== undefined && { poolSize: spec.poolSize }),
    ...(spec.statementTimeoutMs !== undefined && { statementTimeoutMs: spec.statementTimeoutMs }),
    ...(spec.connectTimeoutMs !== undefined && { connectTimeoutMs: spec.connectTimeoutMs }),
  };
}

/**
 * The SQLite spec for `--data <dir>`: `<dir>/airlock.db`. Creates the directory (owner-only) if
 * it is missing; the file itself is created, owner-only, when the store opens it.
 *
 * @example
 * ```ts
 * sqliteSpecForDataDir('/var/lib/airlock'); // { type: 'sqlite', path: '/var/lib/airlock/airlock.db' }
 * ```
 */
export function sqliteSpecForDataDir(dir: string, retention: RetentionSpec = {}): TaskStoreSpec {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return { type: 'sqlite', path: join(resolve(dir), DATA_DIR_DATABASE_FILE), ...retention };
}

/**
 * Where the server keeps tasks, from the most explicit source to the least:
 * 1. `data` (the `--data <dir>` flag): SQLite in that directory;
 * 2. a SQLite or PostgreSQL store named in the config file;
 * 3. `DATABASE_URL` in the environment: PostgreSQL;
 * 4. the config file's memory store (also the default when it names none).
 * Retention from the config file applies whichever store is chosen.
 *
 * @example
 * ```ts
 * resolveTaskStoreSpec({ configured: { type: 'memory' }, env: { DATABASE_URL: 'postgres://db/airlock' } });
 * // { type: 'postgres', url: 'postgres://db/airlock' }
 * ```
 */
export function resolveTaskStoreSpec(sources: {
  configured?: TaskStoreSpec;
  data?: string;
  env?: Readonly<Record<string, string | undefined>>;
}): TaskStoreSpec {
  const configured = sources.configured ?? { type: 'memory' };
  const retention: RetentionSpec = {
    ...(configured.maxTasks !== undefined && { maxTasks: configured.maxTasks }),
    ...(configured.taskTtlMinutes !== undefined && { taskTtlMinutes: configured.taskTtlMinutes }),
    ...(configured.parkedTtlMinutes !== undefined && { parkedTtlMinutes: configured.parkedTtlMinutes }),
  };
  if (sources.data !== undefined) return sqliteSpecForDataDir(sources.data, retention);
  if (configured.type !== 'memory') return configured;
  const url = sources.env?.DATABASE_URL;
  if (url !== undefined && url.length > 0) return { type: 'postgres', url, ...retention };
  return configured;
}

/**
 * The spec in one line for logs and banners, without credentials: `memory`, `sqlite:<path>`, or
 * the PostgreSQL URL with its password (and any query parameters) left out.
 *
 * @example
 * ```ts
 * describeTaskStoreSpec({ type: 'postgres', url: 'postgres://app:secret@db:5432/airlock?sslmode=require' });
 * // 'postgres://app@db:5432/airlock'
 * ```
 */
export function describeTaskStoreSpec(spec: TaskStoreSpec): string {
  switch (spec.type) {
    case 'memory':
      return 'memory';
    case 'sqlite':
      return `sqlite:${spec.path}`;
    case 'postgres':
      return redactDatabaseUrl(spec.url) + (spec.schema !== undefined ? ` (schema ${spec.schema})` : '');
  }
}

/**
 * A database URL that is safe to print: scheme, user, host, port and database only.
 *
 * @example
 * ```ts
 * redactDatabaseUrl('postgresql://u:p@h/db?password=x'); // 'postgresql://u@h/db'
 * ```
 */
export function redactDatabaseUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'postgres (unparseable URL)';
  }
  const user = parsed.username !== '' ? `${parsed.username}@` : '';
  return `${parsed.protocol}//${user}${parsed.host}${parsed.pathname}`;
}
