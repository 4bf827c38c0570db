/**
 * The SQLite store's push configs and outbox (`push_configs`, `push_outbox`, migration 4). One
 * process holds the file and better-sqlite3 runs each statement to its end before anything else
 * runs, so a cap check and its insert in one transaction are atomic without locks, and every
 * write is done before the call returns (the returned promise only reports it).
 *
 * @example
 * ```ts
 * const push = sqlitePush(db); // { configs, outbox }
 * await push.configs.put(record, { perTask: 10, perPrincipal: 1000 });
 * ```
 */
import type { Database as SqliteDatabase } from 'better-sqlite3';
import {
  pushBodyOf,
  pushRecordOf,
  type DurablePush,
  type PushConfigRow,
  type PushEventInput,
  type PushOutbox,
  outboxRowOf,
  type OutboxRow,
  type PushOutboxRow,
} from '../push-outbox.js';
import type { PushConfigCaps, PushConfigRecord, PushConfigRecords, PushPutOutcome } from '../push-records.js';
import { guard } from './database.js';

const CONFIG_COLUMNS = 'owner, dialect, created_at, body';

/**
 * The push configs and outbox of one SQLite file.
 *
 * @example
 * ```ts
 * const { configs, outbox } = sqlitePush(db);
 * ```
 */
export function sqlitePush(db: SqliteDatabase): DurablePush {
  // The file has one process (see the module comment): a lease left by a process that stopped
  // mid-delivery is stale, so its rows are due again at once.
  guard(() =>
    db.prepare('UPDATE push_outbox SET claimed_by = NULL, claimed_until = 0 WHERE claimed_by IS NOT NULL').run(),
  );
  return { configs: new SqlitePushConfigs(db), outbox: new SqlitePushOutbox(db) };
}

class SqlitePushConfigs implements PushConfigRecords {
  readonly #put: (record: PushConfigRecord, caps: PushConfigCaps) => PushPutOutcome;
  readonly #get;
  readonly #list;
  readonly #delete;
  readonly #forTask;
  readonly #dropTask;

  constructor(db: SqliteDatabase) {
    const existing = db.prepare<[string, string], { owner: string }>(
      'SELECT owner FROM push_configs WHERE task_id = ? AND config_id = ?',
    );
    const onTask = db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM push_configs WHERE task_id = ?');
    const ofOwner = db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM push_configs WHERE owner = ?');
    const insert = db.prepare<Record<string, unknown>>(
      `INSERT INTO push_configs (task_id, config_id, owner, dialect, created_at, body)
       VALUES (@taskId, @id, @owner, @dialect, @createdAt, @body)
       ON CONFLICT (task_id, config_id) DO UPDATE SET dialect = excluded.dialect, body = excluded.body`,
    );
    this.#put = db.transaction((record: PushConfigRecord, caps: PushConfigCaps): PushPutOutcome => {
      const { taskId, id } = record.config;
      const owner = existing.get(taskId, id)?.owner;
      // Another principal's id on this task: a clash of ids, never a takeover (as in memory).
      if (owner !== undefined && owner !== record.owner) return 'per-task-cap';
      if (owner === undefined) {
        if ((onTask.get(taskId)?.n ?? 0) >= caps.perTask) return 'per-task-cap';
        if ((ofOwner.get(record.owner)?.n ?? 0) >= caps.perPrincipal) return 'per-principal-cap';
      }
      insert.run({
        taskId,
        id,
        owner: record.owner,
        dialect: record.dialect,
        createdAt: record.createdAt,
        body: pushBodyOf(record),
      });
      return 'stored';
    });
    this.#get = db.prepare<[string, string, string], PushConfigRow>(
      `SELECT ${CONFIG_COLUMNS} FROM push_configs WHERE task_id = ? AND owner = ? AND config_id = ?`,
    );
    this.#list = db.prepare<[string, string], PushConfigRow>(
      `SELECT ${CONFIG_COLUMNS} FROM push_configs WHERE task_id = ? AND owner = ? ORDER BY created_at, config_id`,
    );
    this.#delete = db.prepare<[string, string, string]>(
      'DELETE FROM push_configs WHERE task_id = ? AND owner = ? AND config_id = ?',
    );
    this.#forTask = db.prepare<[string], PushConfigRow>(
      `SELECT ${CONFIG_COLUMNS} FROM push_configs WHERE task_id = ? ORDER BY created_at, config_id`,
    );
    this.#dropTask = db.prepare<[string]>('DELETE FROM push_configs WHERE task_id = ?');
  }

  async put(record: PushConfigRecord, caps: PushConfigCaps): Promise<PushPutOutcome> {
    return guard(() => this.#put(record, caps));
  }

  async get(taskId: string, owner: string, id: string): Promise<PushConfigRecord | undefined> {
    const row = guard(() => this.#get.get(taskId, owner, id));
    return row === undefined ? undefined : pushRecordOf(row);
  }

  async list(taskId: string, owner: string): Promise<PushConfigRecord[]> {
    return guard(() => this.#list.all(taskId, owner)).map(pushRecordOf);
  }

  async delete(taskId: string, owner: string, id: string): Promise<boolean> {
    return guard(() => this.#delete.run(taskId, owner, id)).changes > 0;
  }

  async forTask(taskId: string): Promise<PushConfigRecord[]> {
    return guard(() => this.#forTask.all(taskId)).map(pushRecordOf);
  }

  async dropTask(taskId: string): Promise<void> {
    guard(() => this.#dropTask.run(taskId));
  }
}

class SqlitePushOutbox implements PushOutbox {
  readonly #enqueue: (input: PushEventInput, now: number, max: number) => number | 'full';
  readonly #enqueueFinal: (taskId: string, configId: string, event: string, now: number) => boolean;
  readonly #claim: (claimant: string, now: number, leaseMs: number, limit: number) => PushOutboxRow[];
  readonly #finish: (id: number, claimant: string) => void;
  readonly #retry;
  readonly #pending;

  constructor(db: SqliteDatabase) {
    const counts = db.prepare<[string, string], { rows: number; configs: number }>(
      `SELECT (SELECT count(*) FROM push_outbox WHERE task_id = ?) AS rows,
              (SELECT count(*) FROM push_configs WHERE task_id = ?) AS configs`,
    );
    const fanOut = db.prepare<Record<string, unknown>>(
      `INSERT INTO push_outbox (task_id, config_id, agent, client, event, final, next_attempt_at, created_at)
       SELECT task_id, config_id, coalesce(json_extract(body, '$.agent'), '-'), json_extract(body, '$.client'),
              @event, @final, @now, @now
       FROM push_configs WHERE task_id = @taskId AND config_id = coalesce(@configId, config_id)
       ORDER BY created_at, config_id`,
    );
    const finalWaiting = db.prepare<[string, string], { n: number }>(
      'SELECT count(*) AS n FROM push_outbox WHERE task_id = ? AND config_id = ? AND final = 1',
    );
    const heads = db.prepare<{ now: number; limit: number }, { id: number }>(
      `SELECT h.id FROM push_outbox h
       WHERE h.next_attempt_at <= @now AND h.claimed_until <= @now
         AND NOT EXISTS (SELECT 1 FROM push_outbox e WHERE e.task_id = h.task_id AND e.id < h.id)
       ORDER BY h.id LIMIT +@limit`,
    );
    const take = db.prepare<{ id: number; claimant: string; until: number }>(
      'UPDATE push_outbox SET claimed_by = @claimant, claimed_until = @until WHERE id = @id',
    );
    const read = db.prepare<[number], OutboxRow>(
      `SELECT o.id, o.task_id, o.config_id, o.agent, o.client, o.event, o.final, o.attempts,
              c.owner, c.dialect, c.created_at, c.body
       FROM push_outbox o LEFT JOIN push_configs c ON c.task_id = o.task_id AND c.config_id = o.config_id
       WHERE o.id = ?`,
    );
    const remove = db.prepare<[number, string], { task_id: string; final: number }>(
      'DELETE FROM push_outbox WHERE id = ? AND claimed_by = ? RETURNING task_id, final',
    );
    const left = db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM push_outbox WHERE task_id = ?');
    const dropConfigs = db.prepare<[string]>('DELETE FROM push_configs WHERE task_id = ?');
    this.#enqueue = db.transaction((input: PushEventInput, now: number, max: number) => {
      const { rows, configs } = counts.get(input.taskId, input.taskId) ?? { rows: 0, configs: 0 };
      if (configs === 0) return 0;
      if (rows >= max * configs) return 'full' as const;
      const params = { taskId: input.taskId, configId: null, event: input.event, final: input.final ? 1 : 0, now };
      return fanOut.run(params).changes;
    });
    this.#enqueueFinal = db.transaction((taskId: string, configId: string, event: string, now: number) => {
      if ((finalWaiting.get(taskId, configId)?.n ?? 0) > 0) return false;
      return fanOut.run({ taskId, configId, event, final: 1, now }).changes > 0;
    });
    this.#claim = db.transaction((claimant: string, now: number, leaseMs: number, limit: number) => {
      const claimed: PushOutboxRow[] = [];
      for (const { id } of heads.all({ now, limit })) {
        take.run({ id, claimant, until: now + leaseMs });
        const row = read.get(id);
        if (row !== undefined) claimed.push(outboxRowOf(row));
      }
      return claimed;
    });
    this.#finish = db.transaction((id: number, claimant: string) => {
      const gone = remove.get(id, claimant);
      // The task's last event is out and nothing of it is left: its configs go with it.
      if (gone?.final === 1 && (left.get(gone.task_id)?.n ?? 0) === 0) dropConfigs.run(gone.task_id);
    });
    this.#retry = db.prepare<{ id: number; claimant: string; at: number }>(
      `UPDATE push_outbox SET attempts = attempts + 1, next_attempt_at = @at, claimed_by = NULL, claimed_until = 0
       WHERE id = @id AND claimed_by = @claimant`,
    );
    this.#pending = left;
  }

  async enqueue(input: PushEventInput, now: number, maxEventsPerConfig: number): Promise<number | 'full'> {
    return guard(() => this.#enqueue(input, now, maxEventsPerConfig));
  }

  async enqueueFinal(taskId: string, configId: string, event: string, now: number): Promise<boolean> {
    return guard(() => this.#enqueueFinal(taskId, configId, event, now));
  }

  async claim(claimant: string, now: number, leaseMs: number, limit: number): Promise<PushOutboxRow[]> {
    return guard(() => this.#claim(claimant, now, leaseMs, limit));
  }

  async finish(id: number, claimant: string): Promise<void> {
    guard(() => this.#finish(id, claimant));
  }

  async retry(id: number, claimant: string, nextAttemptAt: number): Promise<void> {
    guard(() => this.#retry.run({ id, claimant, at: nextAttemptAt }));
  }

  async pending(taskId: string): Promise<number> {
    return guard(() => this.#pending.get(taskId))?.n ?? 0;
  }
}
