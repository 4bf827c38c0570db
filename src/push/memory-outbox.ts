/**
 * A {@link PushOutbox} in memory, over a {@link MemoryPushConfigs}: the same behaviour as the
 * database outboxes (the contract suite runs on all three), for one process and nothing that
 * survives it. Every method does its work in one synchronous step, so it is atomic.
 *
 * @example
 * ```ts
 * const configs = new MemoryPushConfigs();
 * const outbox = new MemoryPushOutbox(configs);
 * await outbox.enqueue({ taskId: 't-1', event: '{}', final: false }, Date.now(), 256);
 * ```
 */
import type { PushEventInput, PushOutbox, PushOutboxRow } from '../tasks/stores/push-outbox.js';
import type { MemoryPushConfigs } from './memory.js';

/** A stored row: what a claim hands out, plus when it is due and who holds it. */
type Row = Omit<PushOutboxRow, 'attempts' | 'record'> & {
  attempts: number;
  nextAttemptAt: number;
  claimedBy?: string;
  claimedUntil: number;
};

/**
 * In-memory outbox (see the module comment).
 *
 * @example
 * ```ts
 * const rows = await new MemoryPushOutbox(configs).claim('me', Date.now(), 20_000, 16);
 * ```
 */
export class MemoryPushOutbox implements PushOutbox {
  readonly #configs: MemoryPushConfigs;
  /** taskId → its rows, oldest first. */
  readonly #byTask = new Map<string, Row[]>();
  #nextId = 1;

  constructor(configs: MemoryPushConfigs) {
    this.#configs = configs;
  }

  enqueue(input: PushEventInput, now: number, maxEventsPerConfig: number): Promise<number | 'full'> {
    const configs = this.#configs.forTaskNow(input.taskId);
    if (configs.length === 0) return Promise.resolve(0);
    const rows = this.#byTask.get(input.taskId) ?? [];
    if (rows.length >= maxEventsPerConfig * configs.length) return Promise.resolve('full');
    for (const record of configs) rows.push(this.#row(input.taskId, record.config.id, record, input, now));
    this.#byTask.set(input.taskId, rows);
    return Promise.resolve(configs.length);
  }

  enqueueFinal(taskId: string, configId: string, event: string, now: number): Promise<boolean> {
    const record = this.#configs.forTaskNow(taskId).find((r) => r.config.id === configId);
    const rows = this.#byTask.get(taskId) ?? [];
    if (record === undefined || rows.some((row) => row.configId === configId && row.final)) {
      return Promise.resolve(false);
    }
    rows.push(this.#row(taskId, configId, record, { taskId, event, final: true }, now));
    this.#byTask.set(taskId, rows);
    return Promise.resolve(true);
  }

  claim(claimant: string, now: number, leaseMs: number, limit: number): Promise<PushOutboxRow[]> {
    const heads = [...this.#byTask.values()]
      .map((rows) => rows[0])
      .filter((row): row is Row => row !== undefined && row.nextAttemptAt <= now && row.claimedUntil <= now)
      .sort((a, b) => a.id - b.id)
      .slice(0, limit);
    return Promise.resolve(
      heads.map((row) => {
        row.claimedBy = claimant;
        row.claimedUntil = now + leaseMs;
        const record = this.#configs.forTaskNow(row.taskId).find((r) => r.config.id === row.configId);
        return {
          id: row.id,
          taskId: row.taskId,
          configId: row.configId,
          agent: row.agent,
          ...(row.client !== undefined && { client: row.client }),
          event: row.event,
          final: row.final,
          attempts: row.attempts,
          ...(record !== undefined && { record }),
        };
      }),
    );
  }

  async finish(id: number, claimant: string): Promise<void> {
    const found = this.#find(id, claimant);
    if (found === undefined) return;
    const { rows, index, row } = found;
    rows.splice(index, 1);
    if (rows.length === 0) this.#byTask.delete(row.taskId);
    // The task's last event is out and nothing of it is left: its configs go with it.
    if (row.final && rows.length === 0) await this.#configs.dropTask(row.taskId);
  }

  retry(id: number, claimant: string, nextAttemptAt: number): Promise<void> {
    const row = this.#find(id, claimant)?.row;
    if (row !== undefined) {
      row.attempts += 1;
      row.nextAttemptAt = nextAttemptAt;
      delete row.claimedBy;
      row.claimedUntil = 0;
    }
    return Promise.resolve();
  }

  pending(taskId: string): Promise<number> {
    return Promise.resolve(this.#byTask.get(taskId)?.length ?? 0);
  }

  #row(
    taskId: string,
    configId: string,
    record: { agent?: string; client?: string },
    input: PushEventInput,
    now: number,
  ): Row {
    return {
      id: this.#nextId++,
      taskId,
      configId,
      agent: record.agent ?? '-',
      ...(record.client !== undefined && { client: record.client }),
      event: input.event,
      final: input.final,
      attempts: 0,
      nextAttemptAt: now,
      claimedUntil: 0,
    };
  }

  #find(id: number, claimant: string): { rows: Row[]; index: number; row: Row } | undefined {
    for (const rows of this.#byTask.values()) {
      const index = rows.findIndex((row) => row.id === id);
      const row = rows[index];
      if (row !== undefined) return row.claimedBy === claimant ? { rows, index, row } : undefined;
    }
    return undefined;
  }
}
