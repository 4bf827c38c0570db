/**
 * The port check of `airlock doctor`: the configured address is free to bind, or, when
 * something already listens there, whether it is this Airlock (its `/healthz` answers and the
 * card of the config's first agent carries that agent's name) or something else.
 *
 * @example
 * ```ts
 * const line = await portLine(config, { bind: tryBind, get: getJson });
 * ```
 */
import { request } from 'node:http';
import { createServer } from 'node:net';
import type { AirlockConfig } from '../../config/load.js';
import type { CheckLine } from './check.js';

/**
 * How the port check reaches the network; tests may pass their own.
 *
 * @example
 * ```ts
 * const probe: PortProbe = { bind: tryBind, get: getJson };
 * ```
 */
export interface PortProbe {
  /** Binds and releases the address: `undefined` when free, else the system error's code. */
  bind: (host: string, port: number) => Promise<string | undefined>;
  /** GETs a URL: the status (0 when nothing answered in time) and the body parsed as JSON, if it is. */
  get: (url: string, headers: Record<string, string>) => Promise<HttpAnswer>;
}

/**
 * What a GET got.
 *
 * @example
 * ```ts
 * const answer: HttpAnswer = { status: 200, body: { status: 'ok' } };
 * ```
 */
export interface HttpAnswer {
  status: number;
  body?: unknown;
}

/**
 * Binds `host:port` and closes it again: `undefined` when that worked, else the error code
 * (`EADDRINUSE`, `EACCES`, `EADDRNOTAVAIL`, …).
 *
 * @example
 * ```ts
 * await tryBind('127.0.0.1', 41240); // undefined: free
 * ```
 */
export function tryBind(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'unknown error'));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}

const PROBE_TIMEOUT_MS = 2000;

/**
 * The port line for a loaded config.
 *
 * @example
 * ```ts
 * await portLine(config, { bind: tryBind, get: getJson }); // { status: 'ok', check: 'port', detail: '127.0.0.1:41240 is free' }
 * ```
 */
export async function portLine(config: AirlockConfig, probe: PortProbe): Promise<CheckLine> {
  const { host, port } = config.server;
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  if (port === 0) return { status: 'ok', check: 'port', detail: `${host}:0: a free port is picked at start` };
  const problem = await probe.bind(host, port);
  if (problem === undefined) return { status: 'ok', check: 'port', detail: `${where} is free` };
  if (problem !== 'EADDRINUSE') {
    const why =
      problem === 'EACCES' ? 'permission denied' : problem === 'EADDRNOTAVAIL' ? 'no such address here' : problem;
    return { status: 'fail', check: 'port', detail: `${where} cannot be bound: ${why}` };
  }
  const occupant = await identify(config, probe.get);
  switch (occupant) {
    case 'this':
      return { status: 'ok', check: 'port', detail: `${where} is served by this Airlock (it is running)` };
    case 'unsure':
      return {
        status: 'warn',
        check: 'port',
        detail: `${where} is served by an Airlock whose cards need credentials: cannot tell whether it is this one`,
      };
    case 'other-airlock':
      return {
        status: 'fail',
        check: 'port',
        detail: `${where} is in use by another Airlock (it does not publish "${config.agents[0]?.slug ?? ''}" as configured here)`,
      };
    case 'other':
      return { status: 'fail', check: 'port', detail: `${where} is in use by another process` };
  }
}

type Occupant = 'this' | 'unsure' | 'other-airlock' | 'other';

/** Who answers at the configured address: Airlock's liveness route, then the first agent's card. */
async function identify(config: AirlockConfig, get: PortProbe['get']): Promise<Occupant> {
  const { port, basePath } = config.server;
  // A wildcard bind answers on loopback too; the gate admits only loopback callers by default.
  const host = config.server.host === '0.0.0.0' || config.server.host === '::' ? '127.0.0.1' : config.server.host;
  const base = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const health = await get(`${base}/healthz`, {});
  if (health.status !== 200 || (health.body as { status?: unknown } | undefined)?.status !== 'ok') return 'other';
  const agent = config.agents[0];
  if (agent === undefined) return 'unsure';
  const card = await get(`${base}${basePath}/${agent.slug}/.well-known/agent-card.json`, {
    'A2A-Version': '1.0',
  });
  if (card.status === 401 || card.status === 403) return 'unsure';
  const name = (card.body as { name?: unknown } | undefined)?.name;
  return card.status === 200 && name === agent.name ? 'this' : 'other-airlock';
}

/**
 * A plain loopback GET with a 2 s cap, whose socket is destroyed when it ends, whatever answered
 * (a process that accepts and never answers must not keep doctor running).
 *
 * @example
 * ```ts
 * await getJson('http://127.0.0.1:41240/healthz', {}); // { status: 200, body: { status: 'ok' } }
 * ```
 */
export function getJson(url: string, headers: Record<string, string>): Promise<HttpAnswer> {
  return new Promise((resolve) => {
    const req = request(url, { headers, agent: false, timeout: PROBE_TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > 256 * 1024) req.destroy();
        else chunks.push(chunk);
      });
      res.on('end', () => {
        req.destroy();
        try {
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown });
        } catch {
          resolve({ status: res.statusCode ?? 0 });
        }
      });
      res.on('error', () => resolve({ status: 0 }));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve({ status: 0 }));
    req.on('close', () => resolve({ status: 0 }));
    req.end();
  });
}
