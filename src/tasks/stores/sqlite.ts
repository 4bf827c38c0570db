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
 * - Fair shares (`fair-shares.ts`) are checked when a task is created (`put` with `created`):
 *   against bounds kept in memory, and with one count of the principal's index entries when
 *   the bounds come near a quota (`sqlite/shares.ts`). Parked tasks past their idle TTL are
 *   failed by the sweep, within one sweep interval of it.
 * - `get` and `list` return new objects parsed from JSON, not the object that was put.
 * - Keys (owner, task id, context id) must be storable text (see `isStorableKey`).
 * - The TTL clock defaults to the wall clock (`Date.now`): `updated_at` outlives the process.
 *
 *
 * Beside it, in `sqlite/`: opening the file, the prepared statements and the group commit;
 * ListTasks itself is shared with PostgreSQL (`durable-list.ts`).
 * @example
 * ```ts
 * const store = await SqliteTaskStore.open({ path: '/var/lib/airlock/airlock.db' });
 * await store.put('alice', task);
 * await store.get('alice', task.id); // an equal task
 * await store.get('bob', task.id); // undefined
 * await store.close();
 * ```
 */
import type { Database as SqliteDatabase } from 'better-sqlite3';
import { taskJson } from '../../protocol/model-json.js';
import { isTerminalState } from '../../protocol/model.js';
import type { Task } from '../../protocol/model.js';
import type { PutOptions, TaskPage, TaskQuery, TaskStore } from '../store.js';
import {
  checkStorableKeys,
  MAX_BATCHES_PER_SWEEP,
  MAX_ID_BYTES,
  MAX_OWNER_BYTES,
  settleStoredTask,
  TotalSizeCache,
  WholeMsClock,
} from './durable.js';
import { listStoredTasks, type StoredTaskList } from './durable-list.js';
import {
  failedByParkedTtl,
  isParked,
  resolveFairShares,
  type FairShareLimits,
  type ResolvedFairShares,
} from './fair-shares.js';
import { ShareBounds } from './share-bounds.js';
import { principalOfOwner } from './principal.js';
import { migrateSqlite } from './migrations/sqlite.js';
import type { MigrationReport } from './migrations/plan.js';
import { isStorableKey, statusMsOf } from './page-token.js';
import { resolveRetention } from './retention.js';
import { DEFAULT_BUSY_TIMEOUT_MS, guard, openDatabase, STORE_NAME } from './sqlite/database.js';
import type { ApprovalRecords } from './approval-records.js';
import { SqliteApprovalRecords } from './sqlite/approvals.js';
import type { DurablePush } from './push-outbox.js';
import { sqlitePush } from './sqlite/push.js';
import { SqliteGroupCommit } from './sqlite/group-commit.js';
import { checkShare, parkedIdle, prepareShareStatements, type SqliteShareStatements } from './sqlite/shares.js';
import { prepareStatements, readTaskRows, RUNNING_SQL, type SqliteStatements } from './sqlite/statements.js';

/** How old a share bound may be when workers share the file (their writes are not seen here). */
const SHARED_FILE_BOUND_MAX_AGE_MS = 1_000;

/**
 * Tuning for {@link SqliteTaskStore}. Only `path` is required.
 *
 * @example
 * ```ts
 * const options: SqliteTaskStoreOptions = { path: 'data/airlock.db', maxTasks: 100_000, taskTtlMs: 24 * 3_600_000 };
 * ```
 */
export interface SqliteTaskStoreOptions extends FairShareLimits {
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
  /**
   * Other processes write the same file (`airlock serve --workers N`): a principal's share
   * bounds are then counted again after a second, as replicas' are. Default false.
   */
  sharedFile?: boolean;
  /** Told of a failed background sweep (the next run tries again). Default: ignored. */
  onBackgroundError?: (error: unknown) => void;
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
  /** The actions waiting for a person and their decisions (see approval-records.ts). */
  readonly approvals: ApprovalRecords;
  /** Push configs and the push outbox (see push-outbox.ts). */
  readonly push: DurablePush;
  private readonly db: SqliteDatabase;
  private readonly maxTasks: number;
  private readonly taskTtlMs: number;
  private readonly sweepBatch: number;
  private readonly clock: WholeMsClock;
  private readonly onBackgroundError: (error: unknown) => void;
  private readonly sql: SqliteStatements;
  private readonly shareSql: SqliteShareStatements;
  private readonly shares: ResolvedFairShares;
  /** Bounds of the principals' shares, so that most creations need no count (see ShareBounds). */
  private readonly shareBounds: ShareBounds;
  /** Puts waiting for the open batch's group commit (see put and SqliteGroupCommit). */
  private readonly commits: SqliteGroupCommit;
  /** ListTasks' totalSize, reused while the owner's tasks do not change (see TotalSizeCache). */
  private readonly totals = new TotalSizeCache();
  /** What the shared ListTasks reads with (see listStoredTasks). */
  private readonly listing: StoredTaskList;
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
    const retention = resolveRetention(STORE_NAME, options);
    this.maxTasks = retention.maxTasks;
    this.taskTtlMs = retention.taskTtlMs;
    this.sweepBatch = retention.sweepBatch;
    this.shares = resolveFairShares(STORE_NAME, options);
    // Workers sharing the file write too: their bounds age as replicas' do (PostgreSQL's).
    this.shareBounds = options.sharedFile
      ? new ShareBounds(SHARED_FILE_BOUND_MAX_AGE_MS)
      : new ShareBounds(Number.POSITIVE_INFINITY, { soleWriter: true });
    this.clock = new WholeMsClock(options.now ?? Date.now);
    this.onBackgroundError = options.onBackgroundError ?? (() => undefined);
    const db = openDatabase(
      options.path,
      options.synchronous ?? 'full',
      options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS,
    );
    try {
      this.migration = guard(() => migrateSqlite(db));
      this.db = db;
      this.sql = prepareStatements(db);
      guard(() => this.sql.recount());
      this.shareSql = prepareShareStatements(db);
      this.approvals = new SqliteApprovalRecords(db);
      this.push = sqlitePush(db);
    } catch (error) {
      db.close();
      throw error;
    }
    const sql = this.sql;
    this.commits = new SqliteGroupCommit({
      isOpen: () => db.open,
      writeBatch: (params, first) => guard(() => sql.writeBatch(params, first)),
      writeOne: (params) => guard(() => sql.writeOne(params)),
      changed: (owner) => this.totals.changed(owner),
      evicted: () => this.totals.clear(),
      evictionLost: (principal) => this.shareBounds.forget(principal),
      createdFinished: (principal) => this.shareBounds.createdFinished(principal),
      createdLost: (principal) => this.shareBounds.forget(principal),
    });
    this.listing = {
      totals: this.totals,
      taskTtlMs: this.taskTtlMs,
      clock: () => this.clock.now(),
      expiredBefore: () => this.expiredBefore(this.clock.now()),
      read: (shape, filters, bound, limit, withCount) =>
        guard(() => readTaskRows(db, sql, shape, filters, bound, limit, withCount)),
    };
    // unref: an idle store must not keep the process alive.
    this.timer = setInterval(() => this.sweepInBackground(), retention.sweepIntervalMs).unref();
  }

  /**
   * Creates or replaces a task (and restarts its idle TTL). Never refused for room; a new task
   * (`options.created`) is held to its principal's share first.
   *
   * @throws CapacityError for a new task over its principal's quota; TaskStoreInputError
   *   `owner_conflict` if the id belongs to another owner's live task, `invalid_timestamp`, or
   *   `unstorable_key`; StoreUnavailableError if the file is locked or the disk is full. A refused
   *   put leaves the stored task unchanged.
   * @example
   * ```ts
   * await store.put(owner, { ...task, status: { state: 'completed', timestamp: new Date().toISOString() } });
   * ```
   */
  async put(owner: string, task: Task, options?: PutOptions): Promise<void> {
    const statusMs = statusMsOf(task, STORE_NAME);
    checkStorableKeys(STORE_NAME, owner, task);
    const nowMs = this.clock.now();
    if (options?.created === true) {
      guard(() =>
        checkShare(
          this.shareSql,
          this.shareBounds,
          this.shares,
          owner,
          { nowMs, expiredBefore: this.expiredBefore(nowMs) },
          this.commits,
        ),
      );
    }
    if (isParked(task.status.state)) this.shareBounds.parkedWrite(principalOfOwner(owner));
    const params = this.upsertParams(owner, task, nowMs, statusMs);
    if (options?.created === true) params.created = 1;
    // Group commit: see SqliteGroupCommit.
    return this.commits.enqueue(owner, params);
  }

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
    const body = guard(() => this.sql.selectOne.get(taskId, owner, this.expiredBefore(this.clock.now())));
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
    return listStoredTasks(owner, query, this.listing);
  }

  /**
   * One retention batch: deletes up to `limit` tasks, those idle for the TTL first (oldest
   * first), then, while the store holds more than `maxTasks`, the least recently updated
   * finished ones; then fails parked tasks idle for the parked TTL, with what room is left.
   * Returns how many tasks it deleted or failed. The timer calls it; it is public for tests and
   * for operators who want room now.
   *
   * @example
   * ```ts
   * while (store.sweep() > 0);
   * ```
   */
  sweep(limit: number = this.sweepBatch): number {
    const expiredBefore = this.expiredBefore(this.clock.now());
    const deleted = guard(() =>
      this.db.transaction((): number => {
        const expired = this.sql.deleteExpired(expiredBefore, limit);
        const excess = (this.sql.readCount.get() ?? 0) - this.maxTasks;
        const room = limit - expired;
        const evicted = excess > 0 && room > 0 ? this.sql.deleteOldestFinished(Math.min(excess, room)) : 0;
        return expired + evicted;
      })(),
    );
    const failed = deleted < limit ? this.failParked(limit - deleted) : 0;
    if (deleted + failed > 0) this.totals.clear();
    // Tasks the shares did not choose are gone: what they know of finished tasks may be too high.
    if (deleted > 0) this.shareBounds.forgetAll();
    return deleted + failed;
  }

  /** Fails up to `limit` parked tasks past the parked TTL, in one transaction, then reports each. */
  private failParked(limit: number): number {
    const nowMs = this.clock.now();
    const timestamp = new Date(nowMs).toISOString();
    const failed = guard(() =>
      this.db.transaction(() => {
        const idle = parkedIdle(this.shareSql, nowMs - this.shares.parkedTtlMs, this.expiredBefore(nowMs), limit);
        return idle.map(({ owner, task }) => {
          const replacement = failedByParkedTtl(task, timestamp);
          this.sql.writeOne(this.upsertParams(owner, replacement, nowMs));
          return { owner, task: replacement };
        });
      })(),
    );
    for (const { owner, task } of failed) this.shares.onEvent?.({ type: 'parked_expired', owner, task });
    return failed.length;
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
    const select = this.db.prepare<[number, number], { rowid: number; owner: string; body: string }>(RUNNING_SQL);
    let settled = 0;
    for (let after = 0; ;) {
      const rows = guard(() => select.all(this.expiredBefore(this.clock.now()), after));
      if (rows.length === 0) return settled;
      // Settled outside the transaction (the callback is the caller's code), written in one.
      const replacements = rows.map((row) => {
        const replacement = settleStoredTask(STORE_NAME, settle, row.owner, row.body);
        statusMsOf(replacement, STORE_NAME);
        checkStorableKeys(STORE_NAME, row.owner, replacement);
        return { owner: row.owner, task: replacement };
      });
      guard(() =>
        this.db.transaction(() => {
          for (const { owner, task } of replacements)
            this.sql.writeOne(this.upsertParams(owner, task, this.clock.now()));
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
    return guard(() => this.sql.readCount.get() ?? 0);
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
    this.commits.flush();
    if (this.db.open) this.db.close();
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
      body: taskJson(task),
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
