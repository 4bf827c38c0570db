/**
 * SQLite schema migrations and their runner. Each migration runs in a `BEGIN IMMEDIATE`
 * transaction (the write lock is taken up front), together with its `schema_migrations` row,
 * and the applied list is read again inside that transaction: two processes opening the same
 * file at once (a server and `airlock db migrate`) apply each migration exactly once.
 *
 * Schema (version 1), and why each piece exists:
 * - `tasks`: one row per task. `body` is the task as JSON text, returned exactly as it was put
 *   (TEXT, not SQLite's JSONB: a byte-exact round trip). The other columns are copied out of it
 *   for the indexes. Times are epoch ms integers: `status_ts` is the task's status timestamp
 *   (the list order), `updated_at` the store's clock at the last put (idle TTL and eviction).
 *   `id` is the primary key, so a task id has one owner at a time, as in every store; `get`
 *   is a primary-key lookup plus an owner comparison.
 * - Three list indexes, one per filter: the owner's tasks, the owner's in one context, the
 *   owner's in one state, each ordered by (status_ts, id) so that a ListTasks page is one seek
 *   plus the page (keyset pagination) whichever way it is walked. `updated_at` (and `state` on
 *   the context index) trail them so that counting `totalSize` never reads the table.
 * - `tasks_expiry` (updated_at) and `tasks_eviction` (updated_at of finished tasks only) let the
 *   retention sweep delete its oldest victims in bounded batches without a scan.
 * - `task_count`, kept by triggers (by the store's statements since version 6), is the row
 *   count in O(1): the sweep compares it with `maxTasks` every run, and `count(*)` would read a
 *   whole index each time.
 *
 * Version 2: `tasks_parked` (updated_at of input- and auth-required tasks only), so the sweep
 * finds parked tasks past their idle TTL without reading the others. A principal's shares are
 * counted on `tasks_owner_state_list` (owner range, state, updated_at: all in the index).
 *
 * Version 3: `approval_actions`, the actions waiting for a person and their decisions (see
 * `tasks/stores/approval-records.ts`): the task's latest action, a person's pending ones, a
 * principal's open ones (its quota), the decided ones waiting to be used (resumed after a
 * restart) and the expiry sweep each have their index. `body` is the approvals layer's JSON;
 * `kept` the unredacted arguments and the agent's continuation, cleared when they are used.
 *
 * Version 4: `push_configs` (one row per task and config id, `body` the config JSON; the owner
 * index counts a principal's configs for its cap) and `push_outbox`, the webhook deliveries not
 * yet done: one row per (event, config), delivered oldest first per task (`push_outbox_task`);
 * `push_outbox_due` finds due rows; `claimed_by`/`claimed_until` is the lease of the process
 * delivering a row. See `tasks/stores/push-outbox.ts`.
 *
 * Version 5: `turn_leases`, as in PostgreSQL, so both engines keep one version sequence. SQLite
 * never uses it: one process serves the file, and restart safety fails its running tasks.
 *
 * Version 6: `task_count` without its triggers. The statements that insert and delete tasks keep
 * it, in their own transaction, one update per transaction (`prepareCount` in
 * `sqlite/statements.ts`): the two triggers made one per row inserted or deleted, about a
 * seventh of the SQLite row's CPU per request. The count is taken afresh when it is applied,
 * and again each time the store opens (a process of an older build still serving the file after
 * the migration writes without keeping it).
 *
 * Version 7: two indexes on `tasks` where there were five (besides the primary key and
 * `tasks_parked`), because each B-tree a task's row goes into costs CPU and WAL pages on every
 * write. `tasks_by_owner` (owner, status_ts, id, then updated_at, state and context_id carried)
 * serves every ListTasks shape and a principal's shares: a filter by context or state reads the
 * owner's index entries, never the table, bounded by the principal's task quota. `tasks_by_age`
 * (terminal, updated_at) serves both sweeps: the expired tasks (both values of `terminal`) and
 * the oldest finished ones. The context list index alone cost about a fifth of a task's write:
 * its key (a context id) puts each row at a random place.
 *
 * @example
 * ```ts
 * const db = new Database('/var/lib/airlock/airlock.db');
 * const report = migrateSqlite(db); // { engine: 'sqlite', version: 1, applied: [1] } the first time
 * ```
 */
import type { Database } from 'better-sqlite3';
import { checksumOf, pendingMigrations, type AppliedMigration, type Migration, type MigrationReport } from './plan.js';

/**
 * Every SQLite migration, oldest first. Never edit one that has shipped: add the next version.
 *
 * @example
 * ```ts
 * SQLITE_MIGRATIONS.length; // the newest schema version
 * ```
 */
export const SQLITE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'tasks',
    sql: `
CREATE TABLE tasks (
  id TEXT NOT NULL PRIMARY KEY,
  owner TEXT NOT NULL,
  context_id TEXT NOT NULL,
  state TEXT NOT NULL,
  terminal INTEGER NOT NULL CHECK (terminal IN (0, 1)),
  status_ts INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  body TEXT NOT NULL
);
CREATE INDEX tasks_owner_list ON tasks (owner, status_ts DESC, id DESC, updated_at);
CREATE INDEX tasks_owner_context_list ON tasks (owner, context_id, status_ts DESC, id DESC, updated_at, state);
CREATE INDEX tasks_owner_state_list ON tasks (owner, state, status_ts DESC, id DESC, updated_at);
CREATE INDEX tasks_expiry ON tasks (updated_at);
CREATE INDEX tasks_eviction ON tasks (updated_at) WHERE terminal = 1;
CREATE TABLE task_count (
  only_row INTEGER NOT NULL PRIMARY KEY CHECK (only_row = 0),
  tasks INTEGER NOT NULL
);
INSERT INTO task_count (only_row, tasks) VALUES (0, 0);
CREATE TRIGGER tasks_counted_in AFTER INSERT ON tasks BEGIN UPDATE task_count SET tasks = tasks + 1; END;
CREATE TRIGGER tasks_counted_out AFTER DELETE ON tasks BEGIN UPDATE task_count SET tasks = tasks - 1; END;
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
  action_id TEXT NOT NULL PRIMARY KEY,
  task_id TEXT NOT NULL,
  owner TEXT NOT NULL,
  principal TEXT NOT NULL,
  decider TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'denied', 'consumed')),
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  decided_by TEXT,
  decided_at INTEGER,
  consumed_at INTEGER,
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
  task_id TEXT NOT NULL,
  config_id TEXT NOT NULL,
  owner TEXT NOT NULL,
  dialect TEXT NOT NULL CHECK (dialect IN ('1.0', '0.3')),
  created_at INTEGER NOT NULL,
  body TEXT NOT NULL,
  PRIMARY KEY (task_id, config_id)
);
CREATE INDEX push_configs_owner ON push_configs (owner);
CREATE TABLE push_outbox (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  task_id TEXT NOT NULL,
  config_id TEXT NOT NULL,
  agent TEXT NOT NULL,
  client TEXT,
  event TEXT NOT NULL,
  final INTEGER NOT NULL CHECK (final IN (0, 1)),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  claimed_by TEXT,
  claimed_until INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL
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
  task_id TEXT NOT NULL PRIMARY KEY,
  owner TEXT NOT NULL,
  replica_id TEXT NOT NULL,
  expires_at INTEGER NOT NULL
);
`,
  },
  {
    version: 6,
    name: 'task count without triggers',
    sql: `
DROP TRIGGER tasks_counted_in;
DROP TRIGGER tasks_counted_out;
UPDATE task_count SET tasks = (SELECT count(*) FROM tasks);
`,
  },
  {
    version: 7,
    name: 'two task indexes',
    sql: `
DROP INDEX tasks_owner_list;
DROP INDEX tasks_owner_context_list;
DROP INDEX tasks_owner_state_list;
DROP INDEX tasks_expiry;
DROP INDEX tasks_eviction;
CREATE INDEX tasks_by_owner ON tasks (owner, status_ts DESC, id DESC, updated_at, state, context_id);
CREATE INDEX tasks_by_age ON tasks (terminal, updated_at);
`,
  },
];

/**
 * Brings the database's schema up to this build's newest version. Safe to run on every start
 * and from several processes at once.
 *
 * @throws StoreSchemaError if the database was written by a newer build or a migration differs.
 * @example
 * ```ts
 * migrateSqlite(db, SQLITE_MIGRATIONS);
 * ```
 */
export function migrateSqlite(db: Database, migrations: readonly Migration[] = SQLITE_MIGRATIONS): MigrationReport {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
  version INTEGER NOT NULL PRIMARY KEY,
  name TEXT NOT NULL,
  checksum TEXT NOT NULL,
  applied_at TEXT NOT NULL
)`);
  const readApplied = db.prepare<[], AppliedMigration>('SELECT version, name, checksum FROM schema_migrations');
  const record = db.prepare<[number, string, string, string]>(
    'INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (?, ?, ?, ?)',
  );
  const applied: number[] = [];
  // Checked before any write lock is taken, so that a too-new schema fails without waiting.
  let pending = pendingMigrations('SQLite', migrations, readApplied.all());
  while (pending.length > 0) {
    const next = db
      .transaction((): number | undefined => {
        // Read again under the write lock: another process may have applied it meanwhile.
        const migration = pendingMigrations('SQLite', migrations, readApplied.all())[0];
        if (migration === undefined) return undefined;
        db.exec(migration.sql);
        record.run(migration.version, migration.name, checksumOf(migration), new Date().toISOString());
        return migration.version;
      })
      .immediate();
    if (next === undefined) break;
    applied.push(next);
    pending = pendingMigrations('SQLite', migrations, readApplied.all());
  }
  return { engine: 'sqlite', version: migrations.length, applied };
}
