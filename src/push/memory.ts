/**
 * Push-config records in memory: the store for `store.type: memory` (one process). Caps are
 * checked and the record written in one synchronous step, so concurrent creates cannot both
 * pass a cap.
 *
 * @example
 * ```ts
 * const records = new MemoryPushConfigs();
 * await records.put({ owner: 'client:ci::ci', dialect: '1.0', createdAt: Date.now(), config }, caps);
 * ```
 */
import type {
  PushConfigCaps,
  PushConfigRecord,
  PushConfigRecords,
  PushPutOutcome,
} from '../tasks/stores/push-records.js';

/**
 * In-memory {@link PushConfigRecords}.
 *
 * @example
 * ```ts
 * const records: PushConfigRecords = new MemoryPushConfigs();
 * ```
 */
export class MemoryPushConfigs implements PushConfigRecords {
  /** taskId → config id → record, in insertion order (oldest first). */
  readonly #byTask = new Map<string, Map<string, PushConfigRecord>>();
  /** owner → how many configs it holds. */
  readonly #perOwner = new Map<string, number>();

  put(record: PushConfigRecord, caps: PushConfigCaps): Promise<PushPutOutcome> {
    const { taskId, id } = record.config;
    let configs = this.#byTask.get(taskId);
    const existing = configs?.get(id);
    if (existing !== undefined && existing.owner !== record.owner) {
      // Another principal's id on a task: ownership is checked above us, so this is a clash of
      // ids, never a takeover; refuse as if the task had no room.
      return Promise.resolve('per-task-cap');
    }
    if (existing === undefined) {
      if ((configs?.size ?? 0) >= caps.perTask) return Promise.resolve('per-task-cap');
      if ((this.#perOwner.get(record.owner) ?? 0) >= caps.perPrincipal) return Promise.resolve('per-principal-cap');
    }
    if (configs === undefined) {
      configs = new Map();
      this.#byTask.set(taskId, configs);
    }
    configs.set(id, existing === undefined ? record : { ...record, createdAt: existing.createdAt });
    if (existing === undefined) this.#perOwner.set(record.owner, (this.#perOwner.get(record.owner) ?? 0) + 1);
    return Promise.resolve('stored');
  }

  get(taskId: string, owner: string, id: string): Promise<PushConfigRecord | undefined> {
    const record = this.#byTask.get(taskId)?.get(id);
    return Promise.resolve(record?.owner === owner ? record : undefined);
  }

  list(taskId: string, owner: string): Promise<PushConfigRecord[]> {
    const configs = this.#byTask.get(taskId);
    return Promise.resolve(configs === undefined ? [] : [...configs.values()].filter((r) => r.owner === owner));
  }

  delete(taskId: string, owner: string, id: string): Promise<boolean> {
    const configs = this.#byTask.get(taskId);
    const record = configs?.get(id);
    if (configs === undefined || record?.owner !== owner) return Promise.resolve(false);
    configs.delete(id);
    if (configs.size === 0) this.#byTask.delete(taskId);
    this.#release(owner, 1);
    return Promise.resolve(true);
  }

  forTask(taskId: string): Promise<PushConfigRecord[]> {
    const configs = this.#byTask.get(taskId);
    return Promise.resolve(configs === undefined ? [] : [...configs.values()]);
  }

  /** Every config of the task, synchronously (the memory outbox reads them in its own step). */
  forTaskNow(taskId: string): PushConfigRecord[] {
    const configs = this.#byTask.get(taskId);
    return configs === undefined ? [] : [...configs.values()];
  }

  dropTask(taskId: string): Promise<void> {
    const configs = this.#byTask.get(taskId);
    if (configs !== undefined) {
      for (const record of configs.values()) this.#release(record.owner, 1);
      this.#byTask.delete(taskId);
    }
    return Promise.resolve();
  }

  #release(owner: string, count: number): void {
    const left = (this.#perOwner.get(owner) ?? 0) - count;
    if (left > 0) this.#perOwner.set(owner, left);
    else this.#perOwner.delete(owner);
  }
}
