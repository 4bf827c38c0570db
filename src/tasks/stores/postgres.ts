/**
 * The shared durable task store: PostgreSQL through a `pg` pool, for one or many Airlock
 * replicas (`DATABASE_URL`). Same contract as the memory store; the schema and the reasons for
 * each index are in `migrations/postgres.ts`. Every query is parameterised; the schema name,
 * the only identifier put into SQL text, is checked against a strict pattern and quoted.
 *
 * Failure model: a connection that cannot be had within `connectTimeoutMs`, a statement that
 * runs past `statementTimeoutMs`, a dropped connection or a server shutting down all surface as
 * {@link StoreUnavailableError} (retryable: the server answers 503). The pool drops every client
 * that saw an error, and opens fresh ones on demand, so the store recovers by itself when the
 * database comes back.
 *
 * Ordering: puts of the same task id from this process reach the database in call order (they
 * are chained per id), so concurrent puts keep the last one, as in the memory store. Puts from
 * different replicas are ordered by the database (last writer wins); the task service only ever
 * writes a task from the replica running it.
 *
 * Differences from the memory store, by design: `maxTasks` is enforced by the periodic sweep,
 * not at put (a put is never refused for room; a new task is held to its principal's fair share,
 * see `postgres/shares.ts`, and parked tasks past their idle TTL are failed by the sweep); objects read back are parsed copies; keys must
 * be storable text (see `isStorableKey`); the TTL clock is each replica's wall clock (`Date.now`),
 * so replicas' clocks should agree to well within the TTL.
 *
 * Beside it, in `postgres/`: the options, the pool, the SQL, the group commit and the error
 * mapping; ListTasks itself is shared with SQLite (`durable-list.ts`).
 *
 * @example
 * ```ts
 * const store = await PostgresTaskStore.open({ url: process.env.DATABASE_URL!, poolSize: 20 });
 * await store.put('alice', task);
 * const page = await store.list('alice', { pageSize: 50 });
 * await store.close();
 * ```
 */
import type { ApprovalRecords } from './approval-records.js';
import { PostgresApprovalRecords } from './postgres/approvals.js';
import type { DurablePush } from './push-outbox.js';
import { postgresPush } from './postgres/push.js';
import type { TurnLeases } from './leases.js';
import { PostgresTurnLeases } from './postgres/leases.js';
import type { Pool, QueryResult, QueryResultRow } from 'pg';
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
  type FilterShape,
} from './durable.js';
import { listStoredTasks, type ListFilters, type StoredTaskList, type TaskRowsRead } from './durable-list.js';
import { failedByParkedTtl, isParked, resolveFairShares, type ResolvedFairShares } from './fair-shares.js';
import { ShareBounds } from './share-bounds.js';
import { principalOfOwner } from './principal.js';
import { quoteIdentifier } from './migrations/postgres.js';
import type { MigrationReport } from './migrations/plan.js';
import { isStorableKey, statusMsOf, type TaskSortKey } from './page-token.js';
import { createPool, migrateWithPool } from './postgres/connection.js';
import { asStoreError } from './postgres/errors.js';
import { GroupCommit, pendingRowOf, type PendingRow } from './postgres/group-commit.js';
import { resolveOptions, STORE_NAME, type PostgresTaskStoreOptions, type Settings } from './postgres/options.js';
import {
  listRowsRead,
  listValues,
  putManyValues,
  statementsFor,
  type ListRow,
  type Statements,
} from './postgres/statements.js';
import { admitShare, shareStatementsFor, type ShareStatements } from './postgres/shares.js';
import { failParkedOnce, sweepOnce } from './postgres/sweep.js';
import { DEFAULT_VACUUM_AFTER_ROWS, TasksVacuum } from './postgres/vacuum.js';

export { asStoreError } from './postgres/errors.js';
export { QueryReadTimeoutError, QueryWatchdog } from './postgres/watchdog.js';
export type { PostgresTaskStoreOptions } from './postgres/options.js';

/** bigint's range; a TTL of Infinity makes the expiry bound its minimum. */
const MIN_BIGINT_SAFE = -Number.MAX_SAFE_INTEGER;
/** How old a principal's share bound may be before it is counted again (other replicas write too). */
const SHARE_BOUND_MAX_AGE_MS = 1_000;
/** Tasks read and settled per page by failRunning. */
const FAIL_RUNNING_BATCH = 500;

/**
 * A durable {@link TaskStore} in PostgreSQL. Open it with {@link PostgresTaskStore.open}, which
 * applies pending migrations (under an advisory lock) first.
 *
 * Complexity (n = tasks, k = tasks matching the list filters, p = page size): `get` and `put`
 * one index lookup each; `list` one index seek plus p rows, plus O(k) index entries counted
 * for `totalSize`, in one round trip; a sweep batch O(b log n) for b deleted rows plus one
 * `count(*)` (O(n), off the request path).
 *
 * @example
 * ```ts
 * const store = await PostgresTaskStore.open({ url: 'postgres://postgres@127.0.0.1:5432/airlock' });
 * ```
 */
export class PostgresTaskStore implements TaskStore {
  /** What the migrations did when this store was opened. */
  readonly migration: MigrationReport;
  /** The actions waiting for a person and their decisions, shared by every replica (see approval-records.ts). */
  readonly approvals: ApprovalRecords;
  /** Push configs and the push outbox, shared by every replica (see push-outbox.ts). */
  readonly push: DurablePush;
  /** The leases of turns running on the replicas (see leases.ts). */
  readonly leases: TurnLeases;
  private readonly pool: Pool;
  private readonly sql: Statements;
  private readonly shareSql: ShareStatements;
  private readonly shares: ResolvedFairShares;
  /** Upper bounds of the principals' shares (a second old at most), so most creations need no count. */
  private readonly shareBounds = new ShareBounds(SHARE_BOUND_MAX_AGE_MS);
  private readonly schema: string;
  private readonly maxTasks: number;
  private readonly taskTtlMs: number;
  private readonly sweepBatch: number;
  private readonly clock: WholeMsClock;
  private readonly onBackgroundError: (error: unknown) => void;
  /** Puts waiting for (or in) a group commit (see put). */
  private readonly commits: GroupCommit;
  /** The table's own VACUUM after so many rows written or deleted (see postgres/vacuum.ts). */
  private readonly vacuum: TasksVacuum;
  /** ListTasks' totalSize, reused while the owner's tasks do not change here (see TotalSizeCache). */
  private readonly totals = new TotalSizeCache();
  /** What the shared ListTasks reads with (see listStoredTasks). */
  private readonly listing: StoredTaskList;
  private timer: NodeJS.Timeout | undefined;
  private sweeping = false;
  private closed = false;

  /**
   * Connects, applies pending migrations and starts the retention sweep.
   *
   * @throws StoreUnavailableError if the database cannot be reached; StoreSchemaError if the
   *   schema was written by a newer Airlock; RangeError for bad options.
   * @example
   * ```ts
   * const store = await PostgresTaskStore.open({ url, schema: 'airlock' });
   * ```
   */
  static async open(options: PostgresTaskStoreOptions): Promise<PostgresTaskStore> {
    const settings = resolveOptions(options);
    const pool = createPool(options, settings.schema, options.onBackgroundError);
    try {
      const migration = await migrateWithPool(pool, settings.schema);
      return new PostgresTaskStore(pool, migration, settings, options);
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw error;
    }
  }

  /**
   * Applies pending migrations and disconnects: `airlock db migrate`.
   *
   * @throws StoreUnavailableError, StoreSchemaError as {@link PostgresTaskStore.open}.
   * @example
   * ```ts
   * const report = await PostgresTaskStore.migrate({ url }); // { engine: 'postgres', version: 1, applied: [1] }
   * ```
   */
  static async migrate(
    options: Pick<PostgresTaskStoreOptions, 'url' | 'schema' | 'connectTimeoutMs'>,
  ): Promise<MigrationReport> {
    const { schema } = resolveOptions(options);
    const pool = createPool({ ...options, poolSize: 1 }, schema, undefined);
    try {
      return await migrateWithPool(pool, schema);
    } finally {
      await pool.end().catch(() => undefined);
    }
  }

  private constructor(pool: Pool, migration: MigrationReport, settings: Settings, options: PostgresTaskStoreOptions) {
    this.pool = pool;
    this.migration = migration;
    this.schema = settings.schema;
    this.maxTasks = settings.maxTasks;
    this.taskTtlMs = settings.taskTtlMs;
    this.sweepBatch = settings.sweepBatch;
    this.clock = new WholeMsClock(options.now ?? Date.now);
    this.onBackgroundError = options.onBackgroundError ?? (() => undefined);
    this.sql = statementsFor(quoteIdentifier(settings.schema));
    this.shareSql = shareStatementsFor(quoteIdentifier(settings.schema));
    this.approvals = new PostgresApprovalRecords(pool, quoteIdentifier(settings.schema));
    this.push = postgresPush(pool, quoteIdentifier(settings.schema));
    this.leases = new PostgresTurnLeases(pool, quoteIdentifier(settings.schema));
    this.shares = resolveFairShares(STORE_NAME, options);
    this.commits = new GroupCommit((rows) => this.writeRows(rows), STORE_NAME);
    this.vacuum = new TasksVacuum(
      pool,
      `${quoteIdentifier(settings.schema)}.tasks`,
      options.vacuumAfterRows ?? DEFAULT_VACUUM_AFTER_ROWS,
      this.onBackgroundError,
    );
    this.listing = {
      totals: this.totals,
      taskTtlMs: this.taskTtlMs,
      clock: () => this.clock.now(),
      expiredBefore: () => this.expiredBefore(),
      read: (shape, filters, bound, limit, withCount) => this.readPage(shape, filters, bound, limit, withCount),
    };
    // unref: an idle store must not keep the process alive.
    this.timer = setInterval(() => this.sweepInBackground(), settings.sweepIntervalMs).unref();
  }

  /**
   * Creates or replaces a task (and restarts its idle TTL). Never refused for room; a new task
   * (`options.created`) is held to its principal's share first (one more round trip). Resolves
   * when the row is committed.
   *
   * @throws CapacityError for a new task over its principal's quota; TaskStoreInputError
   *   `owner_conflict` if the id belongs to another owner's live task, `invalid_timestamp`,
   *   `unstorable_key`; StoreUnavailableError if the database is unavailable.
   * @example
   * ```ts
   * await store.put(owner, task);
   * ```
   */
  async put(owner: string, task: Task, options?: PutOptions): Promise<void> {
    const statusMs = statusMsOf(task, STORE_NAME);
    checkStorableKeys(STORE_NAME, owner, task);
    // Everything is read from the task now: the caller may hand over a new object right after.
    // Before the admission, too: between an admitted new task and its enqueue nothing may throw
    // (the group commit counts it as unwritten until its batch is over).
    const row = pendingRowOf(owner, task, statusMs);
    if (options?.created === true) {
      const evicted = await admitShare(
        (name, text, values) => this.query(name, text, values),
        this.shareSql,
        this.shareBounds,
        this.shares,
        owner,
        this.expiredBefore(),
        this.commits,
      );
      if (evicted > 0) {
        this.totals.clear();
        this.vacuum.changed(evicted);
      }
    }
    if (isParked(task.status.state)) this.shareBounds.parkedWrite(principalOfOwner(owner));
    return this.commits.enqueue(row, options?.created === true);
  }

  /** One group commit's statement: the rows as parallel arrays; returns the ids written. */
  private async writeRows(rows: readonly PendingRow[]): Promise<ReadonlySet<string>> {
    const nowMs = this.clock.now();
    // Before and after the write: a count read on either side of the commit is never reused.
    for (const row of rows) this.totals.changed(row.owner);
    const result = await this.query<{ id: string }>(
      'airlock_task_put_many',
      this.sql.putMany,
      putManyValues(rows, nowMs, Math.max(Math.floor(nowMs - this.taskTtlMs), MIN_BIGINT_SAFE)),
    );
    for (const row of rows) this.totals.changed(row.owner);
    this.vacuum.changed(rows.length);
    return new Set(result.rows.map((row) => row.id));
  }

  /**
   * The stored task, or `undefined` if it is missing, expired, or another owner's.
   *
   * @throws StoreUnavailableError if the database is unavailable.
   * @example
   * ```ts
   * const task = await store.get(owner, 'task-1');
   * ```
   */
  async get(owner: string, taskId: string): Promise<Task | undefined> {
    if (!isStorableKey(owner, MAX_OWNER_BYTES) || !isStorableKey(taskId, MAX_ID_BYTES)) return undefined;
    const result = await this.query<{ body: string }>('airlock_task_get', this.sql.get, [
      taskId,
      owner,
      this.expiredBefore(),
    ]);
    const row = result.rows[0];
    return row === undefined ? undefined : (JSON.parse(row.body) as Task);
  }

  /**
   * One page of the owner's live tasks, newest status timestamp first (ties: id descending,
   * by byte order), with `totalSize`, in one statement (one snapshot).
   *
   * @throws A2AError INVALID_PARAMS for a malformed `pageToken`, `pageSize` or
   *   `statusTimestampAfter`; StoreUnavailableError if the database is unavailable.
   * @example
   * ```ts
   * const page = await store.list(owner, { pageSize: 20, status: 'completed' });
   * ```
   */
  async list(owner: string, query: TaskQuery): Promise<TaskPage> {
    return listStoredTasks(owner, query, this.listing);
  }

  /** The page and, unless its totalSize is known, the count, in one statement (one snapshot). */
  private async readPage(
    shape: FilterShape,
    filters: ListFilters,
    bound: TaskSortKey,
    limit: number,
    withCount: boolean,
  ): Promise<TaskRowsRead> {
    const values = listValues(filters, bound, limit);
    const result = withCount
      ? await this.query<ListRow>(`airlock_task_list_${shape}`, this.sql.list[shape], values)
      : await this.query<ListRow>(`airlock_task_page_${shape}`, this.sql.page[shape], values);
    return listRowsRead(result.rows, withCount);
  }

  /**
   * One retention batch: deletes up to `limit` tasks, those idle for the TTL first (oldest
   * first), then, while the table holds more than `maxTasks`, the least recently updated
   * finished ones. Returns how many it deleted. Only one replica sweeps at a time (a
   * transaction-scoped advisory lock; the others return 0 at once), and rows being written are
   * skipped, not waited for.
   *
   * @throws StoreUnavailableError if the database is unavailable.
   * @example
   * ```ts
   * while ((await store.sweep()) > 0);
   * ```
   */
  async sweep(limit: number = this.sweepBatch): Promise<number> {
    const expiredBefore = this.expiredBefore();
    const deleted = await sweepOnce(this.pool, this.sql, {
      schema: this.schema,
      expiredBefore,
      limit,
      maxTasks: this.maxTasks,
      totals: this.totals,
    });
    this.vacuum.changed(deleted);
    if (deleted >= limit) return deleted;
    const nowMs = this.clock.now();
    const timestamp = new Date(nowMs).toISOString();
    const failed = await failParkedOnce(this.pool, this.sql, this.shareSql, {
      parkedBefore: nowMs - this.shares.parkedTtlMs,
      expiredBefore: this.expiredBefore(),
      limit: limit - deleted,
      nowMs,
      fail: (task) => failedByParkedTtl(task, timestamp),
    });
    if (failed.length > 0) this.totals.clear();
    this.vacuum.changed(failed.length);
    for (const { owner, task } of failed) this.shares.onEvent?.({ type: 'parked_expired', owner, task });
    return deleted + failed.length;
  }

  /**
   * Restart safety for a database one Airlock process serves alone (replicas: 1): replaces every
   * unexpired task still `submitted` or `working` with `settle(task, owner)` and returns how
   * many. Never call it when several replicas share the database: their running tasks would be
   * failed too (`airlock serve` calls it only for a single replica).
   *
   * @example
   * ```ts
   * await store.failRunning((task) => failedByRestart(task));
   * ```
   */
  async failRunning(settle: (task: Task, owner: string) => Task): Promise<number> {
    let settled = 0;
    for (let after = ''; ;) {
      const result = await this.query<{ id: string; owner: string; body: string }>(
        'airlock_task_running',
        this.sql.running,
        [this.expiredBefore(), after, FAIL_RUNNING_BATCH],
      );
      if (result.rows.length === 0) return settled;
      const writes: Promise<void>[] = [];
      for (const row of result.rows) {
        writes.push(this.put(row.owner, settleStoredTask(STORE_NAME, settle, row.owner, row.body)));
      }
      await Promise.all(writes);
      settled += result.rows.length;
      after = result.rows[result.rows.length - 1]!.id;
    }
  }

  /**
   * How many rows the table holds, counting expired ones the sweep has not deleted yet.
   * A `count(*)`: O(n), for metrics and tests, not the request path.
   *
   * @example
   * ```ts
   * metrics.gauge('airlock_tasks', await store.countTasks());
   * ```
   */
  async countTasks(): Promise<number> {
    const result = await this.query<{ tasks: string }>('airlock_task_count', this.sql.count, []);
    return Number(result.rows[0]?.tasks ?? 0);
  }

  /**
   * Stops the sweep, waits for pending puts, and closes the pool. Idempotent.
   *
   * @example
   * ```ts
   * await store.close();
   * ```
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    // Puts already accepted were promised a write: they land before the pool closes.
    await this.commits.drain();
    await this.vacuum.idle();
    await this.pool.end();
  }

  /** Rows whose `updated_at` is at or before this have expired. */
  private expiredBefore(): number {
    // Floored: updated_at is whole ms, so `updated_at <= x` and `updated_at <= floor(x)` agree.
    return Math.max(Math.floor(this.clock.now() - this.taskTtlMs), MIN_BIGINT_SAFE);
  }

  /** A named (prepared once per connection) statement on any pooled connection. */
  private async query<Row extends QueryResultRow>(
    name: string,
    text: string,
    values: unknown[],
  ): Promise<QueryResult<Row>> {
    try {
      return await this.pool.query<Row>({ name, text, values });
    } catch (error) {
      throw asStoreError(error);
    }
  }

  private sweepInBackground(): void {
    if (this.sweeping || this.closed) return;
    this.sweeping = true;
    const run = async (): Promise<void> => {
      for (let batch = 0; batch < MAX_BATCHES_PER_SWEEP && !this.closed; batch++) {
        if ((await this.sweep()) < this.sweepBatch) break;
      }
    };
    run()
      .catch((error: unknown) => this.onBackgroundError(error))
      .finally(() => {
        this.sweeping = false;
      });
  }
}
