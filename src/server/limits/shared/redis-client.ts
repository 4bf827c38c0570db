/**
 * The Redis connection the shared limits use: fails fast while disconnected (the limits' local
 * fallback answers instead of a queue growing) and reconnects by itself with backoff.
 *
 * @example
 * ```ts
 * const client = createLimitsRedisClient('redis://127.0.0.1:6379', 5_000);
 * await client.connect();
 * ```
 */
import { createClient } from '@redis/client';

/**
 * A new, not yet connected, client. Its `error` events are heard (and dropped: failures reach
 * callers through the limits' guard), so an outage cannot crash the process.
 *
 * @example
 * ```ts
 * const client = createLimitsRedisClient(url, 5_000);
 * ```
 */
export function createLimitsRedisClient(url: string, connectTimeoutMs: number) {
  const client = createClient({
    url,
    name: 'airlock-limits',
    disableOfflineQueue: true,
    pingInterval: 10_000,
    socket: {
      connectTimeout: connectTimeoutMs,
      reconnectStrategy: (retries) => Math.min(5_000, 100 * 2 ** Math.min(retries, 10)),
    },
  });
  client.on('error', () => undefined);
  return client;
}

/**
 * The client type {@link createLimitsRedisClient} returns.
 *
 * @example
 * ```ts
 * function use(client: LimitsRedisClient): Promise<number> { return client.zCard('k'); }
 * ```
 */
export type LimitsRedisClient = ReturnType<typeof createLimitsRedisClient>;
