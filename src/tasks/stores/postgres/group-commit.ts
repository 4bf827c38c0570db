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
import { taskJson } from '../../../protocol/model-json.js';
import { isTerminalState, type Task } from '../../../protocol/model.js';
import { ownerConflict } from '../durable.js';
import { principalOfOwner } from '../principal.js';

/**
 * One task's row, as a put hands it over (everything read from the task at put time).
 *
 * @example
 * ```ts
 * const row: PendingRow = { id, owner, contextId, state, terminal: false, statusMs, body: taskJson(task) };
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
 * A task's row as the store writes it, read from the task now (the caller may hand over a new
 * object right after); `statusMs` is its status timestamp, already parsed and checked.
 *
 * @example
 * ```ts
 * const row = pendingRowOf(owner, task, statusMsOf(task, STORE_NAME));
 * ```
 */
export function pendingRowOf(owner: string, task: Task, statusMs: number): PendingRow {
  return {
    id: task.id,
    owner,
    contextId: task.contextId,
    state: task.status.state,
    terminal: isTerminalState(task.status.state),
    statusMs,
    body: taskJson(task),
  };
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
  /** How many of its puts made the task (admitted: counted as unwritten until the batch is over). */
  created: number;
  /** The principal of the put that made it (a later put of the id may name another owner). */
  creator: string;
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
  /**
   * Puts waiting for the next group commit, by task id. A batch takes the whole map when it fits
   * and leaves a new one: a map kept for good, with entries added and deleted all day, has its
   * hash tables rebuilt as it grows and shrinks, and each new table outlives the young generation.
   */
  #pending = new Map<string, PendingWrite>();
  /** Admitted new tasks whose batch is not over yet, by principal (see admitted). */
  readonly #unwritten = new Map<string, number>();
  /** The batch being written, if any: one at a time, so the puts of a task stay in order. */
  #flushing: Promise<void> | undefined;
  #flushScheduled = false;

  constructor(write: WriteRows, storeName: string) {
    this.#write = write;
    this.#storeName = storeName;
  }

  /**
   * Queues a row (`created`: the put that makes the task, admitted with {@link admitted}
   * before); resolves when it is committed, rejects with the write's error or `owner_conflict`.
   */
  enqueue(row: PendingRow, created = false): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const pending = this.#pending.get(row.id);
      const made = created ? 1 : 0;
      const creator = created ? principalOfOwner(row.owner) : '';
      if (pending === undefined) {
        this.#pending.set(row.id, { row, created: made, creator, waiters: [{ resolve, reject }] });
      } else {
        pending.row = row;
        if (created) {
          pending.created += 1;
          pending.creator = creator;
        }
        pending.waiters.push({ resolve, reject });
      }
      this.#scheduleFlush();
    });
  }

  /**
   * A new task of `principal` was admitted to its share: it counts as unwritten until the batch
   * holding its row is over (committed or failed). Called in the same turn as the admission,
   * then {@link enqueue} with `created`.
   */
  admitted(principal: string): void {
    this.#unwritten.set(principal, (this.#unwritten.get(principal) ?? 0) + 1);
  }

  /**
   * Runs a share count of `principal` with no batch in flight and none starting until it ends,
   * handing it the principal's admitted new tasks not yet written: each task is then seen exactly
   * once, in the table or in that number (a batch written while the count reads could be in
   * both, or in neither). The queue waits one count's round trip, once per tenth of a quota.
   *
   * @example
   * ```ts
   * const evicted = await commits.exclusive('client:a', (unwritten) => countAndEvict(unwritten));
   * ```
   */
  async exclusive<T>(principal: string, work: (unwritten: number) => Promise<T>): Promise<T> {
    while (this.#flushing !== undefined) await this.#flushing;
    let release = (): void => undefined;
    this.#flushing = new Promise<void>((resolve) => (release = resolve));
    try {
      return await work(this.#unwritten.get(principal) ?? 0);
    } finally {
      this.#flushing = undefined;
      release();
      if (this.#pending.size > 0) this.#scheduleFlush();
    }
  }

  /** The batch's new tasks are written (or failed): no longer unwritten. */
  #written(batch: readonly PendingWrite[]): void {
    for (const pending of batch) {
      if (pending.created === 0) continue;
      const principal = pending.creator;
      const left = (this.#unwritten.get(principal) ?? 0) - pending.created;
      if (left > 0) this.#unwritten.set(principal, left);
      else this.#unwritten.delete(principal);
    }
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
      // A share count holds the queue (see exclusive); it schedules the flush when it is done.
      if (this.#flushing !== undefined) return;
      this.#flushing = this.#flush().finally(() => {
        this.#flushing = undefined;
        if (this.#pending.size > 0) this.#scheduleFlush();
      });
    });
  }

  /** Writes up to MAX_BATCH_ROWS pending rows in one statement and settles their puts. */
  async #flush(): Promise<void> {
    let batch: PendingWrite[];
    if (this.#pending.size <= MAX_BATCH_ROWS) {
      batch = [...this.#pending.values()];
      this.#pending = new Map();
    } else {
      batch = [];
      for (const [id, pending] of this.#pending) {
        batch.push(pending);
        this.#pending.delete(id);
        if (batch.length === MAX_BATCH_ROWS) break;
      }
    }
    if (batch.length === 0) return;
    let written: ReadonlySet<string>;
    try {
      written = await this.#write(batch.map((pending) => pending.row));
    } catch (error) {
      this.#written(batch);
      for (const pending of batch) for (const waiter of pending.waiters) waiter.reject(error);
      return;
    }
    this.#written(batch);
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
