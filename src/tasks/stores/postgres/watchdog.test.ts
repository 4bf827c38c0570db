/**
 * The pool's query watchdog (watchdog.ts), on a real PostgreSQL: a query the server does not
 * answer within the limit fails (both of pg's query forms), its connection is dropped and the next
 * query works; the limit counts from each query's start, not the connection's; queries pg times
 * itself are left alone; and the store, behind a network gone silent, answers store-unavailable
 * instead of waiting for ever; a migration waits for another replica's as long as its own
 * statement timeout allows, not the pool's.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import {
  dropSchema,
  postgresSkip,
  POSTGRES_URL,
  startTcpProxy,
  uniqueName,
} from '../../../../test/helpers/backing-services.js';
import { StoreUnavailableError } from '../errors.js';
import { PostgresTaskStore } from '../postgres.js';
import { QueryReadTimeoutError, QueryWatchdog } from './watchdog.js';

const skip = await postgresSkip();

/** Runs `work` on a pool of `max` watched connections (no server-side statement timeout), then ends it. */
async function withWatchedPool(
  limitMs: number,
  max: number,
  work: (pool: pg.Pool, watchdog: QueryWatchdog) => Promise<void>,
): Promise<void> {
  const watchdog = new QueryWatchdog(limitMs);
  const pool = new pg.Pool({ connectionString: POSTGRES_URL, max, Client: watchdog.clientClass() });
  pool.on('error', () => undefined);
  watchdog.attach(pool);
  try {
    await work(pool, watchdog);
  } finally {
    await pool.end();
  }
}

/** Each test is cut off after this: a watchdog that does not fire must fail the test, not hang it. */
const LIMIT = { timeout: 15_000 };

async function elapsedOf(work: () => Promise<unknown>): Promise<{ ms: number; error: unknown }> {
  const started = performance.now();
  try {
    await work();
    return { ms: performance.now() - started, error: undefined };
  } catch (error) {
    return { ms: performance.now() - started, error };
  }
}

describe('the PostgreSQL query watchdog', { skip }, () => {
  it('fails a pool query the server does not answer in time, and drops its connection', LIMIT, () =>
    withWatchedPool(800, 2, async (pool, watchdog) => {
      await pool.query('SELECT 1');
      const { ms, error } = await elapsedOf(() => pool.query('SELECT pg_sleep(5)'));
      assert.ok(error instanceof QueryReadTimeoutError, `expected a read timeout, got ${String(error)}`);
      assert.match(error.message, /did not answer a query within 800 ms/);
      assert.equal(error.code, 'store_unavailable');
      // Between the limit and the limit + 2 ticks (200 ms each), with room for a slow machine.
      assert.ok(ms >= 800 && ms < 2_000, `failed after ${ms.toFixed(0)} ms`);
      assert.equal(watchdog.running, 0);
      assert.equal((await pool.query<{ one: number }>('SELECT 1 AS one')).rows[0]?.one, 1);
    }),
  );

  it('fails a checked-out client query too, and every query after it on that connection', LIMIT, () =>
    withWatchedPool(600, 2, async (pool) => {
      const client = await pool.connect();
      client.on('error', () => undefined);
      const slow = client.query('SELECT pg_sleep(5)');
      const queued = client.query('SELECT 2');
      const [first, second] = await Promise.allSettled([slow, queued]);
      assert.equal(first.status, 'rejected');
      assert.ok(first.reason instanceof QueryReadTimeoutError);
      assert.equal(second.status, 'rejected', 'a query queued behind it cannot be answered either');
      client.release(first.reason);
      assert.equal((await pool.query<{ one: number }>('SELECT 1 AS one')).rows[0]?.one, 1);
    }),
  );

  it('counts from each query: many short queries on one connection outlast the limit', LIMIT, () =>
    withWatchedPool(600, 1, async (pool) => {
      const { ms, error } = await elapsedOf(async () => {
        for (let index = 0; index < 6; index++) await pool.query('SELECT pg_sleep(0.25)');
      });
      assert.equal(error, undefined);
      assert.ok(ms > 1_200, `six queries took ${ms.toFixed(0)} ms`);
    }),
  );

  it('leaves a query with its own query_timeout to pg, and watches a plain one', LIMIT, () =>
    withWatchedPool(400, 2, async (pool, watchdog) => {
      const own: pg.QueryConfig & { query_timeout: number } = { text: 'SELECT pg_sleep(0.8)', query_timeout: 5_000 };
      const timedByPg = pool.query(own);
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(watchdog.running, 0);
      await timedByPg;
      const plain = pool.query('SELECT pg_sleep(0.3)');
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(watchdog.running, 1);
      await plain;
      assert.equal(watchdog.running, 0);
    }),
  );

  it('a store behind a silent network answers store-unavailable, then works once it speaks', LIMIT, async () => {
    const proxy = await startTcpProxy(Number(new URL(POSTGRES_URL).port || 5432));
    const schema = uniqueName('airlock_watchdog');
    // The read limit is the statement timeout + 2 s: 2.2 s here.
    const store = await PostgresTaskStore.open({ url: proxy.url(POSTGRES_URL), schema, statementTimeoutMs: 200 });
    after(async () => {
      await store.close().catch(() => undefined);
      await proxy.close();
      await dropSchema(schema);
    });
    assert.equal(await store.get('client:a', 'missing'), undefined);
    proxy.silence();
    const { ms, error } = await elapsedOf(() => store.get('client:a', 'missing'));
    assert.ok(error instanceof StoreUnavailableError, `expected store-unavailable, got ${String(error)}`);
    assert.ok(ms >= 2_200 && ms < 5_000, `failed after ${ms.toFixed(0)} ms`);
    proxy.speak();
    assert.equal(await store.get('client:a', 'missing'), undefined);
  });

  it('a store waits for a migration held by another replica, past the pool limit', LIMIT, async () => {
    const schema = uniqueName('airlock_watchdog');
    const holder = new pg.Client({ connectionString: POSTGRES_URL });
    await holder.connect();
    after(async () => {
      await holder.end().catch(() => undefined);
      await dropSchema(schema);
    });
    // What a migrating replica holds (migrations/postgres.ts), for longer than the pool's 2.2 s.
    await holder.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [`airlock.schema_migrations:${schema}`]);
    const release = setTimeout(() => {
      holder.query('SELECT pg_advisory_unlock_all()').catch(() => undefined);
    }, 3_500);
    const { ms, error } = await elapsedOf(async () => {
      const store = await PostgresTaskStore.open({ url: POSTGRES_URL, schema, statementTimeoutMs: 200 });
      await store.close();
    });
    clearTimeout(release);
    assert.equal(error, undefined, `the store did not open: ${String(error)}`);
    assert.ok(ms >= 3_400, `opened after ${ms.toFixed(0)} ms, before the lock was released`);
  });
});
