/**
 * PostgreSQL schema migrations and their runner. The runner holds a session advisory lock
 * (keyed by the schema's name) for the whole run, so replicas starting together apply each
 * migration exactly once: the others wait, then find nothing left to do. Each migration runs
 * in its own transaction with the row that records it (PostgreSQL's DDL is transactional).
 *
 * Schema (version 1), and why each piece exists:
 * - `tasks`: one row per task; `body` is the task as JSON text, returned exactly as it was put
 *   (TEXT, not JSONB: JSONB reorders keys, drops duplicate ones and refuses `\u0000`). The other
 *   columns are copied out of it for the indexes; times are epoch ms (`status_ts` the status
 *   timestamp, the list order; `updated_at` the store's clock at the last put, for retention).
 *   `id` is the primary key (one owner per task id, as in every store). Key columns use the "C"
 *   collation: ties in the list order are broken by byte order, whatever the database's locale.
 * - Three list indexes, one per filter (owner; owner and context; owner and state), each ordered
 *   by (status_ts, id): a ListTasks page is one index seek plus the page. `updated_at` (and
 *   `state` on the context index) are included so the `totalSize` count can stay in the index.
 * - `tasks_expiry` and `tasks_eviction` (finished tasks only) let the retention sweep delete its
 *   oldest victims in bounded batches.
 *
 * Version 2: `tasks_parked` (updated_at of input- and auth-required tasks only), so the sweep
 * finds parked tasks past their idle TTL without reading the others. A principal's shares are
 * counted on `tasks_owner_state_list` (an owner range; state and updated_at are in the index).
 *
 * Version 3: `approval_actions`, as in SQLite (see `migrations/sqlite.ts`): the actions waiting
 * for a person and their decisions, shared by every replica. Decisions and uses are conditional
 * updates, so two replicas never both decide or both use one action.
 *
 * Version 4: `push_configs` and `push_outbox`, as in SQLite. Replicas claim outbox rows with
 * `FOR UPDATE SKIP LOCKED` and a lease (`claimed_by`, `claimed_until`): one delivers each row.
 *
 * Version 5: `turn_leases`, one row per turn running on a replica (see `postgres/leases.ts`):
 * renewed by that replica, by `replica_id` (one statement for all its turns); a row past
 * `expires_at` (the database's clock, so replicas' clocks need not agree) is claimed by one
 * surviving replica, which fails the task.
 *
 * @example
 * ```ts
 * const client = await pool.connect();
 * try {
 *   await migratePostgres(client, 'public');
 * } finally {
 *   client.release();
 * }
 * ```
 */
import type { ClientBase } from 'pg';
import { checksumOf, pendingMigrations, type AppliedMigration, type Migration, type MigrationReport } from './plan.js';

/**
 * Every PostgreSQL migration, oldest first, unqualified: the runner sets `search_path` to the
 * target schema for each. Never edit one that has shipped: add the next version.
 *
 * @example
 * ```ts
 * POSTGRES_MIGRATIONS.length; // the newest schema version
 * ```
 */
export const POSTGRES_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'tasks',
    sql: `
CREATE TABLE tasks (
  id TEXT COLLATE "C" NOT NULL PRIMARY KEY,
  owner TEXT COLLATE "C" NOT NULL,
  context_id TEXT COLLATE "C" NOT NULL,
  state TEXT COLLATE "C" NOT NULL,
  terminal BOOLEAN NOT NULL,
  status_ts BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  body TEXT NOT NULL
);
CREATE INDEX tasks_owner_list ON tasks (owner, status_ts DESC, id DESC) INCLUDE (updated_at);
CREATE INDEX tasks_owner_context_list ON tasks (owner, context_id, status_ts DESC, id DESC) INCLUDE (updated_at, state);
CREATE INDEX tasks_owner_state_list ON tasks (owner, state, status_ts DESC, id DESC) INCLUDE (updated_at);
CREATE INDEX tasks_expiry ON tasks (updated_at);
CREATE INDEX tasks_eviction ON tasks (updated_at) WHERE terminal;
`,
  },
  {
    version: 2,
    name: 'parked tasks',
    sql: `
CREATE INDEX tasks_parked ON tasks (updated_at) WHERE state IN ('input-required', 'auth-required');
`,
  },
  {
    version: 3,
    name: 'approval actions',
    sql: `
CREATE TABLE approval_actions (
  action_id TEXT COLLATE "C" NOT NULL PRIMARY KEY,
  task_id TEXT COLLATE "C" NOT NULL,
  owner TEXT COLLATE "C" NOT NULL,
  principal TEXT COLLATE "C" NOT NULL,
  decider TEXT COLLATE "C" NOT NULL,
  state TEXT COLLATE "C" NOT NULL CHECK (state IN ('pending', 'approved', 'denied', 'consumed')),
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  decided_by TEXT,
  decided_at BIGINT,
  consumed_at BIGINT,
  body TEXT NOT NULL,
  kept TEXT
);
CREATE INDEX approval_actions_task ON approval_actions (owner, task_id, created_at);
CREATE INDEX approval_actions_pending ON approval_actions (decider, created_at) WHERE state = 'pending';
CREATE INDEX approval_actions_open ON approval_actions (principal, expires_at) WHERE state IN ('pending', 'approved');
CREATE INDEX approval_actions_decided ON approval_actions (decided_at) WHERE state IN ('approved', 'denied');
CREATE INDEX approval_actions_expiry ON approval_actions (expires_at);
`,
  },
  {
    version: 4,
    name: 'push',
    sql: `
CREATE TABLE push_configs (
  task_id TEXT COLLATE "C" NOT NULL,
  config_id TEXT COLLATE "C" NOT NULL,
  owner TEXT COLLATE "C" NOT NULL,
  dialect TEXT COLLATE "C" NOT NULL CHECK (dialect IN ('1.0', '0.3')),
  created_at BIGINT NOT NULL,
  body TEXT NOT NULL,
  PRIMARY KEY (task_id, config_id)
);
CREATE INDEX push_configs_owner ON push_configs (owner);
CREATE TABLE push_outbox (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  task_id TEXT COLLATE "C" NOT NULL,
  config_id TEXT COLLATE "C" NOT NULL,
  agent TEXT NOT NULL,
  client TEXT,
  event TEXT NOT NULL,
  final BOOLEAN NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at BIGINT NOT NULL,
  claimed_by TEXT,
  claimed_until BIGINT NOT NULL DEFAULT 0,
  created_at BIGINT NOT NULL
);
CREATE INDEX push_outbox_task ON push_outbox (task_id, id);
CREATE INDEX push_outbox_due ON push_outbox (next_attempt_at);
`,
  },
  {
    version: 5,
    name: 'turn leases',
    sql: `
CREATE TABLE turn_leases (
  task_id TEXT COLLATE "C" NOT NULL PRIMARY KEY,
  owner TEXT COLLATE "C" NOT NULL,
  replica_id TEXT COLLATE "C" NOT NULL,
  expires_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX turn_leases_replica ON turn_leases (replica_id);
CREATE INDEX turn_leases_expiry ON turn_leases (expires_at);
`,
  },
  {
    // SQLite's version 6 (its row count without triggers); PostgreSQL counts with count(*) and
    // has nothing to change: the version is taken so both engines keep one sequence.
    version: 6,
    name: 'task count without triggers',
    sql: `SELECT 1;`,
  },
  {
    // SQLite's version 7 (its two task indexes). PostgreSQL keeps its indexes: the database's
    // own CPU is not the gateway's, and its B-trees are not the cost they are in SQLite's
    // synchronous writes. The version is taken so both engines keep one sequence.
    version: 7,
    name: 'two task indexes',
    sql: `SELECT 1;`,
  },
];

/**
 * Options for {@link migratePostgres}.
 *
 * @example
 * ```ts
 * const options: PostgresMigrationOptions = { timeoutMs: 600_000 };
 * ```
 */
export interface PostgresMigrationOptions {
  migrations?: readonly Migration[];
  /**
   * Statement timeout for this run, waiting for another replica's run included. Longer than
   * the store's request timeout: a later migration may rewrite a large table. Default 5 min.
   */
  timeoutMs?: number;
}

/** A migration run's statement timeout unless told otherwise (`PostgresMigrationOptions.timeoutMs`). */
export const DEFAULT_MIGRATION_TIMEOUT_MS = 5 * 60_000;

/**
 * A PostgreSQL identifier, quoted. Schema names are checked by the store's options before they
 * get here; quoting is the second line.
 *
 * @example
 * ```ts
 * quoteIdentifier('airlock'); // '"airlock"'
 * ```
 */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * Brings `schema` (created if missing) up to this build's newest version, on a client the
 * caller has connected and releases. Safe to run from every replica at every start.
 *
 * @throws StoreSchemaError if the schema was written by a newer build or a migration differs;
 *   the driver's error if the database fails (the caller maps connection errors).
 * @example
 * ```ts
 * const report = await migratePostgres(client, 'airlock');
 * console.log(`schema at version ${report.version}`);
 * ```
 */
export async function migratePostgres(
  client: ClientBase,
  schema: string,
  options: PostgresMigrationOptions = {},
): Promise<MigrationReport> {
  const migrations = options.migrations ?? POSTGRES_MIGRATIONS;
  const timeoutMs = options.timeoutMs ?? DEFAULT_MIGRATION_TIMEOUT_MS;
  const quoted = quoteIdentifier(schema);
  const lockKey = `airlock.schema_migrations:${schema}`;
  await client.query("SELECT set_config('statement_timeout', $1, false)", [`${timeoutMs}ms`]);
  await client.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [lockKey]);
  try {
    // Checked before CREATE SCHEMA IF NOT EXISTS, which needs the CREATE privilege on the
    // database even when the schema exists: a role that owns only its schema can still migrate.
    const exists = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
    if (exists.rowCount === 0) await client.query(`CREATE SCHEMA ${quoted}`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${quoted}.schema_migrations (
  version INTEGER NOT NULL PRIMARY KEY,
  name TEXT NOT NULL,
  checksum TEXT NOT NULL,
  applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
)`);
    const rows = await client.query<AppliedMigration>(
      `SELECT version, name, checksum FROM ${quoted}.schema_migrations ORDER BY version`,
    );
    const applied: number[] = [];
    for (const migration of pendingMigrations('PostgreSQL', migrations, rows.rows)) {
      await client.query('BEGIN');
      try {
        await client.query("SELECT set_config('search_path', $1, true)", [`${quoted}, pg_catalog`]);
        await client.query(migration.sql);
        await client.query(`INSERT INTO ${quoted}.schema_migrations (version, name, checksum) VALUES ($1, $2, $3)`, [
          migration.version,
          migration.name,
          checksumOf(migration),
        ]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
      applied.push(migration.version);
    }
    return { engine: 'postgres', version: migrations.length, applied };
  } finally {
    // If the connection broke, the server has already dropped the lock with the session.
    await client.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [lockKey]).catch(() => undefined);
    await client.query('RESET statement_timeout').catch(() => undefined);
  }
}
