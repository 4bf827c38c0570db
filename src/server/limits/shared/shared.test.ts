/**
 * Shared limits against real servers. Two `createSharedLimits` in one process act as two
 * replicas over the same Redis keys or PostgreSQL schema; a TCP proxy in front of the server
 * stands for an outage (cut) and a recovery (restore).
 *
 * @example
 * ```sh
 * node --import tsx --test src/server/limits/shared/shared.test.ts
 * ```
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  dropSchema,
  postgresSkip,
  POSTGRES_URL,
  redisSkip,
  REDIS_URL,
  startTcpProxy,
  uniqueName,
  waitFor,
  withRedis,
} from '../../../../test/helpers/backing-services.js';
import { StoreUnavailableError } from '../../../tasks/stores/errors.js';
import type { Release } from '../concurrency.js';
import { createSharedLimits, type SharedLimits, type SharedLimitsStore } from './index.js';
import { PostgresLeaseStore, RedisLeaseStore } from './in-flight.js';
import { createLimitsRedisClient } from './redis-client.js';
import pg from 'pg';

const pgSkip = await postgresSkip();
const rdSkip = await redisSkip();

const LIMITS = {
  requestsPerMinute: 5,
  authFailuresPerMinute: 3,
  maxConcurrentTasks: 3,
  maxConcurrentTasksPerPrincipal: 2,
};

function recordingLogger(): {
  lines: Record<string, unknown>[];
  info: (f: Record<string, unknown>) => void;
  warn: (f: Record<string, unknown>) => void;
} {
  const lines: Record<string, unknown>[] = [];
  return { lines, info: (fields) => lines.push(fields), warn: (fields) => lines.push(fields) };
}

const now = (): number => performance.timeOrigin + performance.now();

/** Waits (up to 10 s) until the limits, asked on `principal`'s behalf, use the shared store again. */
function sharedAgain(limits: SharedLimits, principal: string): Promise<void> {
  return waitFor(
    async () => {
      await limits.rate.take(principal, now());
      return !limits.degraded;
    },
    10_000,
    'the shared store to be used again',
  );
}

function sharedLimitsSuite(
  name: string,
  skip: string | false,
  where: () => SharedLimitsStore & { cleanup?: () => Promise<void> },
  targetPort: number,
  directUrl: string,
): void {
  describe(`shared limits over ${name}`, { skip }, () => {
    let a: SharedLimits;
    let b: SharedLimits;
    let store: SharedLimitsStore & { cleanup?: () => Promise<void> };
    before(async () => {
      store = where();
      a = await createSharedLimits(store, LIMITS, { leaseTtlMs: 600 });
      b = await createSharedLimits(store, LIMITS, { leaseTtlMs: 600 });
    });
    after(async () => {
      await a.close();
      await b.close();
      await store.cleanup?.();
    });

    it('counts one rate across replicas: the (limit + 1)th request on either is refused', async () => {
      const verdicts: (true | number)[] = [];
      for (let i = 0; i < LIMITS.requestsPerMinute; i++) {
        verdicts.push(await (i % 2 === 0 ? a : b).rate.take('client:rate', now()));
      }
      assert.deepEqual(verdicts, [true, true, true, true, true]);
      const onA = await a.rate.take('client:rate', now());
      const onB = await b.rate.take('client:rate', now());
      for (const verdict of [onA, onB]) {
        assert.equal(typeof verdict, 'number');
        assert.ok((verdict as number) >= 1 && (verdict as number) <= 60, `retry after ${verdict}`);
      }
      assert.equal(await b.rate.take('client:other', now()), true, 'another principal has its own budget');
      assert.equal(a.degraded, false);
    });

    it('locks an address out on every replica after failures on any', async () => {
      assert.equal(await a.authFailures.isLocked('203.0.113.7', now()), 0);
      await a.authFailures.recordFailure('203.0.113.7', now());
      await b.authFailures.recordFailure('203.0.113.7', now());
      assert.equal(await b.authFailures.isLocked('203.0.113.7', now()), 0, 'two failures of three');
      const third = await a.authFailures.recordFailure('203.0.113.7', now());
      assert.ok(third > 0);
      assert.ok((await b.authFailures.isLocked('203.0.113.7', now())) > 0);
      assert.ok((await a.authFailures.isLocked('203.0.113.7', now())) > 0);
      // One IPv6 host's /64 counts as one address.
      for (const address of ['2001:db8::1', '2001:db8::2', '2001:db8::3'])
        await b.authFailures.recordFailure(address, now());
      assert.ok((await a.authFailures.isLocked('2001:db8::ffff', now())) > 0);
      assert.equal(await a.authFailures.isLocked('203.0.113.8', now()), 0);
    });

    it('caps tasks in flight across replicas, globally and per principal', async () => {
      const first = await a.inFlight.tryAcquire('client:x');
      const second = await b.inFlight.tryAcquire('client:x');
      assert.ok(first !== null && second !== null);
      assert.equal(await a.inFlight.tryAcquire('client:x'), null, 'the principal holds its 2 slots');
      const third = await b.inFlight.tryAcquire('client:y');
      assert.ok(third !== null);
      assert.equal(await a.inFlight.tryAcquire('client:z'), null, 'all 3 slots are taken');
      first();
      first(); // twice: no effect
      // Releasing deletes the lease in the background: the slot is free a round trip later.
      let fourth: Release | null = null;
      await waitFor(
        async () => (fourth = await a.inFlight.tryAcquire('client:z')) !== null,
        2_000,
        'the released slot on the other replica',
      );
      assert.equal(await b.inFlight.tryAcquire('client:w'), null);
      // Held past several TTLs: renewals keep the slots taken.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      assert.equal(await b.inFlight.tryAcquire('client:w'), null, 'renewed leases still count');
      second();
      third();
      (fourth as Release | null)?.();
      await waitFor(async () => (await b.inFlight.tryAcquire('client:w')) !== null, 2_000, 'the released slots');
    });

    it('frees the slots of a replica that died, once their lease runs out', async () => {
      // A lease taken and never renewed nor released is what a crashed replica leaves behind.
      const caps = { global: 100, perKey: 1 };
      const { leases, close } = await leaseStoreFor(name, store);
      try {
        assert.equal(await leases.acquire('deadbeef', 'c0ffee', caps, 300), true);
        assert.equal(await leases.acquire('feedface', 'c0ffee', caps, 600), false, 'the dead lease still counts');
        await new Promise((resolve) => setTimeout(resolve, 400));
        assert.equal(await leases.acquire('feedface', 'c0ffee', caps, 600), true, 'it ran out');
        await leases.release('feedface', 'c0ffee');
      } finally {
        await close();
      }
    });

    it('falls back to local limits at once when the store goes away, and back when it returns', async () => {
      const proxy = await startTcpProxy(targetPort);
      const logger = recordingLogger();
      const through: SharedLimitsStore =
        'redisUrl' in store
          ? { redisUrl: proxy.url(directUrl), keyPrefix: store.keyPrefix ?? 'airlock' }
          : {
              pgUrl: proxy.url(directUrl),
              ...('schema' in store && store.schema !== undefined && { schema: store.schema }),
            };
      const limits = await createSharedLimits(
        through,
        { ...LIMITS, requestsPerMinute: 3 },
        {
          logger,
          timeoutMs: 200,
          cooldownMs: 300,
        },
      );
      try {
        assert.equal(await limits.rate.take('client:fault', now()), true);
        await proxy.cut();
        const started = Date.now();
        const verdicts: (true | number)[] = [];
        for (let i = 0; i < 4; i++) verdicts.push(await limits.rate.take('client:fault', now()));
        assert.ok(Date.now() - started < 1_500, `answered in ${Date.now() - started} ms`);
        // The local fallback has its own budget of 3: the 4th is refused.
        assert.deepEqual(verdicts.slice(0, 3), [true, true, true]);
        assert.equal(typeof verdicts[3], 'number');
        assert.equal(limits.degraded, true);
        const release = await limits.inFlight.tryAcquire('client:fault');
        assert.ok(release !== null, 'in-flight slots come from the local caps');
        release();
        assert.equal(
          logger.lines.filter((line) => line.event === 'shared_limits_unavailable').length,
          1,
          'one line per outage',
        );
        await proxy.restore();
        await sharedAgain(limits, 'client:recovered');
        assert.ok(logger.lines.some((line) => line.event === 'shared_limits_recovered'));
      } finally {
        await limits.close();
        await proxy.close();
      }
    });
  });
}

async function leaseStoreFor(
  name: string,
  store: SharedLimitsStore,
): Promise<{ leases: RedisLeaseStore | PostgresLeaseStore; close: () => Promise<void> }> {
  if (name === 'Redis') {
    const client = createLimitsRedisClient(REDIS_URL, 2_000);
    await client.connect();
    const prefix = 'redisUrl' in store ? (store.keyPrefix ?? 'airlock') : 'airlock';
    return { leases: new RedisLeaseStore(client, prefix), close: async () => client.destroy() };
  }
  const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 2 });
  const schema = 'schema' in store && store.schema !== undefined ? store.schema : 'public';
  return { leases: new PostgresLeaseStore(pool, schema), close: () => pool.end() };
}

sharedLimitsSuite(
  'Redis',
  rdSkip,
  () => {
    const keyPrefix = uniqueName('airlock_test');
    return {
      redisUrl: REDIS_URL,
      keyPrefix,
      cleanup: () =>
        withRedis(async (client) => {
          const keys = await client.keys(`${keyPrefix}:*`);
          if (keys.length > 0) await client.del(keys);
        }),
    };
  },
  Number(new URL(REDIS_URL).port || 6379),
  REDIS_URL,
);

sharedLimitsSuite(
  'PostgreSQL',
  pgSkip,
  () => {
    const schema = uniqueName('airlock_test');
    return { pgUrl: POSTGRES_URL, schema, cleanup: () => dropSchema(schema) };
  },
  Number(new URL(POSTGRES_URL).port || 5432),
  POSTGRES_URL,
);

describe('shared limits, unreachable stores', () => {
  it('refuses to start on a PostgreSQL it cannot reach, quickly and without the password', async () => {
    const started = Date.now();
    await assert.rejects(
      createSharedLimits({ pgUrl: 'postgres://user:s3cret@127.0.0.1:1/none' }, LIMITS, { timeoutMs: 300 }),
      (error: unknown) => error instanceof StoreUnavailableError && !error.message.includes('s3cret'),
    );
    assert.ok(Date.now() - started < 3_000);
  });

  it('starts on a Redis it cannot reach, limiting locally until it can', async () => {
    const logger = recordingLogger();
    const limits = await createSharedLimits({ redisUrl: 'redis://127.0.0.1:1' }, LIMITS, {
      logger,
      connectTimeoutMs: 300,
      timeoutMs: 100,
    });
    try {
      assert.equal(limits.degraded, true);
      const verdicts: (true | number)[] = [];
      for (let i = 0; i < 6; i++) verdicts.push(await limits.rate.take('client:a', now()));
      assert.deepEqual(verdicts.slice(0, 5), [true, true, true, true, true]);
      assert.equal(typeof verdicts[5], 'number');
      assert.equal(logger.lines.filter((line) => line.event === 'shared_limits_unavailable').length, 1);
    } finally {
      await limits.close();
    }
  });
});

describe('shared limits over PostgreSQL, a network gone silent', { skip: pgSkip }, () => {
  it(
    'drops the connections left waiting (the pool watchdog) and uses the shared store again',
    { timeout: 20_000 },
    async () => {
      const schema = uniqueName('airlock_test');
      const proxy = await startTcpProxy(Number(new URL(POSTGRES_URL).port || 5432));
      const limits = await createSharedLimits(
        { pgUrl: proxy.url(POSTGRES_URL), schema },
        { ...LIMITS, requestsPerMinute: 100 },
        { logger: recordingLogger(), timeoutMs: 200, cooldownMs: 300 },
      );
      try {
        assert.equal(await limits.rate.take('client:quiet', now()), true);
        // Bytes are dropped, nothing is closed: every query sent now waits on its connection for
        // ever, unless the client gives up on it (after 4 × timeoutMs, at least 2 s).
        proxy.silence();
        for (let i = 0; i < 6; i++) await limits.rate.take('client:quiet', now());
        assert.equal(limits.degraded, true, 'the guard answered from the local limits');
        await new Promise((resolve) => setTimeout(resolve, 3_500));
        proxy.speak();
        await sharedAgain(limits, 'client:back');
      } finally {
        await limits.close();
        await proxy.close();
        await dropSchema(schema);
      }
    },
  );
});
