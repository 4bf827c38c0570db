/**
 * The store check's judgement of applied migrations (the real plan and migration lists), and
 * SQLite files: missing, current, behind, corrupt. PostgreSQL is in test/cli-doctor.test.ts.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { checksumOf } from '../../tasks/stores/migrations/plan.js';
import { migrateSqlite, SQLITE_MIGRATIONS } from '../../tasks/stores/migrations/sqlite.js';
import { schemaLine, storeLine } from './store.js';

const dir = mkdtempSync(join(tmpdir(), 'airlock-doctor-store-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const applied = (count: number) =>
  SQLITE_MIGRATIONS.slice(0, count).map((migration) => ({
    version: migration.version,
    name: migration.name,
    checksum: checksumOf(migration),
  }));

describe('doctor: store', () => {
  it('judges applied migrations: current, behind, newer, changed', () => {
    const all = SQLITE_MIGRATIONS.length;
    assert.equal(
      schemaLine('s', 'SQLite', SQLITE_MIGRATIONS, applied(all), 'a.yaml').detail,
      `s: schema version ${all} (current)`,
    );
    assert.equal(
      schemaLine('s', 'SQLite', SQLITE_MIGRATIONS, applied(1), 'a.yaml').detail,
      `s: schema version 1, this build needs ${all}: run npx airlock db migrate --config a.yaml`,
    );
    const newer = schemaLine('s', 'SQLite', SQLITE_MIGRATIONS.slice(0, 1), applied(2), 'a.yaml');
    assert.equal(newer.status, 'fail');
    assert.match(newer.detail, /this build knows versions up to 1/);
    const changed = [{ ...applied(1)[0]!, checksum: '0'.repeat(64) }];
    assert.match(schemaLine('s', 'SQLite', SQLITE_MIGRATIONS, changed, 'a.yaml').detail, /differs from this build's/);
  });

  it('memory is ok; a SQLite file not made yet is ok when its folder is writable', async () => {
    assert.equal((await storeLine({ type: 'memory' }, 'a.yaml')).status, 'ok');
    const path = join(dir, 'new', 'airlock.db');
    assert.deepEqual(await storeLine({ type: 'sqlite', path }, 'a.yaml'), {
      status: 'ok',
      check: 'store',
      detail: `sqlite:${path} does not exist yet; airlock serve creates it`,
    });
  });

  it('a SQLite file: current is ok, behind fails naming the command, and nothing is migrated', async () => {
    const path = join(dir, 'behind.db');
    const db = new Database(path);
    migrateSqlite(db, SQLITE_MIGRATIONS.slice(0, 1));
    db.close();
    const behind = await storeLine({ type: 'sqlite', path }, 'airlock.yaml');
    assert.equal(behind.status, 'fail');
    assert.match(
      behind.detail,
      /schema version 1, this build needs \d: run npx airlock db migrate --config airlock\.yaml$/,
    );
    assert.equal(
      (await storeLine({ type: 'sqlite', path }, 'airlock.yaml')).status,
      'fail',
      'still behind: doctor did not migrate',
    );
    const current = new Database(path);
    migrateSqlite(current);
    current.close();
    assert.equal((await storeLine({ type: 'sqlite', path }, 'airlock.yaml')).status, 'ok');
  });

  it('a file that is not a database fails', async () => {
    const path = join(dir, 'corrupt.db');
    writeFileSync(path, 'this is not a SQLite database, just text that is long enough to have a header'.repeat(20));
    assert.deepEqual(await storeLine({ type: 'sqlite', path }, 'a.yaml'), {
      status: 'fail',
      check: 'store',
      detail: `sqlite:${path} cannot be read: file is not a database`,
    });
  });
});
