/**
 * The PostgreSQL store's {@link ApprovalRecords}: the `approval_actions` table (migration 3),
 * shared by every replica. A change of state is one conditional UPDATE (… WHERE state = $from),
 * so of two replicas deciding or using one action exactly one gets a row back. A new action's
 * checks and insert run in one transaction under an advisory lock on its principal: two replicas
 * creating for one principal at once cannot both pass its quota (the gateway-wide bound,
 * `maxOpen`, is not locked and may be passed by what replicas create at the same moment).
 *
 * @example
 * ```ts
 * const records = new PostgresApprovalRecords(pool, '"airlock"');
 * const approved = await records.transition(actionId, 'pending', { state: 'approved', decidedBy, decidedAt: now }, now);
 * ```
 */
import type { Pool, QueryResultRow } from 'pg';
import type {
  ApprovalCreateLimits,
  ApprovalCreateRefusal,
  ApprovalRecord,
  ApprovalRecordState,
  ApprovalRecords,
  ApprovalRow as Row,
  ApprovalStateChange,
  NewApprovalRecord,
} from '../approval-records.js';
import { approvalRecordOf } from '../approval-records.js';
import { principalOfOwner } from '../principal.js';
import { withPooledClient } from './connection.js';
import { asStoreError } from './errors.js';

const COLUMNS =
  'action_id, task_id, owner, decider, state, created_at, expires_at, decided_by, decided_at, consumed_at, body';

/**
 * Approval records in one PostgreSQL schema (see the module comment).
 *
 * @example
 * ```ts
 * const pending = await new PostgresApprovalRecords(pool, '"airlock"').pendingFor('person:alice', Date.now(), 100);
 * ```
 */
export class PostgresApprovalRecords implements ApprovalRecords {
  readonly #pool: Pool;
  readonly #table: string;

  /** `schema` is already quoted (quoteIdentifier). */
  constructor(pool: Pool, schema: string) {
    this.#pool = pool;
    this.#table = `${schema}.approval_actions`;
  }

  async create(
    record: NewApprovalRecord,
    limits: ApprovalCreateLimits,
    now: number,
  ): Promise<ApprovalCreateRefusal | undefined> {
    const table = this.#table;
    const principal = principalOfOwner(record.owner);
    return withPooledClient(this.#pool, async (client) => {
      await client.query('BEGIN');
      try {
        // One principal's creations in turn, on every replica: its quota is counted exactly.
        await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 7231))', [principal]);
        const counts = await client.query<{ task: string; principal: string; total: string }>(
          `SELECT
             count(*) FILTER (WHERE owner = $1 AND task_id = $2) AS task,
             count(*) FILTER (WHERE principal = $3) AS principal,
             count(*) AS total
           FROM ${table} WHERE state IN ('pending', 'approved') AND expires_at > $4`,
          [record.owner, record.taskId, principal, now],
        );
        const row = counts.rows[0];
        const refusal: ApprovalCreateRefusal | undefined =
          row === undefined
            ? undefined
            : Number(row.task) > 0
              ? 'task_has_open_action'
              : Number(row.principal) >= limits.maxOpenPerPrincipal
                ? 'principal_quota'
                : Number(row.total) >= limits.maxOpen
                  ? 'store_full'
                  : undefined;
        if (refusal !== undefined) {
          await client.query('ROLLBACK');
          return refusal;
        }
        await client.query(`DELETE FROM ${table} WHERE owner = $1 AND task_id = $2`, [record.owner, record.taskId]);
        await client.query(
          `INSERT INTO ${table} (action_id, task_id, owner, principal, decider, state, created_at, expires_at, body, kept)
           VALUES ($1, $2, $3, $4, $5, 'pending', $6, $7, $8, $9)`,
          [
            record.actionId,
            record.taskId,
            record.owner,
            principal,
            record.decider,
            record.createdAt,
            record.expiresAt,
            record.body,
            record.kept ?? null,
          ],
        );
        await client.query('COMMIT');
        return undefined;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    });
  }

  async get(actionId: string): Promise<ApprovalRecord | undefined> {
    const rows = await this.#rows<Row>(`SELECT ${COLUMNS} FROM ${this.#table} WHERE action_id = $1`, [actionId]);
    return rows[0] === undefined ? undefined : approvalRecordOf(rows[0]);
  }

  async latestOnTask(owner: string, taskId: string): Promise<ApprovalRecord | undefined> {
    const rows = await this.#rows<Row>(
      `SELECT ${COLUMNS} FROM ${this.#table} WHERE owner = $1 AND task_id = $2 ORDER BY created_at DESC LIMIT 1`,
      [owner, taskId],
    );
    return rows[0] === undefined ? undefined : approvalRecordOf(rows[0]);
  }

  async pendingFor(decider: string, now: number, limit: number): Promise<ApprovalRecord[]> {
    const rows = await this.#rows<Row>(
      `SELECT ${COLUMNS} FROM ${this.#table} WHERE decider = $1 AND state = 'pending' AND expires_at > $2
       ORDER BY created_at LIMIT $3`,
      [decider, now, limit],
    );
    return rows.map(approvalRecordOf);
  }

  async decidedWaiting(now: number, limit: number): Promise<ApprovalRecord[]> {
    const rows = await this.#rows<Row>(
      `SELECT ${COLUMNS} FROM ${this.#table} WHERE state IN ('approved', 'denied') AND expires_at > $1
       ORDER BY decided_at LIMIT $2`,
      [now, limit],
    );
    return rows.map(approvalRecordOf);
  }

  async transition(
    actionId: string,
    from: ApprovalRecordState,
    change: ApprovalStateChange,
    now: number,
  ): Promise<ApprovalRecord | undefined> {
    const rows = await this.#rows<Row>(
      `UPDATE ${this.#table} SET state = $3, decided_by = coalesce($4, decided_by),
         decided_at = coalesce($5, decided_at), consumed_at = coalesce($6, consumed_at)
       WHERE action_id = $1 AND state = $2 AND expires_at > $7
       RETURNING ${COLUMNS}`,
      [
        actionId,
        from,
        change.state,
        change.decidedBy ?? null,
        change.decidedAt ?? null,
        change.consumedAt ?? null,
        now,
      ],
    );
    return rows[0] === undefined ? undefined : approvalRecordOf(rows[0]);
  }

  async takeKept(actionId: string): Promise<string | undefined> {
    const table = this.#table;
    const rows = await this.#rows<{ kept: string }>(
      `UPDATE ${table} AS t SET kept = NULL
       FROM (SELECT action_id, kept FROM ${table} WHERE action_id = $1 AND kept IS NOT NULL FOR UPDATE) AS old
       WHERE t.action_id = old.action_id
       RETURNING old.kept`,
      [actionId],
    );
    return rows[0]?.kept;
  }

  async withdraw(owner: string, taskId: string, now: number): Promise<boolean> {
    const rows = await this.#rows<{ action_id: string }>(
      `DELETE FROM ${this.#table}
       WHERE owner = $1 AND task_id = $2 AND state IN ('pending', 'approved') AND expires_at > $3
       RETURNING action_id`,
      [owner, taskId, now],
    );
    return rows.length > 0;
  }

  async countPending(now: number): Promise<ReadonlyMap<string, number>> {
    // Over the pending rows only (the partial index); bounded by approvals.maxPending.
    const rows = await this.#rows<{ agent: string; n: string | number }>(
      `SELECT coalesce(body::jsonb #>> '{origin,agent}', '') AS agent, count(*) AS n FROM ${this.#table}
       WHERE state = 'pending' AND expires_at > $1 GROUP BY 1`,
      [now],
    );
    return new Map(rows.map((row) => [row.agent, Number(row.n)]));
  }

  async sweep(now: number): Promise<number> {
    const rows = await this.#rows<{ action_id: string }>(
      `DELETE FROM ${this.#table} WHERE state = 'consumed' OR expires_at <= $1 RETURNING action_id`,
      [now],
    );
    return rows.length;
  }

  async #rows<R extends QueryResultRow>(text: string, values: unknown[]): Promise<R[]> {
    try {
      return (await this.#pool.query<R>(text, values)).rows;
    } catch (error) {
      throw asStoreError(error);
    }
  }
}
