/**
 * The metrics listener: a `node:http` server of its own (never the A2A port), answering only
 * `GET /metrics` with the registry's exposition text. With a token configured, the request
 * must carry `Authorization: Bearer <token>`, compared as SHA-256 digests in constant time;
 * else 401. Every other path is 404, every other method on `/metrics` 405.
 *
 * @example
 * ```ts
 * const listener = createMetricsListener({ registry, host: '127.0.0.1', port: 9464, logger });
 * const url = await listener.listen(); // http://127.0.0.1:9464/metrics
 * await listener.close();
 * ```
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { hostForUrl } from '../cards.js';
import type { Logger } from '../log.js';

/**
 * The listener's settings.
 *
 * @example
 * ```ts
 * const options: MetricsListenerOptions = { registry, host: '127.0.0.1', port: 0, logger };
 * ```
 */
export interface MetricsListenerOptions {
  registry: Registry;
  host: string;
  port: number;
  /** SHA-256 of the bearer token scrapers must send; absent: none asked. */
  tokenDigest?: Buffer | undefined;
  logger: Logger;
}

/**
 * A started-or-not metrics listener.
 *
 * @example
 * ```ts
 * const url: string = await listener.listen();
 * ```
 */
export interface MetricsListener {
  /** Binds host and port; resolves with the scrape URL (`…/metrics`). */
  listen(): Promise<string>;
  close(): Promise<void>;
}

/**
 * Makes the listener (not yet bound).
 *
 * @example
 * ```ts
 * const listener = createMetricsListener({ registry: series.registry, host, port, logger });
 * ```
 */
export function createMetricsListener(options: MetricsListenerOptions): MetricsListener {
  const { registry, tokenDigest, logger } = options;
  const server = createServer({ headersTimeout: 10_000, requestTimeout: 15_000 }, (req, res) => {
    answer(req, res).catch((error: unknown) => {
      logger.error({ event: 'metrics_failed', error: error instanceof Error ? error.message : String(error) });
      if (!res.headersSent) send(res, 500, 'internal error\n');
      else res.destroy();
    });
  });

  async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path !== '/metrics') return send(res, 404, 'not found\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'method not allowed\n', { allow: 'GET' });
    if (tokenDigest !== undefined && !bearerMatches(req.headers.authorization, tokenDigest)) {
      return send(res, 401, 'unauthorized\n', { 'www-authenticate': 'Bearer realm="airlock-metrics"' });
    }
    const text = await registry.metrics();
    res.writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' });
    res.end(req.method === 'HEAD' ? undefined : text);
  }

  return {
    listen: () =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(options.port, options.host, () => {
          server.off('error', reject);
          const { port } = server.address() as AddressInfo;
          resolve(`http://${hostForUrl(options.host)}:${port}/metrics`);
        });
      }),
    close: () =>
      new Promise((resolve) => {
        if (!server.listening) return resolve();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * Whether an Authorization header carries the token whose digest is `digest`. Both sides are
 * hashed, so the comparison is constant-time whatever the length sent.
 *
 * @example
 * ```ts
 * bearerMatches(`Bearer ${token}`, hashToken(token)); // true
 * bearerMatches(undefined, hashToken(token));         // false
 * ```
 */
export function bearerMatches(header: string | undefined, digest: Buffer): boolean {
  if (header === undefined || header.length > 4096) return false;
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  if (match === null) return false;
  const sent = createHash('sha256').update(match[1]!, 'utf8').digest();
  return timingSafeEqual(sent, digest);
}

function send(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', ...headers });
  res.end(body);
}
