/**
 * The PostgreSQL store's push configs and outbox (`push_configs`, `push_outbox`, migration 4),
 * shared by every replica. A config's cap checks and insert run in one transaction under
 * advisory locks on its owner, then its task (always in that order: no deadlock), so two
 * replicas cannot both slip under a cap. Outbox rows are claimed with `FOR UPDATE SKIP LOCKED`
 * and a lease (`claimed_by`, `claimed_until`): of two replicas polling at once, one gets a row;
 * a replica that dies mid-delivery leaves a lease that expires, and another replica retries.
 *
 * @example
 * ```ts
 * const push = postgresPush(pool, '"airlock"'); // { configs, outbox }
 * const rows = await push.outbox.claim('replica-a', Date.now(), 20_000, 16);
 * ```
 */
import type { Pool, QueryResultRow } from 'pg';
import {
  outboxRowOf,
  pushBodyOf,
  pushRecordOf,
  type DurablePush,
  type OutboxRow,
  type PushConfigRow,
  type PushEventInput,
  type PushOutbox,
  type PushOutboxRow,
} from '../push-outbox.js';
import type { PushConfigCaps, PushConfigRecord, PushConfigRecords, PushPutOutcome } from '../push-records.js';
import { withPooledClient } from './connection.js';
import { asStoreError } from './errors.js';

const CONFIG_COLUMNS = 'owner, dialect, created_at, body';

/**
 * The push configs and outbox of one PostgreSQL schema (`schema` already quoted).
 *
 * @example
 * ```ts
 * const { configs, outbox } = postgresPush(pool, quoteIdentifier('airlock'));
 * ```
 */
export function postgresPush(pool: Pool, schema: string): DurablePush {
  const query = async <R extends QueryResultRow>(text: string, values: unknown[]): Promise<R[]> => {
    try {
      return (await pool.query<R>(text, values)).rows;
    } catch (error) {
      throw asStoreError(error);
    }
  };
  return {
    configs: new PostgresPushConfigs(pool, schema, query),
    outbox: new PostgresPushOutbox(schema, query),
  };
}

type Query = <R extends QueryResultRow>(text: string, values: unknown[]) => Promise<R[]>;

class PostgresPushConfigs implements PushConfigRecords {
  readonly #pool: Pool;
  readonly #table: string;
  readonly #query: Query;

  constructor(pool: Pool, schema: string, query: Query) {
    this.#pool = pool;
    this.#table = `${schema}.push_configs`;
    this.#query = query;
  }

  async put(record: PushConfigRecord, caps: PushConfigCaps): Promise<PushPutOutcome> {
    const table = this.#table;
    const { taskId, id } = record.config;
    return withPooledClient(this.#pool, async (client) => {
      await client.query('BEGIN');
      try {
        await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 7411))', [record.owner]);
        await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 7412))', [taskId]);
        const counts = await client.query<{ owner: string | null; task: string; mine: string }>(
          `SELECT (SELECT owner FROM ${table} WHERE task_id = $1 AND config_id = $2) AS owner,
                  (SELECT count(*) FROM ${table} WHERE task_id = $1) AS task,
                  (SELECT count(*) FROM ${table} WHERE owner = $3) AS mine`,
          [taskId, id, record.owner],
        );
        const row = counts.rows[0];
        const owner = row?.owner ?? undefined;
        const refusal: PushPutOutcome | undefined =
          owner !== undefined
            ? owner === record.owner
              ? undefined
              : 'per-task-cap'
            : Number(row?.task ?? 0) >= caps.perTask
              ? 'per-task-cap'
              : Number(row?.mine ?? 0) >= caps.perPrincipal
                ? 'per-principal-cap'
                : undefined;
        if (refusal !== undefined) {
          await client.query('ROLLBACK');
          return refusal;
        }
        await client.query(
          `INSERT INTO ${table} (task_id, config_id, owner, dialect, created_at, body) VALUES ($1, $2, $3, $4, $5, $6)
           ON CONFLICT (task_id, config_id) DO UPDATE SET dialect = excluded.dialect, body = excluded.body`,
          [taskId, id, record.owner, record.dialect, record.createdAt, pushBodyOf(record)],
        );
        await client.query('COMMIT');
        return 'stored';
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    });
  }

  async get(taskId: string, owner: string, id: string): Promise<PushConfigRecord | undefined> {
    const rows = await this.#query<PushConfigRow>(
      `SELECT ${CONFIG_COLUMNS} FROM ${this.#table} WHERE task_id = $1 AND owner = $2 AND config_id = $3`,
      [taskId, owner, id],
    );
    return rows[0] === undefined ? undefined : pushRecordOf(rows[0]);
  }

  async list(taskId: string, owner: string): Promise<PushConfigRecord[]> {
    const rows = await this.#query<PushConfigRow>(
      `SELECT ${CONFIG_COLUMNS} FROM ${this.#table} WHERE task_id = $1 AND owner = $2 ORDER BY created_at, config_id`,
      [taskId, owner],
    );
    return rows.map(pushRecordOf);
  }

  async delete(taskId: string, owner: string, id: string): Promise<boolean> {
    const rows = await this.#query(
      `DELETE FROM ${this.#table} WHERE task_id = $1 AND owner = $2 AND config_id = $3 RETURNING 1`,
      [taskId, owner, id],
    );
    return rows.length > 0;
  }

  async forTask(taskId: string): Promise<PushConfigRecord[]> {
    const rows = await this.#query<PushConfigRow>(
      `SELECT ${CONFIG_COLUMNS} FROM ${this.#table} WHERE task_id = $1 ORDER BY created_at, config_id`,
      [taskId],
    );
    return rows.map(pushRecordOf);
  }

  async dropTask(taskId: string): Promise<void> {
    await this.#query(`DELETE FROM ${this.#table} WHERE task_id = $1`, [taskId]);
  }
}

class PostgresPushOutbox implements PushOutbox {
  readonly #outbox: string;
  readonly #configs: string;
  readonly #query: Query;

  constructor(schema: string, query: Query) {
    this.#outbox = `${schema}.push_outbox`;
    this.#configs = `${schema}.push_configs`;
    this.#query = query;
  }

  /** The fan-out of one event: a row per config of the task (or the one config named). */
  #fanOut(where: string): string {
    return `INSERT INTO ${this.#outbox} (task_id, config_id, agent, client, event, final, next_attempt_at, created_at)
      SELECT task_id, config_id, coalesce((body::json)->>'agent', '-'), (body::json)->>'client', $2::text, $3::boolean, $4::bigint, $4::bigint
      FROM ${this.#configs} c WHERE task_id = $1 AND ${where}
      ORDER BY created_at, config_id RETURNING 1`;
  }

  async enqueue(input: PushEventInput, now: number, maxEventsPerConfig: number): Promise<number | 'full'> {
    // One statement: the bound and the fan-out see the same snapshot. A task's events come from
    // the one replica running it, in turn, so the bound is not raced.
    const rows = await this.#query<{ written: string; full: boolean }>(
      `WITH waiting AS (
         SELECT (SELECT count(*) FROM ${this.#outbox} WHERE task_id = $1) AS n,
                (SELECT count(*) FROM ${this.#configs} WHERE task_id = $1) AS configs),
       written AS (${this.#fanOut('(SELECT n < $5 * configs FROM waiting)')})
       SELECT (SELECT count(*) FROM written) AS written,
              (SELECT configs > 0 AND n >= $5 * configs FROM waiting) AS full`,
      [input.taskId, input.event, input.final, now, maxEventsPerConfig],
    );
    const row = rows[0];
    if (row?.full === true) return 'full';
    return Number(row?.written ?? 0);
  }

  async enqueueFinal(taskId: string, configId: string, event: string, now: number): Promise<boolean> {
    const rows = await this.#query(
      this.#fanOut(
        `config_id = $5 AND NOT EXISTS (SELECT 1 FROM ${this.#outbox} o WHERE o.task_id = $1 AND o.config_id = $5 AND o.final)`,
      ),
      [taskId, event, true, now, configId],
    );
    return rows.length > 0;
  }

  async claim(claimant: string, now: number, leaseMs: number, limit: number): Promise<PushOutboxRow[]> {
    // A row whose claim another replica committed meanwhile is re-checked when it is locked
    // (claimed_until is then in the future) or skipped while that replica still holds it.
    const rows = await this.#query<OutboxRow>(
      `WITH claimed AS (
         UPDATE ${this.#outbox} o SET claimed_by = $1, claimed_until = $2::bigint + $3::bigint
         WHERE o.id IN (
           SELECT h.id FROM ${this.#outbox} h
           WHERE h.next_attempt_at <= $2 AND h.claimed_until <= $2
             AND NOT EXISTS (SELECT 1 FROM ${this.#outbox} e WHERE e.task_id = h.task_id AND e.id < h.id)
           ORDER BY h.id LIMIT $4
           FOR UPDATE SKIP LOCKED)
         RETURNING o.id, o.task_id, o.config_id, o.agent, o.client, o.event, o.final, o.attempts)
       SELECT claimed.*, c.owner, c.dialect, c.created_at, c.body
       FROM claimed LEFT JOIN ${this.#configs} c ON c.task_id = claimed.task_id AND c.config_id = claimed.config_id
       ORDER BY claimed.id`,
      [claimant, now, leaseMs, limit],
    );
    return rows.map(outboxRowOf);
  }

  async finish(id: number, claimant: string): Promise<void> {
    // The statement sees the outbox as it was before its own DELETE, hence `id <> $1`.
    await this.#query(
      `WITH gone AS (DELETE FROM ${this.#outbox} WHERE id = $1 AND claimed_by = $2 RETURNING task_id, final)
       DELETE FROM ${this.#configs}
       WHERE task_id = (SELECT task_id FROM gone WHERE final)
         AND NOT EXISTS (SELECT 1 FROM ${this.#outbox} o WHERE o.task_id = (SELECT task_id FROM gone) AND o.id <> $1)`,
      [id, claimant],
    );
  }

  async retry(id: number, claimant: string, nextAttemptAt: number): Promise<void> {
    await this.#query(
      `UPDATE ${this.#outbox} SET attempts = attempts + 1, next_attempt_at = $3, claimed_by = NULL, claimed_until = 0
       WHERE id = $1 AND claimed_by = $2`,
      [id, claimant, nextAttemptAt],
    );
  }

  async pending(taskId: string): Promise<number> {
    const rows = await this.#query<{ n: string }>(`SELECT count(*) AS n FROM ${this.#outbox} WHERE task_id = $1`, [
      taskId,
    ]);
    return Number(rows[0]?.n ?? 0);
  }
}
