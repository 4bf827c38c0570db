/**
 * The PostgreSQL store's retention batch, in one transaction: expired rows first (oldest first),
 * then, while the table holds more than `maxTasks`, the least recently updated finished ones;
 * and the parked-TTL batch, which fails parked tasks idle for too long.
 * Only one replica sweeps at a time (a transaction-scoped advisory lock; the others delete
 * nothing), and rows being written are skipped, not waited for.
 *
 * @example
 * ```ts
 * const deleted = await sweepOnce(pool, sql, { schema: 'public', expiredBefore, limit: 1_000, maxTasks: 10_000, totals });
 * ```
 */
import type { Pool } from 'pg';
import type { Task } from '../../../protocol/model.js';
import type { TotalSizeCache } from '../durable.js';
import { withPooledClient } from './connection.js';
import { pendingRowOf } from './group-commit.js';
import { parkedIdle, type ShareStatements } from './shares.js';
import { putManyValues, type Statements } from './statements.js';

/**
 * What one batch deletes: rows expired at `expiredBefore`, at most `limit` in all; `totals` is
 * cleared once rows are gone.
 *
 * @example
 * ```ts
 * const batch: SweepBatch = { schema, expiredBefore: now - ttlMs, limit: 1_000, maxTasks: 10_000, totals };
 * ```
 */
export interface SweepBatch {
  readonly schema: string;
  readonly expiredBefore: number;
  readonly limit: number;
  readonly maxTasks: number;
  readonly totals: TotalSizeCache;
}

/**
 * Runs one batch and returns how many rows it deleted.
 *
 * @throws StoreUnavailableError if the database is unavailable.
 * @example
 * ```ts
 * while ((await sweepOnce(pool, sql, batch)) > 0);
 * ```
 */
export async function sweepOnce(pool: Pool, sql: Statements, batch: SweepBatch): Promise<number> {
  return withPooledClient(pool, async (client) => {
    await client.query('BEGIN');
    try {
      const locked = await client.query<{ locked: boolean }>(
        'SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS locked',
        [`airlock.task_sweep:${batch.schema}`],
      );
      let deleted = 0;
      if (locked.rows[0]?.locked === true) {
        deleted = (await client.query(sql.deleteExpired, [batch.expiredBefore, batch.limit])).rowCount ?? 0;
        const room = batch.limit - deleted;
        if (room > 0) {
          const counted = await client.query<{ tasks: string }>(sql.count);
          const excess = Number(counted.rows[0]?.tasks ?? 0) - batch.maxTasks;
          if (excess > 0) {
            deleted += (await client.query(sql.deleteOldestFinished, [Math.min(excess, room)])).rowCount ?? 0;
          }
        }
      }
      await client.query('COMMIT');
      if (deleted > 0) batch.totals.clear();
      return deleted;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  });
}

/**
 * What one parked-TTL batch fails: parked tasks idle since `parkedBefore` (still live at
 * `expiredBefore`), at most `limit`, each replaced by `fail(task)` with `updated_at = nowMs`.
 *
 * @example
 * ```ts
 * const batch: ParkedBatch = { parkedBefore: now - parkedTtlMs, expiredBefore, limit: 1_000, nowMs: now, fail };
 * ```
 */
export interface ParkedBatch {
  readonly parkedBefore: number;
  readonly expiredBefore: number;
  readonly limit: number;
  readonly nowMs: number;
  readonly fail: (task: Task) => Task;
}

/**
 * Fails one batch of parked tasks past their TTL in one transaction (rows another replica is
 * failing or writing are skipped), and returns them as written.
 *
 * @throws StoreUnavailableError if the database is unavailable.
 * @example
 * ```ts
 * for (const { owner, task } of await failParkedOnce(pool, sql, shareSql, batch)) report(owner, task);
 * ```
 */
export async function failParkedOnce(
  pool: Pool,
  sql: Statements,
  shareSql: ShareStatements,
  batch: ParkedBatch,
): Promise<{ owner: string; task: Task }[]> {
  return withPooledClient(pool, async (client) => {
    await client.query('BEGIN');
    try {
      const idle = await parkedIdle(client, shareSql, batch.parkedBefore, batch.expiredBefore, batch.limit);
      const failed = idle.map(({ owner, task }) => ({ owner, task: batch.fail(task) }));
      if (failed.length > 0) {
        const rows = failed.map(({ owner, task }) => pendingRowOf(owner, task, Date.parse(task.status.timestamp)));
        await client.query(sql.putMany, putManyValues(rows, batch.nowMs, batch.expiredBefore));
      }
      await client.query('COMMIT');
      return failed;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  });
}
