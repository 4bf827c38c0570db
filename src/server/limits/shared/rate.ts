/**
 * The request rate limit and the auth-failure lockout shared by replicas, over any
 * `rate-limiter-flexible` store (Redis or PostgreSQL: see `index.ts`). Both count in fixed
 * windows kept by the store, so every replica sees the same counts:
 *
 * - rate: at most `limit` requests per principal per window; the next one is refused until the
 *   window (opened by the key's first request) closes. Unlike the local GCRA limiter, capacity
 *   comes back all at once when the window ends rather than smoothly, so up to 2 × limit
 *   requests can pass around a window boundary. The long-run rate is the same.
 * - lockout: after `limit` failures of an address (IPv6: its /64) within a window opened by its
 *   first failure, the address is refused for the rest of that window, exactly as locally.
 *
 * Keys are hashed (SHA-256): principal keys name clients and subjects, and the shared store
 * need not know them. Faults: when the store fails or is slow (see SharedStoreGuard), both
 * limits answer from a local limiter of the same size: they fail open to "this replica alone",
 * never closed (a Redis outage must not lock every client out) and never slow (one timeout,
 * then the cool-down).
 *
 * @example
 * ```ts
 * const rates = new SharedRateLimiter(new RateLimiterRedis({ storeClient, points: 600, duration: 60 }), guard, {
 *   limit: 600,
 * });
 * const verdict = await rates.take(principal.key, performance.now()); // true, or seconds to wait
 * ```
 */
import { createHash } from 'node:crypto';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { addressBucket, AuthFailureLimiter, type AuthFailureLockout } from '../address-failures.js';
import { RateLimiter, type RequestRateLimit } from '../rate.js';
import type { SharedStoreGuard } from './guard.js';

/**
 * The part of a `rate-limiter-flexible` limiter used here.
 *
 * @example
 * ```ts
 * const store: PointsStore = new RateLimiterPostgres({ storeClient: pool, points: 10, duration: 60 });
 * ```
 */
export interface PointsStore {
  /** Resolves when admitted; rejects with a RateLimiterRes when over the points, with an Error on failure. */
  consume(key: string, points?: number): Promise<RateLimiterRes>;
  get(key: string): Promise<RateLimiterRes | null>;
}

/**
 * A short, stable key for a principal or address in the shared store: 32 hex characters of its
 * SHA-256 (128 bits: no two keys collide in practice).
 *
 * @example
 * ```ts
 * sharedKey('client:a::'); // '6b3a…' (32 hex)
 * ```
 */
export function sharedKey(key: string): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 32);
}

/** A consume that does not treat "over the limit" as a failure of the store. */
async function consumeOrRefusal(store: PointsStore, key: string): Promise<{ admitted: boolean; res: RateLimiterRes }> {
  try {
    return { admitted: true, res: await store.consume(key) };
  } catch (error) {
    if (error instanceof RateLimiterRes) return { admitted: false, res: error };
    throw error;
  }
}

function secondsUntil(msBeforeNext: number, maxSeconds: number): number {
  return Math.min(maxSeconds, Math.max(1, Math.ceil(msBeforeNext / 1000)));
}

/**
 * The per-principal request rate shared by replicas. See the module comment.
 *
 * @example
 * ```ts
 * const verdict = await rates.take(principal.key, performance.now());
 * if (verdict !== true) refuse429(verdict);
 * ```
 */
export class SharedRateLimiter implements RequestRateLimit {
  readonly #store: PointsStore;
  readonly #guard: SharedStoreGuard;
  readonly #fallback: RateLimiter;
  readonly #maxSeconds: number;

  constructor(store: PointsStore, guard: SharedStoreGuard, options: { limit: number; windowMs?: number }) {
    this.#store = store;
    this.#guard = guard;
    const windowMs = options.windowMs ?? 60_000;
    this.#fallback = new RateLimiter({ limit: options.limit, windowMs });
    this.#maxSeconds = Math.ceil(windowMs / 1000);
  }

  take(key: string, now: number): true | number | Promise<true | number> {
    // During a cool-down the local answer comes at once, without a promise.
    if (!this.#guard.usable) return this.#fallback.take(key, now);
    return this.#guard
      .run(() => consumeOrRefusal(this.#store, sharedKey(key)))
      .then(
        ({ admitted, res }) => admitted || secondsUntil(res.msBeforeNext, this.#maxSeconds),
        () => this.#fallback.take(key, now),
      );
  }
}

/**
 * The auth-failure lockout per address shared by replicas. See the module comment.
 *
 * @example
 * ```ts
 * if ((await lockout.isLocked(address, now)) > 0) refuse429();
 * if (!authenticated) void lockout.recordFailure(address, now);
 * ```
 */
export class SharedAuthFailureLockout implements AuthFailureLockout {
  readonly #store: PointsStore;
  readonly #guard: SharedStoreGuard;
  readonly #fallback: AuthFailureLimiter;
  readonly #limit: number;
  readonly #maxSeconds: number;

  constructor(store: PointsStore, guard: SharedStoreGuard, options: { limit: number; windowMs?: number }) {
    this.#store = store;
    this.#guard = guard;
    const windowMs = options.windowMs ?? 60_000;
    this.#limit = options.limit;
    this.#fallback = new AuthFailureLimiter({ limit: options.limit, windowMs });
    this.#maxSeconds = Math.ceil(windowMs / 1000);
  }

  isLocked(address: string, now: number): number | Promise<number> {
    if (!this.#guard.usable) return this.#fallback.isLocked(address, now);
    return this.#guard
      .run(() => this.#store.get(sharedKey(addressBucket(address))))
      .then(
        (res) => this.#lockedFor(res),
        () => this.#fallback.isLocked(address, now),
      );
  }

  recordFailure(address: string, now: number): number | Promise<number> {
    if (!this.#guard.usable) return this.#fallback.recordFailure(address, now);
    return this.#guard
      .run(() => consumeOrRefusal(this.#store, sharedKey(addressBucket(address))))
      .then(
        ({ res }) => this.#lockedFor(res),
        () => this.#fallback.recordFailure(address, now),
      );
  }

  #lockedFor(res: RateLimiterRes | null): number {
    if (res === null || res.consumedPoints < this.#limit || res.msBeforeNext <= 0) return 0;
    return secondsUntil(res.msBeforeNext, this.#maxSeconds);
  }
}
