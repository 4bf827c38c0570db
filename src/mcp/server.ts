/**
 * The MCP server over the outbound tools, on `@modelcontextprotocol/server` v2: a factory of
 * `McpServer` instances (the SDK builds one per stdio connection, or per HTTP request), and
 * the two ways to serve it.
 *
 * - stdio: {@link serveMcpStdio}. stdout carries MCP frames only; nothing else may write there.
 * - Streamable HTTP: {@link startMcpHttp}, on `node:http`, stateless, one path (`/mcp`). There
 *   is no authentication, so it binds loopback only (127.0.0.1 by default) and refuses any
 *   other bind address unless `allowNonLoopback` is set; Host and Origin headers must name a
 *   loopback host (the SDK's DNS-rebinding checks), and bodies are capped while they are read.
 *
 * @example
 * ```ts
 * const options = { client, autonomy: 'read_only' } as const;
 * const stdio = serveMcpStdio(options);              // until stdin ends: await stdio.closed
 * const http = await startMcpHttp(options, { port: 0 });
 * console.error(http.url);                           // http://127.0.0.1:54321/mcp
 * await http.close();
 * ```
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import {
  McpServer,
  createMcpHandler,
  hostHeaderValidationResponse,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  originValidationResponse,
  type CallToolResult,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { StdioServerTransport, serveStdio } from '@modelcontextprotocol/server/stdio';
import ipaddr from 'ipaddr.js';
import { readBody } from '../server/body.js';
import {
  A2aTools,
  LIST_AGENTS_INPUT,
  TOOL_NAMES,
  getTaskInputSchema,
  sendInputSchema,
  type A2aToolsOptions,
  type ToolDefinition,
  type ToolOutput,
} from './tools.js';

/**
 * The server's name and version in the MCP handshake.
 *
 * @example
 * ```ts
 * mcpClient.getServerVersion(); // { name: 'airlock', version: '0.1.0' }
 * ```
 */
export const MCP_SERVER_INFO = { name: 'airlock', version: '0.1.0' } as const;

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
export const DEFAULT_MCP_PORT = 41242;

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
 * How often a waiting `a2a_send` reports progress, when the caller asked for progress (a
 * `progressToken`): a host that resets its request timeout on progress then waits as long as
 * the entry's `max_wait_s`, not just its own default (often 60 s).
 *
 * @example
 * ```ts
 * airlockMcpFactory({ client, autonomy: 'read_only', progressIntervalMs: DEFAULT_PROGRESS_INTERVAL_MS });
 * ```
 */
export const DEFAULT_PROGRESS_INTERVAL_MS = 10_000;

/**
 * What the server needs: the tools' options (client, autonomy, principal key), and how often
 * a waiting send reports progress.
 *
 * @example
 * ```ts
 * const options: AirlockMcpOptions = { client, autonomy: 'read_only' };
 * ```
 */
export type AirlockMcpOptions = A2aToolsOptions & { progressIntervalMs?: number };

/**
 * Builds one `McpServer` with the tools registered.
 *
 * @example
 * ```ts
 * const server = createAirlockMcpServer(new A2aTools({ client, autonomy: 'read_only' }));
 * // or, reporting progress every 5 s while a send waits:
 * const patient = createAirlockMcpServer(new A2aTools({ client, autonomy: 'read_only' }), 5000);
 * await server.connect(transport);
 * ```
 */
export function createAirlockMcpServer(
  tools: A2aTools,
  progressIntervalMs: number = DEFAULT_PROGRESS_INTERVAL_MS,
): McpServer {
  const server = new McpServer({ ...MCP_SERVER_INFO }, { capabilities: { tools: {} } });
  const definitions = new Map<string, ToolDefinition>(tools.definitions().map((tool) => [tool.name, tool]));
  const config = (name: ToolDefinition['name']) => {
    const definition = definitions.get(name);
    if (definition === undefined) throw new Error(`no definition for ${name}`);
    return {
      title: definition.annotations.title,
      description: definition.description,
      annotations: definition.annotations,
    };
  };
  server.registerTool(
    TOOL_NAMES.listAgents,
    { ...config(TOOL_NAMES.listAgents), inputSchema: LIST_AGENTS_INPUT },
    async () => toResult(tools.listAgents()),
  );
  const names = tools.names();
  if (names !== undefined) {
    server.registerTool(
      TOOL_NAMES.send,
      { ...config(TOOL_NAMES.send), inputSchema: sendInputSchema(names) },
      async (input, ctx) => toResult(await withProgress(ctx, progressIntervalMs, () => tools.send(input))),
    );
    server.registerTool(
      TOOL_NAMES.getTask,
      { ...config(TOOL_NAMES.getTask), inputSchema: getTaskInputSchema(names) },
      async (input) => toResult(await tools.getTask(input)),
    );
  }
  return server;
}

/**
 * A factory of servers sharing one set of tools (one outbound client, one agent list): what
 * the SDK's serving entries take.
 *
 * @example
 * ```ts
 * const factory = airlockMcpFactory({ client, autonomy: 'read_only' });
 * const server = factory();
 * ```
 */
export function airlockMcpFactory(options: AirlockMcpOptions): () => McpServer {
  const tools = new A2aTools(options);
  return () => createAirlockMcpServer(tools, options.progressIntervalMs);
}

/**
 * A running stdio server. `closed` settles when the connection ends (stdin closed, or
 * `close()`).
 *
 * @example
 * ```ts
 * const handle = serveMcpStdio(options);
 * await handle.closed;
 * ```
 */
export interface McpStdioHandle {
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

/**
 * Serves the tools over stdio (by default the process's own stdin and stdout).
 *
 * @example
 * ```ts
 * const handle = serveMcpStdio({ client, autonomy: 'read_only' }, { onerror: (e) => console.error(e.message) });
 * ```
 */
export function serveMcpStdio(
  options: AirlockMcpOptions,
  io: { stdin?: Readable; stdout?: Writable; onerror?: (error: Error) => void } = {},
): McpStdioHandle {
  const transport = new ObservedStdioTransport(io.stdin ?? process.stdin, io.stdout ?? process.stdout);
  const handle = serveStdio(airlockMcpFactory(options), {
    transport,
    ...(io.onerror !== undefined && { onerror: io.onerror }),
  });
  return { closed: transport.closed, close: () => handle.close() };
}

/** The SDK's stdio transport, with a promise that settles when it closes (the entry owns `onclose`). */
class ObservedStdioTransport extends StdioServerTransport {
  readonly closed: Promise<void>;
  #markClosed: () => void = () => undefined;

  constructor(stdin: Readable, stdout: Writable) {
    super(stdin, stdout);
    this.closed = new Promise<void>((resolve) => {
      this.#markClosed = resolve;
    });
  }

  override async close(): Promise<void> {
    try {
      await super.close();
    } finally {
      this.#markClosed();
    }
  }
}

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
 * const http = await startMcpHttp({ client, autonomy: 'read_only' }, { port: 41242 });
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

async function serveHttp(
  req: IncomingMessage,
  res: ServerResponse,
  fetchHandler: FetchHandler,
  hostnames: string[],
  origins: string[],
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  if (url.pathname !== MCP_HTTP_PATH)
    return writeJsonError(res, 404, -32600, `not found: the MCP endpoint is ${MCP_HTTP_PATH}`);
  const method = req.method ?? 'GET';
  let body: Buffer | undefined;
  if (method === 'POST') {
    const read = await readBody(req, MAX_MCP_BODY_BYTES, BODY_TIMEOUT_MS);
    if (!read.ok) {
      res.setHeader('connection', 'close');
      if (read.reason === 'too_large') return writeJsonError(res, 413, -32600, 'request body too large');
      if (read.reason === 'timeout') return writeJsonError(res, 408, -32600, 'request body timeout');
      return void res.destroy();
    }
    body = read.body;
  }
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

/**
 * Runs `work`, and while it runs sends `notifications/progress` every `intervalMs` when the
 * request carries a progress token. Progress is a heartbeat (a count and a fixed message):
 * nothing from the remote is in it. A failed notification is ignored.
 */
async function withProgress<T>(ctx: ServerContext, intervalMs: number, work: () => Promise<T>): Promise<T> {
  const token = ctx.mcpReq._meta?.progressToken;
  if (token === undefined) return work();
  let beats = 0;
  const timer = setInterval(() => {
    beats += 1;
    ctx.mcpReq
      .notify({
        method: 'notifications/progress',
        params: { progressToken: token, progress: beats, message: 'waiting for the remote agent' },
      })
      .catch(() => undefined);
  }, intervalMs);
  timer.unref();
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

function toResult(output: ToolOutput): CallToolResult {
  return { content: [{ type: 'text', text: output.text }], ...(output.isError && { isError: true }) };
}
