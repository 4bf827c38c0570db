/**
 * The PostgreSQL store's {@link TurnLeases}: the `turn_leases` table (migration 5). Every expiry
 * is computed and compared on the database's clock, so replicas' clocks need not agree. A sweep
 * claims lapsed rows with `FOR UPDATE SKIP LOCKED` and moves them to the claiming replica in the
 * same statement: of several sweepers each lapsed row goes to exactly one, and a claimed row is
 * no longer lapsed for the others. The claimer releases the row once it failed the task; if it
 * dies first, the row lapses again and another replica claims it.
 *
 * @example
 * ```ts
 * const leases = new PostgresTurnLeases(pool, '"airlock"');
 * await leases.take('task-1', owner, 'replica-a', 30_000);
 * ```
 */
import type { Pool, QueryResult, QueryResultRow } from 'pg';
import type { LapsedLease, TurnLeases } from '../leases.js';
import { asStoreError } from './errors.js';

/**
 * Turn leases in one PostgreSQL schema (see the module comment).
 *
 * @example
 * ```ts
 * const claimed = await new PostgresTurnLeases(pool, '"airlock"').sweepLapsed('replica-b', 30_000, 100);
 * ```
 */
export class PostgresTurnLeases implements TurnLeases {
  readonly #pool: Pool;
  readonly #sql: {
    take: string;
    renew: string;
    release: string;
    sweep: string;
  };

  /** `schema` is already quoted (quoteIdentifier). */
  constructor(pool: Pool, schema: string) {
    this.#pool = pool;
    const table = `${schema}.turn_leases`;
    this.#sql = {
      take: `INSERT INTO ${table} (task_id, owner, replica_id, expires_at)
        VALUES ($1, $2, $3, now() + $4 * interval '1 millisecond')
        ON CONFLICT (task_id) DO UPDATE
        SET owner = EXCLUDED.owner, replica_id = EXCLUDED.replica_id, expires_at = EXCLUDED.expires_at`,
      renew: `UPDATE ${table} SET expires_at = now() + $3 * interval '1 millisecond'
        WHERE replica_id = $1 AND task_id = ANY ($2::text[])
        RETURNING task_id`,
      release: `DELETE FROM ${table} WHERE task_id = $1 AND replica_id = $2`,
      // The CTE locks the lapsed rows it picks (skipping rows another sweeper holds); the UPDATE
      // hands them to this replica with a fresh expiry, so they are not lapsed for anyone else.
      sweep: `WITH lapsed AS (
          SELECT task_id, replica_id FROM ${table}
          WHERE expires_at <= coalesce($3::timestamptz, now())
          ORDER BY expires_at
          LIMIT $4
          FOR UPDATE SKIP LOCKED
        )
        UPDATE ${table} AS lease
        SET replica_id = $1, expires_at = coalesce($3::timestamptz, now()) + $2 * interval '1 millisecond'
        FROM lapsed
        WHERE lease.task_id = lapsed.task_id
        RETURNING lease.task_id, lease.owner, lapsed.replica_id AS lapsed_replica`,
    };
  }

  async take(taskId: string, owner: string, replicaId: string, ttlMs: number): Promise<void> {
    await this.#query(this.#sql.take, [taskId, owner, replicaId, ttlMs]);
  }

  async renew(replicaId: string, taskIds: readonly string[], ttlMs: number): Promise<string[]> {
    if (taskIds.length === 0) return [];
    const result = await this.#query<{ task_id: string }>(this.#sql.renew, [replicaId, [...taskIds], ttlMs]);
    const held = new Set(result.rows.map((row) => row.task_id));
    return taskIds.filter((id) => !held.has(id));
  }

  async release(taskId: string, replicaId: string): Promise<void> {
    await this.#query(this.#sql.release, [taskId, replicaId]);
  }

  async sweepLapsed(replicaId: string, claimTtlMs: number, limit: number, now?: Date): Promise<LapsedLease[]> {
    const result = await this.#query<{ task_id: string; owner: string; lapsed_replica: string }>(this.#sql.sweep, [
      replicaId,
      claimTtlMs,
      now?.toISOString() ?? null,
      limit,
    ]);
    return result.rows.map((row) => ({ taskId: row.task_id, owner: row.owner, replicaId: row.lapsed_replica }));
  }

  /** Unnamed statements on any pooled connection; driver errors mapped to the store's. */
  async #query<Row extends QueryResultRow>(text: string, values: unknown[]): Promise<QueryResult<Row>> {
    try {
      return await this.#pool.query<Row>({ text, values });
    } catch (error) {
      throw asStoreError(error);
    }
  }
}
