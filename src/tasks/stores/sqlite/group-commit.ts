/**
 * The SQLite store's group commit: the puts of one event-loop turn share one transaction, so one
 * fsync (with synchronous=FULL) makes them all durable. Each caller still hears only once its
 * own row is on disk, and the loop is blocked once per batch instead of once per put. A share's
 * eviction decided in the turn runs in the same transaction, before the writes: one commit, and
 * the index pages it touches written to the WAL once.
 *
 * A turn that queued more than one put keeps its batch open one turn longer (as PostgreSQL's
 * `commit_delay` waits only with company): under load the callers answered by the last commit
 * are sending their next requests while the loop polls, and the extra turn takes those in
 * rather than leaving them to a commit of their own. A commit writes about the same pages
 * whatever it holds (the indexes' right edges, the evicted tasks' left edges), so fewer, larger
 * batches write fewer pages a task. A put alone is written at the end of its turn.
 *
 * @example
 * ```ts
 * const commits = new SqliteGroupCommit({ isOpen, writeBatch, writeOne, changed, evicted, evictionLost });
 * await commits.enqueue(owner, params);
 * commits.flush(); // on close: queued puts land before the database closes
 * ```
 */
import { releaseBatch } from '../batch-release.js';
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
 * const writer: SqliteRowWriter = { isOpen: () => db.open, writeBatch, writeOne, changed, evicted, evictionLost };
 * ```
 */
export interface SqliteRowWriter {
  readonly isOpen: () => boolean;
  /**
   * Every row in one transaction, after `first` (the turn's evictions) in it; the changes of
   * each row (0: another owner's live task).
   */
  readonly writeBatch: (params: UpsertParams[], first?: () => void) => number[];
  /** One row alone; its changes. */
  readonly writeOne: (params: UpsertParams) => number;
  /** The owner's counted totals are stale. */
  readonly changed: (owner: string) => void;
  /** Tasks were evicted: every counted total is stale. */
  readonly evicted: () => void;
  /** An eviction of `principal`'s tasks did not run: what the shares believe of it is too low. */
  readonly evictionLost: (principal: string) => void;
  /** A new task of `principal` was written finished (a later eviction may take it). */
  readonly createdFinished: (principal: string) => void;
  /** A new task of `principal` was not written: what the shares believe of it is too high. */
  readonly createdLost: (principal: string) => void;
}

/** A put waiting for the group commit. */
interface PendingPut {
  owner: string;
  params: UpsertParams;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** A share's eviction waiting for the group commit. */
interface PendingEviction {
  principal: string;
  /** Deletes the tasks (in the transaction it is called in); how many went. */
  run: () => number;
}

/**
 * The puts and share evictions queued for the open batch (one turn, or two: see above).
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
  #evictions: PendingEviction[] = [];
  /** Tasks the queued evictions will delete, by principal: still in the file. */
  readonly #evicting = new Map<string, number>();

  constructor(writer: SqliteRowWriter) {
    this.#writer = writer;
  }

  /**
   * New tasks of `principal` queued for the open batch's transaction: a share count reads the file,
   * which holds them only once the batch is written, so it adds these (else a burst at the quota
   * would be counted again every few creations, and admitted past it).
   */
  createdPending(principal: string): number {
    return this.#created.get(principal) ?? 0;
  }

  /**
   * Finished tasks of `principal` that queued evictions will delete when the open batch's transaction
   * is written: a share count reads the file, which still holds them, so it takes these off.
   */
  evictingPending(principal: string): number {
    return this.#evicting.get(principal) ?? 0;
  }

  /**
   * Queues a share's eviction (`count` of `principal`'s tasks, deleted by `run`, a transaction of
   * its own when called alone) for the open batch's transaction, ahead of its writes.
   */
  evict(principal: string, count: number, run: () => number): void {
    this.#schedule();
    this.#evictions.push({ principal, run });
    this.#evicting.set(principal, (this.#evicting.get(principal) ?? 0) + count);
  }

  /** Queues a put for the open batch's transaction; resolves once it is written. */
  enqueue(owner: string, params: UpsertParams): Promise<void> {
    if (params.created === 1) {
      const principal = principalOfOwner(owner);
      this.#created.set(principal, (this.#created.get(principal) ?? 0) + 1);
    }
    return new Promise<void>((resolve, reject) => {
      this.#schedule();
      this.#pending.push({ owner, params, resolve, reject });
    });
  }

  #schedule(): void {
    if (this.#pending.length === 0 && this.#evictions.length === 0) setImmediate(this.#endOfTurn);
  }

  /** The end of the batch's first turn: written now if it holds at most one put, else a turn later. */
  readonly #endOfTurn = (): void => {
    if (this.#pending.length > 1) setImmediate(this.flush);
    else this.flush();
  };

  /**
   * Writes the queued evictions and puts in one transaction; on failure, each eviction in a
   * transaction of its own and the puts one by one, so one bad row fails alone.
   */
  readonly flush = (): void => {
    const batch = this.#pending;
    const evictions = this.#evictions;
    if (batch.length === 0 && evictions.length === 0) return;
    this.#pending = [];
    this.#evictions = [];
    // Written (or refused) below, synchronously: no count can run before they are in the file.
    this.#created.clear();
    this.#evicting.clear();
    const writer = this.#writer;
    if (!writer.isOpen()) {
      for (const put of batch) {
        if (put.params.created === 1) writer.createdLost(principalOfOwner(put.owner));
        put.reject(new StoreUnavailableError(`${STORE_NAME}: the store is closed`));
      }
      for (const eviction of evictions) writer.evictionLost(eviction.principal);
      return;
    }
    let changes: number[] | undefined;
    let evicted = 0;
    const evictFirst = (): void => {
      for (const eviction of evictions) evicted += eviction.run();
    };
    try {
      changes = writer.writeBatch(
        batch.map((put) => put.params),
        evictions.length === 0 ? undefined : evictFirst,
      );
    } catch {
      changes = undefined;
      evicted = 0;
    }
    if (changes === undefined) {
      for (const eviction of evictions) {
        try {
          evicted += eviction.run();
        } catch {
          writer.evictionLost(eviction.principal);
        }
      }
    }
    if (evicted > 0) writer.evicted();
    // Counts read while the batch was queued must not outlive it.
    for (const put of batch) writer.changed(put.owner);
    if (changes !== undefined) {
      // The callers' responses, once the puts' continuations write them, leave in this turn
      // (batch-release.ts): this flush already runs at the end of a turn.
      releaseBatch(() => batch.forEach((put, index) => settlePut(writer, put, changes[index] ?? 0)));
      return;
    }
    for (const put of batch) {
      let written: number;
      try {
        written = writer.writeOne(put.params);
      } catch (error) {
        if (put.params.created === 1) writer.createdLost(principalOfOwner(put.owner));
        put.reject(error);
        continue;
      }
      settlePut(writer, put, written);
    }
  };
}

function settlePut(writer: SqliteRowWriter, put: PendingPut, changes: number): void {
  const created = put.params.created === 1;
  if (changes === 0) {
    if (created) writer.createdLost(principalOfOwner(put.owner));
    put.reject(ownerConflict(STORE_NAME));
    return;
  }
  if (created && put.params.terminal === 1) writer.createdFinished(principalOfOwner(put.owner));
  put.resolve();
}
