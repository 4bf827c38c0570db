/**
 * The MCP server over Streamable HTTP ({@link startMcpHttp}), on `node:http`, stateless, one
 * path (`/mcp`). There is no authentication, so it binds loopback only (127.0.0.1 by default)
 * and refuses any other bind address unless `allowNonLoopback` is set; Host and Origin headers
 * must name a loopback host (the SDK's DNS-rebinding checks), and bodies are capped while they
 * are read (the gateway's admission kit: src/server/admission/).
 *
 * @example
 * ```ts
 * const http = await startMcpHttp({ client, autonomy: 'read_only' }, { port: 0 });
 * console.error(http.url);                           // http://127.0.0.1:54321/mcp
 * await http.close();
 * ```
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createMcpHandler,
  hostHeaderValidationResponse,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  originValidationResponse,
} from '@modelcontextprotocol/server';
import ipaddr from 'ipaddr.js';
import { readBoundedBody } from '../server/admission/body.js';
import { compose, REFUSED, type Step } from '../server/admission/compose.js';
import { airlockMcpFactory, type AirlockMcpOptions } from './server.js';

/**
 * The one HTTP path the Streamable HTTP mode serves.
 *
 * @example
 * ```ts
 * new URL(MCP_HTTP_PATH, 'http://127.0.0.1:8808').href; // 'http://127.0.0.1:8808/mcp'
 * ```
 */
export const MCP_HTTP_PATH = '/mcp';

/**
 * The default HTTP port of `airlock mcp --http`.
 *
 * @example
 * ```ts
 * await startMcpHttp(options, { port: DEFAULT_MCP_PORT });
 * ```
 */
export const DEFAULT_MCP_PORT = 41249;

/**
 * Largest HTTP request body read, in bytes. A tools/call carries at most 8192 characters of
 * message; even fully \u-escaped that stays far below this.
 *
 * @example
 * ```ts
 * body.length <= MAX_MCP_BODY_BYTES; // or the request was answered 413
 * ```
 */
export const MAX_MCP_BODY_BYTES = 256 * 1024;

/** A body that has not arrived whole in this time is refused (408). */
const BODY_TIMEOUT_MS = 30_000;

/**
 * Where and how to listen. `host` defaults to 127.0.0.1 and must be loopback unless
 * `allowNonLoopback` is set (there is no authentication: anyone who reaches the port can
 * call the tools).
 *
 * @example
 * ```ts
 * const listen: McpHttpListenOptions = { host: '127.0.0.1', port: 0 };
 * ```
 */
export interface McpHttpListenOptions {
  host?: string;
  port?: number;
  allowNonLoopback?: boolean;
  onerror?: (error: Error) => void;
}

/**
 * A running HTTP server: its MCP endpoint URL, and how to stop it.
 *
 * @example
 * ```ts
 * const { url, close } = await startMcpHttp(options, { port: 0 });
 * ```
 */
export interface McpHttpHandle {
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Whether a bind address is loopback: `localhost`, or an IP literal in 127.0.0.0/8 or ::1
 * (IPv4-mapped forms included). Names other than `localhost` are not resolved: not loopback.
 *
 * @example
 * ```ts
 * isLoopbackBindHost('127.0.0.1'); // true
 * isLoopbackBindHost('0.0.0.0');   // false
 * ```
 */
export function isLoopbackBindHost(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (bare.toLowerCase() === 'localhost') return true;
  // Strict literals only: no shorthand spellings (127.1) for something that is about to be bound.
  if (!ipaddr.IPv4.isValidFourPartDecimal(bare) && !(bare.includes(':') && ipaddr.IPv6.isValid(bare))) return false;
  return ipaddr.process(bare).range() === 'loopback';
}

/**
 * Serves the tools over Streamable HTTP at `/mcp` (stateless; 2025-era and current protocol
 * revisions, as the SDK's `createMcpHandler` serves them).
 *
 * @example
 * ```ts
 * const http = await startMcpHttp({ client, autonomy: 'read_only' }, { port: 41249 });
 * ```
 * @throws Error for a non-loopback host without `allowNonLoopback`, or when the port cannot be bound
 */
export async function startMcpHttp(
  options: AirlockMcpOptions,
  listen: McpHttpListenOptions = {},
): Promise<McpHttpHandle> {
  const host = listen.host ?? '127.0.0.1';
  const loopback = isLoopbackBindHost(host);
  if (!loopback && listen.allowNonLoopback !== true) {
    throw new Error(
      `refusing to bind ${host}: the MCP HTTP mode has no authentication and binds loopback only ` +
        '(127.0.0.1, ::1 or localhost)',
    );
  }
  const onerror = listen.onerror ?? (() => undefined);
  const handler = createMcpHandler(airlockMcpFactory(options), {
    maxRequestBodySize: MAX_MCP_BODY_BYTES,
    onerror,
  });
  // DNS rebinding: a page in a browser may reach a loopback port under a name it controls; the
  // Host and Origin checks refuse that. A deliberate non-loopback bind adds its own address.
  const bare = host.startsWith('[') ? host.slice(1, -1) : host;
  const extra = loopback ? [] : [bare.includes(':') ? `[${bare}]` : bare];
  const hostnames = [...localhostAllowedHostnames(), ...extra];
  const origins = [...localhostAllowedOrigins(), ...extra];

  const server = createServer((req, res) => {
    serveHttp(req, res, handler.fetch, hostnames, origins).catch((error: unknown) => {
      onerror(error instanceof Error ? error : new Error(String(error)));
      if (!res.headersSent) writeJsonError(res, 500, -32603, 'internal error');
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port ?? DEFAULT_MCP_PORT, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', onerror);
  const { port } = server.address() as AddressInfo;
  const shownHost = bare.includes(':') ? `[${bare}]` : bare;
  return {
    url: `http://${shownHost}:${port}${MCP_HTTP_PATH}`,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await handler.close();
      await closed;
    },
  };
}

type FetchHandler = (request: Request) => Promise<Response>;

/** One HTTP exchange as the steps see it: the request, and its body once read. */
interface McpExchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly url: URL;
  readonly method: string;
  body: Buffer | undefined;
}

/** Only the MCP endpoint is served. */
const onEndpoint: Step<McpExchange, McpExchange> = (exchange) => {
  if (exchange.url.pathname === MCP_HTTP_PATH) return exchange;
  writeJsonError(exchange.res, 404, -32600, `not found: the MCP endpoint is ${MCP_HTTP_PATH}`);
  return REFUSED;
};

/** A POST body, read under the size and time caps (413 / 408, and the connection closes). */
const readMcpBody: Step<McpExchange, McpExchange> = async (exchange) => {
  if (exchange.method !== 'POST') return exchange;
  const { req, res } = exchange;
  const body = await readBoundedBody(req, res, MAX_MCP_BODY_BYTES, BODY_TIMEOUT_MS, (status) => {
    res.setHeader('connection', 'close');
    writeJsonError(res, status, -32600, status === 413 ? 'request body too large' : 'request body timeout');
  });
  if (body === REFUSED) return REFUSED;
  exchange.body = body;
  return exchange;
};

const admitExchange = compose(onEndpoint, readMcpBody);

async function serveHttp(
  req: IncomingMessage,
  res: ServerResponse,
  fetchHandler: FetchHandler,
  hostnames: string[],
  origins: string[],
): Promise<void> {
  const exchange: McpExchange = {
    req,
    res,
    url: new URL(req.url ?? '/', 'http://127.0.0.1'),
    method: req.method ?? 'GET',
    body: undefined,
  };
  const admitted = await admitExchange(exchange);
  if (admitted === REFUSED) return;
  const { url, method, body } = admitted;
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  // The client going away aborts the exchange (the SDK listens on the request's signal).
  const abort = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  const request = new Request(new URL(url.pathname + url.search, 'http://127.0.0.1'), {
    method,
    headers,
    signal: abort.signal,
    ...(body !== undefined && { body }),
  });
  const response =
    hostHeaderValidationResponse(request, hostnames) ??
    originValidationResponse(request, origins) ??
    (await fetchHandler(request));
  res.statusCode = response.status;
  response.headers.forEach((value, name) => res.setHeader(name, value));
  if (response.body === null) return void res.end();
  res.flushHeaders();
  try {
    for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
      if (res.destroyed) break;
      // Backpressure; a client that goes away aborts the wait (and the exchange).
      if (!res.write(chunk)) await once(res, 'drain', { signal: abort.signal });
    }
  } catch (error) {
    if (abort.signal.aborted) return;
    throw error;
  }
  res.end();
}

function writeJsonError(res: ServerResponse, status: number, code: number, message: string): void {
  res.statusCode = status;
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }));
}
