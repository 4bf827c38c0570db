/**
 * PostgreSQL and Redis for tests that need the real servers (shared buses, shared limits,
 * replicas). They come from `DATABASE_URL` and `REDIS_URL`, else the local defaults. When one
 * cannot be reached, the suites that need it are skipped with a note, except under CI
 * (`CI=true`), where that is a failure: CI starts both.
 *
 * @example
 * ```ts
 * const pgSkip = await postgresSkip();
 * describe('over PostgreSQL', { skip: pgSkip }, () => { ... });
 * ```
 */
import { randomBytes } from 'node:crypto';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { Transform } from 'node:stream';
import { createClient } from '@redis/client';
import pg from 'pg';

export const POSTGRES_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** `false` when PostgreSQL answers, else the reason to skip (throws under CI). */
export async function postgresSkip(): Promise<string | false> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return false;
  } catch (error) {
    return unreachable('PostgreSQL', error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** `false` when Redis answers, else the reason to skip (throws under CI). */
export async function redisSkip(): Promise<string | false> {
  const client = createClient({ url: REDIS_URL, socket: { connectTimeout: 3_000, reconnectStrategy: false } });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
    return false;
  } catch (error) {
    return unreachable('Redis', error);
  } finally {
    if (client.isOpen) client.destroy();
  }
}

function unreachable(what: string, error: unknown): string {
  const reason = `${what} is not reachable (${error instanceof Error ? error.message : String(error)})`;
  if (process.env.CI === 'true') throw new Error(`${reason}; CI must start ${what}`);
  return `${reason}: skipped`;
}

/** A fresh name, `<prefix>_<12 hex>`: schemas, channels and key prefixes no other run uses. */
export function uniqueName(prefix: string): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`;
}

/** Runs `work` on a fresh admin connection. */
export async function withPostgres<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

function newRedisClient() {
  return createClient({ url: REDIS_URL });
}

/** Runs `work` on a fresh Redis connection. */
export async function withRedis<T>(work: (client: ReturnType<typeof newRedisClient>) => Promise<T>): Promise<T> {
  const client = newRedisClient();
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    client.destroy();
  }
}

/** Drops a schema and everything in it. */
export async function dropSchema(schema: string): Promise<void> {
  await withPostgres((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
}

/** Polls `check` until it returns true, or fails after `timeoutMs`. */
export async function waitFor(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 5_000,
  what = 'condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The p-th percentile (0..100) of `values`, nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

/**
 * A TCP proxy in front of a server, that a test can cut (an outage: the listener closes and every
 * connection through it is destroyed) and restore on the same port, or silence (a dead network:
 * connections stay open and every byte either way is dropped) until it speaks again.
 */
export interface TcpProxy {
  readonly port: number;
  /** Connection URL with the proxy's port in place of the target's. */
  url(target: string): string;
  cut(): Promise<void>;
  restore(): Promise<void>;
  /** Drops every byte from now on, on the connections open and on new ones. */
  silence(): void;
  /** Forwards again (what was dropped is lost: connections open meanwhile are broken). */
  speak(): void;
  close(): Promise<void>;
}

/** Starts a {@link TcpProxy} to `127.0.0.1:targetPort` on a free loopback port. */
export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  let silent = false;
  const gate = (): Transform =>
    new Transform({
      transform(chunk: Buffer, _encoding, done) {
        done(null, silent ? undefined : chunk);
      },
    });
  const listen = async (): Promise<void> => {
    const next = createServer((client) => {
      const upstream = connect(targetPort, '127.0.0.1');
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      client.pipe(gate()).pipe(upstream);
      upstream.pipe(gate()).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      next.once('error', reject);
      next.listen(port, '127.0.0.1', () => resolve());
    });
    server = next;
    port = (next.address() as { port: number }).port;
  };
  const cut = async (): Promise<void> => {
    const current = server;
    server = undefined;
    for (const socket of sockets) socket.destroy();
    sockets.clear();
    if (current !== undefined) await new Promise<void>((resolve) => current.close(() => resolve()));
  };
  await listen();
  return {
    get port() {
      return port;
    },
    url: (target) => {
      const parsed = new URL(target);
      parsed.port = String(port);
      return parsed.toString();
    },
    cut,
    restore: listen,
    silence: () => {
      silent = true;
    },
    speak: () => {
      silent = false;
    },
    close: cut,
  };
}
