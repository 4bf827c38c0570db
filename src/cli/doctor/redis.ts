/**
 * The Redis check of `airlock doctor`: when `redis.url` is configured, one connection and a
 * PING, within a few seconds, never retried. The URL is shown without its password.
 *
 * @example
 * ```ts
 * await redisLine({ url: 'redis://127.0.0.1:6379' }); // ok: redis://127.0.0.1:6379 answers PING
 * ```
 */
import { reasonOf, withoutPassword, type CheckLine } from './check.js';

const TIMEOUT_MS = 3000;

/**
 * The Redis line: skipped when not configured, else whether the server answers PING.
 *
 * @example
 * ```ts
 * await redisLine(undefined); // { status: 'skip', check: 'redis', detail: 'not configured' }
 * ```
 */
export async function redisLine(redis: { url: string } | undefined): Promise<CheckLine> {
  if (redis === undefined) return { status: 'skip', check: 'redis', detail: 'not configured' };
  const shown = withoutPassword(redis.url);
  const { createClient } = await import('@redis/client');
  const client = createClient({
    url: redis.url,
    socket: { connectTimeout: TIMEOUT_MS, reconnectStrategy: false },
    disableOfflineQueue: true,
  });
  client.on('error', () => undefined);
  try {
    const answer = await withTimeout(
      (async () => {
        await client.connect();
        return client.ping();
      })(),
      TIMEOUT_MS + 500,
    );
    return answer === 'PONG'
      ? { status: 'ok', check: 'redis', detail: `${shown} answers PING` }
      : { status: 'fail', check: 'redis', detail: `${shown} answered PING with something else` };
  } catch (error) {
    return { status: 'fail', check: 'redis', detail: `${shown} is unreachable: ${reasonOf(error)}` };
  } finally {
    if (client.isOpen) client.destroy();
  }
}

async function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${ms / 1000} s`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
