/**
 * The PostgreSQL store's group commit: the puts that arrive while a batch is being written go
 * out together in the next one (one statement, one commit). One batch at a time keeps the puts
 * of a task in order; a task put twice before its batch leaves is written once, with its newest
 * state, and both puts hear the outcome.
 *
 * @example
 * ```ts
 * const commits = new GroupCommit(async (rows) => new Set(await upsert(rows)), 'PostgresTaskStore');
 * await commits.enqueue(row); // resolves once the row is committed
 * await commits.drain();      // on close: every accepted put lands
 * ```
 */
import { ownerConflict } from '../durable.js';

/**
 * One task's row, as a put hands it over (everything read from the task at put time).
 *
 * @example
 * ```ts
 * const row: PendingRow = { id, owner, contextId, state, terminal: false, statusMs, body: JSON.stringify(task) };
 * ```
 */
export interface PendingRow {
  id: string;
  owner: string;
  contextId: string;
  state: string;
  terminal: boolean;
  statusMs: number;
  body: string;
}

/**
 * Writes one batch (at most one row per id) and returns the ids it wrote; a row left out is
 * another owner's live task.
 *
 * @example
 * ```ts
 * const write: WriteRows = async (rows) => new Set((await query(sql.putMany, columnsOf(rows))).rows.map((r) => r.id));
 * ```
 */
export type WriteRows = (rows: readonly PendingRow[]) => Promise<ReadonlySet<string>>;

/** A row waiting for the group commit, and every put it answers. */
interface PendingWrite {
  row: PendingRow;
  waiters: Array<{ resolve: () => void; reject: (error: unknown) => void }>;
}

/** Most rows in one group-commit statement. */
const MAX_BATCH_ROWS = 500;

/**
 * The queue of puts and the one batch in flight.
 *
 * @example
 * ```ts
 * const commits = new GroupCommit(writeRows, STORE_NAME);
 * ```
 */
export class GroupCommit {
  readonly #write: WriteRows;
  readonly #storeName: string;
  /** Puts waiting for the next group commit, by task id. */
  readonly #pending = new Map<string, PendingWrite>();
  /** The batch being written, if any: one at a time, so the puts of a task stay in order. */
  #flushing: Promise<void> | undefined;
  #flushScheduled = false;

  constructor(write: WriteRows, storeName: string) {
    this.#write = write;
    this.#storeName = storeName;
  }

  /** Queues a row; resolves when it is committed, rejects with the write's error or `owner_conflict`. */
  enqueue(row: PendingRow): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const pending = this.#pending.get(row.id);
      if (pending === undefined) this.#pending.set(row.id, { row, waiters: [{ resolve, reject }] });
      else {
        pending.row = row;
        pending.waiters.push({ resolve, reject });
      }
      this.#scheduleFlush();
    });
  }

  /** Writes until nothing is queued or in flight (close: puts already accepted were promised a write). */
  async drain(): Promise<void> {
    while (this.#flushing !== undefined || this.#pending.size > 0) {
      if (this.#flushing === undefined) this.#flushing = this.#flush().finally(() => (this.#flushing = undefined));
      await this.#flushing;
    }
  }

  #scheduleFlush(): void {
    if (this.#flushing !== undefined || this.#flushScheduled) return;
    this.#flushScheduled = true;
    setImmediate(() => {
      this.#flushScheduled = false;
      this.#flushing = this.#flush().finally(() => {
        this.#flushing = undefined;
        if (this.#pending.size > 0) this.#scheduleFlush();
      });
    });
  }

  /** Writes up to MAX_BATCH_ROWS pending rows in one statement and settles their puts. */
  async #flush(): Promise<void> {
    const batch: PendingWrite[] = [];
    for (const [id, pending] of this.#pending) {
      batch.push(pending);
      this.#pending.delete(id);
      if (batch.length === MAX_BATCH_ROWS) break;
    }
    if (batch.length === 0) return;
    let written: ReadonlySet<string>;
    try {
      written = await this.#write(batch.map((pending) => pending.row));
    } catch (error) {
      for (const pending of batch) for (const waiter of pending.waiters) waiter.reject(error);
      return;
    }
    for (const pending of batch) {
      if (written.has(pending.row.id)) {
        for (const waiter of pending.waiters) waiter.resolve();
      } else {
        const conflict = ownerConflict(this.#storeName);
        for (const waiter of pending.waiters) waiter.reject(conflict);
      }
    }
  }
}
