/**
 * Tasks in flight, capped across replicas (all callers together and per principal), as leases
 * in Redis or PostgreSQL. A lease has a TTL (`leaseTtlMs`, 30 s by default) that the replica
 * holding it renews every third of it: when a replica dies, its leases run out within one TTL
 * and their slots come back by themselves. Releasing deletes the lease at once.
 *
 * - Redis, without Lua: a sorted set of leases scored by expiry for all callers and one per
 *   principal. One MULTI removes expired leases, adds the new one to both sets and counts
 *   both; a count over its cap removes the lease again (refused). Add-then-count never admits
 *   over a cap; under contention right at the cap it can refuse a caller that would just have
 *   fit, which that caller sees as the usual 503 with Retry-After: 1. Expiry is judged by each
 *   replica's clock: clocks must agree to well within the TTL minus the renewal period (20 s).
 * - PostgreSQL: one row per lease; acquiring takes a transaction-scoped advisory lock, deletes
 *   expired rows, and inserts the lease only if both counts are under their caps, in one round
 *   trip. Expiry is judged by the database's clock.
 *
 * Faults: when the store fails or is slow (see SharedStoreGuard), slots come from a local
 * limiter with the same caps, for this replica alone: the caps stay in force per replica instead
 * of refusing everything. A lease whose acquire timed out is deleted in the background; one that
 * cannot be deleted (the store is down) runs out with its TTL.
 *
 * @example
 * ```ts
 * const inFlight = new SharedInFlightLimiter(new RedisLeaseStore(client, 'airlock'), guard, { global: 256, perKey: 16 });
 * const release = await inFlight.tryAcquire(principal.key);
 * if (release === null) throw new CapacityError(1);
 * try { await runTurn(); } finally { release(); }
 * ```
 */
import { randomBytes } from 'node:crypto';
import type { Pool } from 'pg';
import { InFlightLimiter, type InFlightCap, type InFlightLimits, type Release } from '../concurrency.js';
import type { SharedStoreGuard } from './guard.js';
import { sharedKey } from './rate.js';
import type { LimitsRedisClient } from './redis-client.js';

/**
 * Where leases live. Keys are already hashed (hex), lease ids are random hex.
 *
 * @example
 * ```ts
 * const granted = await store.acquire('9f…', '6b3a…', { global: 256, perKey: 16 }, 30_000);
 * ```
 */
export interface LeaseStore {
  /** Takes the lease if both caps leave room; false when one is reached. */
  acquire(leaseId: string, keyHash: string, caps: InFlightLimits, ttlMs: number): Promise<boolean>;
  /** Pushes the expiry of these leases (lease id → key hash) to now + ttlMs. */
  renew(leases: ReadonlyMap<string, string>, ttlMs: number): Promise<void>;
  /** Deletes a lease (no error if it is gone). */
  release(leaseId: string, keyHash: string): Promise<void>;
}

/**
 * Options of {@link SharedInFlightLimiter}.
 *
 * @example
 * ```ts
 * const options: SharedInFlightOptions = { global: 256, perKey: 16, leaseTtlMs: 30_000 };
 * ```
 */
export interface SharedInFlightOptions extends InFlightLimits {
  /** A lease not renewed for this long is gone. Default 30 000 ms; renewed every third of it. */
  leaseTtlMs?: number;
}

/**
 * The in-flight caps shared by replicas. See the module comment.
 *
 * @example
 * ```ts
 * const release = await inFlight.tryAcquire(ctx.principalKey);
 * ```
 */
export class SharedInFlightLimiter implements InFlightCap {
  readonly #store: LeaseStore;
  readonly #guard: SharedStoreGuard;
  readonly #caps: InFlightLimits;
  readonly #fallback: InFlightLimiter;
  readonly #ttlMs: number;
  /** Leases this replica holds: lease id → key hash. */
  readonly #held = new Map<string, string>();
  #renewTimer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(store: LeaseStore, guard: SharedStoreGuard, options: SharedInFlightOptions) {
    this.#store = store;
    this.#guard = guard;
    this.#caps = { global: options.global, perKey: options.perKey };
    this.#fallback = new InFlightLimiter(this.#caps);
    this.#ttlMs = options.leaseTtlMs ?? 30_000;
    if (!(Number.isSafeInteger(this.#ttlMs) && this.#ttlMs >= 30)) {
      throw new RangeError('leaseTtlMs must be an integer ≥ 30');
    }
  }

  tryAcquire(key: string): Release | null | Promise<Release | null> {
    if (this.#closed || !this.#guard.usable) return this.#fallback.tryAcquire(key);
    const leaseId = randomBytes(12).toString('hex');
    const keyHash = sharedKey(key);
    const attempt = this.#store.acquire(leaseId, keyHash, this.#caps, this.#ttlMs);
    return this.#guard
      .run(() => attempt)
      .then(
        (granted) => (granted ? this.#hold(leaseId, keyHash) : null),
        () => {
          // The store may still take the lease after we gave up on it: delete it once it has.
          attempt
            .then((granted) => (granted ? this.#store.release(leaseId, keyHash) : undefined))
            .catch(() => undefined);
          return this.#fallback.tryAcquire(key);
        },
      );
  }

  /** Leases this replica holds in the shared store (for tests and metrics). */
  get held(): number {
    return this.#held.size;
  }

  /** Stops renewing and deletes the leases still held (best effort). */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#renewTimer);
    this.#renewTimer = undefined;
    const held = [...this.#held];
    this.#held.clear();
    await Promise.allSettled(held.map(([leaseId, keyHash]) => this.#store.release(leaseId, keyHash)));
  }

  #hold(leaseId: string, keyHash: string): Release {
    this.#held.set(leaseId, keyHash);
    this.#renewTimer ??= setInterval(() => this.#renew(), Math.floor(this.#ttlMs / 3)).unref();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#held.delete(leaseId);
      if (this.#held.size === 0) {
        clearInterval(this.#renewTimer);
        this.#renewTimer = undefined;
      }
      // A delete that fails leaves the lease to run out with its TTL.
      this.#store.release(leaseId, keyHash).catch(() => undefined);
    };
  }

  #renew(): void {
    if (this.#held.size === 0) return;
    this.#store.renew(new Map(this.#held), this.#ttlMs).then(
      () => this.#guard.succeeded(),
      (error: unknown) => this.#guard.failed(error),
    );
  }
}

/**
 * Leases in Redis sorted sets. See the module comment. Keys share one hash tag, so the MULTI
 * also works on a Redis Cluster.
 *
 * @example
 * ```ts
 * const store = new RedisLeaseStore(client, 'airlock');
 * ```
 */
export class RedisLeaseStore implements LeaseStore {
  readonly #client: LimitsRedisClient;
  readonly #global: string;
  readonly #perKeyPrefix: string;

  constructor(client: LimitsRedisClient, keyPrefix: string) {
    this.#client = client;
    this.#global = `${keyPrefix}:{inflight}:all`;
    this.#perKeyPrefix = `${keyPrefix}:{inflight}:key:`;
  }

  async acquire(leaseId: string, keyHash: string, caps: InFlightLimits, ttlMs: number): Promise<boolean> {
    const now = Date.now();
    const perKey = this.#perKeyPrefix + keyHash;
    const replies = await this.#client
      .multi()
      .zRemRangeByScore(this.#global, '-inf', now)
      .zRemRangeByScore(perKey, '-inf', now)
      .zAdd(this.#global, { score: now + ttlMs, value: leaseId })
      .zAdd(perKey, { score: now + ttlMs, value: leaseId })
      .zCard(this.#global)
      .zCard(perKey)
      // Idle sets vanish by themselves; a busy one is extended by every acquire and renewal.
      .pExpire(this.#global, ttlMs * 2)
      .pExpire(perKey, ttlMs * 2)
      .exec();
    const all = Number(replies[4]);
    const mine = Number(replies[5]);
    if (all <= caps.global && mine <= caps.perKey) return true;
    await this.release(leaseId, keyHash);
    return false;
  }

  async renew(leases: ReadonlyMap<string, string>, ttlMs: number): Promise<void> {
    const expiry = Date.now() + ttlMs;
    const multi = this.#client.multi();
    for (const [leaseId, keyHash] of leases) {
      const perKey = this.#perKeyPrefix + keyHash;
      // XX: a lease that ran out (or was released meanwhile) is not brought back.
      multi.zAdd(this.#global, { score: expiry, value: leaseId }, { condition: 'XX' });
      multi.zAdd(perKey, { score: expiry, value: leaseId }, { condition: 'XX' });
      multi.pExpire(perKey, ttlMs * 2);
    }
    multi.pExpire(this.#global, ttlMs * 2);
    await multi.exec();
  }

  async release(leaseId: string, keyHash: string): Promise<void> {
    await this.#client
      .multi()
      .zRem(this.#global, leaseId)
      .zRem(this.#perKeyPrefix + keyHash, leaseId)
      .exec();
  }
}

const HEX = /^[0-9a-f]+$/;
const SCHEMA_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Leases in a PostgreSQL table (`airlock_inflight_leases`). See the module comment.
 *
 * @example
 * ```ts
 * const store = new PostgresLeaseStore(pool, 'public');
 * await store.createTable();
 * ```
 */
export class PostgresLeaseStore implements LeaseStore {
  readonly #pool: Pool;
  readonly #schema: string;
  readonly #table: string;

  constructor(pool: Pool, schema: string) {
    if (!SCHEMA_PATTERN.test(schema)) throw new RangeError(`schema must match ${SCHEMA_PATTERN.source}`);
    this.#pool = pool;
    this.#schema = schema;
    this.#table = `"${schema}".airlock_inflight_leases`;
  }

  /** The statements that make the table, for `createSharedLimits` to run once at startup. */
  get ddl(): string[] {
    return [
      `CREATE TABLE IF NOT EXISTS ${this.#table} (
        lease_id text PRIMARY KEY,
        key_hash text NOT NULL,
        expires_at timestamptz NOT NULL
      )`,
      `CREATE INDEX IF NOT EXISTS airlock_inflight_leases_key ON ${this.#table} (key_hash)`,
      `CREATE INDEX IF NOT EXISTS airlock_inflight_leases_expiry ON ${this.#table} (expires_at)`,
    ];
  }

  async acquire(leaseId: string, keyHash: string, caps: InFlightLimits, ttlMs: number): Promise<boolean> {
    // One simple-protocol query of several statements: one round trip and one implicit
    // transaction, so the advisory lock is held only while the server runs it. Parameters are not
    // allowed there: every value put into the text is checked to be hex or a safe integer. Each
    // statement reads a fresh snapshot, taken after the lock: the counts include every lease
    // committed before.
    for (const value of [leaseId, keyHash]) if (!HEX.test(value)) throw new RangeError('lease ids and keys are hex');
    for (const value of [caps.global, caps.perKey, ttlMs]) {
      if (!Number.isSafeInteger(value) || value < 1) throw new RangeError('caps and TTL are positive integers');
    }
    const results = (await this.#pool.query(
      `SELECT pg_advisory_xact_lock(hashtextextended('airlock.inflight:${this.#schema}', 0));
      DELETE FROM ${this.#table} WHERE expires_at <= now();
      INSERT INTO ${this.#table} (lease_id, key_hash, expires_at)
        SELECT '${leaseId}', '${keyHash}', now() + ${ttlMs} * interval '1 millisecond'
        WHERE (SELECT count(*) FROM ${this.#table}) < ${caps.global}
          AND (SELECT count(*) FROM ${this.#table} WHERE key_hash = '${keyHash}') < ${caps.perKey}
        RETURNING lease_id`,
    )) as unknown as { rowCount: number | null }[];
    return (results[results.length - 1]?.rowCount ?? 0) === 1;
  }

  async renew(leases: ReadonlyMap<string, string>, ttlMs: number): Promise<void> {
    // Unnamed statements: a named one would clash between schemas sharing a pool.
    await this.#pool.query({
      text: `UPDATE ${this.#table} SET expires_at = now() + $2 * interval '1 millisecond'
        WHERE lease_id = ANY ($1::text[]) AND expires_at > now()`,
      values: [[...leases.keys()], ttlMs],
    });
  }

  async release(leaseId: string): Promise<void> {
    await this.#pool.query({
      text: `DELETE FROM ${this.#table} WHERE lease_id = $1`,
      values: [leaseId],
    });
  }
}
