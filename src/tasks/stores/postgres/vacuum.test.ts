/**
 * The tasks table's own VACUUM (vacuum.ts), on a real PostgreSQL (`DATABASE_URL`, else the local
 * `test` database; a schema of its own per test, dropped after): it runs once the threshold of
 * rows written or deleted is reached and not before, never with 0, leaves the pool's statement
 * timeout as it was, and the store feeds it from its group commits and evictions.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import type { Task } from '../../../protocol/model.js';
import { PostgresTaskStore } from '../postgres.js';
import { createPool } from './connection.js';
import { TasksVacuum } from './vacuum.js';

const URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

async function reachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: URL, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

const up = await reachable();
if (!up && process.env.CI === 'true') throw new Error('PostgreSQL is not reachable; CI must start it');
const skip = up ? false : 'PostgreSQL is not reachable: skipped';

const schemas: string[] = [];
after(async () => {
  if (!up) return;
  const admin = new pg.Client({ connectionString: URL });
  await admin.connect();
  for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await admin.end();
});

function newSchema(): string {
  const schema = `airlock_vacuum_${randomBytes(5).toString('hex')}`;
  schemas.push(schema);
  return schema;
}

/** VACUUMs of `schema`.tasks so far, by anyone (the statistics PostgreSQL keeps). */
async function vacuumCount(schema: string): Promise<number> {
  const client = new pg.Client({ connectionString: URL });
  await client.connect();
  try {
    const result = await client.query<{ n: string }>(
      `SELECT vacuum_count AS n FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = 'tasks'`,
      [schema],
    );
    return Number(result.rows[0]?.n ?? 0);
  } finally {
    await client.end();
  }
}

function task(id: string, state: Task['status']['state']): Task {
  return { id, contextId: 'ctx', status: { state, timestamp: new Date().toISOString() }, artifacts: [], history: [] };
}

describe('TasksVacuum', { skip }, () => {
  it('vacuums the table once the threshold is reached, not before, and restores the statement timeout', async () => {
    const schema = newSchema();
    const store = await PostgresTaskStore.open({ url: URL, schema, vacuumAfterRows: 0 });
    await store.close();
    const pool = createPool({ url: URL, poolSize: 1, statementTimeoutMs: 4_321 }, schema, undefined);
    const errors: unknown[] = [];
    const vacuum = new TasksVacuum(pool, `"${schema}".tasks`, 10, (error) => errors.push(error));
    try {
      vacuum.changed(9);
      await vacuum.idle();
      assert.equal(vacuum.runs, 0, 'below the threshold nothing runs');
      assert.equal(await vacuumCount(schema), 0);
      vacuum.changed(1);
      await vacuum.idle();
      assert.deepEqual(errors, []);
      assert.equal(vacuum.runs, 1);
      assert.equal(await vacuumCount(schema), 1, 'PostgreSQL saw the VACUUM');
      // One connection in the pool: the one the VACUUM used, back with the pool's timeout.
      const shown = await pool.query<{ statement_timeout: string }>('SHOW statement_timeout');
      assert.equal(shown.rows[0]?.statement_timeout, '4321ms');
      vacuum.changed(5);
      await vacuum.idle();
      assert.equal(vacuum.runs, 1, 'the count starts again after a VACUUM');
    } finally {
      await pool.end();
    }
  });

  it('never vacuums with a threshold of 0, and reports a failed VACUUM instead of throwing', async () => {
    const schema = newSchema();
    const pool = createPool({ url: URL, poolSize: 1 }, schema, undefined);
    try {
      const never = new TasksVacuum(pool, `"${schema}".tasks`, 0, () => assert.fail('no VACUUM expected'));
      never.changed(1_000_000);
      await never.idle();
      assert.equal(never.runs, 0);
      const errors: unknown[] = [];
      // No such table: the error goes to the callback, the store goes on.
      const missing = new TasksVacuum(pool, `"${schema}".tasks`, 1, (error) => errors.push(error));
      missing.changed(1);
      await missing.idle();
      assert.equal(missing.runs, 0);
      assert.equal(errors.length, 1);
    } finally {
      await pool.end();
    }
  });

  it('the store vacuums its table after its writes and evictions reach vacuumAfterRows', async () => {
    const schema = newSchema();
    const store = await PostgresTaskStore.open({
      url: URL,
      schema,
      vacuumAfterRows: 50,
      maxTasksPerPrincipal: 20,
    });
    try {
      // 60 finished tasks of one principal at a quota of 20: writes and evictions.
      for (let i = 0; i < 60; i++) {
        await store.put('alice@echo', task(`t-${i}`, 'completed'), { created: true });
      }
      await store.close();
      assert.ok((await vacuumCount(schema)) >= 1, 'at least one VACUUM of the tasks table');
    } finally {
      await store.close();
    }
  });

  it('refuses a negative or fractional vacuumAfterRows', async () => {
    for (const vacuumAfterRows of [-1, 1.5]) {
      await assert.rejects(
        PostgresTaskStore.open({ url: URL, schema: newSchema(), vacuumAfterRows }),
        /vacuumAfterRows/,
      );
    }
  });
});
