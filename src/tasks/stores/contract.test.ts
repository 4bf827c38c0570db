/**
 * The TaskStore contract (`contract/`) against every store: memory, SQLite (a file in a fresh
 * temporary directory per store) and PostgreSQL (a fresh schema `airlock_test_<random>` per
 * store, dropped afterwards). Then what only the durable stores promise: data that survives a
 * reopen, the indexes every hot statement uses, bounded sweeps, and typed errors.
 *
 * PostgreSQL comes from `DATABASE_URL`, else `postgres://postgres@127.0.0.1:5432/test`. When it
 * cannot be reached, its suites are skipped with a note, except under CI (`CI=true`), where
 * that is a failure: CI starts PostgreSQL.
 *
 * @example
 * ```sh
 * node --import tsx --test src/tasks/stores/contract.test.ts
 * ```
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { Task, TaskState } from '../../protocol/model.js';
import { CREATED } from '../store.js';
import { runTaskStoreContract } from './contract/index.js';
import { StoreSchemaError, StoreUnavailableError, TaskStoreInputError } from './errors.js';
import { MemoryTaskStore } from './memory.js';
import { POSTGRES_MIGRATIONS } from './migrations/postgres.js';
import { PostgresTaskStore } from './postgres.js';
import type { PostgresTaskStoreOptions } from './postgres.js';
import { SqliteTaskStore } from './sqlite.js';
import type { SqliteTaskStoreOptions } from './sqlite.js';
import { EVICT_OWN_FINISHED_SQL, EVICT_OWN_IN_WINDOW_SQL } from './sqlite/shares.js';
import { DELETE_EXPIRED_SQL, DELETE_OLDEST_FINISHED_SQL } from './sqlite/statements.js';

const POSTGRES_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

function makeTask(id: string, at: number, state: TaskState = 'working', contextId = 'ctx-1'): Task {
  return {
    id,
    contextId,
    status: { state, timestamp: new Date(Date.parse('2026-01-01T00:00:00.000Z') + at).toISOString() },
    artifacts: [],
    history: [],
  };
}

// ---------------------------------------------------------------------------------------------
// Factories

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'airlock-store-'));
}

async function openSqlite(
  options: Omit<SqliteTaskStoreOptions, 'path'> = {},
): Promise<{ store: SqliteTaskStore; path: string; cleanup: () => Promise<void> }> {
  const dir = tempDir();
  const path = join(dir, 'airlock.db');
  const store = await SqliteTaskStore.open({ path, ...options });
  return {
    store,
    path,
    cleanup: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function postgresReachable(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return `PostgreSQL is not reachable (${error instanceof Error ? error.message : String(error)})`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

const postgresProblem = await postgresReachable();
if (postgresProblem !== undefined && process.env.CI === 'true') {
  throw new Error(`${postgresProblem}; CI must start PostgreSQL`);
}
const postgresSkip = postgresProblem === undefined ? false : `${postgresProblem}: skipped`;

function uniqueSchema(): string {
  return `airlock_test_${randomBytes(6).toString('hex')}`;
}

async function dropSchema(schema: string): Promise<void> {
  await withAdmin((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
}

async function withAdmin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

async function openPostgres(
  options: Omit<PostgresTaskStoreOptions, 'url' | 'schema'> = {},
  schema = uniqueSchema(),
): Promise<{ store: PostgresTaskStore; schema: string; cleanup: () => Promise<void> }> {
  const store = await PostgresTaskStore.open({ url: POSTGRES_URL, schema, poolSize: 4, ...options });
  return {
    store,
    schema,
    cleanup: async () => {
      await store.close();
      await dropSchema(schema);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The contract, three times

runTaskStoreContract(
  'MemoryTaskStore',
  async (options) => {
    const store = new MemoryTaskStore(options);
    return { store, sweep: async () => store.sweep(), cleanup: () => store.close() };
  },
  { numRuns: 200 },
);

runTaskStoreContract(
  'SqliteTaskStore',
  async (options) => {
    const { store, cleanup } = await openSqlite(options);
    return { store, sweep: async () => store.sweep(), cleanup };
  },
  // Fewer than memory: every put is an fsync (synchronous=FULL), about 0.3 ms here.
  { numRuns: 100 },
);

if (postgresSkip === false) {
  runTaskStoreContract(
    'PostgresTaskStore',
    async (options) => {
      const { store, cleanup } = await openPostgres(options);
      return { store, sweep: () => store.sweep(), cleanup };
    },
    { numRuns: 60 },
  );
} else {
  describe('PostgresTaskStore satisfies the TaskStore contract', { skip: postgresSkip }, () => undefined);
}

// ---------------------------------------------------------------------------------------------
// SQLite only

describe('SqliteTaskStore, beyond the contract', () => {
  const cleanups: (() => Promise<void>)[] = [];
  after(async () => {
    for (const cleanup of cleanups) await cleanup();
  });

  it('keeps tasks across a reopen, in an owner-only WAL file with synchronous=FULL', async () => {
    const { store, path, cleanup } = await openSqlite();
    cleanups.push(cleanup);
    const task = makeTask('t1', 1, 'completed');
    await store.put('alice', task);
    await store.close();
    assert.equal(statSync(path).mode & 0o777, 0o600);
    const again = await SqliteTaskStore.open({ path });
    try {
      assert.deepEqual(again.migration.applied, [], 'migrations ran once');
      assert.deepEqual(await again.get('alice', 't1'), task);
    } finally {
      await again.close();
    }
    const db = new Database(path, { readonly: true });
    try {
      assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
    } finally {
      db.close();
    }
    const full = await SqliteTaskStore.open({ path });
    const normal = await SqliteTaskStore.open({ path, synchronous: 'normal' });
    try {
      // synchronous is per connection: read it through each store's own handle.
      const pragmaOf = (store: SqliteTaskStore): unknown =>
        (store as unknown as { db: Database.Database }).db.pragma('synchronous', { simple: true });
      assert.equal(pragmaOf(full), 2, 'FULL');
      assert.equal(pragmaOf(normal), 1, 'NORMAL');
      const tempStore = (full as unknown as { db: Database.Database }).db.pragma('temp_store', { simple: true });
      assert.equal(tempStore, 2, 'statement journals and sorts in memory, never in files under /var/tmp');
    } finally {
      await full.close();
      await normal.close();
    }
  });

  it('answers get, every list shape, its count and the sweeps from an index, never a table scan', async () => {
    const { store, cleanup } = await openSqlite();
    cleanups.push(cleanup);
    await store.put('alice', makeTask('t1', 1));
    // The store's own prepared statements, explained with the parameters it binds.
    type Stmt = { source: string };
    const raw = store as unknown as {
      db: Database.Database;
      sql: {
        selectOne: Stmt;
        lists: Record<'owner' | 'context' | 'state' | 'contextState', { page: Stmt; count: Stmt }>;
      };
    };
    const shares = {
      ...(store as unknown as { shareSql: { counts: Stmt; parkedIdle: Stmt } }).shareSql,
      evictOwnFinished: { source: EVICT_OWN_FINISHED_SQL },
      evictInWindow: { source: EVICT_OWN_IN_WINDOW_SQL },
    };
    const inside = {
      db: raw.db,
      ...raw.sql,
      deleteExpired: { source: DELETE_EXPIRED_SQL },
      deleteOldestFinished: { source: DELETE_OLDEST_FINISHED_SQL },
    };
    const explain = (statement: Stmt, ...params: unknown[]): string =>
      (inside.db.prepare(`EXPLAIN QUERY PLAN ${statement.source}`).all(...params) as { detail: string }[])
        .map((row) => row.detail)
        .join(' | ');
    const filters = { owner: 'alice', floor: 0, expiredBefore: 0 };
    const page = { boundMs: 9, boundId: 'x', limit: 5 };
    const cases: [string, string, RegExp][] = [
      [
        'get',
        explain(inside.selectOne, 't1', 'alice', 0),
        /^SEARCH tasks USING INDEX sqlite_autoindex_tasks_1 \(id=\?\)$/,
      ],
      [
        'list',
        explain(inside.lists.owner.page, { ...filters, ...page }),
        /^SEARCH tasks USING INDEX tasks_by_owner \(owner=\? AND status_ts>\? AND status_ts<\?\)$/,
      ],
      [
        'list by context',
        explain(inside.lists.context.page, { ...filters, contextId: 'c', ...page }),
        /^SEARCH tasks USING INDEX tasks_by_owner \(owner=\? AND status_ts>\? AND status_ts<\?\)$/,
      ],
      [
        'list by state',
        explain(inside.lists.state.page, { ...filters, state: 'working', ...page }),
        /^SEARCH tasks USING INDEX tasks_by_owner \(owner=\? AND status_ts>\? AND status_ts<\?\)$/,
      ],
      [
        'list by context and state',
        explain(inside.lists.contextState.page, { ...filters, contextId: 'c', state: 'working', ...page }),
        /^SEARCH tasks USING INDEX tasks_by_owner \(owner=\? AND status_ts>\? AND status_ts<\?\)$/,
      ],
      [
        'count',
        explain(inside.lists.owner.count, filters),
        /^SEARCH tasks USING COVERING INDEX tasks_by_owner \(owner=\? AND status_ts>\?\)$/,
      ],
      [
        'count by context and state',
        explain(inside.lists.contextState.count, { ...filters, contextId: 'c', state: 'working' }),
        /^SEARCH tasks USING COVERING INDEX tasks_by_owner \(owner=\? AND status_ts>\?\)$/,
      ],
      [
        'expiry',
        explain(inside.deleteExpired, 5, 10),
        /SEARCH tasks USING COVERING INDEX tasks_by_age \(terminal=\? AND updated_at<\?\)/,
      ],
      [
        'eviction',
        explain(inside.deleteOldestFinished, 10),
        /SEARCH tasks USING COVERING INDEX tasks_by_age \(terminal=\?\)/,
      ],
      [
        'share count',
        explain(shares.counts, { low: 'a@', high: 'aA', tail: 3, expiredBefore: 0 }),
        /^SEARCH tasks USING COVERING INDEX tasks_by_owner \(owner>\? AND owner<\?\)$/,
      ],
      [
        'share eviction',
        explain(shares.evictOwnFinished, { low: 'a@', high: 'aA', tail: 3, expiredBefore: 0, count: 1 }),
        /SEARCH tasks USING COVERING INDEX tasks_by_owner \(owner>\? AND owner<\?\)/,
      ],
      [
        'share eviction in the window',
        explain(shares.evictInWindow, { low: 'a@', high: 'aA', tail: 3, expiredBefore: 0, count: 1, window: 2 }),
        /SEARCH tasks USING INDEX tasks_by_age \(terminal=\? AND updated_at>\?\)/,
      ],
      [
        'parked TTL',
        explain(shares.parkedIdle, { parkedBefore: 5, expiredBefore: 0, limit: 10 }),
        /^SEARCH tasks USING INDEX tasks_parked \(updated_at>\? AND updated_at<\?\)$/,
      ],
    ];
    for (const [name, detail, plan] of cases) {
      assert.match(detail, plan, `${name}: ${detail}`);
      assert.doesNotMatch(
        detail,
        // The share eviction sorts the principal's own finished tasks (at most its quota).
        name === 'share eviction' ? /SCAN tasks/ : /SCAN tasks|TEMP B-TREE/,
        `${name}: ${detail}`,
      );
    }
  });

  it('a sweep deletes at most its limit, expired tasks first, and the rest on later sweeps', async () => {
    const clock = { ms: 1_000_000 };
    const { store, cleanup } = await openSqlite({ taskTtlMs: 100, maxTasks: 5, now: () => clock.ms });
    cleanups.push(cleanup);
    for (let i = 0; i < 10; i++) await store.put('alice', makeTask(`old${i}`, i, 'working'));
    clock.ms += 50;
    for (let i = 0; i < 10; i++) await store.put('alice', makeTask(`done${i}`, 100 + i, 'completed'));
    assert.equal(await store.countTasks(), 20, 'puts are never refused for room');
    clock.ms += 60; // the old ones have expired; the finished ones have not
    assert.equal(store.sweep(4), 4);
    assert.equal(await store.countTasks(), 16);
    assert.equal(store.sweep(100), 6 + 5, 'the other expired ones, then finished ones down to maxTasks');
    assert.equal(await store.countTasks(), 5);
    assert.equal(store.sweep(), 0);
    const kept = (await store.list('alice', { pageSize: 10 })).tasks.map((task) => task.id);
    assert.deepEqual(kept, ['done9', 'done8', 'done7', 'done6', 'done5']);
  });

  it('keeps task_count equal to the rows through every write and delete, without triggers', async () => {
    const clock = { ms: 1_000_000 };
    const { store, path, cleanup } = await openSqlite({
      taskTtlMs: 1_000,
      maxTasks: 6,
      maxTasksPerPrincipal: 4,
      parkedTtlMs: 500,
      now: () => clock.ms,
    });
    cleanups.push(cleanup);
    const db = (store as unknown as { db: Database.Database }).db;
    const rows = (): number => db.prepare('SELECT count(*) FROM tasks').pluck().get() as number;
    const agree = async (when: string): Promise<void> => {
      assert.equal(await store.countTasks(), rows(), `task_count after ${when}`);
    };
    assert.deepEqual(db.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger'").all(), []);
    for (let i = 0; i < 4; i++) await store.put('client:alice@echo', makeTask(`a${i}`, i, 'completed'), CREATED);
    await agree('inserts');
    await store.put('client:alice@echo', makeTask('a0', 10, 'failed'));
    await agree('an update of the same id');
    await assert.rejects(store.put('client:bob@echo', makeTask('a1', 11)), TaskStoreInputError);
    await agree("a refused write of another owner's id");
    await store.put('client:alice@echo', makeTask('a4', 12, 'working'), CREATED);
    await agree('a share eviction (alice at her quota)');
    for (let i = 0; i < 4; i++) await store.put(`client:p${i}@echo`, makeTask(`p${i}`, 20 + i, 'input-required'));
    await agree('more owners');
    clock.ms += 600;
    assert.ok(store.sweep() > 0, 'evicts above maxTasks and fails the parked tasks');
    await agree('a sweep');
    clock.ms += 2_000;
    await store.put('client:carol@echo', makeTask('c0', 30), CREATED);
    assert.ok(store.sweep() > 0);
    await agree('expiry');
    // A process of an older build, still serving the file after the migration, writes without
    // keeping the count: the next open counts the rows afresh.
    db.prepare(
      "INSERT INTO tasks (id, owner, context_id, state, terminal, status_ts, updated_at, body) VALUES ('old', 'client:old@echo', 'c', 'completed', 1, 1, ?, '{}')",
    ).run(clock.ms);
    await store.close();
    const reopened = await SqliteTaskStore.open({ path, taskTtlMs: 1_000, now: () => clock.ms });
    try {
      assert.equal(await reopened.countTasks(), 2, 'counted afresh on open');
      assert.equal(await reopened.failRunning((task) => ({ ...task, status: { ...task.status, state: 'failed' } })), 1);
      assert.equal(await reopened.countTasks(), 2, 'failRunning replaces, never adds');
    } finally {
      await reopened.close();
    }
  });

  it('the background sweep runs on its timer, and close() stops it', async () => {
    const clock = { ms: 1_000_000 };
    const { store, cleanup } = await openSqlite({ taskTtlMs: 100, sweepIntervalMs: 5, now: () => clock.ms });
    cleanups.push(cleanup);
    await store.put('alice', makeTask('t1', 1));
    clock.ms += 1_000;
    for (let waited = 0; (await store.countTasks()) > 0 && waited < 2_000; waited += 10) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.equal(await store.countTasks(), 0);
    await store.close();
    await store.close();
  });

  it('refuses keys no column keeps exactly, and says why with a stable code', async () => {
    const { store, cleanup } = await openSqlite();
    cleanups.push(cleanup);
    for (const [owner, task] of [
      ['al\u0000ice', makeTask('t1', 1)],
      ['alice', makeTask('t\ud8001', 1)],
      ['alice', makeTask('t1', 1, 'working', 'c\udc00')],
      ['alice', makeTask('x'.repeat(641), 1)],
    ] as const) {
      await assert.rejects(store.put(owner, task), (error: unknown) => {
        assert.ok(error instanceof TaskStoreInputError);
        assert.equal(error.code, 'unstorable_key');
        return true;
      });
    }
  });

  it('a file written by a newer build is refused with schema_too_new, and a locked one is unavailable', async () => {
    const dir = tempDir();
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'airlock.db');
    await (await SqliteTaskStore.open({ path })).close();
    const db = new Database(path);
    db.prepare("INSERT INTO schema_migrations VALUES (99, 'future', 'x', 'now')").run();
    db.close();
    await assert.rejects(SqliteTaskStore.open({ path }), (error: unknown) => {
      assert.ok(error instanceof StoreSchemaError);
      assert.equal(error.code, 'schema_too_new');
      return true;
    });
    const lockedPath = join(dir, 'locked.db');
    const store = await SqliteTaskStore.open({ path: lockedPath, busyTimeoutMs: 50 });
    const locker = new Database(lockedPath);
    locker.exec('BEGIN IMMEDIATE');
    try {
      await assert.rejects(store.put('alice', makeTask('t1', 1)), (error: unknown) => {
        assert.ok(error instanceof StoreUnavailableError);
        assert.equal(error.code, 'store_unavailable');
        assert.equal(error.retryable, true);
        return true;
      });
    } finally {
      locker.exec('ROLLBACK');
      locker.close();
    }
    await store.put('alice', makeTask('t1', 1));
    assert.ok(await store.get('alice', 't1'), 'works again once the lock is gone');
    await store.close();
  });

  it('failRunning settles the tasks a dead process left running, and nothing else', async () => {
    const { store, path, cleanup } = await openSqlite();
    cleanups.push(cleanup);
    const states: TaskState[] = ['submitted', 'working', 'input-required', 'completed', 'canceled'];
    for (const [n, state] of states.entries()) await store.put(`owner${n % 2}`, makeTask(`t-${state}`, n, state));
    for (let n = 0; n < 1_200; n++) await store.put('many', makeTask(`w${n}`, n, 'working'));
    await store.close();
    const reopened = await SqliteTaskStore.open({ path });
    try {
      const settled = await reopened.failRunning((task) => ({
        ...task,
        status: { state: 'failed', timestamp: '2026-02-02T00:00:00.000Z' },
        metadata: { was: task.status.state },
      }));
      assert.equal(settled, 2 + 1_200, 'in batches of 500');
      assert.equal((await reopened.get('owner0', 't-submitted'))?.status.state, 'failed');
      assert.deepEqual((await reopened.get('owner1', 't-working'))?.metadata, { was: 'working' });
      assert.equal((await reopened.get('owner0', 't-input-required'))?.status.state, 'input-required');
      assert.equal((await reopened.get('owner1', 't-completed'))?.status.state, 'completed');
      assert.equal((await reopened.list('many', { pageSize: 1, status: 'failed' })).totalSize, 1_200);
      assert.equal(await reopened.failRunning((task) => task), 0);
    } finally {
      await reopened.close();
    }
  });

  it('an unopenable path is StoreUnavailableError, not a crash', async () => {
    const dir = tempDir();
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    await assert.rejects(SqliteTaskStore.open({ path: join(dir, 'missing-dir', 'x.db') }), StoreUnavailableError);
  });
});

// ---------------------------------------------------------------------------------------------
// PostgreSQL only

describe('PostgresTaskStore, beyond the contract', { skip: postgresSkip }, () => {
  const cleanups: (() => Promise<void>)[] = [];
  after(async () => {
    for (const cleanup of cleanups) await cleanup();
  });

  it('replicas starting together migrate once; a reopen keeps the tasks and applies nothing', async () => {
    const schema = uniqueSchema();
    cleanups.push(() => dropSchema(schema));
    const stores = await Promise.all(
      Array.from({ length: 4 }, () => PostgresTaskStore.open({ url: POSTGRES_URL, schema, poolSize: 2 })),
    );
    try {
      const applied = stores.map((store) => store.migration.applied.length);
      assert.deepEqual(
        applied.sort(),
        [0, 0, 0, POSTGRES_MIGRATIONS.length],
        'exactly one replica applied the migrations, the others waited for its lock',
      );
      const task = makeTask('t1', 1, 'completed');
      await stores[0]!.put('alice', task);
      assert.deepEqual(await stores[3]!.get('alice', 't1'), task, 'every replica reads the same table');
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
    const again = await PostgresTaskStore.open({ url: POSTGRES_URL, schema });
    try {
      assert.deepEqual(again.migration.applied, []);
      assert.equal((await again.list('alice', { pageSize: 5 })).totalSize, 1);
    } finally {
      await again.close();
    }
  });

  it('failRunning settles the tasks a dead process left running, and nothing else (one replica)', async () => {
    const { store, cleanup } = await openPostgres();
    cleanups.push(cleanup);
    const states: TaskState[] = ['submitted', 'working', 'input-required', 'completed', 'canceled'];
    for (const [n, state] of states.entries()) await store.put(`owner${n % 2}`, makeTask(`t-${state}`, n, state));
    await Promise.all(Array.from({ length: 1_200 }, (_, n) => store.put('many', makeTask(`w${n}`, n, 'working'))));
    const owners: string[] = [];
    const settled = await store.failRunning((task, owner) => {
      owners.push(owner);
      return { ...task, status: { state: 'failed', timestamp: '2026-02-02T00:00:00.000Z' } };
    });
    assert.equal(settled, 2 + 1_200, 'in pages of 500');
    assert.ok(owners.includes('owner0') && owners.includes('owner1') && owners.includes('many'));
    assert.equal((await store.get('owner0', 't-submitted'))?.status.state, 'failed');
    assert.equal((await store.get('owner1', 't-working'))?.status.state, 'failed');
    assert.equal((await store.get('owner0', 't-input-required'))?.status.state, 'input-required');
    assert.equal((await store.get('owner1', 't-completed'))?.status.state, 'completed');
    assert.equal((await store.list('many', { pageSize: 1, status: 'failed' })).totalSize, 1_200);
    assert.equal(await store.failRunning((task) => task), 0);
  });

  it('plans every hot statement on an index, never a sequential scan, on a realistic table', async () => {
    const { store, schema, cleanup } = await openPostgres();
    cleanups.push(cleanup);
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      // 20 000 rows over 200 owners, then statistics, as a long-running database would have.
      await client.query(
        `INSERT INTO "${schema}".tasks (id, owner, context_id, state, terminal, status_ts, updated_at, body)
         SELECT 't' || g, 'owner' || (g % 200), 'c' || (g % 2000), CASE WHEN g % 3 = 0 THEN 'completed' ELSE 'working' END,
                g % 3 = 0, 1767225600000 + g, 1767225600000 + g, '{}'
         FROM generate_series(1, 20000) AS g`,
      );
      await client.query(`ANALYZE "${schema}".tasks`);
      await client.query(`SET search_path TO "${schema}"`);
      // A generic plan is what a named statement settles on after a few runs: check that one.
      await client.query('SET plan_cache_mode = force_generic_plan');
      const statements = (
        store as unknown as {
          sql: { get: string; list: Record<string, string>; deleteExpired: string; deleteOldestFinished: string };
        }
      ).sql;
      const shareStatements = (store as unknown as { shareSql: { admit: string; parkedIdle: string } }).shareSql;
      const literal = (value: unknown): string => (typeof value === 'number' ? String(value) : `'${String(value)}'`);
      const explain = async (name: string, text: string, values: unknown[]): Promise<string> => {
        await client.query(`PREPARE ${name} AS ${text}`);
        const result = await client.query<{ 'QUERY PLAN': string }>(
          `EXPLAIN EXECUTE ${name} (${values.map(literal).join(', ')})`,
        );
        return result.rows.map((row) => row['QUERY PLAN']).join('\n');
      };
      const now = 1767225600000 + 30_000;
      const cases: [string, string, unknown[], RegExp][] = [
        ['p_get', statements.get, ['t5', 'owner5', 0], /Index Scan using tasks_pkey/],
        [
          'p_owner',
          statements.list.owner!,
          ['owner7', -8.64e15, 0, 8.64e15 + 1, '', 51],
          /Index (Only )?Scan.* using tasks_owner_list/,
        ],
        [
          'p_context',
          statements.list.context!,
          ['owner7', 'c7', -8.64e15, 0, 8.64e15 + 1, '', 51],
          /Index (Only )?Scan.* using tasks_owner_context_list/,
        ],
        [
          'p_state',
          statements.list.state!,
          ['owner7', 'working', -8.64e15, 0, 8.64e15 + 1, '', 51],
          /Index (Only )?Scan.* using tasks_owner_state_list/,
        ],
        [
          'p_context_state',
          statements.list.contextState!,
          ['owner7', 'c7', 'working', -8.64e15, 0, 8.64e15 + 1, '', 51],
          /Index (Only )?Scan.* using tasks_owner_context_list/,
        ],
        [
          'p_expired',
          statements.deleteExpired,
          [now, 1000],
          /^(?=[^]*Index (Only )?Scan using tasks_expiry)(?=[^]*Index Scan (using|on) tasks_pkey)/,
        ],
        [
          'p_evict',
          statements.deleteOldestFinished,
          [1000],
          /^(?=[^]*Index (Only )?Scan using tasks_eviction)(?=[^]*Index Scan (using|on) tasks_pkey)/,
        ],
        [
          'p_share',
          shareStatements.admit,
          ['owner7@', 'owner7A', 8, 0, 1000, 100, 0],
          /(Index (Only )?Scan using|Bitmap Index Scan on) tasks_owner_(state_)?list/,
        ],
        ['p_parked', shareStatements.parkedIdle, [now, 0, 1000], /Index Scan using tasks_parked/],
      ];
      for (const [name, text, values, plan] of cases) {
        const detail = await explain(name, text, values);
        assert.match(detail, plan, `${name}:\n${detail}`);
        assert.doesNotMatch(detail, /Seq Scan/, `${name}:\n${detail}`);
      }
    } finally {
      await client.end();
    }
  });

  it('a sweep deletes at most its limit, and one replica sweeps at a time', async () => {
    const clock = { ms: 1_000_000 };
    const { store, schema, cleanup } = await openPostgres({ taskTtlMs: 100, maxTasks: 5, now: () => clock.ms });
    cleanups.push(cleanup);
    for (let i = 0; i < 10; i++) await store.put('alice', makeTask(`old${i}`, i, 'working'));
    clock.ms += 50;
    for (let i = 0; i < 10; i++) await store.put('alice', makeTask(`done${i}`, 100 + i, 'completed'));
    assert.equal(await store.countTasks(), 20, 'puts are never refused for room');
    clock.ms += 60;
    // Another replica holding the sweep lock: this one's sweep does nothing rather than wait.
    const other = new pg.Client({ connectionString: POSTGRES_URL });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`airlock.task_sweep:${schema}`]);
      assert.equal(await store.sweep(), 0);
      await other.query('COMMIT');
    } finally {
      await other.end();
    }
    assert.equal(await store.sweep(4), 4);
    assert.equal(await store.sweep(100), 6 + 5);
    assert.equal(await store.countTasks(), 5);
    const kept = (await store.list('alice', { pageSize: 10 })).tasks.map((task) => task.id);
    assert.deepEqual(kept, ['done9', 'done8', 'done7', 'done6', 'done5']);
  });

  it('an unreachable database is StoreUnavailableError (retryable), quickly, and names no password', async () => {
    const started = performance.now();
    await assert.rejects(
      PostgresTaskStore.open({ url: 'postgres://user:s3cret@127.0.0.1:1/none', connectTimeoutMs: 1_000 }),
      (error: unknown) => {
        assert.ok(error instanceof StoreUnavailableError, String(error));
        assert.equal(error.code, 'store_unavailable');
        assert.equal(error.retryable, true);
        assert.doesNotMatch(error.message, /s3cret|user/);
        return true;
      },
    );
    assert.ok(performance.now() - started < 5_000);
  });

  it('a statement past its timeout is StoreUnavailableError, and the pool recovers afterwards', async () => {
    const { store, schema, cleanup } = await openPostgres({ statementTimeoutMs: 200 });
    cleanups.push(cleanup);
    await store.put('alice', makeTask('t1', 1));
    const locker = new pg.Client({ connectionString: POSTGRES_URL });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query(`LOCK TABLE "${schema}".tasks IN ACCESS EXCLUSIVE MODE`);
      await assert.rejects(store.get('alice', 't1'), StoreUnavailableError);
      await locker.query('ROLLBACK');
    } finally {
      await locker.end();
    }
    assert.ok(await store.get('alice', 't1'));
  });

  it('connections the server kills are dropped: failures are StoreUnavailableError, then it works again', async () => {
    const backgroundErrors: unknown[] = [];
    const { store, schema, cleanup } = await openPostgres({
      onBackgroundError: (error) => backgroundErrors.push(error),
    });
    cleanups.push(cleanup);
    await store.put('alice', makeTask('t1', 1));
    // Several pooled connections, then the server ends every one of them (as on a restart).
    await Promise.all(Array.from({ length: 4 }, () => store.get('alice', 't1')));
    await withAdmin((client) =>
      client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [
        `airlock:${schema}`,
      ]),
    );
    let failures = 0;
    for (let attempt = 0; attempt < 10; attempt++) {
      try {
        assert.ok(await store.get('alice', 't1'));
        await store.put('alice', makeTask('t1', 2, 'completed'));
        assert.equal((await store.sweep()) >= 0, true);
        break;
      } catch (error) {
        assert.ok(error instanceof StoreUnavailableError, String(error));
        failures++;
      }
    }
    assert.ok(failures < 10, 'the pool recovered');
    assert.equal((await store.get('alice', 't1'))?.status.state, 'completed');
  });

  it('a schema written by a newer build is refused with schema_too_new', async () => {
    const { store, schema, cleanup } = await openPostgres();
    cleanups.push(cleanup);
    await store.close();
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      await client.query(
        `INSERT INTO "${schema}".schema_migrations (version, name, checksum) VALUES (99, 'future', 'x')`,
      );
    } finally {
      await client.end();
    }
    await assert.rejects(PostgresTaskStore.open({ url: POSTGRES_URL, schema }), (error: unknown) => {
      assert.ok(error instanceof StoreSchemaError);
      assert.equal(error.code, 'schema_too_new');
      return true;
    });
  });

  it('refuses bad options before connecting', async () => {
    for (const options of [
      { schema: 'Robert"); DROP' },
      { schema: '1abc' },
      { maxTasks: 0 },
      { poolSize: 0 },
      { taskTtlMs: 0 },
    ]) {
      await assert.rejects(PostgresTaskStore.open({ url: POSTGRES_URL, ...options }), RangeError);
    }
  });
});
