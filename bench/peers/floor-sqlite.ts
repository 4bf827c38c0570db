/**
 * The floor's SQLite table (bench/peers/floor-http.ts with `FLOOR_STORE=sqlite`): the least a
 * durable task table needs, written the way Airlock's SQLite store writes: WAL,
 * `synchronous=FULL` (each commit on disk before the replies), one transaction per event-loop
 * turn. Two B-trees per row: the primary key on the task id and one owner index ordered by
 * status time (what a principal's task list needs); the oldest rows deleted by rowid in the same
 * transaction once the table holds more than 1,000 (the client's share, as in Airlock). Airlock's table has six more (list shapes
 * by context and state, expiry, eviction, parked) and a per-principal quota.
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
    'CREATE TABLE IF NOT EXISTS tasks (id TEXT PRIMARY KEY, owner TEXT NOT NULL, status_ts INTEGER NOT NULL, body TEXT NOT NULL);' +
      'CREATE INDEX IF NOT EXISTS tasks_owner ON tasks (owner, status_ts, id)',
  );
  const insert = db.prepare('INSERT INTO tasks (id, owner, status_ts, body) VALUES (@id, @owner, @statusMs, @body)');
  const evict = db.prepare('DELETE FROM tasks WHERE rowid IN (SELECT rowid FROM tasks ORDER BY rowid LIMIT ?)');
  let count = 0;
  const write = db.transaction((rows: readonly TaskRow[]) => {
    for (const row of rows) insert.run(row);
    count += rows.length;
    if (count > MAX_TASKS) count -= evict.run(count - MAX_TASKS).changes;
  });
  return { commit: (rows) => write(rows), close: () => db.close() };
}
