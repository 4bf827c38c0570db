/**
 * The floor's PostgreSQL table (bench/peers/floor-http.ts with `FLOOR_STORE=postgres`): the least
 * a durable task table with Airlock's guarantees needs, written the way Airlock's PostgreSQL store
 * writes: one batch at a time, the tasks that arrive meanwhile in the next one, each batch one
 * statement (so one commit, `synchronous_commit` as the server has it) before its replies. The
 * same three B-trees as the SQLite floor (bench/peers/floor-sqlite.ts): the primary key on the
 * task id, one owner index in status order carrying the `terminal` flag (ListTasks, and each
 * principal's own oldest finished tasks for its share), one age index (the retention sweep).
 *
 * Each principal keeps at most its share of 1,000 tasks: the statement that inserts a batch also
 * deletes, past the share, the owner's oldest finished tasks, found in order on the owner index.
 * The count is kept in memory (one process, one writer). The table is vacuumed as Airlock's is
 * (its own VACUUM every 20,000 rows changed). Airlock's table keeps more indexes (one
 * per list shape, expiry, eviction, parked tasks), counts in SQL (replicas share it), checks the
 * owner of an existing row on every write, and takes a task's later puts into the same batch.
 *
 * @example
 * ```ts
 * const store = await openFloorPostgres('postgres://postgres@127.0.0.1:5432/test', 'floor_1');
 * await store.commit([{ id, owner: 'bench', statusMs: Date.now(), body: JSON.stringify(task) }]);
 * ```
 */
import pg from 'pg';
import { bodyListSql, joinBodies } from '../../src/tasks/stores/postgres/body-list.js';
import { DEFAULT_VACUUM_AFTER_ROWS, TasksVacuum } from '../../src/tasks/stores/postgres/vacuum.js';
import type { TaskRow } from './floor-sqlite.js';

/** The bench client's share in Airlock (`limits.maxTasksPerPrincipal`, default 1,000). */
const MAX_TASKS = 1_000;
const SCHEMA = /^[a-z_][a-z0-9_]{0,62}$/;

/** A PostgreSQL floor store: `commit` resolves once the batch is committed. */
export interface FloorPostgres {
  commit(rows: readonly TaskRow[]): Promise<void>;
  close(): Promise<void>;
}

/** Connects, creates `schema` and its table if missing, and reads the owners' counts. */
export async function openFloorPostgres(url: string, schema: string): Promise<FloorPostgres> {
  if (!SCHEMA.test(schema)) throw new Error(`floor-postgres: bad schema name ${schema}`);
  // Two connections: the batches go out one at a time on one, the table's VACUUM on the other.
  const client = new pg.Pool({ connectionString: url, max: 2 });
  const table = `${schema}.tasks`;
  await client.query(
    `CREATE SCHEMA IF NOT EXISTS ${schema};` +
      `CREATE TABLE IF NOT EXISTS ${table} (id text PRIMARY KEY, owner text NOT NULL, status_ts bigint NOT NULL,` +
      ` terminal boolean NOT NULL, updated_at bigint NOT NULL, body text NOT NULL);` +
      `CREATE INDEX IF NOT EXISTS tasks_owner ON ${table} (owner, status_ts, id) INCLUDE (terminal);` +
      `CREATE INDEX IF NOT EXISTS tasks_age ON ${table} (terminal, updated_at)`,
  );
  // As Airlock's store: its own VACUUM after 20,000 rows written or deleted, for where
  // autovacuum is off or slow (dead rows under the owner index slow every eviction).
  const vacuum = new TasksVacuum(client, table, DEFAULT_VACUUM_AFTER_ROWS, (error) => {
    throw error;
  });
  const held = new Map<string, number>();
  const counted = await client.query<{ owner: string; n: string }>(
    `SELECT owner, count(*) AS n FROM ${table} GROUP BY owner`,
  );
  for (const { owner, n } of counted.rows) held.set(owner, Number(n));
  // The batch's rows as arrays (one statement whatever its size), the bodies as one text as
  // Airlock sends them (body-list.ts: no array escaping of JSON); the eviction reads the rows
  // committed before it (a statement sees its own snapshot), which are the oldest anyway.
  const insertAndEvict = {
    name: 'floor-insert-evict',
    text:
      `WITH added AS (INSERT INTO ${table} (id, owner, status_ts, terminal, updated_at, body)` +
      ` SELECT id, owner, ts, true, ts, body FROM unnest($1::text[], $2::text[], $3::bigint[], ${bodyListSql('$4')}) AS r(id, owner, ts, body)),` +
      ` gone AS (DELETE FROM ${table} WHERE id IN (SELECT id FROM ${table} WHERE owner = $5 AND terminal` +
      ` ORDER BY status_ts, id LIMIT $6) RETURNING 1)` +
      ` SELECT count(*)::int AS evicted FROM gone`,
  };
  return {
    async commit(rows) {
      // The bench has one owner; the eviction is for the batch's (first) owner, as Airlock's
      // share is per principal.
      const owner = rows[0]!.owner;
      const count = (held.get(owner) ?? 0) + rows.length;
      const over = Math.max(0, count - MAX_TASKS);
      const result = await client.query<{ evicted: number }>({
        ...insertAndEvict,
        values: [
          rows.map((row) => row.id),
          rows.map((row) => row.owner),
          rows.map((row) => row.statusMs),
          joinBodies(rows.map((row) => row.body)),
          owner,
          over,
        ],
      });
      const evicted = result.rows[0]!.evicted;
      held.set(owner, count - evicted);
      vacuum.changed(rows.length + evicted);
    },
    close: async () => {
      await vacuum.idle();
      await client.end();
    },
  };
}
