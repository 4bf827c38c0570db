/**
 * The SQLite store's {@link ApprovalRecords}: the `approval_actions` table (migration 3). One
 * process holds the file, and better-sqlite3 runs each statement to its end before anything else
 * runs, so a check and its write in one transaction are atomic without locks.
 *
 * @example
 * ```ts
 * const records = new SqliteApprovalRecords(db);
 * await records.create(record, { maxOpenPerPrincipal: 100, maxOpen: 10_000 }, Date.now());
 * ```
 */
import type { Database as SqliteDatabase, Statement } from 'better-sqlite3';
import type {
  ApprovalCreateLimits,
  ApprovalCreateRefusal,
  ApprovalRecord,
  ApprovalRecordState,
  ApprovalRecords,
  ApprovalStateChange,
  NewApprovalRecord,
} from '../approval-records.js';
import { approvalRecordOf, type ApprovalRow as Row } from '../approval-records.js';
import { principalOfOwner } from '../principal.js';
import { guard } from './database.js';

const COLUMNS =
  'action_id, task_id, owner, decider, state, created_at, expires_at, decided_by, decided_at, consumed_at, body';
const OPEN = `state IN ('pending', 'approved') AND expires_at > @now`;

/**
 * Approval records in the SQLite file (see the module comment).
 *
 * @example
 * ```ts
 * const pending = await new SqliteApprovalRecords(db).pendingFor('person:alice', Date.now(), 100);
 * ```
 */
export class SqliteApprovalRecords implements ApprovalRecords {
  readonly #sql: {
    openOnTask: Statement<{ owner: string; task: string; now: number }, { n: number }>;
    openOfPrincipal: Statement<{ principal: string; now: number }, { n: number }>;
    openInAll: Statement<{ now: number }, { n: number }>;
    dropFinishedOnTask: Statement<{ owner: string; task: string }>;
    insert: Statement<Record<string, unknown>>;
    get: Statement<[string], Row>;
    latest: Statement<[string, string], Row>;
    pending: Statement<{ decider: string; now: number; limit: number }, Row>;
    decided: Statement<{ now: number; limit: number }, Row>;
    transition: Statement<Record<string, unknown>>;
    kept: Statement<[string], { kept: string | null }>;
    clearKept: Statement<[string]>;
    withdraw: Statement<{ owner: string; task: string; now: number }>;
    sweep: Statement<{ now: number }>;
  };
  readonly #create: (
    record: NewApprovalRecord,
    limits: ApprovalCreateLimits,
    now: number,
  ) => ApprovalCreateRefusal | undefined;
  readonly #takeKept: (actionId: string) => string | undefined;
  readonly #countPending: Statement<[number], { agent: string; n: number }>;

  constructor(db: SqliteDatabase) {
    const sql = {
      openOnTask: db.prepare<{ owner: string; task: string; now: number }, { n: number }>(
        `SELECT count(*) AS n FROM approval_actions WHERE owner = @owner AND task_id = @task AND ${OPEN}`,
      ),
      openOfPrincipal: db.prepare<{ principal: string; now: number }, { n: number }>(
        `SELECT count(*) AS n FROM approval_actions WHERE principal = @principal AND ${OPEN}`,
      ),
      openInAll: db.prepare<{ now: number }, { n: number }>(`SELECT count(*) AS n FROM approval_actions WHERE ${OPEN}`),
      dropFinishedOnTask: db.prepare<{ owner: string; task: string }>(
        'DELETE FROM approval_actions WHERE owner = @owner AND task_id = @task',
      ),
      insert: db.prepare<Record<string, unknown>>(
        `INSERT INTO approval_actions (action_id, task_id, owner, principal, decider, state, created_at, expires_at, body, kept)
         VALUES (@actionId, @taskId, @owner, @principal, @decider, 'pending', @createdAt, @expiresAt, @body, @kept)`,
      ),
      get: db.prepare<[string], Row>(`SELECT ${COLUMNS} FROM approval_actions WHERE action_id = ?`),
      latest: db.prepare<[string, string], Row>(
        `SELECT ${COLUMNS} FROM approval_actions WHERE owner = ? AND task_id = ? ORDER BY created_at DESC LIMIT 1`,
      ),
      pending: db.prepare<{ decider: string; now: number; limit: number }, Row>(
        `SELECT ${COLUMNS} FROM approval_actions WHERE decider = @decider AND state = 'pending' AND expires_at > @now
         ORDER BY created_at LIMIT +@limit`,
      ),
      decided: db.prepare<{ now: number; limit: number }, Row>(
        `SELECT ${COLUMNS} FROM approval_actions WHERE state IN ('approved', 'denied') AND expires_at > @now
         ORDER BY decided_at LIMIT +@limit`,
      ),
      transition: db.prepare<Record<string, unknown>>(
        `UPDATE approval_actions SET state = @to, decided_by = coalesce(@decidedBy, decided_by),
           decided_at = coalesce(@decidedAt, decided_at), consumed_at = coalesce(@consumedAt, consumed_at)
         WHERE action_id = @actionId AND state = @from AND expires_at > @now`,
      ),
      kept: db.prepare<[string], { kept: string | null }>('SELECT kept FROM approval_actions WHERE action_id = ?'),
      clearKept: db.prepare<[string]>('UPDATE approval_actions SET kept = NULL WHERE action_id = ?'),
      withdraw: db.prepare<{ owner: string; task: string; now: number }>(
        `DELETE FROM approval_actions WHERE owner = @owner AND task_id = @task AND ${OPEN}`,
      ),
      sweep: db.prepare<{ now: number }>(`DELETE FROM approval_actions WHERE state = 'consumed' OR expires_at <= @now`),
    };
    this.#sql = sql;
    this.#countPending = db.prepare<[number], { agent: string; n: number }>(
      `SELECT coalesce(json_extract(body, '$.origin.agent'), '') AS agent, count(*) AS n FROM approval_actions
       WHERE state = 'pending' AND expires_at > ? GROUP BY 1`,
    );
    this.#create = db.transaction((record: NewApprovalRecord, limits: ApprovalCreateLimits, now: number) => {
      const task = { owner: record.owner, task: record.taskId, now };
      if ((sql.openOnTask.get(task)?.n ?? 0) > 0) return 'task_has_open_action' as const;
      const principal = principalOfOwner(record.owner);
      if ((sql.openOfPrincipal.get({ principal, now })?.n ?? 0) >= limits.maxOpenPerPrincipal) {
        return 'principal_quota' as const;
      }
      if ((sql.openInAll.get({ now })?.n ?? 0) >= limits.maxOpen) return 'store_full' as const;
      sql.dropFinishedOnTask.run({ owner: record.owner, task: record.taskId });
      sql.insert.run({ ...record, principal, kept: record.kept ?? null });
      return undefined;
    });
    this.#takeKept = db.transaction((actionId: string) => {
      const kept = sql.kept.get(actionId)?.kept ?? undefined;
      if (kept !== undefined) sql.clearKept.run(actionId);
      return kept ?? undefined;
    });
  }

  async create(
    record: NewApprovalRecord,
    limits: ApprovalCreateLimits,
    now: number,
  ): Promise<ApprovalCreateRefusal | undefined> {
    return guard(() => this.#create(record, limits, now));
  }

  async get(actionId: string): Promise<ApprovalRecord | undefined> {
    const row = guard(() => this.#sql.get.get(actionId));
    return row === undefined ? undefined : approvalRecordOf(row);
  }

  async latestOnTask(owner: string, taskId: string): Promise<ApprovalRecord | undefined> {
    const row = guard(() => this.#sql.latest.get(owner, taskId));
    return row === undefined ? undefined : approvalRecordOf(row);
  }

  async pendingFor(decider: string, now: number, limit: number): Promise<ApprovalRecord[]> {
    return guard(() => this.#sql.pending.all({ decider, now, limit })).map(approvalRecordOf);
  }

  async decidedWaiting(now: number, limit: number): Promise<ApprovalRecord[]> {
    return guard(() => this.#sql.decided.all({ now, limit })).map(approvalRecordOf);
  }

  async transition(
    actionId: string,
    from: ApprovalRecordState,
    change: ApprovalStateChange,
    now: number,
  ): Promise<ApprovalRecord | undefined> {
    const changed = guard(
      () =>
        this.#sql.transition.run({
          actionId,
          from,
          to: change.state,
          decidedBy: change.decidedBy ?? null,
          decidedAt: change.decidedAt ?? null,
          consumedAt: change.consumedAt ?? null,
          now,
        }).changes,
    );
    return changed === 1 ? this.get(actionId) : undefined;
  }

  async takeKept(actionId: string): Promise<string | undefined> {
    return guard(() => this.#takeKept(actionId));
  }

  async withdraw(owner: string, taskId: string, now: number): Promise<boolean> {
    return guard(() => this.#sql.withdraw.run({ owner, task: taskId, now }).changes) > 0;
  }

  async countPending(now: number): Promise<ReadonlyMap<string, number>> {
    const rows = guard(() => this.#countPending.all(now));
    return new Map(rows.map((row) => [row.agent, row.n]));
  }

  async sweep(now: number): Promise<number> {
    return guard(() => this.#sql.sweep.run({ now }).changes);
  }
}
