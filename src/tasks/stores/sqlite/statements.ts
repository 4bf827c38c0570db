/**
 * The SQLite store's SQL, prepared once per store: the task write and its batch transaction, the
 * primary-key read, one page and one count statement per ListTasks filter shape (each on its
 * named index), and the retention deletes.
 *
 * @example
 * ```ts
 * const sql = prepareStatements(db);
 * sql.selectOne.get(taskId, owner, expiredBefore);
 * ```
 */
import type { Database as SqliteDatabase, RunResult, Statement } from 'better-sqlite3';
import type { FilterShape } from '../durable.js';
import type { ListFilters, TaskRowsRead } from '../durable-list.js';
import type { TaskSortKey } from '../page-token.js';

interface PageRow {
  id: string;
  status_ts: number;
  body: string;
}

interface ListStatements {
  page: Statement<[Record<string, string | number>], PageRow>;
  count: Statement<[Record<string, string | number>], { total: number; oldest: number | null }>;
}

/** A task's row as the writes take it (named parameters; `created: 1` for a new task's first put). */
type UpsertParams = Record<string, string | number>;

/**
 * The sweep's first delete: up to `?` tasks idle since `?` (each is gone for every reader
 * already, so which go first does not matter: the next batch takes the rest).
 */
export const DELETE_EXPIRED_SQL = `DELETE FROM tasks WHERE rowid IN
  (SELECT rowid FROM tasks INDEXED BY tasks_by_age WHERE terminal IN (0, 1) AND updated_at <= ? LIMIT +?)`;

/** The sweep's eviction above `maxTasks`: the `?` least recently updated finished tasks. */
export const DELETE_OLDEST_FINISHED_SQL = `DELETE FROM tasks WHERE rowid IN
  (SELECT rowid FROM tasks INDEXED BY tasks_by_age WHERE terminal = 1 ORDER BY updated_at LIMIT +?)`;

/**
 * The store's prepared statements.
 *
 * @example
 * ```ts
 * const changes = sql.writeBatch([params]); // [1]: written; [0]: another owner's live task
 * ```
 */
export interface SqliteStatements {
  /** One task's write, in a transaction (a savepoint inside another): 1 written, 0 another owner's live task. */
  readonly writeOne: (params: UpsertParams) => number;
  /** The writes of one group commit, in one transaction after `first` in it; the changes of each. */
  readonly writeBatch: (params: UpsertParams[], first?: () => void) => number[];
  readonly selectOne: Statement<[string, string, number], string>;
  readonly lists: Record<FilterShape, ListStatements>;
  /** Deletes up to `limit` tasks idle since `expiredBefore`, oldest first; returns how many. */
  readonly deleteExpired: (expiredBefore: number, limit: number) => number;
  /** Deletes the `count` least recently updated finished tasks; returns how many. */
  readonly deleteOldestFinished: (count: number) => number;
  readonly readCount: Statement<[], number>;
  /**
   * Sets the row count from the table (`count(*)`, once, when the store opens): heals a count
   * that a process of a build before schema version 6, still serving the file after the
   * migration, left behind by writing without it.
   */
  readonly recount: () => void;
}

/**
 * Prepares every statement of the store (after the migrations: they name its tables and indexes).
 *
 * @example
 * ```ts
 * const sql = prepareStatements(db);
 * ```
 */
export function prepareStatements(db: SqliteDatabase): SqliteStatements {
  // Bound by position, in the statements' order: better-sqlite3 reads a named parameter from the
  // row object one property at a time, about 0.6 µs more a task (bench:store).
  const insertRow = db.prepare<unknown[]>(INSERT_SQL);
  const updateRow = db.prepare<unknown[]>(UPDATE_SQL);
  const insert = (r: UpsertParams): RunResult =>
    insertRow.run(r.id, r.owner, r.contextId, r.state, r.terminal, r.statusTs, r.updatedAt, r.body);
  const update = (r: UpsertParams): RunResult =>
    updateRow.run(
      r.owner,
      r.contextId,
      r.state,
      r.terminal,
      r.statusTs,
      r.updatedAt,
      r.body,
      r.id,
      r.owner,
      r.expiredBefore,
    );
  const count = prepareCount(db);
  // A new id is inserted; a taken one is updated if it is the same owner's or has expired. Either
  // order gives the same result; the first statement tried is the one likely to do the write
  // (`created`: a new task's first put).
  const write = (row: UpsertParams, added: { rows: number }): number => {
    if (row.created !== 1 && update(row).changes === 1) return 1;
    if (insert(row).changes === 1) {
      added.rows += 1;
      return 1;
    }
    return row.created === 1 ? update(row).changes : 0;
  };
  const writeBatch = db.transaction((rows: UpsertParams[], first?: () => void): number[] => {
    first?.();
    const added = { rows: 0 };
    const changes = rows.map((row) => write(row, added));
    count.add(added.rows);
    return changes;
  });
  const expired = db.prepare<[number, number]>(DELETE_EXPIRED_SQL);
  const oldestFinished = db.prepare<[number]>(DELETE_OLDEST_FINISHED_SQL);
  return {
    writeOne: (row) => writeBatch([row])[0]!,
    writeBatch,
    selectOne: db
      .prepare<[string, string, number], string>('SELECT body FROM tasks WHERE id = ? AND owner = ? AND updated_at > ?')
      .pluck(),
    lists: {
      owner: prepareList(db, 'owner'),
      context: prepareList(db, 'context'),
      state: prepareList(db, 'state'),
      contextState: prepareList(db, 'contextState'),
    },
    deleteExpired: db.transaction((expiredBefore: number, limit: number) =>
      count.removed(expired.run(expiredBefore, limit).changes),
    ),
    deleteOldestFinished: db.transaction((limit: number) => count.removed(oldestFinished.run(limit).changes)),
    readCount: db.prepare<[], number>('SELECT tasks FROM task_count').pluck(),
    recount: () => void db.prepare('UPDATE task_count SET tasks = (SELECT count(*) FROM tasks)').run(),
  };
}

/**
 * The row count in `task_count` (schema version 6), kept by the statements that insert and
 * delete tasks, in their transaction: one update per transaction where the triggers it replaces
 * made one per row (they cost about a seventh of the SQLite row's CPU per request).
 *
 * @example
 * ```ts
 * const count = prepareCount(db);
 * db.transaction(() => count.removed(deleteSome.run().changes))();
 * ```
 */
export function prepareCount(db: SqliteDatabase): { add: (rows: number) => void; removed: (rows: number) => number } {
  const change = db.prepare<[number]>('UPDATE task_count SET tasks = tasks + ?');
  return {
    add: (rows) => {
      if (rows !== 0) change.run(rows);
    },
    removed: (rows) => {
      if (rows !== 0) change.run(-rows);
      return rows;
    },
  };
}

/**
 * failRunning's page: unexpired running tasks after a rowid, 500 at a time (settling an expired
 * one would revive it).
 *
 * @example
 * ```ts
 * const rows = db.prepare(RUNNING_SQL).all(expiredBefore, afterRowid);
 * ```
 */
export const RUNNING_SQL = `SELECT rowid, owner, body FROM tasks
       WHERE state IN ('submitted', 'working') AND updated_at > ? AND rowid > ? ORDER BY rowid LIMIT 500`;

/**
 * Reads one ListTasks page, and its count when asked, in one transaction (so they agree).
 *
 * @example
 * ```ts
 * const { rows, count } = readTaskRows(db, sql, 'owner', filters, listBound(undefined), 51, true);
 * ```
 */
export function readTaskRows(
  db: SqliteDatabase,
  sql: SqliteStatements,
  shape: FilterShape,
  filters: ListFilters,
  bound: TaskSortKey,
  limit: number,
  withCount: boolean,
): TaskRowsRead {
  const params: Record<string, string | number> = {
    owner: filters.owner,
    floor: filters.floorMs,
    expiredBefore: filters.expiredBefore,
  };
  if (filters.contextId !== undefined) params.contextId = filters.contextId;
  if (filters.state !== undefined) params.state = filters.state;
  const pageParams = { ...params, boundMs: bound.statusMs, boundId: bound.id, limit };
  const statements = sql.lists[shape];
  const pageOf = (rows: PageRow[]): TaskRowsRead['rows'] =>
    rows.map((row) => ({ id: row.id, statusMs: row.status_ts, body: row.body }));
  if (!withCount) return { rows: pageOf(statements.page.all(pageParams)) };
  return db.transaction(() => {
    const rows = pageOf(statements.page.all(pageParams));
    const counted = statements.count.get(params);
    return { rows, count: { total: counted?.total ?? 0, oldest: counted?.oldest ?? null } };
  })();
}

/**
 * A new task's row; nothing if the id is taken (then {@link UPDATE_SQL}). Parameters: id, owner,
 * context id, state, terminal, status time, update time, body.
 */
const INSERT_SQL = `
INSERT INTO tasks (id, owner, context_id, state, terminal, status_ts, updated_at, body)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO NOTHING`;

/**
 * Replaces a row only if it is the same owner's, or has expired (an expired task is gone, so its
 * id is free, as in the memory store). Zero changes means another owner's task. Parameters: the
 * row's columns as for {@link INSERT_SQL} without the id, then id, owner and the expiry bound.
 */
const UPDATE_SQL = `
UPDATE tasks SET
  owner = ?,
  context_id = ?,
  state = ?,
  terminal = ?,
  status_ts = ?,
  updated_at = ?,
  body = ?
WHERE id = ? AND (owner = ? OR updated_at <= ?)`;

/**
 * Every filter combination reads the owner's index (schema version 7), named with INDEXED BY so
 * that the planner (which has no statistics) can never pick another: it carries `state` and
 * `context_id`, so a filter skips entries without reading the table, and the owner's entries
 * are bounded by its principal's task quota.
 */
const LIST_INDEX = 'tasks_by_owner';

/**
 * The page and count statements of one filter combination. The page is a keyset query below
 * the bound (status_ts, id), written as a range on status_ts plus a tie filter, which SQLite
 * turns into one index range: `status_ts <= boundMs` bounds the seek.
 */
function prepareList(db: SqliteDatabase, shape: FilterShape): ListStatements {
  const where = [
    'owner = @owner',
    ...(shape === 'context' || shape === 'contextState' ? ['context_id = @contextId'] : []),
    ...(shape === 'state' || shape === 'contextState' ? ['state = @state'] : []),
    'status_ts >= @floor',
    'updated_at > @expiredBefore',
  ].join(' AND ');
  const from = `FROM tasks INDEXED BY ${LIST_INDEX} WHERE ${where}`;
  return {
    page: db.prepare(
      `SELECT id, status_ts, body ${from}
         AND status_ts <= @boundMs AND (status_ts < @boundMs OR id < @boundId)
       ORDER BY status_ts DESC, id DESC LIMIT +@limit`,
    ),
    // O(the owner's rows), but only index entries: the index carries every column it filters on.
    // With the oldest `updated_at`: a reused count is good only until that task expires.
    count: db.prepare<[Record<string, string | number>], { total: number; oldest: number | null }>(
      `SELECT count(*) AS total, min(updated_at) AS oldest ${from}`,
    ),
  };
}
