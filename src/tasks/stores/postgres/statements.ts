/**
 * The PostgreSQL store's SQL: every statement's text for one schema (built once per store), and
 * how a ListTasks page is asked for and read back. Every value is a parameter; the schema name
 * is the only identifier in the text (checked and quoted by the caller).
 *
 * @example
 * ```ts
 * const sql = statementsFor(quoteIdentifier('airlock'));
 * await pool.query({ name: 'airlock_task_get', text: sql.get, values: [taskId, owner, expiredBefore] });
 * ```
 */
import type { QueryResultRow } from 'pg';
import type { FilterShape } from '../durable.js';
import type { ListFilters, TaskRowsRead } from '../durable-list.js';
import type { TaskSortKey } from '../page-token.js';
import { bodyListSql, joinBodies } from './body-list.js';
import type { PendingRow } from './group-commit.js';

/**
 * One row of a list statement: the count columns are on every row (and alone on the one row of
 * an empty page).
 *
 * @example
 * ```ts
 * const read = listRowsRead((await pool.query<ListRow>(sql.list.owner, values)).rows);
 * ```
 */
export interface ListRow extends QueryResultRow {
  /** Null when the page was read alone (its totalSize was known). */
  total: string | null;
  /** The oldest counted `updated_at` (a bigint as text), null when nothing was counted. */
  oldest: string | null;
  id: string | null;
  status_ts: string | null;
  body: string | null;
}

/**
 * The texts of the store's statements.
 *
 * @example
 * ```ts
 * const { putMany, get, list, page } = statementsFor('"public"');
 * ```
 */
export interface Statements {
  putMany: string;
  running: string;
  get: string;
  list: Record<FilterShape, string>;
  /** The page alone, for a list whose totalSize is known (TotalSizeCache). */
  page: Record<FilterShape, string>;
  count: string;
  deleteExpired: string;
  deleteOldestFinished: string;
}

/**
 * The parameters of `putMany`, in its order: the rows as parallel arrays (the bodies as one text,
 * `body-list.ts`), the time written, and the `updated_at` at or before which another owner's row
 * has expired and may be taken over. The one place they are built, for every caller of `putMany`.
 *
 * @example
 * ```ts
 * await client.query(sql.putMany, putManyValues(rows, nowMs, expiredBefore));
 * ```
 */
export function putManyValues(rows: readonly PendingRow[], updatedMs: number, expiredBefore: number): unknown[] {
  const ids: string[] = [];
  const owners: string[] = [];
  const contexts: string[] = [];
  const states: string[] = [];
  const terminals: boolean[] = [];
  const statuses: number[] = [];
  const updated: number[] = [];
  const bodies: string[] = [];
  for (const row of rows) {
    ids.push(row.id);
    owners.push(row.owner);
    contexts.push(row.contextId);
    states.push(row.state);
    terminals.push(row.terminal);
    statuses.push(row.statusMs);
    updated.push(updatedMs);
    bodies.push(row.body);
  }
  return [ids, owners, contexts, states, terminals, statuses, updated, joinBodies(bodies), expiredBefore];
}

/**
 * Every statement's text for one schema, built once per store.
 *
 * @example
 * ```ts
 * const sql = statementsFor(quoteIdentifier(schema));
 * ```
 */
export function statementsFor(schema: string): Statements {
  const tasks = `${schema}.tasks`;
  return {
    // Replaces a row only if it is the same owner's or has expired (its id is free again, as in
    // the memory store); a row not returned is another owner's live task. Rows come as parallel
    // arrays (the bodies as one text, split here: body-list.ts), at most one per id; the ids
    // returned are the rows written.
    putMany: `INSERT INTO ${tasks} AS t (id, owner, context_id, state, terminal, status_ts, updated_at, body)
      SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::boolean[], $6::bigint[], $7::bigint[], ${bodyListSql('$8')})
      ON CONFLICT (id) DO UPDATE SET
        owner = EXCLUDED.owner, context_id = EXCLUDED.context_id, state = EXCLUDED.state,
        terminal = EXCLUDED.terminal, status_ts = EXCLUDED.status_ts, updated_at = EXCLUDED.updated_at,
        body = EXCLUDED.body
      WHERE t.owner = EXCLUDED.owner OR t.updated_at <= $9
      RETURNING id`,
    get: `SELECT body FROM ${tasks} WHERE id = $1 AND owner = $2 AND updated_at > $3`,
    // Startup only (failRunning): keyset pages by id over the tasks a dead process left running.
    running: `SELECT id, owner, body FROM ${tasks}
      WHERE state IN ('submitted', 'working') AND updated_at > $1 AND id > $2 ORDER BY id LIMIT $3`,
    list: {
      owner: listSql(tasks, 'owner'),
      context: listSql(tasks, 'context'),
      state: listSql(tasks, 'state'),
      contextState: listSql(tasks, 'contextState'),
    },
    page: {
      owner: listSql(tasks, 'owner', false),
      context: listSql(tasks, 'context', false),
      state: listSql(tasks, 'state', false),
      contextState: listSql(tasks, 'contextState', false),
    },
    count: `SELECT count(*) AS tasks FROM ${tasks}`,
    // The victims are picked on the retention index and deleted by primary key. `= ANY(ARRAY(…))`
    // rather than `IN (…)`: with the LIMIT a parameter, a generic plan for IN guesses a tenth of
    // the table and hash-joins it with a sequential scan. SKIP LOCKED: a row a put is writing
    // right now is left for the next sweep.
    deleteExpired: `DELETE FROM ${tasks} WHERE id = ANY (ARRAY (
      SELECT id FROM ${tasks} WHERE updated_at <= $1 ORDER BY updated_at LIMIT $2 FOR UPDATE SKIP LOCKED))`,
    deleteOldestFinished: `DELETE FROM ${tasks} WHERE id = ANY (ARRAY (
      SELECT id FROM ${tasks} WHERE terminal ORDER BY updated_at LIMIT $1 FOR UPDATE SKIP LOCKED))`,
  };
}

/**
 * The page and its `totalSize` in one statement. The page is a keyset query below the bound
 * (status_ts, id): a range on status_ts (the index seek) plus a filter for ties at the bound.
 * The count is O(matching rows) but reads only the index that answers the filters. The outer
 * LEFT JOIN returns one row even for an empty page, so the count always comes back.
 */
function listSql(tasks: string, shape: FilterShape, withCount = true): string {
  let next = 1;
  const param = (): string => `$${next++}`;
  const filters = [`owner = ${param()}`];
  if (shape === 'context' || shape === 'contextState') filters.push(`context_id = ${param()}`);
  if (shape === 'state' || shape === 'contextState') filters.push(`state = ${param()}`);
  filters.push(`status_ts >= ${param()}`, `updated_at > ${param()}`);
  const where = filters.join(' AND ');
  const boundMs = param();
  const boundId = param();
  const limit = param();
  // The aggregate row always exists, so the LEFT JOIN returns one row even for an empty page.
  const counted = withCount
    ? `SELECT count(*) AS total, min(updated_at) AS oldest FROM ${tasks} WHERE ${where}`
    : 'SELECT NULL::bigint AS total, NULL::bigint AS oldest';
  return `WITH page AS (
      SELECT id, status_ts, body FROM ${tasks}
      WHERE ${where} AND status_ts <= ${boundMs} AND (status_ts < ${boundMs} OR id < ${boundId})
      ORDER BY status_ts DESC, id DESC
      LIMIT ${limit}
    ), counted AS (${counted})
    SELECT counted.total, counted.oldest, page.id, page.status_ts, page.body
    FROM counted LEFT JOIN page ON true
    ORDER BY page.status_ts DESC, page.id DESC`;
}

/**
 * The parameters of a list statement, in {@link listSql}'s order: owner, [contextId], [state],
 * floor, expiredBefore, boundMs, boundId, limit.
 *
 * @example
 * ```ts
 * listValues({ owner, floorMs, expiredBefore }, listBound(undefined), 51); // [owner, floorMs, expiredBefore, …, 51]
 * ```
 */
export function listValues(filters: ListFilters, bound: TaskSortKey, limit: number): (string | number)[] {
  const values: (string | number)[] = [filters.owner];
  if (filters.contextId !== undefined) values.push(filters.contextId);
  if (filters.state !== undefined) values.push(filters.state);
  values.push(filters.floorMs, filters.expiredBefore, bound.statusMs, bound.id, limit);
  return values;
}

/**
 * A list statement's rows as the shared ListTasks reads them: bigints (text) as numbers, the
 * empty page's count-only row left out.
 *
 * @example
 * ```ts
 * const { rows, count } = listRowsRead(result.rows, true);
 * ```
 */
export function listRowsRead(rows: readonly ListRow[], withCount: boolean): TaskRowsRead {
  const page = rows.flatMap((row) =>
    row.id === null ? [] : [{ id: row.id, statusMs: Number(row.status_ts), body: row.body ?? 'null' }],
  );
  if (!withCount) return { rows: page };
  const first = rows[0];
  const oldest = first?.oldest;
  return {
    rows: page,
    count: {
      total: Number(first?.total ?? 0),
      oldest: oldest === null || oldest === undefined ? null : Number(oldest),
    },
  };
}
