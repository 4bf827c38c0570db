/**
 * The push outbox: the webhook deliveries a durable store still owes, one row per (event,
 * config). The push layer (`src/push/outbox-delivery.ts`) appends each event a task publishes
 * here, fanned out to the task's configs in one write, then claims due rows, POSTs them and
 * removes or reschedules them. Rows outlive the process: a restart loses no event that was
 * written here, and replicas sharing PostgreSQL claim rows under a lease, so one delivers each.
 *
 * Order: a row is claimed only when it is the oldest row of its task (no earlier row of the
 * task is pending, claimed or waiting for a retry), so a task's events reach its webhooks in
 * the order they were published, one at a time.
 *
 * @example
 * ```ts
 * await outbox.enqueue({ taskId, event: JSON.stringify(event), final: false }, Date.now(), 256);
 * for (const row of await outbox.claim('replica-a', Date.now(), 20_000, 16)) await outbox.finish(row.id, 'replica-a');
 * ```
 */
import type { PushConfigRecord, PushConfigRecords } from './push-records.js';

/**
 * One event to append for every config its task has now.
 *
 * @example
 * ```ts
 * const input: PushEventInput = { taskId: 't-1', event: JSON.stringify(event), final: true };
 * ```
 */
export interface PushEventInput {
  readonly taskId: string;
  /** The canonical `StreamEvent` as JSON (encoded in each config's dialect at delivery). */
  readonly event: string;
  /** The task's last event: once its rows are all done, the task's configs are dropped too. */
  readonly final: boolean;
}

/**
 * A claimed row, with the config it is for as stored now (undefined: deleted since; the row is
 * then finished without a request).
 *
 * @example
 * ```ts
 * const row: PushOutboxRow = { id: 1, taskId: 't-1', configId: 'c-1', agent: 'echo', event, final: false, attempts: 0 };
 * ```
 */
export interface PushOutboxRow {
  readonly id: number;
  readonly taskId: string;
  readonly configId: string;
  readonly agent: string;
  readonly client?: string;
  readonly event: string;
  readonly final: boolean;
  /** Attempts already made (0 on the first claim). */
  readonly attempts: number;
  readonly record?: PushConfigRecord;
}

/**
 * The outbox of one store (see the module comment). Times are epoch milliseconds.
 *
 * @example
 * ```ts
 * const written = await outbox.enqueue(input, Date.now(), 256); // rows written, or 'full'
 * ```
 */
export interface PushOutbox {
  /**
   * One row per config of the task, in one write; returns the rows written (0: no config), or
   * 'full' when the task already has `maxEventsPerConfig` events waiting per config. SQLite
   * writes before the returned promise is made: a caller that does not wait is still in order.
   */
  enqueue(input: PushEventInput, now: number, maxEventsPerConfig: number): Promise<number | 'full'>;
  /**
   * For a config stored after its task ended: one row for that config alone, unless it already
   * has its task's final event waiting, or it is gone (the final event was delivered and the
   * task's configs dropped). Returns whether a row was written.
   */
  enqueueFinal(taskId: string, configId: string, event: string, now: number): Promise<boolean>;
  /** Claims up to `limit` due rows, each the oldest of its task, for `claimant` until `now + leaseMs`. */
  claim(claimant: string, now: number, leaseMs: number, limit: number): Promise<PushOutboxRow[]>;
  /** Removes a row `claimant` holds (delivered, failed for good, refused, or its config gone). */
  finish(id: number, claimant: string): Promise<void>;
  /** Gives a claimed row back, one attempt more, due at `nextAttemptAt`. */
  retry(id: number, claimant: string, nextAttemptAt: number): Promise<void>;
  /** Rows waiting for the task (tests, metrics). */
  pending(taskId: string): Promise<number>;
}

/**
 * What a durable store offers push: its config records and its outbox, in one database.
 *
 * @example
 * ```ts
 * if (store.push !== undefined) openPush(settings, { ...parts, records: store.push.configs, outbox: store.push.outbox });
 * ```
 */
export interface DurablePush {
  readonly configs: PushConfigRecords;
  readonly outbox: PushOutbox;
}

/**
 * The stored form of a config (`push_configs.body`): the config and who made it.
 *
 * @example
 * ```ts
 * const body = pushBodyOf(record); // '{"config":{…},"agent":"echo"}'
 * ```
 */
export function pushBodyOf(record: PushConfigRecord): string {
  return JSON.stringify({
    config: record.config,
    ...(record.agent !== undefined && { agent: record.agent }),
    ...(record.client !== undefined && { client: record.client }),
  });
}

/**
 * A `push_configs` row as read back.
 *
 * @example
 * ```ts
 * const row: PushConfigRow = { owner: 'client:ci::ci', dialect: '1.0', created_at: 1, body: '{"config":{}}' };
 * ```
 */
export interface PushConfigRow {
  owner: string;
  dialect: string;
  created_at: number | string;
  body: string;
}

/**
 * The record a `push_configs` row stands for.
 *
 * @example
 * ```ts
 * const record = pushRecordOf(row);
 * ```
 */
export function pushRecordOf(row: PushConfigRow): PushConfigRecord {
  const body = JSON.parse(row.body) as { config: PushConfigRecord['config']; agent?: string; client?: string };
  return {
    owner: row.owner,
    dialect: row.dialect === '0.3' ? '0.3' : '1.0',
    createdAt: Number(row.created_at),
    config: body.config,
    ...(body.agent !== undefined && { agent: body.agent }),
    ...(body.client !== undefined && { client: body.client }),
  };
}

/**
 * An outbox row joined with its config, as both databases return it.
 *
 * @example
 * ```ts
 * const row: OutboxRow = { id: 1, task_id: 't', config_id: 'c', agent: 'echo', client: null, event: '{}', final: 0, attempts: 0, owner: null, dialect: null, created_at: null, body: null };
 * ```
 */
export interface OutboxRow {
  id: number | string;
  task_id: string;
  config_id: string;
  agent: string;
  client: string | null;
  event: string;
  final: number | boolean;
  attempts: number;
  owner: string | null;
  dialect: string | null;
  created_at: number | string | null;
  body: string | null;
}

/**
 * A joined outbox row as the port's row (the config as stored now, if still there).
 *
 * @example
 * ```ts
 * const claimed = rows.map(outboxRowOf);
 * ```
 */
export function outboxRowOf(row: OutboxRow): PushOutboxRow {
  const record =
    row.owner === null || row.dialect === null || row.created_at === null || row.body === null
      ? undefined
      : pushRecordOf({ owner: row.owner, dialect: row.dialect, created_at: row.created_at, body: row.body });
  return {
    id: Number(row.id),
    taskId: row.task_id,
    configId: row.config_id,
    agent: row.agent,
    ...(row.client !== null && { client: row.client }),
    event: row.event,
    final: row.final === 1 || row.final === true,
    attempts: Number(row.attempts),
    ...(record !== undefined && { record }),
  };
}
