/**
 * Tests for the migration runners (SQLite and PostgreSQL) and the store factory (`openTaskStore`
 * and how a store is chosen). `airlock db migrate` is tested in `test/db-migrate.test.ts`.
 *
 * PostgreSQL comes from `DATABASE_URL`, else `postgres://postgres@127.0.0.1:5432/test`; every
 * test uses its own schema and drops it. Skipped when unreachable, except under CI.
 *
 * @example
 * ```sh
 * node --import tsx --test src/tasks/stores/migrations/migrations.test.ts
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
import { StoreSchemaError } from '../errors.js';
import {
  describeTaskStoreSpec,
  openTaskStore,
  redactDatabaseUrl,
  resolveTaskStoreSpec,
  sqliteSpecForDataDir,
} from '../index.js';
import { MemoryTaskStore } from '../memory.js';
import { PostgresTaskStore } from '../postgres.js';
import { SqliteTaskStore } from '../sqlite.js';
import { checksumOf, pendingMigrations, type Migration } from './plan.js';
import { migratePostgres, POSTGRES_MIGRATIONS } from './postgres.js';
import { migrateSqlite, SQLITE_MIGRATIONS } from './sqlite.js';

const POSTGRES_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'airlock-migrate-'));
  dirs.push(dir);
  return dir;
}
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function postgresProblem(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    return undefined;
  } catch (error) {
    return `PostgreSQL is not reachable (${error instanceof Error ? error.message : String(error)})`;
  } finally {
    await client.end().catch(() => undefined);
  }
}
const problem = await postgresProblem();
if (problem !== undefined && process.env.CI === 'true') throw new Error(`${problem}; CI must start PostgreSQL`);
const postgresSkip = problem === undefined ? false : `${problem}: skipped`;

function uniqueSchema(): string {
  return `airlock_test_${randomBytes(6).toString('hex')}`;
}

async function withClient<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

const m1: Migration = { version: 1, name: 'one', sql: 'CREATE TABLE one (x INTEGER);' };
const m2: Migration = { version: 2, name: 'two', sql: 'CREATE TABLE two (x INTEGER);' };
const applied = (...migrations: Migration[]): { version: number; name: string; checksum: string }[] =>
  migrations.map((migration) => ({
    version: migration.version,
    name: migration.name,
    checksum: checksumOf(migration),
  }));

describe('pendingMigrations', () => {
  it('returns what the database lacks, in order', () => {
    assert.deepEqual(pendingMigrations('X', [m1, m2], []), [m1, m2]);
    assert.deepEqual(pendingMigrations('X', [m1, m2], applied(m1)), [m2]);
    assert.deepEqual(pendingMigrations('X', [m1, m2], applied(m2, m1)), []);
  });

  it('refuses a database from a newer build, an edited migration and a gap', () => {
    const code = (error: unknown): string => (error instanceof StoreSchemaError ? error.code : 'not a schema error');
    assert.throws(
      () => pendingMigrations('X', [m1], applied(m1, m2)),
      (error) => code(error) === 'schema_too_new',
    );
    assert.throws(
      () => pendingMigrations('X', [m1], [{ version: 1, name: 'one', checksum: 'edited' }]),
      (error) => code(error) === 'schema_mismatch',
    );
    assert.throws(
      () => pendingMigrations('X', [m1, m2], applied(m2)),
      (error) => code(error) === 'schema_mismatch',
    );
  });

  it('refuses a build whose own list does not count from 1', () => {
    assert.throws(() => pendingMigrations('X', [m2], []), /versions must count from 1/);
  });

  it('ships migrations that are in order and never edited (checksums pinned here)', () => {
    assert.deepEqual(pendingMigrations('SQLite', SQLITE_MIGRATIONS, []), SQLITE_MIGRATIONS);
    assert.deepEqual(pendingMigrations('PostgreSQL', POSTGRES_MIGRATIONS, []), POSTGRES_MIGRATIONS);
    // A shipped migration must never change: databases in the field recorded these checksums
    // and would refuse to start. If this fails, revert the edit and add a migration instead.
    assert.deepEqual(SQLITE_MIGRATIONS.map(checksumOf), [
      '0b44a75760d50837ddfcfff88c7f02f27dbda57813f7ac5a0d82a068cf458cfd',
      '7362e974742c391b16ab0fc2919a1466eea0e6a38b69c20232625a20b14d3d6d',
      '0d1c2ce3213042b92e6deb9401bdb01d90af189df64cfcd789cc627c0f0647f3',
      'fb34a146af92a2f9a6c08dcb07a88bd585b076806e4d44b5405c5abe7d3f45e6',
      '6695f78cd3a13c308ad2f001596bb47378c5853ef5aee198592fed3184258d8c',
      'f36cc883e86f8ab4d5a024f624d347b342a84af185c4cb92f663191ba6b7c79d',
      '43e037416a7f84ba8b3228bb8b5b71ab4835cf1bccf62deaa11e86c7d4b57241',
    ]);
    assert.deepEqual(POSTGRES_MIGRATIONS.map(checksumOf), [
      '4684d469ba02478198e53641ffd9b76cabad3ec4fe8a7c03359d4952a39ec372',
      '7362e974742c391b16ab0fc2919a1466eea0e6a38b69c20232625a20b14d3d6d',
      '6a6d94c7d173a51796c6a53382b86443699fcab3ef3f75749acd32f0eecb8913',
      '329b6587968eb8fbeefd18f8bfd1a5feaa0097f429bd811c1de81df4fb5da9b4',
      'b59bf656529c28ffa3fccbbda5076042f7ee4416b27fe69f1a51533702556149',
      '65492a59a91d87c54d20dfa4332a2f8664503cfac46fddc0847af863c58e07e0',
      'befee9ee1ba9322115a3f6192e476f51f9378b5ba8d7b5425f1d82843bb1c89b',
    ]);
  });
});

describe('migrateSqlite', () => {
  it('applies each migration once, in its own transaction, and records it', () => {
    const db = new Database(join(tempDir(), 'x.db'));
    try {
      assert.deepEqual(migrateSqlite(db, [m1]), { engine: 'sqlite', version: 1, applied: [1] });
      assert.deepEqual(migrateSqlite(db, [m1]), { engine: 'sqlite', version: 1, applied: [] });
      assert.deepEqual(migrateSqlite(db, [m1, m2]), { engine: 'sqlite', version: 2, applied: [2] });
      const rows = db.prepare('SELECT version, name, checksum FROM schema_migrations ORDER BY version').all();
      assert.deepEqual(rows, applied(m1, m2));
    } finally {
      db.close();
    }
  });

  it('a failing migration leaves nothing behind, and the next run retries it', () => {
    const db = new Database(join(tempDir(), 'x.db'));
    try {
      const broken: Migration = {
        version: 2,
        name: 'two',
        sql: 'CREATE TABLE two (x INTEGER); SELECT * FROM missing;',
      };
      migrateSqlite(db, [m1]);
      assert.throws(() => migrateSqlite(db, [m1, broken]), /missing/);
      assert.deepEqual(db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'two'").get(), { n: 0 });
      assert.deepEqual(migrateSqlite(db, [m1, m2]).applied, [2]);
    } finally {
      db.close();
    }
  });
});

describe('migratePostgres', { skip: postgresSkip }, () => {
  it('applies each migration once under the advisory lock; a failing one is rolled back whole', async () => {
    const schema = uniqueSchema();
    await withClient(async (client) => {
      try {
        assert.deepEqual(await migratePostgres(client, schema, { migrations: [m1] }), {
          engine: 'postgres',
          version: 1,
          applied: [1],
        });
        const broken: Migration = {
          version: 2,
          name: 'two',
          sql: 'CREATE TABLE two (x INTEGER); SELECT * FROM missing;',
        };
        await assert.rejects(migratePostgres(client, schema, { migrations: [m1, broken] }), /missing/);
        const tables = await client.query('SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY 1', [schema]);
        assert.deepEqual(
          tables.rows.map((row: { tablename: string }) => row.tablename),
          ['one', 'schema_migrations'],
        );
        assert.deepEqual((await migratePostgres(client, schema, { migrations: [m1, m2] })).applied, [2]);
        // The lock was released each time: another session can take it at once.
        await withClient(async (other) => {
          const lock = await other.query('SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS ok', [
            `airlock.schema_migrations:${schema}`,
          ]);
          assert.equal(lock.rows[0].ok, true);
        });
      } finally {
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      }
    });
  });
});

describe('choosing and opening a store', () => {
  it('openTaskStore maps each spec to its store, migrated and ready', async () => {
    const memory = await openTaskStore({ type: 'memory', maxTasks: 5, taskTtlMinutes: 1 });
    assert.ok(memory instanceof MemoryTaskStore);
    await memory.close();
    const sqlite = await openTaskStore(sqliteSpecForDataDir(join(tempDir(), 'data')));
    assert.ok(sqlite instanceof SqliteTaskStore);
    assert.deepEqual(sqlite.migration.applied, [1, 2, 3, 4, 5, 6, 7]);
    await sqlite.close();
  });

  it('openTaskStore opens PostgreSQL', { skip: postgresSkip }, async () => {
    const schema = uniqueSchema();
    const store = await openTaskStore({ type: 'postgres', url: POSTGRES_URL, schema, poolSize: 2 });
    try {
      assert.ok(store instanceof PostgresTaskStore);
      assert.deepEqual(store.migration.applied, [1, 2, 3, 4, 5, 6, 7]);
    } finally {
      await store.close();
      await withClient((client) => client.query(`DROP SCHEMA "${schema}" CASCADE`));
    }
  });

  it('--data wins, then a database store in the config, then DATABASE_URL, then memory; retention carries over', () => {
    const dir = join(tempDir(), 'data');
    const env = { DATABASE_URL: 'postgres://db/airlock' };
    const memory = { type: 'memory' as const, maxTasks: 7, taskTtlMinutes: 3 };
    assert.deepEqual(resolveTaskStoreSpec({ configured: memory, data: dir, env }), {
      type: 'sqlite',
      path: join(dir, 'airlock.db'),
      maxTasks: 7,
      taskTtlMinutes: 3,
    });
    assert.equal(statSync(dir).mode & 0o777, 0o700, 'the data directory is owner-only');
    const configuredSqlite = { type: 'sqlite' as const, path: '/x/airlock.db' };
    assert.deepEqual(resolveTaskStoreSpec({ configured: configuredSqlite, env }), configuredSqlite);
    assert.deepEqual(resolveTaskStoreSpec({ configured: memory, env }), {
      type: 'postgres',
      url: 'postgres://db/airlock',
      maxTasks: 7,
      taskTtlMinutes: 3,
    });
    assert.deepEqual(resolveTaskStoreSpec({ configured: memory, env: { DATABASE_URL: '' } }), memory);
    assert.deepEqual(resolveTaskStoreSpec({}), { type: 'memory' });
  });

  it('describes a store without its password', () => {
    assert.equal(describeTaskStoreSpec({ type: 'memory' }), 'memory');
    assert.equal(describeTaskStoreSpec({ type: 'sqlite', path: '/d/airlock.db' }), 'sqlite:/d/airlock.db');
    assert.equal(
      describeTaskStoreSpec({
        type: 'postgres',
        url: 'postgres://app:s3cret@db:5432/airlock?password=x&sslmode=require',
      }),
      'postgres://app@db:5432/airlock',
    );
    assert.equal(redactDatabaseUrl('not a url :s3cret'), 'postgres (unparseable URL)');
  });
});
