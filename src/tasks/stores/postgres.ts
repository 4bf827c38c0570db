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
 * not at put (a put is never refused for room); objects read back are parsed copies; keys must
 * be storable text (see `isStorableKey`); the TTL clock is each replica's wall clock (`Date.now`),
 * so replicas' clocks should agree to well within the TTL.
 *
 * @example
 * ```ts
 * const store = await PostgresTaskStore.open({ url: process.env.DATABASE_URL!, poolSize: 20 });
 * await store.put('alice', task);
 * const page = await store.list('alice', { pageSize: 50 });
 * await store.close();
 * ```
 */
import pg from 'pg';
import type { Pool, PoolClient, QueryResultRow } from 'pg';
import { isTerminalState } from '../../protocol/model.js';
import type { Task } from '../../protocol/model.js';
import type { TaskPage, TaskQuery, TaskStore } from '../store.js';
import { StoreUnavailableError, TaskStoreInputError } from './errors.js';
import { migratePostgres, quoteIdentifier } from './migrations/postgres.js';
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
 * Tuning for {@link PostgresTaskStore}. Only `url` is required.
 *
 * @example
 * ```ts
 * const options: PostgresTaskStoreOptions = { url: 'postgres://airlock@db/airlock', schema: 'airlock', poolSize: 20 };
 * ```
 */
export interface PostgresTaskStoreOptions {
  /** A libpq connection URL. Its own parameters (sslmode, options, …) win over the defaults below. */
  url: string;
  /** Schema holding the tables, created if missing. `[a-z_][a-z0-9_]*`, at most 63. Default `public`. */
  schema?: string;
  /** Connections at most, per process. Default 10. */
  poolSize?: number;
  /** Server-side limit for one statement. Default 5 000 ms. */
  statementTimeoutMs?: number;
  /** Waiting for a connection (new or from the pool) longer than this fails the call. Default 5 000 ms. */
  connectTimeoutMs?: number;
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
  /** Told of a failed background sweep and of errors on idle connections. Default: ignored. */
  onBackgroundError?: (error: unknown) => void;
}

const STORE_NAME = 'PostgresTaskStore';
const DEFAULT_SCHEMA = 'public';
const DEFAULT_POOL_SIZE = 10;
const DEFAULT_STATEMENT_TIMEOUT_MS = 5_000;
const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
/** Idle connections are closed after this, so a quiet replica holds few. */
const IDLE_TIMEOUT_MS = 30_000;
const SCHEMA_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;
/** bigint's range; a TTL of Infinity makes the expiry bound its minimum. */
const MIN_BIGINT_SAFE = -Number.MAX_SAFE_INTEGER;

interface ListRow extends QueryResultRow {
  /** Null when the page was read alone (its totalSize was known). */
  total: string | null;
  /** The oldest counted `updated_at` (a bigint as text), null when nothing was counted. */
  oldest: string | null;
  id: string | null;
  status_ts: string | null;
  body: string | null;
}

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
  private readonly pool: Pool;
  private readonly sql: Statements;
  private readonly schema: string;
  private readonly maxTasks: number;
  private readonly taskTtlMs: number;
  private readonly sweepBatch: number;
  private readonly readClock: () => number;
  private readonly onBackgroundError: (error: unknown) => void;
  /** Puts waiting for the next group commit, by task id (see put). */
  private readonly pendingRows = new Map<string, PendingWrite>();
  /** ListTasks' totalSize, reused while the owner's tasks do not change here (see TotalSizeCache). */
  private readonly totals = new TotalSizeCache();
  /** The batch being written, if any: one at a time, so the puts of a task stay in order. */
  private flushing: Promise<void> | undefined;
  private flushScheduled = false;
  private lastClockMs = Number.NEGATIVE_INFINITY;
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
    this.readClock = options.now ?? Date.now;
    this.onBackgroundError = options.onBackgroundError ?? (() => undefined);
    this.sql = statementsFor(quoteIdentifier(settings.schema));
    // unref: an idle store must not keep the process alive.
    this.timer = setInterval(() => this.sweepInBackground(), settings.sweepIntervalMs).unref();
  }

  /**
   * Creates or replaces a task (and restarts its idle TTL). Never refused for room. Resolves
   * when the row is committed.
   *
   * @throws TaskStoreInputError `owner_conflict` if the id belongs to another owner's live task,
   *   `invalid_timestamp`, `unstorable_key`; StoreUnavailableError if the database is unavailable.
   * @example
   * ```ts
   * await store.put(owner, task);
   * ```
   */
  async put(owner: string, task: Task): Promise<void> {
    const statusMs = statusMsOf(task, STORE_NAME);
    checkStorableKeys(STORE_NAME, owner, task);
    // Everything is read from the task now: the caller may hand over a new object right after.
    const row: PendingRow = {
      id: task.id,
      owner,
      contextId: task.contextId,
      state: task.status.state,
      terminal: isTerminalState(task.status.state),
      statusMs,
      body: JSON.stringify(task),
    };
    // Group commit: the puts that arrive while a batch is being written go out together in the
    // next one (one statement, one commit). One batch at a time keeps the puts of a task in
    // order; a task put twice before its batch leaves is written once, with its newest state.
    return new Promise<void>((resolve, reject) => {
      const pending = this.pendingRows.get(task.id);
      if (pending === undefined) this.pendingRows.set(task.id, { row, waiters: [{ resolve, reject }] });
      else {
        pending.row = row;
        pending.waiters.push({ resolve, reject });
      }
      this.scheduleFlush();
    });
  }

  private scheduleFlush(): void {
    if (this.flushing !== undefined || this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      this.flushing = this.flushRows().finally(() => {
        this.flushing = undefined;
        if (this.pendingRows.size > 0) this.scheduleFlush();
      });
    });
  }

  /** Writes up to MAX_BATCH_ROWS pending rows in one statement and settles their puts. */
  private async flushRows(): Promise<void> {
    const batch: PendingWrite[] = [];
    for (const [id, pending] of this.pendingRows) {
      batch.push(pending);
      this.pendingRows.delete(id);
      if (batch.length === MAX_BATCH_ROWS) break;
    }
    if (batch.length === 0) return;
    const nowMs = this.clock();
    const columns: [string[], string[], string[], string[], boolean[], number[], number[], string[]] = [
      [],
      [],
      [],
      [],
      [],
      [],
      [],
      [],
    ];
    for (const { row } of batch) {
      columns[0].push(row.id);
      columns[1].push(row.owner);
      columns[2].push(row.contextId);
      columns[3].push(row.state);
      columns[4].push(row.terminal);
      columns[5].push(row.statusMs);
      columns[6].push(nowMs);
      columns[7].push(row.body);
    }
    let written: Set<string>;
    // Before and after the write: a count read on either side of the commit is never reused.
    for (const { row } of batch) this.totals.changed(row.owner);
    try {
      const result = await this.query<{ id: string }>('airlock_task_put_many', this.sql.putMany, [
        ...columns,
        Math.max(Math.floor(nowMs - this.taskTtlMs), MIN_BIGINT_SAFE),
      ]);
      written = new Set(result.rows.map((row) => row.id));
      for (const { row } of batch) this.totals.changed(row.owner);
    } catch (error) {
      for (const pending of batch) for (const waiter of pending.waiters) waiter.reject(error);
      return;
    }
    for (const pending of batch) {
      if (written.has(pending.row.id)) {
        for (const waiter of pending.waiters) waiter.resolve();
      } else {
        // Deliberately vague: the message may be logged, and owner keys are principals.
        const conflict = new TaskStoreInputError(
          'owner_conflict',
          `${STORE_NAME}: a task id cannot move to another owner`,
        );
        for (const waiter of pending.waiters) waiter.reject(conflict);
      }
    }
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
    const bound = listBound(after);
    // The parameter order of listSql: owner, [contextId], [state], floor, expiredBefore, boundMs, boundId, limit.
    const values: (string | number)[] = [owner];
    if (contextId !== undefined) values.push(contextId);
    if (status !== undefined) values.push(status);
    values.push(
      statusFloorMs(query.statusTimestampAfter),
      this.expiredBefore(),
      bound.statusMs,
      bound.id,
      query.pageSize + 1,
    );
    const now = this.clock();
    const generation = this.totals.generation(owner);
    const countKey = [shape, contextId ?? null, status ?? null, values[values.length - 5]];
    const cached = this.totals.get(owner, generation, countKey, now);
    const result =
      cached === undefined
        ? await this.query<ListRow>(`airlock_task_list_${shape}`, this.sql.list[shape], values)
        : await this.query<ListRow>(`airlock_task_page_${shape}`, this.sql.page[shape], values);
    const rows = result.rows.filter((row) => row.id !== null);
    const totalSize = cached ?? Number(result.rows[0]?.total ?? 0);
    if (cached === undefined) {
      const oldest = result.rows[0]?.oldest;
      const until = oldest === null || oldest === undefined ? Infinity : Number(oldest) + this.taskTtlMs;
      this.totals.set(owner, generation, countKey, totalSize, now, until);
    }
    const more = rows.length > query.pageSize;
    const shown = more ? rows.slice(0, query.pageSize) : rows;
    const last = shown[shown.length - 1];
    return {
      tasks: shown.map((row) => JSON.parse(row.body ?? 'null') as Task),
      nextPageToken:
        more && last !== undefined ? encodePageToken({ statusMs: Number(last.status_ts), id: last.id ?? '' }) : '',
      totalSize,
    };
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
    return withPooledClient(this.pool, async (client) => {
      await client.query('BEGIN');
      try {
        const locked = await client.query<{ locked: boolean }>(
          'SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS locked',
          [`airlock.task_sweep:${this.schema}`],
        );
        let deleted = 0;
        if (locked.rows[0]?.locked === true) {
          deleted = (await client.query(this.sql.deleteExpired, [expiredBefore, limit])).rowCount ?? 0;
          const room = limit - deleted;
          if (room > 0) {
            const counted = await client.query<{ tasks: string }>(this.sql.count);
            const excess = Number(counted.rows[0]?.tasks ?? 0) - this.maxTasks;
            if (excess > 0) {
              deleted += (await client.query(this.sql.deleteOldestFinished, [Math.min(excess, room)])).rowCount ?? 0;
            }
          }
        }
        await client.query('COMMIT');
        if (deleted > 0) this.totals.clear();
        return deleted;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    });
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
        const task = JSON.parse(row.body) as Task;
        const replacement = settle(task, row.owner);
        if (replacement.id !== task.id) throw new Error(`${STORE_NAME}: failRunning's settle must keep the task id`);
        writes.push(this.put(row.owner, replacement));
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
    while (this.flushing !== undefined || this.pendingRows.size > 0) {
      if (this.flushing === undefined) this.flushing = this.flushRows().finally(() => (this.flushing = undefined));
      await this.flushing;
    }
    await this.pool.end();
  }

  /** Whole ms (the columns are bigint), and never backwards: a step back must not revive a task. */
  private clock(): number {
    this.lastClockMs = Math.max(this.lastClockMs, Math.floor(this.readClock()));
    return this.lastClockMs;
  }

  /** Rows whose `updated_at` is at or before this have expired. */
  private expiredBefore(): number {
    // Floored: updated_at is whole ms, so `updated_at <= x` and `updated_at <= floor(x)` agree.
    return Math.max(Math.floor(this.clock() - this.taskTtlMs), MIN_BIGINT_SAFE);
  }

  /** A named (prepared once per connection) statement on any pooled connection. */
  private async query<Row extends QueryResultRow>(
    name: string,
    text: string,
    values: unknown[],
  ): Promise<pg.QueryResult<Row>> {
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

/** Tasks read and settled per page by failRunning. */
const FAIL_RUNNING_BATCH = 500;

/** Most rows in one group-commit statement. */
const MAX_BATCH_ROWS = 500;

/** One task's row, as a put hands it over. */
interface PendingRow {
  id: string;
  owner: string;
  contextId: string;
  state: string;
  terminal: boolean;
  statusMs: number;
  body: string;
}

/** A row waiting for the group commit, and every put it answers. */
interface PendingWrite {
  row: PendingRow;
  waiters: Array<{ resolve: () => void; reject: (error: unknown) => void }>;
}

interface Settings {
  schema: string;
  maxTasks: number;
  taskTtlMs: number;
  sweepIntervalMs: number;
  sweepBatch: number;
}

function resolveOptions(options: Partial<PostgresTaskStoreOptions>): Settings {
  const settings: Settings = {
    schema: options.schema ?? DEFAULT_SCHEMA,
    maxTasks: options.maxTasks ?? DEFAULT_MAX_TASKS,
    taskTtlMs: options.taskTtlMs ?? DEFAULT_TTL_MS,
    sweepIntervalMs: options.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS,
    sweepBatch: options.sweepBatch ?? DEFAULT_SWEEP_BATCH,
  };
  if (!SCHEMA_PATTERN.test(settings.schema)) {
    throw new RangeError(`${STORE_NAME}: schema must match ${SCHEMA_PATTERN.source}`);
  }
  if (!Number.isSafeInteger(settings.maxTasks) || settings.maxTasks < 1) {
    throw new RangeError(`${STORE_NAME}: maxTasks must be a positive integer`);
  }
  if (!(settings.taskTtlMs > 0)) throw new RangeError(`${STORE_NAME}: taskTtlMs must be positive`);
  if (!(settings.sweepIntervalMs > 0 && settings.sweepIntervalMs <= MAX_TIMER_MS)) {
    throw new RangeError(`${STORE_NAME}: sweepIntervalMs must be in (0, ${MAX_TIMER_MS}]`);
  }
  if (!Number.isSafeInteger(settings.sweepBatch) || settings.sweepBatch < 1) {
    throw new RangeError(`${STORE_NAME}: sweepBatch must be a positive integer`);
  }
  for (const [name, value] of [
    ['poolSize', options.poolSize],
    ['statementTimeoutMs', options.statementTimeoutMs],
    ['connectTimeoutMs', options.connectTimeoutMs],
  ] as const) {
    if (value !== undefined && !(Number.isSafeInteger(value) && value >= 1)) {
      throw new RangeError(`${STORE_NAME}: ${name} must be a positive integer`);
    }
  }
  return settings;
}

function createPool(
  options: Partial<PostgresTaskStoreOptions>,
  schema: string,
  onIdleError: ((error: unknown) => void) | undefined,
): Pool {
  const statementTimeoutMs = options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize ?? DEFAULT_POOL_SIZE,
    connectionTimeoutMillis: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    idleTimeoutMillis: IDLE_TIMEOUT_MS,
    statement_timeout: statementTimeoutMs,
    // The client gives up too if the server goes silent (a dead network does not cancel anything).
    query_timeout: statementTimeoutMs + 2_000,
    // A transaction left open by a bug must not hold locks and a connection for ever.
    idle_in_transaction_session_timeout: 60_000,
    application_name: `airlock:${schema}`,
    keepAlive: true,
    allowExitOnIdle: true,
  });
  // An idle client's error (the server restarted) would otherwise crash the process. The pool has
  // already dropped that client and opens a fresh one on the next query.
  pool.on('error', (error) => (onIdleError ?? ignore)(error));
  return pool;
}

function ignore(): void {}

async function migrateWithPool(pool: Pool, schema: string): Promise<MigrationReport> {
  return withPooledClient(pool, (client) => migratePostgres(client, schema));
}

/**
 * Runs `work` on one pooled connection (for transactions and session locks). While checked out,
 * a client has no listener for its `error` event, and an unheard `error` event (the server
 * closing the connection) would crash the process: one is attached for the duration. A client
 * that failed in any way is released with the error, so the pool closes it instead of reusing it.
 */
async function withPooledClient<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  let client: PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw asStoreError(error);
  }
  let broken: Error | undefined;
  const onError = (error: Error): void => {
    broken = error;
  };
  client.on('error', onError);
  try {
    const result = await work(client);
    client.removeListener('error', onError);
    client.release(broken);
    return result;
  } catch (error) {
    client.removeListener('error', onError);
    client.release(broken ?? (error instanceof Error ? error : true));
    throw asStoreError(error);
  }
}

interface Statements {
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

/** Every statement's text for one schema, built once per store. */
function statementsFor(schema: string): Statements {
  const tasks = `${schema}.tasks`;
  return {
    // Replaces a row only if it is the same owner's or has expired (its id is free again, as in
    // the memory store); a row not returned is another owner's live task. Rows come as parallel
    // arrays, at most one per id; the ids returned are the rows written.
    putMany: `INSERT INTO ${tasks} AS t (id, owner, context_id, state, terminal, status_ts, updated_at, body)
      SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::boolean[], $6::bigint[], $7::bigint[], $8::text[])
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

/** Node socket errors that mean the server cannot be reached. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNABORTED',
]);

/**
 * SQLSTATEs that mean "not now": connection exceptions (class 08), the server shutting down or
 * starting (57P01–57P03), too many connections (53300), a statement or lock timeout (57014,
 * 55P03), and serialization failures or deadlocks (40001, 40P01).
 */
const UNAVAILABLE_SQLSTATES = /^(08...|57P0[1-3]|53300|57014|55P03|40001|40P01)$/;

/** pg's own errors for a lost or unobtainable connection, which carry no code. */
const UNAVAILABLE_MESSAGES =
  /timeout exceeded when trying to connect|Connection terminated|Query read timeout|Client has encountered a connection error|Client was closed|Cannot use a pool after calling end/;

/**
 * The store's error for a driver error: {@link StoreUnavailableError} for anything that means the
 * database cannot answer now (its message names no host, user or password), the error itself
 * otherwise (a bug, or a schema error).
 *
 * @example
 * ```ts
 * throw asStoreError(error);
 * ```
 */
export function asStoreError(error: unknown): unknown {
  if (error instanceof StoreUnavailableError || error instanceof TaskStoreInputError) return error;
  if (!(error instanceof Error)) return error;
  const code = (error as { code?: unknown }).code;
  const nested = error instanceof AggregateError ? error.errors : [];
  const networkCode = [code, ...nested.map((inner: unknown) => (inner as { code?: unknown } | null)?.code)].find(
    (candidate): candidate is string => typeof candidate === 'string' && NETWORK_CODES.has(candidate),
  );
  if (networkCode !== undefined) {
    return new StoreUnavailableError(`${STORE_NAME}: cannot reach the database (${networkCode})`, { cause: error });
  }
  if (typeof code === 'string' && UNAVAILABLE_SQLSTATES.test(code)) {
    return new StoreUnavailableError(`${STORE_NAME}: the database is unavailable (SQLSTATE ${code})`, {
      cause: error,
    });
  }
  if (UNAVAILABLE_MESSAGES.test(error.message)) {
    return new StoreUnavailableError(`${STORE_NAME}: the database connection failed`, { cause: error });
  }
  return error;
}
