/**
 * The floor's SQLite table (bench/peers/floor-http.ts with `FLOOR_STORE=sqlite`): the least a
 * durable task table with Airlock's guarantees needs, written the way Airlock's SQLite store
 * writes: WAL, `synchronous=FULL` (each commit on disk before the replies), one transaction per
 * event-loop turn, held open a turn longer when the turn queued more than one task (floor-http.ts,
 * as `SqliteGroupCommit`). Three B-trees per row, as the guarantees need them:
 *
 * - the primary key on the task id (GetTask);
 * - one owner index ordered by status time, the task's `terminal` flag carried (ListTasks, and
 *   each principal's own oldest finished tasks in order, for its share);
 * - one age index on (terminal, updated_at): the retention sweep's TTL and store-wide cap.
 *
 * Each principal keeps at most its share of 1,000 tasks (Airlock's default
 * `limits.maxTasksPerPrincipal`): past it, its own oldest finished tasks are deleted in the same
 * transaction, found in order on the owner index. The count is kept in memory (one process, one
 * writer, so exact). Airlock's table has the same three (schema version 7: `tasks_by_owner`,
 * `tasks_by_age`) and a few more columns; it counts in SQL, since other processes may share the
 * file, and serves list filters by context and state from the owner index.
 *
 * @example
 * ```ts
 * const store = openFloorSqlite('/tmp/floor');
 * store.commit([{ id, owner: 'bench', statusMs: Date.now(), body: JSON.stringify(task) }]);
 * ```
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';

/** A task as the table keeps it. */
export interface TaskRow {
  id: string;
  owner: string;
  statusMs: number;
  body: string;
}

export interface FloorStore {
  /** Writes the turn's tasks in one transaction, committed (and synced) when it returns. */
  commit(rows: readonly TaskRow[]): void;
  close(): void;
}

/** The bench client's share in Airlock (`limits.maxTasksPerPrincipal`, default 1,000). */
const MAX_TASKS = 1_000;

/** Opens (creates) `floor.db` in `dir`. */
export function openFloorSqlite(dir: string): FloorStore {
  mkdirSync(dir, { recursive: true });
  const db = new Database(join(dir, 'floor.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec(
    'CREATE TABLE IF NOT EXISTS tasks (id TEXT PRIMARY KEY, owner TEXT NOT NULL, status_ts INTEGER NOT NULL,' +
      ' terminal INTEGER NOT NULL, updated_at INTEGER NOT NULL, body TEXT NOT NULL);' +
      'CREATE INDEX IF NOT EXISTS tasks_owner ON tasks (owner, status_ts, id, terminal);' +
      'CREATE INDEX IF NOT EXISTS tasks_age ON tasks (terminal, updated_at)',
  );
  const insert = db.prepare(
    'INSERT INTO tasks (id, owner, status_ts, terminal, updated_at, body) VALUES (@id, @owner, @statusMs, 1, @statusMs, @body)',
  );
  // The principal's oldest finished tasks, read in order from its owner index (no sort).
  const evict = db.prepare(
    'DELETE FROM tasks WHERE rowid IN (SELECT rowid FROM tasks WHERE owner = ? AND terminal = 1 ORDER BY status_ts, id LIMIT +?)',
  );
  const held = new Map<string, number>();
  const write = db.transaction((rows: readonly TaskRow[]) => {
    for (const row of rows) {
      insert.run(row);
      held.set(row.owner, (held.get(row.owner) ?? 0) + 1);
    }
    for (const { owner } of rows) {
      const count = held.get(owner)!;
      if (count > MAX_TASKS) held.set(owner, count - evict.run(owner, count - MAX_TASKS).changes);
    }
  });
  return { commit: (rows) => write(rows), close: () => db.close() };
}
