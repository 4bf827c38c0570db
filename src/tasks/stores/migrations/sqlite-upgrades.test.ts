/**
 * SQLite files written by an older build, upgraded in place: what each migration must keep
 * (every task, the row count) and what it must leave (the schema objects it replaces).
 *
 * @example
 * ```sh
 * node --import tsx --test src/tasks/stores/migrations/sqlite-upgrades.test.ts
 * ```
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import type { Task, TaskState } from '../../../protocol/model.js';
import { SqliteTaskStore } from '../sqlite.js';
import { migrateSqlite, SQLITE_MIGRATIONS } from './sqlite.js';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A database file at schema version `version`, its tasks inserted as that version's writes did. */
function databaseAt(version: number): { path: string; db: Database.Database } {
  const dir = mkdtempSync(join(tmpdir(), 'airlock-upgrade-'));
  dirs.push(dir);
  const path = join(dir, 'airlock.db');
  const db = new Database(path);
  migrateSqlite(db, SQLITE_MIGRATIONS.slice(0, version));
  return { path, db };
}

function taskRow(id: string, contextId: string, state: TaskState, at: number): unknown[] {
  const task: Task = {
    id,
    contextId,
    status: { state, timestamp: new Date(Date.parse('2026-01-01T00:00:00.000Z') + at).toISOString() },
    artifacts: [],
    history: [],
  };
  const terminal = ['completed', 'failed', 'canceled', 'rejected'].includes(state) ? 1 : 0;
  return [
    id,
    'client:a@echo',
    contextId,
    state,
    terminal,
    Date.parse(task.status.timestamp),
    Date.now(),
    JSON.stringify(task),
  ];
}

describe('SQLite schema upgrades', () => {
  it('version 6 counts the rows version 5 left, and drops its triggers', () => {
    const { db } = databaseAt(5);
    const insert = db.prepare(
      "INSERT INTO tasks (id, owner, context_id, state, terminal, status_ts, updated_at, body) VALUES (?, 'client:a@echo', 'c', 'working', 0, 1, ?, '{}')",
    );
    for (let i = 0; i < 7; i++) insert.run(`t${i}`, Date.now());
    db.prepare('UPDATE task_count SET tasks = 99').run(); // a count gone wrong is taken afresh
    assert.deepEqual(migrateSqlite(db).applied.slice(0, 1), [6]);
    assert.equal(db.prepare('SELECT tasks FROM task_count').pluck().get(), 7);
    assert.deepEqual(db.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger'").all(), []);
    db.close();
  });

  it('version 7 keeps every task and serves every list and both sweeps from its two indexes', async () => {
    const { path, db } = databaseAt(6);
    const insert = db.prepare(
      'INSERT INTO tasks (id, owner, context_id, state, terminal, status_ts, updated_at, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    );
    const states: TaskState[] = ['working', 'completed', 'input-required'];
    for (let i = 0; i < 12; i++) insert.run(...taskRow(`t${i}`, `c${i % 2}`, states[i % 3]!, i));
    db.prepare('UPDATE task_count SET tasks = 12').run();
    assert.deepEqual(migrateSqlite(db).applied, [7]);
    const indexes = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'tasks' ORDER BY name")
      .pluck()
      .all();
    assert.deepEqual(indexes, ['sqlite_autoindex_tasks_1', 'tasks_by_age', 'tasks_by_owner', 'tasks_parked']);
    db.close();

    const clock = { ms: Date.now() };
    const store = await SqliteTaskStore.open({ path, maxTasks: 10, taskTtlMs: 60_000, now: () => clock.ms });
    try {
      const ids = (tasks: readonly Task[]): string[] => tasks.map((task) => task.id);
      const all = await store.list('client:a@echo', { pageSize: 100 });
      assert.equal(all.totalSize, 12);
      assert.deepEqual(
        ids(all.tasks),
        Array.from({ length: 12 }, (_, i) => `t${11 - i}`),
      );
      const inContext = await store.list('client:a@echo', { pageSize: 3, contextId: 'c1' });
      assert.deepEqual([ids(inContext.tasks), inContext.totalSize], [['t11', 't9', 't7'], 6]);
      const next = await store.list('client:a@echo', {
        pageSize: 3,
        contextId: 'c1',
        pageToken: inContext.nextPageToken,
      });
      assert.deepEqual(ids(next.tasks), ['t5', 't3', 't1']);
      const parked = await store.list('client:a@echo', { pageSize: 100, status: 'input-required' });
      assert.deepEqual([ids(parked.tasks), parked.totalSize], [['t11', 't8', 't5', 't2'], 4]);
      const both = await store.list('client:a@echo', { pageSize: 100, contextId: 'c0', status: 'completed' });
      assert.deepEqual(ids(both.tasks), ['t10', 't4']);
      assert.equal(await store.countTasks(), 12);

      assert.equal(store.sweep(), 2, 'above maxTasks: two finished tasks go');
      const left = await store.list('client:a@echo', { pageSize: 100, status: 'completed' });
      assert.equal(left.totalSize, 2);
      assert.equal(await store.countTasks(), 10);
      clock.ms += 120_000;
      assert.equal(store.sweep(), 10, 'idle past the TTL: every task goes, finished or not');
      assert.equal(await store.countTasks(), 0);
    } finally {
      await store.close();
    }
  });
});
