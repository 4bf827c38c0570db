/**
 * The embedded durable task store: one SQLite file (better-sqlite3), for a single Airlock
 * process (`airlock serve --data <dir>`). Same contract as the memory store; the schema and
 * the reasons for each index are in `migrations/sqlite.ts`.
 *
 * Durability: WAL with `synchronous=FULL` by default, so a put that has returned survives a
 * power cut (the service acknowledges a task only after its first put). `synchronous: 'normal'`
 * trades that for throughput: the database stays consistent, but the last puts before a power
 * cut (not a process crash) may be lost.
 *
 * better-sqlite3 is synchronous: every call blocks the event loop until SQLite answers. So
 * every statement on the request path is small (a primary-key lookup, an upsert, one index
 * seek for a page of at most 101 rows) and prepared once; counting `totalSize` is the one
 * statement that grows with the data (O(matching rows), read from an index only, never the
 * table). The background sweep deletes in bounded batches and yields between them.
 *
 * Differences from the memory store, by design:
 * - `maxTasks` is enforced by the periodic sweep, not at put: a put is never refused for room,
 *   and the store may exceed the cap by what arrives between two sweeps. Counting on every put
 *   would put a write on the hot path of every new task for a bound nobody needs exact.
 * - `get` and `list` return new objects parsed from JSON, not the object that was put.
 * - Keys (owner, task id, context id) must be storable text (see `isStorableKey`).
 * - The TTL clock defaults to the wall clock (`Date.now`): `updated_at` outlives the process.
 *
 * @example
 * ```ts
 * const store = await SqliteTaskStore.open({ path: '/var/lib/airlock/airlock.db' });
 * await store.put('alice', task);
 * await store.get('alice', task.id); // an equal task
 * await store.get('bob', task.id); // undefined
 * await store.close();
 * ```
 */
import { openSync, closeSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { Database as SqliteDatabase, Statement } from 'better-sqlite3';
import { isTerminalState } from '../../protocol/model.js';
import type { Task } from '../../protocol/model.js';
import type { TaskPage, TaskQuery, TaskStore } from '../store.js';
import { StoreUnavailableError, TaskStoreInputError } from './errors.js';
import { migrateSqlite } from './migrations/sqlite.js';
import type { MigrationReport } from './migrations/plan.js';
import {
  checkTaskQuery,
  decodePageToken,
  encodePageToken,
  isStorableKey,
  listBound,
  statusFloorMs,
  statusMsOf,
} from './page-token.js';
import {
  checkStorableKeys,
  filterShapeOf,
  DEFAULT_MAX_TASKS,
  DEFAULT_SWEEP_BATCH,
  DEFAULT_SWEEP_INTERVAL_MS,
  DEFAULT_TTL_MS,
  MAX_BATCHES_PER_SWEEP,
  MAX_ID_BYTES,
  MAX_OWNER_BYTES,
  MAX_TIMER_MS,
  TotalSizeCache,
  type FilterShape,
} from './durable.js';

/**
 * Tuning for {@link SqliteTaskStore}. Only `path` is required.
 *
 * @example
 * ```ts
 * const options: SqliteTaskStoreOptions = { path: 'data/airlock.db', maxTasks: 100_000, taskTtlMs: 24 * 3_600_000 };
 * ```
 */
export interface SqliteTaskStoreOptions {
  /** The database file (created, mode 0600, if missing), or `:memory:` for tests. */
  path: string;
  /** Tasks kept; the sweep evicts the least recently updated finished ones above it. Default 10 000. */
  maxTasks?: number;
  /** A task not updated (put) for this long is gone. Default 60 minutes. */
  taskTtlMs?: number;
  /** How often the retention sweep runs. Default 60 s. */
  sweepIntervalMs?: number;
  /** Most rows one sweep batch deletes; a full batch is followed by more, up to 10 per run. Default 1 000. */
  sweepBatch?: number;
  /** Clock for `updated_at` and the TTL, epoch ms. Default `Date.now`. */
  now?: () => number;
  /** `full` (default): a returned put survives a power cut. `normal`: faster; see the module comment. */
  synchronous?: 'full' | 'normal';
  /** How long a statement waits for another process's write lock (blocking the event loop). Default 1 000 ms. */
  busyTimeoutMs?: number;
  /** Told of a failed background sweep (the next run tries again). Default: ignored. */
  onBackgroundError?: (error: unknown) => void;
}

const STORE_NAME = 'SqliteTaskStore';
const DEFAULT_BUSY_TIMEOUT_MS = 1_000;
/** Cap on the WAL file left behind after a checkpoint. */
const JOURNAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

interface PageRow {
  id: string;
  status_ts: number;
  body: string;
}

interface ListStatements {
  page: Statement<[Record<string, string | number>], PageRow>;
  count: Statement<[Record<string, string | number>], { total: number; oldest: number | null }>;
}

/**
 * A durable {@link TaskStore} in one SQLite file. Open it with {@link SqliteTaskStore.open},
 * which applies pending migrations first.
 *
 * Complexity (n = tasks, k = tasks matching the list filters, p = page size): `get` and `put`
 * O(log n); `list` O(log n + p) for the page plus O(k) index entries for `totalSize`;
 * a sweep batch O(b log n) for b deleted rows.
 *
 * @example
 * ```ts
 * const store = await SqliteTaskStore.open({ path: 'airlock.db', maxTasks: 50_000 });
 * const page = await store.list('alice', { pageSize: 50, status: 'working' });
 * await store.close();
 * ```
 */
export class SqliteTaskStore implements TaskStore {
  /** What the migrations did when this store was opened. */
  readonly migration: MigrationReport;
  private readonly db: SqliteDatabase;
  private readonly maxTasks: number;
  private readonly taskTtlMs: number;
  private readonly sweepBatch: number;
  private readonly readClock: () => number;
  private readonly onBackgroundError: (error: unknown) => void;
  private readonly upsert: Statement<[Record<string, string | number>]>;
  /** Puts waiting for this turn's group commit (see put). */
  private pendingPuts: PendingPut[] = [];
  private readonly writeBatch: (params: Array<Record<string, string | number>>) => number[];
  private readonly selectOne: Statement<[string, string, number], string>;
  private readonly lists: Record<FilterShape, ListStatements>;
  /** ListTasks' totalSize, reused while the owner's tasks do not change (see TotalSizeCache). */
  private readonly totals = new TotalSizeCache();
  private readonly deleteExpired: Statement<[number, number]>;
  private readonly deleteOldestFinished: Statement<[number]>;
  private readonly readCount: Statement<[], number>;
  private lastClockMs = Number.NEGATIVE_INFINITY;
  private timer: NodeJS.Timeout | undefined;
  private sweeping = false;

  /**
   * Opens (creating if needed) the database file, applies pending migrations and starts the
   * retention sweep.
   *
   * @throws StoreSchemaError if the file was written by a newer Airlock; StoreUnavailableError
   *   if it cannot be opened or is locked by another process for longer than the busy timeout.
   * @example
   * ```ts
   * const store = await SqliteTaskStore.open({ path: join(dataDir, 'airlock.db') });
   * ```
   */
  static async open(options: SqliteTaskStoreOptions): Promise<SqliteTaskStore> {
    return new SqliteTaskStore(options);
  }

  /**
   * Applies pending migrations to a database file and closes it: `airlock db migrate`.
   *
   * @example
   * ```ts
   * const report = SqliteTaskStore.migrateFile('data/airlock.db'); // { engine: 'sqlite', version: 1, applied: [] }
   * ```
   */
  static migrateFile(path: string): MigrationReport {
    const db = openDatabase(path, 'full', DEFAULT_BUSY_TIMEOUT_MS);
    try {
      return guard(() => migrateSqlite(db));
    } finally {
      db.close();
    }
  }

  private constructor(options: SqliteTaskStoreOptions) {
    this.maxTasks = options.maxTasks ?? DEFAULT_MAX_TASKS;
    this.taskTtlMs = options.taskTtlMs ?? DEFAULT_TTL_MS;
    this.sweepBatch = options.sweepBatch ?? DEFAULT_SWEEP_BATCH;
    const sweepIntervalMs = options.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS;
    checkOptions(this.maxTasks, this.taskTtlMs, sweepIntervalMs, this.sweepBatch);
    this.readClock = options.now ?? Date.now;
    this.onBackgroundError = options.onBackgroundError ?? (() => undefined);
    const db = openDatabase(
      options.path,
      options.synchronous ?? 'full',
      options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS,
    );
    try {
      this.migration = guard(() => migrateSqlite(db));
      this.db = db;
      this.upsert = db.prepare(UPSERT_SQL);
      const upsert = this.upsert;
      this.writeBatch = db.transaction((rows: Array<Record<string, string | number>>) =>
        rows.map((row) => upsert.run(row).changes),
      );
      this.selectOne = db
        .prepare<[string, string, number], string>(
          'SELECT body FROM tasks WHERE id = ? AND owner = ? AND updated_at > ?',
        )
        .pluck();
      this.lists = {
        owner: prepareList(db, 'owner'),
        context: prepareList(db, 'context'),
        state: prepareList(db, 'state'),
        contextState: prepareList(db, 'contextState'),
      };
      this.deleteExpired = db.prepare(
        `DELETE FROM tasks WHERE rowid IN
           (SELECT rowid FROM tasks INDEXED BY tasks_expiry WHERE updated_at <= ? ORDER BY updated_at LIMIT ?)`,
      );
      this.deleteOldestFinished = db.prepare(
        `DELETE FROM tasks WHERE rowid IN
           (SELECT rowid FROM tasks INDEXED BY tasks_eviction WHERE terminal = 1 ORDER BY updated_at LIMIT ?)`,
      );
      this.readCount = db.prepare<[], number>('SELECT tasks FROM task_count').pluck();
    } catch (error) {
      db.close();
      throw error;
    }
    // unref: an idle store must not keep the process alive.
    this.timer = setInterval(() => this.sweepInBackground(), sweepIntervalMs).unref();
  }

  /**
   * Creates or replaces a task (and restarts its idle TTL). Never refused for room.
   *
   * @throws TaskStoreInputError `owner_conflict` if the id belongs to another owner's live task,
   *   `invalid_timestamp`, or `unstorable_key`; StoreUnavailableError if the file is locked or the
   *   disk is full. A refused put leaves the stored task unchanged.
   * @example
   * ```ts
   * await store.put(owner, { ...task, status: { state: 'completed', timestamp: new Date().toISOString() } });
   * ```
   */
  async put(owner: string, task: Task): Promise<void> {
    const statusMs = statusMsOf(task, STORE_NAME);
    checkStorableKeys(STORE_NAME, owner, task);
    const params = this.upsertParams(owner, task, this.clock(), statusMs);
    // Group commit: the puts of one event-loop turn share one transaction, so one fsync (with
    // synchronous=FULL) makes them all durable. Each caller still hears only once its own row
    // is on disk, and the loop is blocked once per batch instead of once per put.
    return new Promise<void>((resolve, reject) => {
      this.pendingPuts.push({ owner, params, resolve, reject });
      if (this.pendingPuts.length === 1) setImmediate(this.flushPuts);
    });
  }

  /** Writes the queued puts in one transaction; on failure, one by one, so one bad row fails alone. */
  private readonly flushPuts = (): void => {
    const batch = this.pendingPuts;
    if (batch.length === 0) return;
    this.pendingPuts = [];
    if (!this.db.open) {
      for (const put of batch) put.reject(new StoreUnavailableError(`${STORE_NAME}: the store is closed`));
      return;
    }
    let changes: number[] | undefined;
    try {
      changes = guard(() => this.writeBatch(batch.map((put) => put.params)));
    } catch {
      changes = undefined;
    }
    // Counts read while the batch was queued must not outlive it.
    for (const put of batch) this.totals.changed(put.owner);
    if (changes !== undefined) {
      batch.forEach((put, index) => settlePut(put, changes[index] ?? 0));
      return;
    }
    for (const put of batch) {
      try {
        settlePut(
          put,
          guard(() => this.upsert.run(put.params).changes),
        );
      } catch (error) {
        put.reject(error);
      }
    }
  };

  /**
   * The stored task, or `undefined` if it is missing, expired, or another owner's.
   *
   * @example
   * ```ts
   * const task = await store.get(owner, 'task-1');
   * if (task === undefined) throw new A2AError('TASK_NOT_FOUND');
   * ```
   */
  async get(owner: string, taskId: string): Promise<Task | undefined> {
    if (!isStorableKey(owner, MAX_OWNER_BYTES) || !isStorableKey(taskId, MAX_ID_BYTES)) return undefined;
    const body = guard(() => this.selectOne.get(taskId, owner, this.expiredBefore(this.clock())));
    return body === undefined ? undefined : (JSON.parse(body) as Task);
  }

  /**
   * One page of the owner's live tasks, newest status timestamp first (ties: id descending).
   * The page and `totalSize` are read in one transaction, so they agree.
   *
   * @throws A2AError INVALID_PARAMS for a malformed `pageToken`, `pageSize` or `statusTimestampAfter`.
   * @example
   * ```ts
   * let page = await store.list(owner, { pageSize: 50, contextId: 'ctx-1' });
   * while (page.nextPageToken !== '') {
   *   page = await store.list(owner, { pageSize: 50, contextId: 'ctx-1', pageToken: page.nextPageToken });
   * }
   * ```
   */
  async list(owner: string, query: TaskQuery): Promise<TaskPage> {
    checkTaskQuery(query);
    const after = query.pageToken ? decodePageToken(query.pageToken, MAX_ID_BYTES) : undefined;
    const { contextId, status } = query;
    if (
      !isStorableKey(owner, MAX_OWNER_BYTES) ||
      (contextId !== undefined && !isStorableKey(contextId, MAX_ID_BYTES))
    ) {
      return { tasks: [], nextPageToken: '', totalSize: 0 };
    }
    const shape = filterShapeOf(contextId, status);
    const filters: Record<string, string | number> = {
      owner,
      floor: statusFloorMs(query.statusTimestampAfter),
      expiredBefore: this.expiredBefore(this.clock()),
    };
    if (contextId !== undefined) filters.contextId = contextId;
    if (status !== undefined) filters.state = status;
    const bound = listBound(after);
    const pageParams = { ...filters, boundMs: bound.statusMs, boundId: bound.id, limit: query.pageSize + 1 };
    const statements = this.lists[shape];
    const now = this.clock();
    const generation = this.totals.generation(owner);
    const countKey = [shape, contextId ?? null, status ?? null, filters.floor];
    const cached = this.totals.get(owner, generation, countKey, now);
    const { rows, counted } =
      cached === undefined
        ? guard(() =>
            this.db.transaction(() => ({
              rows: statements.page.all(pageParams),
              counted: statements.count.get(filters),
            }))(),
          )
        : { rows: guard(() => statements.page.all(pageParams)), counted: undefined };
    const totalSize = cached ?? counted?.total ?? 0;
    if (cached === undefined) {
      const oldest = counted?.oldest ?? null;
      this.totals.set(
        owner,
        generation,
        countKey,
        totalSize,
        now,
        oldest === null ? Infinity : oldest + this.taskTtlMs,
      );
    }
    const more = rows.length > query.pageSize;
    const shown = more ? rows.slice(0, query.pageSize) : rows;
    const last = shown[shown.length - 1];
    return {
      tasks: shown.map((row) => JSON.parse(row.body) as Task),
      nextPageToken: more && last !== undefined ? encodePageToken({ statusMs: last.status_ts, id: last.id }) : '',
      totalSize,
    };
  }

  /**
   * One retention batch: deletes up to `limit` tasks, those idle for the TTL first (oldest
   * first), then, while the store holds more than `maxTasks`, the least recently updated
   * finished ones. Returns how many it deleted. The timer calls it; it is public for tests and
   * for operators who want room now.
   *
   * @example
   * ```ts
   * while (store.sweep() > 0);
   * ```
   */
  sweep(limit: number = this.sweepBatch): number {
    const expiredBefore = this.expiredBefore(this.clock());
    const deleted = guard(() =>
      this.db.transaction((): number => {
        const expired = this.deleteExpired.run(expiredBefore, limit).changes;
        const excess = (this.readCount.get() ?? 0) - this.maxTasks;
        const room = limit - expired;
        const evicted = excess > 0 && room > 0 ? this.deleteOldestFinished.run(Math.min(excess, room)).changes : 0;
        return expired + evicted;
      })(),
    );
    if (deleted > 0) this.totals.clear();
    return deleted;
  }

  /**
   * Restart safety: every task still `submitted` or `working` was left so by a process that is
   * gone (this store is one process's), and no turn will ever finish it. Replaces each with
   * `settle(task)` (the service makes it failed with its own message), in batches of 500, and
   * returns how many. Call once at startup, before serving. Reads every running task: a startup
   * cost, never a request's.
   *
   * @example
   * ```ts
   * await store.failRunning((task) => ({ ...task, status: { state: 'failed', timestamp: new Date().toISOString() } }));
   * ```
   */
  async failRunning(settle: (task: Task, owner: string) => Task): Promise<number> {
    // Expired tasks are left alone: settling one would revive it.
    const select = this.db.prepare<[number, number], { rowid: number; owner: string; body: string }>(
      `SELECT rowid, owner, body FROM tasks
       WHERE state IN ('submitted', 'working') AND updated_at > ? AND rowid > ? ORDER BY rowid LIMIT 500`,
    );
    let settled = 0;
    for (let after = 0; ;) {
      const rows = guard(() => select.all(this.expiredBefore(this.clock()), after));
      if (rows.length === 0) return settled;
      // Settled outside the transaction (the callback is the caller's code), written in one.
      const replacements = rows.map((row) => {
        const task = JSON.parse(row.body) as Task;
        const replacement = settle(task, row.owner);
        if (replacement.id !== task.id) throw new Error(`${STORE_NAME}: failRunning's settle must keep the task id`);
        statusMsOf(replacement, STORE_NAME);
        checkStorableKeys(STORE_NAME, row.owner, replacement);
        return { owner: row.owner, task: replacement };
      });
      guard(() =>
        this.db.transaction(() => {
          for (const { owner, task } of replacements) this.upsert.run(this.upsertParams(owner, task, this.clock()));
          this.totals.clear();
        })(),
      );
      settled += rows.length;
      after = rows[rows.length - 1]!.rowid;
    }
  }

  /**
   * How many rows the store holds, counting expired ones the sweep has not deleted yet. O(1).
   *
   * @example
   * ```ts
   * metrics.gauge('airlock_tasks', await store.countTasks());
   * ```
   */
  async countTasks(): Promise<number> {
    return guard(() => this.readCount.get() ?? 0);
  }

  /**
   * Stops the sweep and closes the database (checkpointing the WAL). Idempotent.
   *
   * @example
   * ```ts
   * await store.close();
   * ```
   */
  async close(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    // Puts already queued were promised a write: they land before the database closes.
    this.flushPuts();
    if (this.db.open) this.db.close();
  }

  /** Whole ms (the columns are integers), and never backwards: a step back must not revive a task. */
  private clock(): number {
    this.lastClockMs = Math.max(this.lastClockMs, Math.floor(this.readClock()));
    return this.lastClockMs;
  }

  private upsertParams(
    owner: string,
    task: Task,
    nowMs: number,
    statusMs: number = statusMsOf(task, STORE_NAME),
  ): Record<string, string | number> {
    return {
      id: task.id,
      owner,
      contextId: task.contextId,
      state: task.status.state,
      terminal: isTerminalState(task.status.state) ? 1 : 0,
      statusTs: statusMs,
      updatedAt: nowMs,
      body: JSON.stringify(task),
      expiredBefore: this.expiredBefore(nowMs),
    };
  }

  /** Rows whose `updated_at` is at or before this have expired (floored: `updated_at` is whole ms). */
  private expiredBefore(nowMs: number): number {
    return Math.floor(nowMs - this.taskTtlMs);
  }

  /** Up to {@link MAX_BATCHES_PER_SWEEP} batches, each on its own event loop turn. */
  private sweepInBackground(): void {
    if (this.sweeping) return;
    this.sweeping = true;
    const runBatch = (batchesLeft: number): void => {
      let full = false;
      try {
        if (this.db.open) full = this.sweep() === this.sweepBatch;
      } catch (error) {
        this.onBackgroundError(error);
      }
      if (full && batchesLeft > 1 && this.timer !== undefined) setImmediate(runBatch, batchesLeft - 1);
      else this.sweeping = false;
    };
    runBatch(MAX_BATCHES_PER_SWEEP);
  }
}

/**
 * An upsert that replaces a row only if it is the same owner's, or has expired (an expired task
 * is gone, so its id is free, as in the memory store). Zero changes means another owner's task.
 */
const UPSERT_SQL = `
INSERT INTO tasks (id, owner, context_id, state, terminal, status_ts, updated_at, body)
VALUES (@id, @owner, @contextId, @state, @terminal, @statusTs, @updatedAt, @body)
ON CONFLICT (id) DO UPDATE SET
  owner = excluded.owner,
  context_id = excluded.context_id,
  state = excluded.state,
  terminal = excluded.terminal,
  status_ts = excluded.status_ts,
  updated_at = excluded.updated_at,
  body = excluded.body
WHERE tasks.owner = excluded.owner OR tasks.updated_at <= @expiredBefore`;

/**
 * The index for each filter combination, named with INDEXED BY so that the planner (which has
 * no statistics) can never pick the wrong one. Context and state together use the context
 * index: a context holds one conversation's tasks, and the index carries `state`.
 */
const INDEX_FOR: Record<FilterShape, string> = {
  owner: 'tasks_owner_list',
  context: 'tasks_owner_context_list',
  state: 'tasks_owner_state_list',
  contextState: 'tasks_owner_context_list',
};

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
  const from = `FROM tasks INDEXED BY ${INDEX_FOR[shape]} WHERE ${where}`;
  return {
    page: db.prepare(
      `SELECT id, status_ts, body ${from}
         AND status_ts <= @boundMs AND (status_ts < @boundMs OR id < @boundId)
       ORDER BY status_ts DESC, id DESC LIMIT @limit`,
    ),
    // O(matching rows), but only index entries: the index carries every column it filters on.
    // With the oldest `updated_at`: a reused count is good only until that task expires.
    count: db.prepare<[Record<string, string | number>], { total: number; oldest: number | null }>(
      `SELECT count(*) AS total, min(updated_at) AS oldest ${from}`,
    ),
  };
}

function openDatabase(path: string, synchronous: 'full' | 'normal', busyTimeoutMs: number): SqliteDatabase {
  if (path !== ':memory:' && path !== '') {
    // Created owner-only before SQLite opens it: tasks hold conversations. SQLite gives the
    // -wal and -shm files the database file's permissions.
    guard(() => closeSync(openSync(path, 'a', 0o600)));
  }
  const db = guard(() => new Database(path, { timeout: busyTimeoutMs }));
  try {
    guard(() => {
      const mode = db.pragma('journal_mode = WAL', { simple: true }) as string;
      if (!db.memory && mode !== 'wal') {
        throw new StoreUnavailableError(`${STORE_NAME}: the database would not switch to WAL mode (it is ${mode})`);
      }
      db.pragma(`synchronous = ${synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
      db.pragma(`journal_size_limit = ${JOURNAL_SIZE_LIMIT_BYTES}`);
    });
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

/** SQLite result codes that mean "not now" rather than "never": locked, busy, out of disk, I/O. */
const UNAVAILABLE_CODES = /^SQLITE_(BUSY|LOCKED|FULL|IOERR|CANTOPEN|PROTOCOL|NOMEM)/;

/** Runs a database call, turning SQLite's "not now" failures into {@link StoreUnavailableError}. */
/** A put waiting for the group commit. */
interface PendingPut {
  owner: string;
  params: Record<string, string | number>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

function settlePut(put: PendingPut, changes: number): void {
  // Deliberately vague: the message may be logged, and owner keys are principals.
  if (changes === 0)
    put.reject(new TaskStoreInputError('owner_conflict', `${STORE_NAME}: a task id cannot move to another owner`));
  else put.resolve();
}

function guard<T>(call: () => T): T {
  try {
    return call();
  } catch (error) {
    if (error instanceof Database.SqliteError && UNAVAILABLE_CODES.test(error.code)) {
      throw new StoreUnavailableError(`${STORE_NAME}: the database is unavailable (${error.code})`, { cause: error });
    }
    const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
    if (typeof code === 'string' && /^E(ACCES|NOENT|NOSPC|ROFS|PERM|IO)$/.test(code)) {
      throw new StoreUnavailableError(`${STORE_NAME}: the database file cannot be opened (${code})`, { cause: error });
    }
    throw error;
  }
}

function checkOptions(maxTasks: number, taskTtlMs: number, sweepIntervalMs: number, sweepBatch: number): void {
  if (!Number.isSafeInteger(maxTasks) || maxTasks < 1) {
    throw new RangeError(`${STORE_NAME}: maxTasks must be a positive integer`);
  }
  if (!(taskTtlMs > 0)) throw new RangeError(`${STORE_NAME}: taskTtlMs must be positive`);
  if (!(sweepIntervalMs > 0 && sweepIntervalMs <= MAX_TIMER_MS)) {
    throw new RangeError(`${STORE_NAME}: sweepIntervalMs must be in (0, ${MAX_TIMER_MS}]`);
  }
  if (!Number.isSafeInteger(sweepBatch) || sweepBatch < 1) {
    throw new RangeError(`${STORE_NAME}: sweepBatch must be a positive integer`);
  }
}
