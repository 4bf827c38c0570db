/**
 * Push-notification configs as a store keeps them: one record per (task, config id), owned by
 * the principal that made it. The push layer (`src/push/`) owns what a record means (which URLs
 * are allowed, who may read it); the store keeps records and enforces the caps atomically, so
 * that two concurrent creates cannot both slip under a cap.
 *
 * @example
 * ```ts
 * const outcome = await records.put(record, { perTask: 10, perPrincipal: 100 });
 * if (outcome !== 'stored') throw capError(outcome);
 * ```
 */
import type { TaskPushConfig } from '../../protocol/model.js';

/**
 * One stored config. `dialect` is the A2A version it was created in: its webhook requests are
 * encoded in that version.
 *
 * @example
 * ```ts
 * const record: PushConfigRecord = { owner: 'client:ci::ci', dialect: '1.0', createdAt: Date.now(), config };
 * ```
 */
export interface PushConfigRecord {
  /** The principal key of the caller that created it. */
  readonly owner: string;
  readonly dialect: '1.0' | '0.3';
  /** Epoch milliseconds of the first create (a replace keeps it: list order is stable). */
  readonly createdAt: number;
  readonly config: TaskPushConfig;
  /** The agent and client the config was made at, for delivery's audit rows (durable stores keep them). */
  readonly agent?: string;
  readonly client?: string;
}

/**
 * The caps applied by {@link PushConfigRecords.put}: a replace of an existing id never counts twice.
 *
 * @example
 * ```ts
 * const caps: PushConfigCaps = { perTask: 10, perPrincipal: 100 };
 * ```
 */
export interface PushConfigCaps {
  perTask: number;
  perPrincipal: number;
}

/**
 * What a put did: stored (created or replaced), or refused by a cap.
 *
 * @example
 * ```ts
 * const outcome: PushPutOutcome = 'per-task-cap';
 * ```
 */
export type PushPutOutcome = 'stored' | 'per-task-cap' | 'per-principal-cap';

/**
 * The push-config records of one store. Every read and write is scoped to an owner: another
 * principal's config is never found.
 *
 * @example
 * ```ts
 * const mine = await records.list('task-1', 'client:ci::ci'); // oldest first
 * ```
 */
export interface PushConfigRecords {
  /** Creates, or replaces the owner's config with the same task and id; caps checked atomically. */
  put(record: PushConfigRecord, caps: PushConfigCaps): Promise<PushPutOutcome>;
  /** The owner's config `id` of the task, or undefined. */
  get(taskId: string, owner: string, id: string): Promise<PushConfigRecord | undefined>;
  /** The owner's configs of the task, oldest first. */
  list(taskId: string, owner: string): Promise<PushConfigRecord[]>;
  /** Removes the owner's config; false when there was none. */
  delete(taskId: string, owner: string, id: string): Promise<boolean>;
  /** Every config of the task, whoever made it (delivery reads them), oldest first. */
  forTask(taskId: string): Promise<PushConfigRecord[]>;
  /** Drops every config of the task (the task is gone). */
  dropTask(taskId: string): Promise<void>;
}
