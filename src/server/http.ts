/**
 * HTTP wiring: a few routes on `node:http`, no framework (see DEPENDENCIES.md for why).
 *
 *   GET  /.well-known/agent-card.json                 the default agent's card
 *   GET  {basePath}/{slug}/.well-known/agent-card.json an agent's card
 *   POST {basePath}/{slug}                            JSON-RPC 2.0 (both dialects), SSE for streams
 *   GET  /healthz                                     liveness
 *
 * @example
 * ```ts
 * const gateway = createGateway(config, { logger });
 * const url = await gateway.listen();
 * ```
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createBackend } from '../agents/registry.js';
import type { AgentBackend } from '../agents/backend.js';
import type { AirlockConfig } from '../config/load.js';
import type { AgentConfig } from '../config/schema.js';
import type { DialectVersion } from '../protocol/dialect.js';
import { A2AError } from '../protocol/errors.js';
import { jsonRpcError } from '../protocol/jsonrpc.js';
import { parseA2AVersion } from '../protocol/version.js';
import { TaskService } from '../tasks/service.js';
import type { TaskStore } from '../tasks/store.js';
import { MemoryTaskStore } from '../tasks/stores/memory.js';
import { ClientAuthenticator } from './auth.js';
import { readBody } from './body.js';
import { CardCache, cardBaseUrl } from './cards.js';
import type { Logger } from './log.js';
import { dispatchRpc, fallbackDialect } from './rpc.js';
import { pipeEventsAsSse, writeSseError } from './sse.js';

export interface GatewayOptions {
  logger: Logger;
  store?: TaskStore;
  /**
   * Backends written in code, by agent slug: they replace the configured `backend` of that
   * agent (the card and every guard still come from the config).
   */
  backends?: Readonly<Record<string, AgentBackend>>;
}

export interface Gateway {
  readonly server: Server;
  readonly service: TaskService;
  /** Binds the configured host and port; resolves with the base URL. */
  listen(): Promise<string>;
  close(): Promise<void>;
}

interface PublishedAgent {
  config: AgentConfig;
  backend: AgentBackend;
  /** Logs a dispatch failure for this agent (built once, not per request). */
  onRpcError: (error: unknown) => void;
}

const CARD_PATHS = new Set(['/.well-known/agent-card.json', '/.well-known/agent.json']);
/**
 * Cards of one version whatever the request's header: for clients that fetch a card without
 * sending A2A-Version yet expect the v1.0 shape (the v1.0 conformance kit does).
 */
const PINNED_CARD_PATHS = new Map<string, DialectVersion>([
  ['/v1.0/.well-known/agent-card.json', '1.0'],
  ['/v0.3/.well-known/agent-card.json', '0.3'],
]);
/** JSON-RPC bodies must be JSON (any `+json` type too); a request without a Content-Type is read as JSON. */
const JSON_CONTENT_TYPE = /^application\/(?:json|[\w.+-]+\+json)[\t ]*(?:;|$)/i;
const JSON_HEADERS = { 'content-type': 'application/json' } as const;

export function createGateway(config: AirlockConfig, options: GatewayOptions): Gateway {
  const { logger } = options;
  const store =
    options.store ??
    new MemoryTaskStore({ maxTasks: config.store.maxTasks, taskTtlMs: config.store.taskTtlMinutes * 60_000 });
  const service = new TaskService({
    store,
    logger: (level, event, fields) => logger[level]({ event, ...fields }),
  });
  const auth = new ClientAuthenticator(config.clients);
  const cards = new CardCache(config);
  const agents = new Map<string, PublishedAgent>();
  for (const agent of config.agents) {
    const onRpcError = (error: unknown): void =>
      logger.error({
        event: 'rpc_failed',
        agent: agent.slug,
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      });
    agents.set(agent.slug, {
      config: agent,
      backend: options.backends?.[agent.slug] ?? createBackend(agent.backend),
      onRpcError,
    });
  }
  const basePrefix = `${config.server.basePath}/`;
  let port = config.server.port;

  const server = createServer((req, res) => {
    let pending: Promise<void> | void;
    try {
      pending = handle(req, res);
    } catch (error) {
      requestFailed(res, error);
      return;
    }
    pending?.catch((error: unknown) => requestFailed(res, error));
  });

  function requestFailed(res: ServerResponse, error: unknown): void {
    logger.error({ event: 'request_failed', error: error instanceof Error ? error.message : String(error) });
    if (!res.headersSent) sendJson(res, 500, { error: { code: 'INTERNAL', message: 'Internal error' } });
    else res.destroy();
  }

  /** Routes a request; only JSON-RPC calls go on asynchronously (the promise they return). */
  function handle(req: IncomingMessage, res: ServerResponse): Promise<void> | void {
    const rawUrl = req.url ?? '/';
    const query = rawUrl.indexOf('?');
    const path = query === -1 ? rawUrl : rawUrl.slice(0, query);

    if (CARD_PATHS.has(path)) {
      const slug = config.server.defaultAgent;
      const agent = slug === undefined ? undefined : agents.get(slug);
      if (agent === undefined) return notFound(res);
      return serveCard(req, res, agent);
    }
    if (path === '/healthz') return sendJson(res, 200, { status: 'ok' });
    if (!path.startsWith(basePrefix)) return notFound(res);

    const rest = path.slice(basePrefix.length);
    const slash = rest.indexOf('/');
    const slug = slash === -1 ? rest : rest.slice(0, slash);
    const agent = agents.get(slug);
    if (agent === undefined) return notFound(res);
    const tail = slash === -1 ? '' : rest.slice(slash);
    if (CARD_PATHS.has(tail)) return serveCard(req, res, agent);
    const pinned = PINNED_CARD_PATHS.get(tail);
    if (pinned !== undefined) return serveCard(req, res, agent, pinned);
    if (tail !== '' && tail !== '/') return notFound(res);
    if (req.method !== 'POST') {
      res.writeHead(405, { ...JSON_HEADERS, allow: 'POST' });
      res.end(JSON.stringify({ error: { code: 'METHOD_NOT_ALLOWED', message: 'Use POST for JSON-RPC' } }));
      return;
    }
    return serveRpc(req, res, agent);
  }

  function serveCard(req: IncomingMessage, res: ServerResponse, agent: PublishedAgent, pinned?: DialectVersion): void {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { ...JSON_HEADERS, allow: 'GET, HEAD' });
      res.end();
      return;
    }
    let version: DialectVersion;
    try {
      version = pinned ?? parseA2AVersion(headerOf(req, 'a2a-version') ?? queryVersion(req.url));
    } catch (error) {
      const a2aError = error instanceof A2AError ? error : new A2AError('VERSION_NOT_SUPPORTED');
      res.writeHead(400, { ...JSON_HEADERS, vary: 'A2A-Version' });
      res.end(JSON.stringify(jsonRpcError(null, fallbackDialect(undefined).encodeError(a2aError))));
      return;
    }
    const baseUrl = cardBaseUrl(config.server.publicUrl, req.headers.host, port);
    const card = cards.render(agent.config, version, baseUrl, false);
    const headers = {
      ...JSON_HEADERS,
      vary: 'A2A-Version',
      etag: card.etag,
      'cache-control': 'public, max-age=300',
      'last-modified': cards.lastModified,
    };
    if (req.headers['if-none-match'] === card.etag) {
      res.writeHead(304, headers);
      res.end();
      return;
    }
    res.writeHead(200, { ...headers, 'content-length': Buffer.byteLength(card.body) });
    res.end(req.method === 'HEAD' ? undefined : card.body);
  }

  async function serveRpc(req: IncomingMessage, res: ServerResponse, agent: PublishedAgent): Promise<void> {
    const versionHeader = headerOf(req, 'a2a-version');
    // Credentials first: an unauthenticated caller's body is never read, let alone run.
    const outcome = auth.authenticate(
      headerOf(req, 'authorization'),
      agent.config.slug,
      isLoopback(req.socket.remoteAddress),
      agent.config.anonymousLoopback,
    );
    if (!outcome.ok) {
      const status = outcome.status;
      // An HTTP-level refusal, shaped like google.rpc.Status rather than JSON-RPC, so that
      // clients report the 401/403 itself instead of a malformed JSON-RPC exchange.
      const error =
        status === 401
          ? {
              code: 401,
              status: 'UNAUTHENTICATED',
              message: 'Authentication required: send Authorization: Bearer <token>',
            }
          : { code: 403, status: 'PERMISSION_DENIED', message: 'This client may not call this agent' };
      const headers: Record<string, string> = { ...JSON_HEADERS, connection: 'close' };
      if (status === 401) headers['www-authenticate'] = 'Bearer realm="airlock"';
      logger.warn({
        event: status === 401 ? 'auth_failed' : 'forbidden',
        agent: agent.config.slug,
        reason: outcome.reason,
      });
      res.writeHead(status, headers);
      res.end(JSON.stringify({ error }));
      req.resume();
      return;
    }
    const contentType = headerOf(req, 'content-type');
    if (contentType !== undefined && !JSON_CONTENT_TYPE.test(contentType)) {
      const error = new A2AError('CONTENT_TYPE_NOT_SUPPORTED', 'Content-Type must be application/json');
      sendJson(res, 200, jsonRpcError(null, fallbackDialect(versionHeader).encodeError(error)));
      req.resume();
      return;
    }
    const body = await readBody(req, config.server.maxBodyBytes);
    if (!body.ok) {
      if (body.reason === 'too_large') {
        const error = new A2AError(
          'INVALID_REQUEST',
          `Request body is larger than ${config.server.maxBodyBytes} bytes`,
        );
        res.writeHead(413, { ...JSON_HEADERS, connection: 'close' });
        res.end(JSON.stringify(jsonRpcError(null, fallbackDialect(versionHeader).encodeError(error))), () => {
          req.destroy();
        });
      } else {
        res.destroy();
      }
      return;
    }
    const result = await dispatchRpc(body.body, versionHeader, {
      service,
      context: { principalKey: outcome.principal.key, agentSlug: agent.config.slug, backend: agent.backend },
      extendedCard: () =>
        agent.config.extendedCard === undefined
          ? undefined
          : cards.card(agent.config, cardBaseUrl(config.server.publicUrl, req.headers.host, port), true),
      onError: agent.onRpcError,
    });
    if (result.kind === 'json') {
      writeJson(res, 200, result.body);
      return;
    }
    if (result.kind === 'stream-error') {
      writeSseError(res, result.body);
      return;
    }
    try {
      await pipeEventsAsSse(res, result.events, result.frame);
    } catch (error) {
      logger.error({ event: 'stream_failed', error: error instanceof Error ? error.message : String(error) });
      writeSseError(res, JSON.stringify(jsonRpcError(null, { code: -32603, message: 'Internal error' })));
    }
  }

  return {
    server,
    service,
    listen: () =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(config.server.port, config.server.host, () => {
          server.off('error', reject);
          port = (server.address() as AddressInfo).port;
          const host = config.server.host.includes(':') ? `[${config.server.host}]` : config.server.host;
          resolve(`http://${host}:${port}`);
        });
      }),
    close: async () => {
      await service.close();
      await store.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

function headerOf(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The spec allows `?A2A-Version=1.0` in place of the header. */
function queryVersion(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  const query = url.indexOf('?');
  if (query === -1) return undefined;
  return new URLSearchParams(url.slice(query + 1)).get('A2A-Version') ?? undefined;
}

/** The TCP peer is on this machine (127.0.0.0/8, ::1, or their IPv4-mapped forms). */
export function isLoopback(address: string | undefined): boolean {
  if (address === undefined) return false;
  if (address === '::1') return true;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return v4.startsWith('127.');
}

function sendJson(res: ServerResponse, status: number, payload: unknown): void {
  writeJson(res, status, JSON.stringify(payload));
}

/**
 * A JSON response with its length. The headers go as a flat list: no header object is built
 * per response (spreading JSON_HEADERS into a new object with one more key is slow in V8).
 */
function writeJson(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, ['content-type', 'application/json', 'content-length', Buffer.byteLength(body)]);
  res.end(body);
}

function notFound(res: ServerResponse): void {
  sendJson(res, 404, { error: { code: 'NOT_FOUND', message: 'No such route or agent' } });
}
