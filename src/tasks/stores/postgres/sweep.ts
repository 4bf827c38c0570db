/**
 * The PostgreSQL store's retention batch, in one transaction: expired rows first (oldest first),
 * then, while the table holds more than `maxTasks`, the least recently updated finished ones.
 * Only one replica sweeps at a time (a transaction-scoped advisory lock; the others delete
 * nothing), and rows being written are skipped, not waited for.
 *
 * @example
 * ```ts
 * const deleted = await sweepOnce(pool, sql, { schema: 'public', expiredBefore, limit: 1_000, maxTasks: 10_000, totals });
 * ```
 */
import type { Pool } from 'pg';
import type { TotalSizeCache } from '../durable.js';
import { withPooledClient } from './connection.js';
import type { Statements } from './statements.js';

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
