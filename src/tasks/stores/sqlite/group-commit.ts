/**
 * The SQLite store's group commit: the puts of one event-loop turn share one transaction, so one
 * fsync (with synchronous=FULL) makes them all durable. Each caller still hears only once its
 * own row is on disk, and the loop is blocked once per batch instead of once per put.
 *
 * @example
 * ```ts
 * const commits = new SqliteGroupCommit({ isOpen, writeBatch, writeOne, changed: (owner) => totals.changed(owner) });
 * await commits.enqueue(owner, params);
 * commits.flush(); // on close: queued puts land before the database closes
 * ```
 */
import { ownerConflict } from '../durable.js';
import { StoreUnavailableError } from '../errors.js';
import { principalOfOwner } from '../principal.js';
import { STORE_NAME } from './database.js';

type UpsertParams = Record<string, string | number>;

/**
 * What the group commit writes with; the writes are already guarded (see `guard`).
 *
 * @example
 * ```ts
 * const writer: SqliteRowWriter = { isOpen: () => db.open, writeBatch, writeOne, changed };
 * ```
 */
export interface SqliteRowWriter {
  readonly isOpen: () => boolean;
  /** Every row in one transaction; the changes of each (0: another owner's live task). */
  readonly writeBatch: (params: UpsertParams[]) => number[];
  /** One row alone; its changes. */
  readonly writeOne: (params: UpsertParams) => number;
  /** The owner's counted totals are stale. */
  readonly changed: (owner: string) => void;
}

/** A put waiting for the group commit. */
interface PendingPut {
  owner: string;
  params: UpsertParams;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * The puts queued in this turn.
 *
 * @example
 * ```ts
 * const commits = new SqliteGroupCommit(writer);
 * ```
 */
export class SqliteGroupCommit {
  readonly #writer: SqliteRowWriter;
  #pending: PendingPut[] = [];
  /** New tasks queued (a put with `created: 1`), by principal: not in the file yet. */
  readonly #created = new Map<string, number>();

  constructor(writer: SqliteRowWriter) {
    this.#writer = writer;
  }

  /**
   * New tasks of `principal` queued for this turn's transaction: a share count reads the file,
   * which holds them only once the batch is written, so it adds these (else a burst at the quota
   * would be counted again every few creations, and admitted past it).
   */
  createdPending(principal: string): number {
    return this.#created.get(principal) ?? 0;
  }

  /** Queues a put for this turn's transaction; resolves once it is written. */
  enqueue(owner: string, params: UpsertParams): Promise<void> {
    if (params.created === 1) {
      const principal = principalOfOwner(owner);
      this.#created.set(principal, (this.#created.get(principal) ?? 0) + 1);
    }
    return new Promise<void>((resolve, reject) => {
      this.#pending.push({ owner, params, resolve, reject });
      if (this.#pending.length === 1) setImmediate(this.flush);
    });
  }

  /** Writes the queued puts in one transaction; on failure, one by one, so one bad row fails alone. */
  readonly flush = (): void => {
    const batch = this.#pending;
    if (batch.length === 0) return;
    this.#pending = [];
    // Written (or refused) below, synchronously: no count can run before they are in the file.
    this.#created.clear();
    const writer = this.#writer;
    if (!writer.isOpen()) {
      for (const put of batch) put.reject(new StoreUnavailableError(`${STORE_NAME}: the store is closed`));
      return;
    }
    let changes: number[] | undefined;
    try {
      changes = writer.writeBatch(batch.map((put) => put.params));
    } catch {
      changes = undefined;
    }
    // Counts read while the batch was queued must not outlive it.
    for (const put of batch) writer.changed(put.owner);
    if (changes !== undefined) {
      batch.forEach((put, index) => settlePut(put, changes[index] ?? 0));
      return;
    }
    for (const put of batch) {
      try {
        settlePut(put, writer.writeOne(put.params));
      } catch (error) {
        put.reject(error);
      }
    }
  };
}

function settlePut(put: PendingPut, changes: number): void {
  if (changes === 0) put.reject(ownerConflict(STORE_NAME));
  else put.resolve();
}
