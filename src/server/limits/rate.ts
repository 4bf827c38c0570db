/**
 * Per-principal request rate: at most `limit` requests per window (a minute by default), with
 * O(1) state per key and no timers.
 *
 * The algorithm is GCRA (the generic cell rate algorithm, a token bucket kept as one number):
 * each key stores its "theoretical arrival time" (TAT), the moment its bucket would be full
 * again. A request is admitted when admitting it would not push the TAT more than one window
 * past now. Consequences, all deliberate:
 *
 * - after a window of idleness a key may send a burst of `limit` requests at once, and the
 *   `limit + 1`-th inside that window is refused;
 * - after a burst, capacity comes back smoothly, one request every `windowMs / limit` ms, rather
 *   than all at once when a fixed window rolls over;
 * - the long-run rate is `limit` per window, but a sliding window that straddles a burst and
 *   the refill after it can hold up to `2 × limit − 1` admitted requests. Counting exactly would
 *   need one timestamp per admitted request (O(limit) memory per key); we trade that for one
 *   number per key;
 * - a refused request does not move the TAT, so hammering while refused does not lengthen the wait,
 *   and the `Retry-After` given is honest: a retry after that many seconds is admitted (unless
 *   another request from the same key got in first).
 *
 * Memory is bounded by `maxKeys`. Keys are kept in least-recently-admitted order; when a new key
 * arrives at capacity, a fully recovered key among the 32 least recently admitted is dropped
 * first (forgetting it changes nothing: an absent key behaves exactly like a full bucket), else
 * the least recently admitted key is dropped (which hands that key a fresh burst: the cost of
 * the bound). Both are O(1).
 *
 * @example
 * ```ts
 * const limiter = new RateLimiter({ limit: 600 });
 * const verdict = limiter.take(principal.key, performance.now());
 * if (verdict !== true) respond429({ 'retry-after': String(verdict) });
 * ```
 */
import { RecencyTable } from './recency.js';

/** Options of {@link RateLimiter}. */
export interface RateLimiterOptions {
  /** Requests a key may make per window (a burst of this many is allowed after idleness). */
  limit: number;
  /** Window length in ms; a minute unless told. */
  windowMs?: number;
  /** Keys remembered at once; beyond this the recovered, then least recently admitted, go. */
  maxKeys?: number;
}

/**
 * A request rate limit per key, as the server uses it: {@link RateLimiter} in one process, or one
 * shared by replicas (`shared/`), which answers asynchronously.
 *
 * @example
 * ```ts
 * const rates: RequestRateLimit = new RateLimiter({ limit: 600 });
 * const verdict = await rates.take(principal.key, performance.now());
 * ```
 */
export interface RequestRateLimit {
  /**
   * Admits one request for `key` at `now` (ms, a monotonic clock; shared limits keep their own
   * time), or refuses it: `true`, or the whole seconds (≥ 1) after which a retry would be admitted.
   */
  take(key: string, now: number): true | number | Promise<true | number>;
}

/** How many keys a {@link RateLimiter} remembers unless told. */
export const DEFAULT_MAX_RATE_KEYS = 100_000;

/**
 * How many of the least recently admitted keys an eviction looks at for a recovered one. Small
 * and fixed, so an eviction costs O(1) even when the table is full of busy keys.
 */
const EVICTION_SCAN = 32;

/**
 * GCRA rate limiter keyed by principal. Pass a monotonic clock (`performance.now()`): a wall
 * clock stepping backwards would make keys wait longer than they should.
 *
 * @example
 * ```ts
 * const limiter = new RateLimiter({ limit: 2, windowMs: 60_000 });
 * limiter.take('client:a', 0); // true
 * limiter.take('client:a', 0); // true
 * limiter.take('client:a', 0); // 30: seconds until the next request would be admitted
 * ```
 */
export class RateLimiter implements RequestRateLimit {
  /** Keys in order of last admission; `#tat[slot]` is a key's theoretical arrival time in whole µs. */
  readonly #table: RecencyTable;
  readonly #tat: number[] = [];
  /** µs between requests at the steady rate, and the window as exactly `limit` of them. */
  readonly #interval: number;
  readonly #window: number;

  constructor(options: RateLimiterOptions) {
    const { limit, windowMs = 60_000, maxKeys = DEFAULT_MAX_RATE_KEYS } = options;
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError('limit must be an integer ≥ 1');
    if (!(windowMs > 0) || !Number.isFinite(windowMs)) throw new RangeError('windowMs must be a positive number');
    if (!Number.isInteger(maxKeys) || maxKeys < 1) throw new RangeError('maxKeys must be an integer ≥ 1');
    // Everything is kept in whole microseconds so that every sum is an exact integer: with
    // float milliseconds, adding 60 000 / 7 over and over drifts (the same rounding each time),
    // and a burst's last request would be refused or one too many admitted. Rounding the
    // interval to a µs stretches the window by at most limit / 2 µs, and the window is defined
    // as exactly `limit` intervals so the burst size stays exact.
    this.#interval = Math.max(1, Math.round((windowMs * 1000) / limit));
    this.#window = this.#interval * limit;
    this.#table = new RecencyTable(maxKeys);
  }

  /**
   * Admits one request for `key` at `now` (ms), or refuses it.
   *
   * @returns `true` when admitted; otherwise the whole seconds (≥ 1) after which a retry would be.
   * @example
   * ```ts
   * const verdict = limiter.take('client:a', performance.now());
   * if (verdict !== true) res.setHeader('retry-after', verdict);
   * ```
   */
  take(key: string, now: number): true | number {
    // Epoch ms in µs is about 1.8e15, well inside the 2^53 of exact integers.
    const t = Math.floor(now * 1000);
    const table = this.#table;
    let slot = table.slotOf(key);
    const stored = slot === undefined ? t : (this.#tat[slot] as number);
    // An unknown key, or one whose TAT has passed, has a full bucket: it starts from now.
    const tat = stored < t ? t : stored;
    const next = tat + this.#interval;
    const wait = next - this.#window - t;
    if (wait > 0) {
      // Refusals leave the state alone. ceil keeps the hint honest; wait > 0 makes it ≥ 1.
      return Math.ceil(wait / 1_000_000);
    }
    if (slot === undefined) slot = table.insert(key, table.full ? this.#victim(t) : -1);
    else table.touch(slot);
    this.#tat[slot] = next;
    return true;
  }

  /** Keys currently remembered (for metrics and tests). */
  get size(): number {
    return this.#table.size;
  }

  /**
   * The slot to reuse when full: a recovered key among the least recently admitted few (losing
   * it changes nothing), else the least recently admitted. `t` is in µs.
   */
  #victim(t: number): number {
    const table = this.#table;
    let slot = table.oldest;
    for (let seen = 0; seen < EVICTION_SCAN && slot !== -1; seen++) {
      if ((this.#tat[slot] as number) <= t) return slot;
      slot = table.newerThan(slot);
    }
    return table.oldest;
  }
}
