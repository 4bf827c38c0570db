/**
 * Group commit for the audit sinks. Rows appended during one event-loop turn are written
 * together, in one write, at the end of the turn; {@link GroupCommit.committed} is the commit
 * point a response waits for, so that no caller hears back before the rows of its request are
 * written (a crash loses no row of an acknowledged task).
 *
 * The end of the turn is `setImmediate`: it runs once the poll phase has handled every socket
 * that was ready, so rows of concurrent requests share one write. A microtask would flush after
 * each request's own I/O callback: one write per request, no grouping.
 *
 * The write itself stays synchronous (`writeSync` in the sink): nothing is appended while a batch
 * is written, so a failed batch is all there is to undo, and no thread-pool hop is paid per batch.
 * The rows are encoded straight into the batch's bytes (`appendRow`), one buffer reused batch
 * after batch.
 *
 * @example
 * ```ts
 * const commit = new GroupCommit((bytes) => writeAll(fd, bytes), (error) => log(error));
 * head = commit.append(head, event);
 * await commit.committed(); // the row is in the file (rejects with the write's AuditWriteError)
 * ```
 */
import { appendRow, type ChainHead } from './chain.js';
import type { AuditEvent } from './events.js';
import { RowBuffer } from './row-buffer.js';
import type { AuditWriteError } from './sink.js';

/** The caller waiting on one batch. */
interface Waiters {
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: AuditWriteError) => void;
}

export class GroupCommit {
  readonly #write: (bytes: Buffer) => void;
  readonly #onError: (error: AuditWriteError, lines: readonly string[]) => void;
  /** The rows of the open batch, encoded. */
  readonly #rows = new RowBuffer();
  /** Made when someone first asks for the open batch's commit point, not per row. */
  #waiters: Waiters | undefined;
  #scheduled = false;
  #batches = 0;
  /** Rows written, in all batches. */
  #written = 0;

  /**
   * @param write writes the batch's bytes (whole rows, each with its newline) in one write, or
   *   throws `AuditWriteError` having undone any part of them that reached the output
   * @param onError told of a batch that failed, with its rows as lines (its waiters are rejected too)
   */
  constructor(write: (bytes: Buffer) => void, onError: (error: AuditWriteError, lines: readonly string[]) => void) {
    this.#write = write;
    this.#onError = onError;
  }

  /** Batches written so far (one write each), and the rows in them. */
  get stats(): { batches: number; rows: number } {
    return { batches: this.#batches, rows: this.#written };
  }

  /** Rows appended and not yet written. */
  get pending(): number {
    return this.#rows.rows;
  }

  /**
   * Adds the row that follows `head` to the open batch, written at the end of this turn.
   * Returns the new head.
   *
   * @throws AuditUnsafeEventError for an unsafe event or a row over `MAX_LINE_BYTES` (nothing added)
   */
  append(head: Readonly<ChainHead>, event: AuditEvent): ChainHead {
    const next = appendRow(this.#rows, head, event);
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(this.#flushScheduled);
    }
    return next;
  }

  /**
   * Undefined when every row appended so far is written; else a promise that settles once the
   * batch holding them is written: resolved, or rejected with the write's `AuditWriteError`.
   * One promise per batch, however many callers wait on it.
   */
  committed(): Promise<void> | undefined {
    if (this.#rows.rows === 0) return undefined;
    if (this.#waiters === undefined) {
      let resolve!: () => void;
      let reject!: (error: AuditWriteError) => void;
      const promise = new Promise<void>((yes, no) => {
        resolve = yes;
        reject = no;
      });
      // A batch nobody waits on may fail too: that is reported through onError, not as an
      // unhandled rejection.
      promise.catch(() => undefined);
      this.#waiters = { promise, resolve, reject };
    }
    return this.#waiters.promise;
  }

  /** Writes the open batch now (close, shutdown). Returns the write's error, if it failed. */
  flush(): AuditWriteError | undefined {
    const rows = this.#rows;
    const waiters = this.#waiters;
    const count = rows.rows;
    if (count === 0) return undefined;
    this.#waiters = undefined;
    try {
      // Synchronous: no row is appended while the batch is written.
      this.#write(rows.bytes());
    } catch (error) {
      const failure = error as AuditWriteError;
      const lines = rows.lines();
      rows.clear();
      waiters?.reject(failure);
      this.#onError(failure, lines);
      return failure;
    }
    rows.clear();
    this.#batches += 1;
    this.#written += count;
    waiters?.resolve();
    return undefined;
  }

  readonly #flushScheduled = (): void => {
    this.#scheduled = false;
    this.flush();
  };
}
