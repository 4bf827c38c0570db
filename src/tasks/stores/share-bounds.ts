/**
 * What a database store knows of each principal's share between counts, so that it counts a
 * principal (its index entries: O(its tasks)) only near its quotas. The decisions themselves are
 * `fair-shares.ts`'s.
 *
 * Two kinds of knowledge:
 * - **upper bounds** of a principal's tasks and parked tasks, from its last count plus every
 *   task created and every parked write since: only ever too high for the writes this process
 *   sees (deletions, answers and the sweep make the truth lower). Writes of other replicas it
 *   does not see, so a bound older than `maxAgeMs` is counted again (Infinity for a store one
 *   process serves alone).
 * - for a store that sees every write of its file (`soleWriter`), a **lower bound** of the
 *   finished tasks a principal's next eviction can take: the tasks it created finished since its
 *   last count, written, not yet given up. While that many are there, a principal at its quota
 *   gives up its tenth without being counted first (see {@link ShareBounds.evictionWithoutCount}).
 *
 * @example
 * ```ts
 * const bounds = new ShareBounds(1_000);
 * if (!bounds.admits(principal, limits, Date.now())) recount();
 * ```
 */
import { evictionBatch, type ResolvedFairShares } from './fair-shares.js';

/** Principals whose bounds are kept at most; past it they are all forgotten (and counted again). */
const MAX_BOUNDED_PRINCIPALS = 10_000;

interface Bound {
  /** Upper bound of its live tasks. */
  tasks: number;
  /** Upper bound of its parked tasks. */
  parked: number;
  /** When it was counted. */
  at: number;
  /** Lower bound of its live finished tasks (those created finished since the count). */
  finished: number;
  /** Until when every task it held at its count is still live (its oldest update + the TTL). */
  liveUntil: number;
}

type ShareLimits = Pick<ResolvedFairShares, 'maxTasksPerPrincipal' | 'maxParkedPerPrincipal'>;

/**
 * The bounds of one store's principals.
 *
 * @example
 * ```ts
 * const bounds = new ShareBounds(Number.POSITIVE_INFINITY, { soleWriter: true });
 * ```
 */
export class ShareBounds {
  readonly #bounds = new Map<string, Bound>();
  /** Principals being counted now, and when that count is over. */
  readonly #counting = new Map<string, Promise<void>>();
  readonly #maxAgeMs: number;
  readonly #soleWriter: boolean;

  /**
   * `soleWriter`: this store makes every write and every deletion of its tasks (one process,
   * one file), so a lower bound of finished tasks holds; off for replicas and workers sharing
   * a database.
   */
  constructor(maxAgeMs = Number.POSITIVE_INFINITY, options: { soleWriter?: boolean } = {}) {
    this.#maxAgeMs = maxAgeMs;
    this.#soleWriter = options.soleWriter === true;
  }

  /** Whether a new task of `principal` is surely inside both quotas (`nowMs`: for the bound's age). */
  admits(principal: string, limits: ShareLimits, nowMs: number): boolean {
    const bound = this.#bounds.get(principal);
    return (
      bound !== undefined &&
      nowMs - bound.at < this.#maxAgeMs &&
      bound.tasks < limits.maxTasksPerPrincipal &&
      bound.parked < limits.maxParkedPerPrincipal
    );
  }

  /**
   * After a count at `nowMs`: the principal holds `tasks` (after evictions) and `parked`;
   * `liveUntil`: until when every task counted stays live (default: no lower bound is kept).
   */
  counted(principal: string, tasks: number, parked: number, nowMs: number, liveUntil = Number.NEGATIVE_INFINITY): void {
    if (this.#bounds.size >= MAX_BOUNDED_PRINCIPALS && !this.#bounds.has(principal)) this.#bounds.clear();
    this.#bounds.set(principal, { tasks, parked, at: nowMs, finished: 0, liveUntil });
  }

  /**
   * For a principal at its task quota (`admits` said no), the count of its own oldest finished
   * tasks to give up so that one more task fits, decided without counting it; 0 when it must be
   * counted. It may be decided so when this store sees every write, no task counted has expired
   * since (`nowMs` before `liveUntil`), the parked bound is under its quota, and at least that
   * many tasks were created finished since the count and not given up: the eviction, which takes
   * the oldest live finished ones, then finds them all. The bounds move as a count would move them.
   */
  evictionWithoutCount(principal: string, limits: ShareLimits, nowMs: number): number {
    const bound = this.#bounds.get(principal);
    if (!this.#soleWriter || bound === undefined || nowMs >= bound.liveUntil) return 0;
    if (nowMs - bound.at >= this.#maxAgeMs || bound.parked >= limits.maxParkedPerPrincipal) return 0;
    const count = Math.max(bound.tasks - limits.maxTasksPerPrincipal + 1, evictionBatch(limits));
    if (bound.finished < count) return 0;
    bound.finished -= count;
    bound.tasks += 1 - count;
    return count;
  }

  /** The count of `principal` under way in this process, if any (wait for it, then look again). */
  counting(principal: string): Promise<void> | undefined {
    return this.#counting.get(principal);
  }

  /** A count of `principal` starts; `over` settles when it ends. */
  countStarted(principal: string, over: Promise<void>): void {
    this.#counting.set(principal, over);
  }

  /** The count of `principal` ended (whatever it found). */
  countEnded(principal: string): void {
    this.#counting.delete(principal);
  }

  /**
   * What is known of `principal` may be wrong (an eviction did not run, a new task was not
   * written): count it next time.
   */
  forget(principal: string): void {
    this.#bounds.delete(principal);
  }

  /** Tasks went that this store did not choose one by one (the sweep): count everyone again. */
  forgetAll(): void {
    this.#bounds.clear();
  }

  /** A task of `principal` was created. */
  created(principal: string): void {
    const bound = this.#bounds.get(principal);
    if (bound !== undefined) bound.tasks++;
  }

  /** A task `principal` created is written finished (an eviction may take it). */
  createdFinished(principal: string): void {
    const bound = this.#bounds.get(principal);
    if (bound !== undefined) bound.finished++;
  }

  /** A task of `principal` was written parked (it may have been parked already: a bound). */
  parkedWrite(principal: string): void {
    const bound = this.#bounds.get(principal);
    if (bound !== undefined) bound.parked++;
  }
}
