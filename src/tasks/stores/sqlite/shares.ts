/**
 * The SQLite store's fair shares: a new task's principal counted (its live tasks, parked and
 * finished ones) on the owner/state list index, its own oldest finished tasks evicted when it is
 * at its quota, and the sweep's step that fails parked tasks idle for the parked TTL (on the
 * `tasks_parked` index of migration 2). The decisions are `../fair-shares.ts`'s, shared with
 * every store.
 *
 * Cost: the count reads the principal's index entries, O(its tasks) ≤ its quota. The eviction
 * first looks among the store's oldest finished tasks (the age index, a window of twice the
 * eviction, each row read for its owner): when the principal holds most of the store's old
 * tasks, as the one creating fastest at its quota does, its oldest are found there without
 * reading and sorting its whole share. What the window leaves is taken from the principal's own
 * entries (the owner index, sorted by update time). A principal whose window came up short
 * skips it for its next {@link WINDOW_MISS_SKIPS} evictions, so a store shared by many
 * principals pays the window rarely.
 *
 * `ShareBounds` keeps, per principal, an upper bound of its tasks and parked tasks since their
 * last count, and a new task inside both is admitted without counting. A store that alone writes
 * its file sees every write, so its bounds stay true; under workers sharing the file they age
 * after a second (`../share-bounds.ts`). At its quota a principal gives up a tenth of it
 * at once, so one that keeps creating there pays one count and one eviction per tenth (see
 * `shareDecision`).
 *
 * @example
 * ```ts
 * const shares = prepareShareStatements(db);
 * checkShare(shares, bounds, limits, owner, expiredBefore); // may evict the owner's own finished tasks, or throw CapacityError
 * ```
 */
import type { Database as SqliteDatabase, Statement } from 'better-sqlite3';
import type { Task } from '../../../protocol/model.js';
import { ownerRangeOf, quotaRefusal, shareDecision, type ResolvedFairShares } from '../fair-shares.js';
import type { ShareBounds } from '../share-bounds.js';
import { principalOfOwner } from '../principal.js';
import { prepareCount } from './statements.js';

/** One principal's owner keys (see ownerRangeOf), on the owner index (it carries state). */
const PRINCIPAL_ROWS = `FROM tasks INDEXED BY tasks_by_owner
  WHERE owner >= @low AND owner < @high AND instr(substr(owner, @tail), '@') = 0 AND updated_at > @expiredBefore`;
const TERMINAL = `state IN ('completed', 'failed', 'canceled', 'rejected')`;
/** Written exactly as the partial index `tasks_parked` is, so that SQLite uses it. */
const PARKED = `state IN ('input-required', 'auth-required')`;

interface ShareParams {
  low: string;
  high: string;
  tail: number;
  expiredBefore: number;
}

/**
 * The statements behind the shares.
 *
 * @example
 * ```ts
 * const statements: SqliteShareStatements = prepareShareStatements(db);
 * ```
 */
export interface SqliteShareStatements {
  /** `oldest`: the least recent `updated_at` among them (null when none). */
  readonly counts: Statement<[ShareParams], { tasks: number; parked: number; finished: number; oldest: number | null }>;
  /** Deletes the principal's `count` oldest finished tasks (row count kept); returns how many. */
  readonly evictOwnFinished: (params: ShareParams & { count: number }) => number;
  readonly parkedIdle: Statement<
    [{ parkedBefore: number; expiredBefore: number; limit: number }],
    { owner: string; body: string }
  >;
}

/** The rowids of a principal's `@count` oldest finished tasks (its range as in {@link ShareParams}). */
export const OWN_OLDEST_FINISHED_SQL = `SELECT rowid ${PRINCIPAL_ROWS} AND ${TERMINAL} ORDER BY updated_at LIMIT +@count`;

/** Deletes a principal's `@count` oldest finished tasks. */
export const EVICT_OWN_FINISHED_SQL = `DELETE FROM tasks WHERE rowid IN (${OWN_OLDEST_FINISHED_SQL})`;

/**
 * The rowids of a principal's oldest finished tasks among the store's `@window` oldest finished
 * ones, at most `@count`, oldest first. The window is a prefix of the age order, so whatever it
 * finds are the principal's oldest, and a shortfall is taken by {@link EVICT_OWN_FINISHED_SQL}
 * from the rest. SQLite reads the window as a co-routine in index order: no sort, and it stops
 * at `@count`.
 */
export const OWN_OLDEST_IN_WINDOW_SQL = `SELECT rowid FROM
  (SELECT rowid, owner, updated_at FROM tasks INDEXED BY tasks_by_age
     WHERE terminal = 1 AND updated_at > @expiredBefore ORDER BY updated_at LIMIT +@window)
  WHERE owner >= @low AND owner < @high AND instr(substr(owner, @tail), '@') = 0 ORDER BY updated_at LIMIT +@count`;

/** Deletes what {@link OWN_OLDEST_IN_WINDOW_SQL} finds. */
export const EVICT_OWN_IN_WINDOW_SQL = `DELETE FROM tasks WHERE rowid IN (${OWN_OLDEST_IN_WINDOW_SQL})`;

/** How many of the store's oldest finished tasks the window reads: this many per task evicted. */
export const WINDOW_PER_EVICTED = 2;
/** Evictions of a principal that go straight to its own entries after its window came up short. */
export const WINDOW_MISS_SKIPS = 8;
/** Principals remembered as short of their window; past this the memory is cleared. */
const MAX_WINDOW_MISSES = 4_096;

/**
 * Prepares the share statements (after the migrations: they name migration 2's index).
 *
 * @example
 * ```ts
 * const shares = prepareShareStatements(db);
 * ```
 */
export function prepareShareStatements(db: SqliteDatabase): SqliteShareStatements {
  const evict = db.prepare<[ShareParams & { count: number }]>(EVICT_OWN_FINISHED_SQL);
  const evictInWindow = db.prepare<[ShareParams & { count: number; window: number }]>(EVICT_OWN_IN_WINDOW_SQL);
  const count = prepareCount(db);
  /** Principal range (its `low`) → evictions left to skip the window for. */
  const windowMisses = new Map<string, number>();
  const evictOwnFinished = (params: ShareParams & { count: number }): number => {
    const skips = windowMisses.get(params.low);
    let deleted = 0;
    if (skips === undefined) {
      deleted = evictInWindow.run({ ...params, window: params.count * WINDOW_PER_EVICTED }).changes;
      if (deleted < params.count) {
        if (windowMisses.size >= MAX_WINDOW_MISSES) windowMisses.clear();
        windowMisses.set(params.low, WINDOW_MISS_SKIPS);
      }
    } else if (skips <= 1) windowMisses.delete(params.low);
    else windowMisses.set(params.low, skips - 1);
    if (deleted < params.count) deleted += evict.run({ ...params, count: params.count - deleted }).changes;
    return deleted;
  };
  return {
    counts: db.prepare(
      `SELECT count(*) AS tasks, coalesce(sum(${PARKED}), 0) AS parked, coalesce(sum(${TERMINAL}), 0) AS finished,
         min(updated_at) AS oldest ${PRINCIPAL_ROWS}`,
    ),
    evictOwnFinished: db.transaction((params: ShareParams & { count: number }) =>
      count.removed(evictOwnFinished(params)),
    ),
    parkedIdle: db.prepare(
      `SELECT owner, body FROM tasks INDEXED BY tasks_parked
         WHERE ${PARKED} AND updated_at <= @parkedBefore AND updated_at > @expiredBefore ORDER BY updated_at LIMIT +@limit`,
    ),
  };
}

/**
 * The group commit as the shares see it (`SqliteGroupCommit`): the new tasks it holds queued and
 * the evictions it will run, neither in the file yet; an eviction is queued there too.
 *
 * @example
 * ```ts
 * const queued: QueuedTasks = commits;
 * ```
 */
export interface QueuedTasks {
  createdPending(principal: string): number;
  evictingPending(principal: string): number;
  evict(principal: string, count: number, run: () => number): void;
}

/**
 * Admits a new task of `owner` under its principal's share: when it is at its task quota, queues
 * the eviction of its own oldest finished tasks into the group commit's next transaction (ahead
 * of the new task's row). `queued`: the principal's new tasks
 * queued for the group commit are counted too (as unfinished), and its finished tasks already
 * queued for eviction are not. A principal that created at least a tenth of its quota finished
 * since its last count gives up that tenth without being counted again (`ShareBounds`):
 * counting its 1,000 index entries cost more than the rest of the eviction's work.
 *
 * @throws CapacityError naming the quota (nothing evicted), reported through `limits.onEvent`.
 * @example
 * ```ts
 * checkShare(shares, bounds, limits, owner, { nowMs, expiredBefore }, commits); // then commits.enqueue(owner, row)
 * ```
 */
export function checkShare(
  statements: SqliteShareStatements,
  bounds: ShareBounds,
  limits: ResolvedFairShares,
  owner: string,
  clock: { readonly nowMs: number; readonly expiredBefore: number },
  queued: QueuedTasks,
): void {
  const principal = principalOfOwner(owner);
  const { nowMs, expiredBefore } = clock;
  if (bounds.admits(principal, limits, nowMs)) {
    bounds.created(principal);
    return;
  }
  const range = ownerRangeOf(principal);
  const params: ShareParams = { low: range.low, high: range.high, tail: range.tail, expiredBefore };
  const uncounted = bounds.evictionWithoutCount(principal, limits, nowMs);
  if (uncounted > 0) {
    queued.evict(principal, uncounted, () => statements.evictOwnFinished({ ...params, count: uncounted }));
    return;
  }
  const stored = statements.counts.get(params) ?? { tasks: 0, parked: 0, finished: 0, oldest: null };
  const evicting = queued.evictingPending(principal);
  const counts = {
    tasks: stored.tasks + queued.createdPending(principal) - evicting,
    parked: stored.parked,
    finished: stored.finished - evicting,
  };
  const decision = shareDecision(counts, limits);
  // Every task counted is live until its update plus the TTL; the queued ones are newer.
  const liveUntil = (stored.oldest ?? nowMs) + (nowMs - expiredBefore);
  if (decision.kind === 'refuse') {
    bounds.counted(principal, counts.tasks, counts.parked, nowMs, liveUntil);
    throw quotaRefusal(decision.quota, limits, owner);
  }
  const evicted = decision.kind === 'admit' ? 0 : decision.count;
  if (evicted > 0) queued.evict(principal, evicted, () => statements.evictOwnFinished({ ...params, count: evicted }));
  bounds.counted(principal, counts.tasks - evicted + 1, counts.parked, nowMs, liveUntil);
}

/**
 * Up to `limit` parked tasks idle since `parkedBefore` (oldest first), still live.
 *
 * @example
 * ```ts
 * for (const { owner, task } of parkedIdle(shares, now - parkedTtlMs, expiredBefore, 100)) write(owner, failedByParkedTtl(task, ts));
 * ```
 */
export function parkedIdle(
  statements: SqliteShareStatements,
  parkedBefore: number,
  expiredBefore: number,
  limit: number,
): { owner: string; task: Task }[] {
  return statements.parkedIdle
    .all({ parkedBefore, expiredBefore, limit })
    .map((row) => ({ owner: row.owner, task: JSON.parse(row.body) as Task }));
}
