/**
 * Tests for `airlock db migrate` (`dbMigrateCommand`): a data directory, a config file, a
 * PostgreSQL URL or `DATABASE_URL`, and the exit codes and messages of each failure. Moved here
 * from the migrations tests: the command is the CLI's, which a task store test may not import.
 *
 * PostgreSQL comes from `DATABASE_URL`, else `postgres://postgres@127.0.0.1:5432/test`; each
 * test uses its own schema and drops it. Skipped when unreachable, except under CI.
 *
 * @example
 * ```sh
 * node --import tsx --test test/db-migrate.test.ts
 * ```
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { dbMigrateCommand } from '../src/cli/db.js';
import { POSTGRES_URL, postgresSkip, uniqueName, withPostgres } from './helpers/backing-services.js';

const pgSkip = await postgresSkip();

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'airlock-migrate-'));
  dirs.push(dir);
  return dir;
}
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('airlock db migrate', () => {
  function capture(): {
    output: { stdout: (line: string) => void; stderr: (line: string) => void };
    out: string[];
    err: string[];
  } {
    const out: string[] = [];
    const err: string[] = [];
    return { output: { stdout: (line) => out.push(line), stderr: (line) => err.push(line) }, out, err };
  }

  it('migrates a data directory, then finds it current (exit 0)', async () => {
    const data = join(tempDir(), 'data');
    const first = capture();
    assert.equal(await dbMigrateCommand({ data, env: {} }, first.output), 0);
    assert.deepEqual(first.out, [
      `migrated sqlite:${join(data, 'airlock.db')}: schema version 7 (applied 1, 2, 3, 4, 5, 6, 7)\n`,
    ]);
    const second = capture();
    assert.equal(await dbMigrateCommand({ data, env: {} }, second.output), 0);
    assert.match(second.out[0] ?? '', /schema version 7 \(already current\)/);
  });

  it('with nothing but a memory store there is nothing to migrate (exit 2)', async () => {
    const run = capture();
    assert.equal(await dbMigrateCommand({ env: {} }, run.output), 2);
    assert.match(run.err[0] ?? '', /nothing to migrate/);
  });

  it('reads the config file, and reports a bad one (exit 2)', async () => {
    const dir = tempDir();
    const config = join(dir, 'airlock.yaml');
    writeFileSync(
      config,
      [
        'agents:',
        '  - slug: echo',
        '    name: Echo',
        '    description: Echo.',
        '    version: 1.0.0',
        '    skills: [{ id: echo, name: Echo, description: Echoes., tags: [demo] }]',
        '    backend: { type: echo }',
        '',
      ].join('\n'),
    );
    const memoryOnly = capture();
    assert.equal(await dbMigrateCommand({ config, env: {} }, memoryOnly.output), 2);
    assert.match(memoryOnly.err[0] ?? '', /nothing to migrate/);
    const withData = capture();
    assert.equal(await dbMigrateCommand({ config, data: join(dir, 'data'), env: {} }, withData.output), 0);
    const missing = capture();
    assert.equal(await dbMigrateCommand({ config: join(dir, 'missing.yaml'), env: {} }, missing.output), 2);
    assert.match(missing.err[0] ?? '', /file not found/);
  });

  it('an unreachable database is exit 1, and the password is never printed', async () => {
    const run = capture();
    const url = 'postgres://app:s3cret@127.0.0.1:1/airlock';
    assert.equal(await dbMigrateCommand({ url, env: {} }, run.output), 1);
    assert.match(
      run.err[0] ?? '',
      /^cannot migrate postgres:\/\/app@127\.0\.0\.1:1\/airlock: .*unavailable|cannot reach/,
    );
    assert.doesNotMatch(run.err.join(''), /s3cret/);
  });

  it('a bad schema name is exit 2', async () => {
    const run = capture();
    assert.equal(await dbMigrateCommand({ url: POSTGRES_URL, schema: 'Bad-Name', env: {} }, run.output), 2);
    assert.match(run.err[0] ?? '', /schema must match/);
  });

  it('migrates PostgreSQL from DATABASE_URL (exit 0)', { skip: pgSkip }, async () => {
    const schema = uniqueName('airlock_test');
    try {
      const run = capture();
      assert.equal(await dbMigrateCommand({ schema, env: { DATABASE_URL: POSTGRES_URL } }, run.output), 0);
      assert.match(
        run.out[0] ?? '',
        /^migrated postgres:\/\/.* \(schema airlock_test_[0-9a-f]+\): schema version 7 \(applied 1, 2, 3, 4, 5, 6, 7\)\n$/,
      );
      const again = capture();
      assert.equal(await dbMigrateCommand({ url: POSTGRES_URL, schema, env: {} }, again.output), 0);
      assert.match(again.out[0] ?? '', /already current/);
    } finally {
      await withPostgres((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
    }
  });
});
