/**
 * HTTP wiring: a few routes on `node:http`, no framework (see DEPENDENCIES.md for why).
 *
 *   GET  /.well-known/agent-card.json                 the default agent's card
 *   GET  {basePath}/{slug}/.well-known/agent-card.json an agent's card
 *   POST {basePath}/{slug}                            JSON-RPC 2.0 (both dialects), SSE for streams
 *   GET  /.well-known/jwks.json                       the card signing keys (also per agent), when signing
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
import { ApprovalService } from '../approvals/gate.js';
import type { AutonomyLevel } from '../approvals/ladder.js';
import { createApprovalRoutes, type ApprovalRoutes } from './approvals/routes.js';
import { PersonAuthenticator, personUserId } from './auth/persons.js';
import { backendLog } from './backends.js';
import type { AgentBackend } from '../agents/backend.js';
import type { AirlockConfig } from '../config/load.js';
import type { AgentConfig } from '../config/schema.js';
import type { AuditSink } from '../audit/index.js';
import type { DialectVersion } from '../protocol/dialect.js';
import { A2AError } from '../protocol/errors.js';
import { jsonRpcError } from '../protocol/jsonrpc.js';
import { parseA2AVersion } from '../protocol/version.js';
import { failedByRestart, TaskService } from '../tasks/service.js';
import type { TaskEventBus } from '../tasks/events.js';
import type { TaskStore } from '../tasks/store.js';
import { MemoryTaskStore } from '../tasks/stores/memory.js';
import { HOP_HEADER } from '../protocol/headers.js';
import { CapacityError, type TaskObserver } from '../tasks/policy.js';
import { Authenticator, type AuthOutcome, type Principal } from './auth/index.js';
import {
  AuthFailureLimiter,
  exceedsJsonDepth,
  RateLimiter,
  type AuthFailureLockout,
  type RequestRateLimit,
} from './limits/index.js';
import type { SharedLimits } from './limits/shared/index.js';
import {
  askError,
  askErrorResponse,
  AskRequestError,
  parseAskRequest,
  runAsk,
  type AskErrorResponse,
} from './rest/ask.js';
import { buildOpenApiDocument } from './rest/openapi.js';
import { startInboundSpan, tracingActive } from './trace.js';
import { createInboundTurnPolicy } from './turn-policy.js';
import { clientAddressOf, isLoopbackPeer, parseTrustedProxies } from './gate/client-address.js';
import { InboundAudit, openAuditSinks } from './inbound-audit.js';
import { readBody } from './body.js';
import { CardCache, cardBaseUrl } from './cards.js';
import type { Logger } from './log.js';
import { dispatchRpc, fallbackDialect } from './rpc.js';
import { pipeEventsAsSse, writeSseError } from './sse.js';

export interface GatewayOptions {
  logger: Logger;
  store?: TaskStore;
  /** Where audit rows go; by default the sinks the config names (`audit.file`, `audit.stdout`). */
  auditSink?: AuditSink;
  /**
   * Backends written in code, by agent slug: they replace the configured `backend` of that
   * agent (the card and every guard still come from the config).
   */
  backends?: Readonly<Record<string, AgentBackend>>;
  /**
   * The task event bus, when several replicas share the store (`createPostgresTaskEventBus`,
   * `createRedisTaskEventBus`): streams, subscriptions and cancels then reach tasks running on
   * other replicas. Default: a bus for this process alone. Closed with the gateway.
   */
  bus?: TaskEventBus;
  /**
   * Limits shared by the replicas (`createSharedLimits`): they replace this process's request
   * rate, auth-failure lockout and in-flight caps. Closed with the gateway.
   */
  sharedLimits?: SharedLimits;
}

export interface Gateway {
  readonly server: Server;
  readonly service: TaskService;
  /** Binds the configured host and port; resolves with the base URL. */
  listen(): Promise<string>;
  /**
   * Restart safety: fails every task a previous process left running in a store this process
   * serves alone (SQLite, or PostgreSQL with one replica), with an audit row each
   * (`gateway_restart`). Call once before `listen`. Resolves with how many; 0 for the memory
   * store and whenever a shared bus says other replicas serve the store.
   */
  recoverInterrupted(): Promise<number>;
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
/** The public keys of card signatures (RFC 8615 well-known location, as signature `jku`s name it). */
const JWKS_PATH = '/.well-known/jwks.json';
const PINNED_CARD_PATHS = new Map<string, DialectVersion>([
  ['/v1.0/.well-known/agent-card.json', '1.0'],
  ['/v0.3/.well-known/agent-card.json', '0.3'],
]);
/** JSON-RPC bodies must be JSON (any `+json` type too); a request without a Content-Type is read as JSON. */
const JSON_CONTENT_TYPE = /^application\/(?:json|[\w.+-]+\+json)[\t ]*(?:;|$)/i;
const JSON_HEADERS = { 'content-type': 'application/json' } as const;

export function createGateway(config: AirlockConfig, options: GatewayOptions): Gateway {
  const { logger } = options;
  if (options.store === undefined && config.store.type !== 'memory') {
    // A database store is opened (and migrated) asynchronously, before the gateway is made.
    throw new Error(`store ${config.store.type}: open it with openTaskStore() and pass it as options.store`);
  }
  const store: TaskStore =
    options.store ??
    new MemoryTaskStore({ maxTasks: config.store.maxTasks, taskTtlMs: config.store.taskTtlMinutes * 60_000 });
  const configuredSink = options.auditSink ?? openAuditSinks(config.audit);
  const approvalSettings = config.approvals;
  // With approvals on, the console's audit tail sees every row too (the person's own ones only).
  const audit = new InboundAudit(
    approvalSettings === undefined
      ? configuredSink
      : {
          write: (event) => {
            configuredSink?.write(event);
            approvals.observeAuditRow(event);
          },
          close: () => configuredSink?.close(),
        },
    logger,
  );
  const approvals = new ApprovalService({
    ...(approvalSettings !== undefined && { settings: approvalSettings }),
    agentMaxLevels: new Map<string, AutonomyLevel>(
      config.agents.flatMap((agent) =>
        agent.actions === undefined ? [] : [[agent.slug, agent.actions.maxLevel] as const],
      ),
    ),
    clientOwners: new Map(
      config.clients.flatMap((client) =>
        client.owner === undefined ? [] : [[client.id, personUserId('token', client.owner)] as const],
      ),
    ),
    secrets: config.scrubSecrets,
    audit: (event, required) => audit.record(event, required),
    baseUrl: () => config.server.publicUrl ?? `http://${hostForUrl(config.server.host)}:${port}`,
  });
  const auditObserver = audit.taskObserver();
  const observe: TaskObserver | undefined =
    approvalSettings === undefined || auditObserver === undefined
      ? auditObserver
      : (event) => {
          auditObserver(event);
          approvals.observeTask(event);
        };
  const { bus, sharedLimits } = options;
  const service = new TaskService({
    store,
    logger: (level, event, fields) => logger[level]({ event, ...fields }),
    policy: createInboundTurnPolicy({
      config,
      audit,
      ...(sharedLimits !== undefined && { inFlight: sharedLimits.inFlight }),
    }),
    ...(observe !== undefined && { observe }),
    ...(bus !== undefined && { bus }),
    gate: approvals,
  });
  const trustedProxies = parseTrustedProxies(config.server.trustedProxies);
  const { allowNonLoopback, publicCard, rest } = config.server;
  const auth = Authenticator.fromConfig(config, { logger });
  const rates: RequestRateLimit = sharedLimits?.rate ?? new RateLimiter({ limit: config.limits.requestsPerMinute });
  const authFailures: AuthFailureLockout =
    sharedLimits?.authFailures ?? new AuthFailureLimiter({ limit: config.limits.authFailuresPerMinute });
  const cards = new CardCache(config);
  const approvalRoutes: ApprovalRoutes | undefined =
    approvalSettings === undefined
      ? undefined
      : createApprovalRoutes({
          desk: approvals,
          persons: new PersonAuthenticator(approvalSettings.people, auth.jwtVerifier()),
          console: approvalSettings.console,
          secureCookies: config.server.publicUrl?.startsWith('https:') === true,
          authFailures,
          onAuthFailed: (reason, remote) => audit.authFailed(reason, undefined, remote),
          logger,
          maxBodyBytes: Math.min(config.server.maxBodyBytes, 64 * 1024),
          bodyTimeoutMs: config.server.bodyTimeoutMs,
        });
  const openApiDocuments = new Map<string, string>();
  const unauthenticatedMessage = config.server.apiKeyHeader
    ? 'Authentication required: send Authorization: Bearer <token> or X-API-Key: <token>'
    : 'Authentication required: send Authorization: Bearer <token>';
  const agents = new Map<string, PublishedAgent>();
  /** Backends this gateway made itself (not given in options): it closes them. */
  const ownBackends: AgentBackend[] = [];
  for (const agent of config.agents) {
    const onRpcError = (error: unknown): void =>
      logger.error({
        event: 'rpc_failed',
        agent: agent.slug,
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      });
    agents.set(agent.slug, {
      config: agent,
      backend: options.backends?.[agent.slug] ?? ownBackend(agent.slug, agent.backend),
      onRpcError,
    });
  }
  function ownBackend(slug: string, backendConfig: AgentConfig['backend']): AgentBackend {
    const backend = createBackend(backendConfig, {
      agent: slug,
      log: backendLog(logger, slug),
      ...(config.approvals !== undefined && { askPerson: true }),
    });
    ownBackends.push(backend);
    return backend;
  }
  const basePrefix = `${config.server.basePath}/`;
  let port = config.server.port;

  const server = createServer(
    {
      // Slow clients are cut off: headers within headersTimeoutMs, the whole request within both
      // limits together (readBody enforces the body's own deadline and answers 408).
      headersTimeout: config.server.headersTimeoutMs,
      requestTimeout: config.server.headersTimeoutMs + config.server.bodyTimeoutMs,
      // Node checks those timeouts only this often (30 s by default).
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(config.server.headersTimeoutMs / 2))),
    },
    (req, res) => {
      let pending: Promise<void> | void;
      try {
        pending = handle(req, res);
      } catch (error) {
        requestFailed(res, error);
        return;
      }
      pending?.catch((error: unknown) => requestFailed(res, error));
    },
  );

  function requestFailed(res: ServerResponse, error: unknown): void {
    logger.error({ event: 'request_failed', error: error instanceof Error ? error.message : String(error) });
    if (!res.headersSent) sendJson(res, 500, { error: { code: 500, status: 'INTERNAL', message: 'Internal error' } });
    else res.destroy();
  }

  /** Routes a request; calls that need credentials or a body go on asynchronously. */
  function handle(req: IncomingMessage, res: ServerResponse): Promise<void> | void {
    // The network gate comes first: no route, card or credential check is reached from outside
    // loopback unless the operator allowed it.
    const peer = req.socket.remoteAddress;
    const remote =
      trustedProxies.length === 0 ? peer : clientAddressOf(peer, headerOf(req, 'x-forwarded-for'), trustedProxies);
    const fromLoopback = isLoopbackPeer(remote);
    if (!fromLoopback && !allowNonLoopback) {
      audit.forbidden('address_not_allowed', undefined, remote);
      return refuse(res, 403, 'PERMISSION_DENIED', 'Callers from outside this machine are not admitted');
    }
    if (req.headers[HOP_HEADER] !== undefined) {
      audit.forbidden('hop_refused', undefined, remote);
      return refuse(
        res,
        403,
        'PERMISSION_DENIED',
        'Requests relayed by an Airlock gateway are refused (loop protection)',
      );
    }
    const caller: Caller = { remote, fromLoopback };
    const rawUrl = req.url ?? '/';
    const query = rawUrl.indexOf('?');
    const path = query === -1 ? rawUrl : rawUrl.slice(0, query);

    if (CARD_PATHS.has(path)) {
      const slug = config.server.defaultAgent;
      const agent = slug === undefined ? undefined : agents.get(slug);
      if (agent === undefined) return notFound(res);
      return publicly(req, res, agent, caller, () => serveCard(req, res, agent));
    }
    if (path === JWKS_PATH) {
      if (publicCard) return serveJwks(req, res);
      // Gated as the root card is: with publicCard off, only a caller admitted to the default agent.
      const slug = config.server.defaultAgent;
      const agent = slug === undefined ? undefined : agents.get(slug);
      if (agent === undefined) return notFound(res);
      return publicly(req, res, agent, caller, () => serveJwks(req, res));
    }
    if (path === '/healthz') return sendJson(res, 200, { status: 'ok' });
    if (approvalRoutes !== undefined && (path.startsWith('/approvals') || path.startsWith('/console'))) {
      const handled = approvalRoutes.handle(req, res, path, remote);
      if (handled === true) return;
      if (handled !== false) {
        return handled.then((done) => {
          if (!done) notFound(res);
        });
      }
    }
    if (!path.startsWith(basePrefix)) return notFound(res);

    const restOfPath = path.slice(basePrefix.length);
    const slash = restOfPath.indexOf('/');
    const slug = slash === -1 ? restOfPath : restOfPath.slice(0, slash);
    const agent = agents.get(slug);
    if (agent === undefined) return notFound(res);
    const tail = slash === -1 ? '' : restOfPath.slice(slash);
    if (tail === '' || tail === '/') {
      if (req.method !== 'POST') return methodNotAllowed(res, 'POST');
      return serveRpc(req, res, agent, caller);
    }
    if (CARD_PATHS.has(tail)) return publicly(req, res, agent, caller, () => serveCard(req, res, agent));
    if (tail === JWKS_PATH) return publicly(req, res, agent, caller, () => serveJwks(req, res));
    const pinned = PINNED_CARD_PATHS.get(tail);
    if (pinned !== undefined) return publicly(req, res, agent, caller, () => serveCard(req, res, agent, pinned));
    if (rest && tail === '/ask') {
      if (req.method !== 'POST') return methodNotAllowed(res, 'POST');
      return serveAsk(req, res, agent, caller);
    }
    if (rest && tail === '/openapi.json') {
      return publicly(req, res, agent, caller, () => serveOpenApi(req, res, agent));
    }
    return notFound(res);
  }

  /** Cards and the OpenAPI document: open to anyone past the gate, unless `publicCard: false`. */
  function publicly(
    req: IncomingMessage,
    res: ServerResponse,
    agent: PublishedAgent,
    caller: Caller,
    serve: () => void,
  ): Promise<void> | void {
    if (req.method !== 'GET' && req.method !== 'HEAD') return methodNotAllowed(res, 'GET, HEAD');
    if (publicCard) return serve();
    const admitted = admit(req, res, agent, caller);
    if (admitted === undefined) return;
    if (!(admitted instanceof Promise)) return serve();
    return admitted.then((principal) => {
      if (principal !== undefined) serve();
    });
  }

  /**
   * Who is calling, or undefined once the caller was refused (the response is sent): the
   * lockout for addresses that failed authentication too often, then credentials (a Promise
   * only for a JWT), the agent allow list, then the caller's request rate.
   */
  function admit(
    req: IncomingMessage,
    res: ServerResponse,
    agent: PublishedAgent,
    caller: Caller,
  ): Principal | undefined | Promise<Principal | undefined> {
    // A monotonic clock: a wall clock stepped back would stretch every window.
    const now = performance.timeOrigin + performance.now();
    const address = caller.remote ?? '';
    const locked = authFailures.isLocked(address, now);
    // A lockout shared by replicas answers asynchronously; the local one at once.
    return locked instanceof Promise
      ? locked.then((seconds) => authenticate(req, res, agent, caller, now, seconds))
      : authenticate(req, res, agent, caller, now, locked);
  }

  /** The rest of `admit`, once the address's lockout (`locked` seconds, 0 = none) is known. */
  function authenticate(
    req: IncomingMessage,
    res: ServerResponse,
    agent: PublishedAgent,
    caller: Caller,
    now: number,
    locked: number,
  ): Principal | undefined | Promise<Principal | undefined> {
    if (locked > 0) {
      audit.rateLimited('auth_failure_limit', agent.config.slug, caller.remote);
      refuse(res, 429, 'RESOURCE_EXHAUSTED', 'Too many failed authentications from this address; try again later', {
        'retry-after': String(locked),
        connection: 'close',
      });
      return undefined;
    }
    const credentials = {
      authorization: headerOf(req, 'authorization'),
      apiKey: config.server.apiKeyHeader ? headerOf(req, 'x-api-key') : undefined,
    };
    const outcome = auth.authenticate(
      credentials,
      agent.config.slug,
      caller.fromLoopback,
      agent.config.anonymousLoopback,
    );
    return outcome instanceof Promise
      ? outcome.then((settled) => decide(res, agent, caller, settled, now))
      : decide(res, agent, caller, outcome, now);
  }

  function decide(
    res: ServerResponse,
    agent: PublishedAgent,
    caller: Caller,
    outcome: AuthOutcome,
    now: number,
  ): Principal | undefined | Promise<Principal | undefined> {
    const slug = agent.config.slug;
    if (!outcome.ok) {
      logger.warn({ event: outcome.status === 401 ? 'auth_failed' : 'forbidden', agent: slug, reason: outcome.reason });
      if (outcome.status === 401) {
        audit.authFailed(outcome.reason, slug, caller.remote);
        const unauthenticated = (): undefined => {
          refuse(res, 401, 'UNAUTHENTICATED', unauthenticatedMessage, {
            'www-authenticate': 'Bearer realm="airlock"',
            connection: 'close',
          });
          return undefined;
        };
        const recorded = authFailures.recordFailure(caller.remote ?? '', now);
        // A lockout shared by replicas is answered once the failure is counted, so that the
        // next attempt is judged with it. It never rejects: it falls back to a local one.
        return recorded instanceof Promise ? recorded.then(unauthenticated) : unauthenticated();
      } else {
        audit.forbidden(outcome.reason, slug, caller.remote, outcome.principal);
        refuse(res, 403, 'PERMISSION_DENIED', 'This client may not call this agent', { connection: 'close' });
      }
      return undefined;
    }
    const principal = outcome.principal;
    const wait = rates.take(principal.key, now);
    // A rate shared by replicas answers asynchronously; the local one at once.
    return wait instanceof Promise
      ? wait.then((settled) => rated(res, slug, caller, principal, settled))
      : rated(res, slug, caller, principal, wait);
  }

  /** The caller's principal if the rate limit admitted it (`true`); else refused with Retry-After. */
  function rated(
    res: ServerResponse,
    slug: string,
    caller: Caller,
    principal: Principal,
    wait: true | number,
  ): Principal | undefined {
    if (wait !== true) {
      audit.rateLimited('client_rate_limit', slug, caller.remote, principal);
      refuse(res, 429, 'RESOURCE_EXHAUSTED', 'Too many requests; slow down', { 'retry-after': String(wait) });
      return undefined;
    }
    return principal;
  }

  function serveCard(req: IncomingMessage, res: ServerResponse, agent: PublishedAgent, pinned?: DialectVersion): void {
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
      vary: publicCard ? 'A2A-Version' : 'A2A-Version, Authorization',
      etag: card.etag,
      'cache-control': publicCard ? 'public, max-age=300' : 'private, max-age=300',
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

  /** The card signing keys (public halves only), or 404 when this gateway does not sign its cards. */
  function serveJwks(req: IncomingMessage, res: ServerResponse): void {
    if (req.method !== 'GET' && req.method !== 'HEAD') return methodNotAllowed(res, 'GET, HEAD');
    const jwks = cards.jwks();
    if (jwks === undefined) return notFound(res);
    const headers = {
      'content-type': 'application/jwk-set+json',
      etag: jwks.etag,
      'cache-control': publicCard ? 'public, max-age=300' : 'private, max-age=300',
      ...(!publicCard && { vary: 'Authorization' }),
    };
    if (req.headers['if-none-match'] === jwks.etag) {
      res.writeHead(304, headers);
      res.end();
      return;
    }
    res.writeHead(200, { ...headers, 'content-length': Buffer.byteLength(jwks.body) });
    res.end(req.method === 'HEAD' ? undefined : jwks.body);
  }

  function serveOpenApi(req: IncomingMessage, res: ServerResponse, agent: PublishedAgent): void {
    const baseUrl = cardBaseUrl(config.server.publicUrl, req.headers.host, port);
    const key = `${agent.config.slug}\n${baseUrl}`;
    let body = openApiDocuments.get(key);
    if (body === undefined) {
      body = JSON.stringify(
        buildOpenApiDocument(
          agent.config,
          `${cards.endpointUrl(agent.config, baseUrl)}/ask`,
          { apiKeyHeader: config.server.apiKeyHeader },
          { maxMessageChars: config.limits.maxInputChars },
        ),
      );
      // Loopback Host headers can name any port: keep the cache bounded.
      if (openApiDocuments.size >= 512) openApiDocuments.clear();
      openApiDocuments.set(key, body);
    }
    res.writeHead(200, {
      ...JSON_HEADERS,
      'content-length': Buffer.byteLength(body),
      'cache-control': publicCard ? 'public, max-age=300' : 'private, max-age=300',
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  }

  /**
   * Reads a JSON request body under the size, time and nesting limits. Undefined once the
   * request was refused (the response is sent; `shapeError` writes a refusal in the route's
   * own error shape).
   */
  async function readJsonBody(
    req: IncomingMessage,
    res: ServerResponse,
    shapeError: (status: number, code: 'INVALID_REQUEST' | 'CONTENT_TYPE_NOT_SUPPORTED', message: string) => void,
  ): Promise<Buffer | undefined> {
    const contentType = headerOf(req, 'content-type');
    if (contentType !== undefined && !JSON_CONTENT_TYPE.test(contentType)) {
      shapeError(415, 'CONTENT_TYPE_NOT_SUPPORTED', 'Content-Type must be application/json');
      req.resume();
      return undefined;
    }
    const { maxBodyBytes, bodyTimeoutMs } = config.server;
    const body = await readBody(req, maxBodyBytes, bodyTimeoutMs);
    if (body.ok) {
      if (!exceedsJsonDepth(body.body, config.limits.maxJsonDepth)) return body.body;
      shapeError(400, 'INVALID_REQUEST', `Request JSON is nested deeper than ${config.limits.maxJsonDepth} levels`);
      return undefined;
    }
    if (body.reason === 'aborted') {
      res.destroy();
      return undefined;
    }
    // The connection is closed after the answer: the rest of the body is never read.
    res.shouldKeepAlive = false;
    res.once('finish', () => req.destroy());
    if (body.reason === 'too_large') {
      shapeError(413, 'INVALID_REQUEST', `Request body is larger than ${maxBodyBytes} bytes`);
    } else {
      shapeError(408, 'INVALID_REQUEST', `Request body did not arrive within ${bodyTimeoutMs} ms`);
    }
    return undefined;
  }

  async function serveRpc(
    req: IncomingMessage,
    res: ServerResponse,
    agent: PublishedAgent,
    caller: Caller,
  ): Promise<void> {
    const versionHeader = headerOf(req, 'a2a-version');
    // Credentials first: an unauthenticated caller's body is never read, let alone run.
    let principal = admit(req, res, agent, caller);
    if (principal instanceof Promise) principal = await principal;
    if (principal === undefined) return;
    const body = await readJsonBody(req, res, (status, code, message) => {
      // Content-Type refusals are JSON-RPC errors (-32005) over HTTP 200; size and time limits
      // keep their HTTP status with a JSON-RPC error body.
      const error = new A2AError(code, message);
      writeJson(
        res,
        code === 'CONTENT_TYPE_NOT_SUPPORTED' ? 200 : status,
        JSON.stringify(jsonRpcError(null, fallbackDialect(versionHeader).encodeError(error))),
      );
    });
    if (body === undefined) return;
    const span = tracingActive()
      ? startInboundSpan('a2a.jsonrpc', headerOf(req, 'traceparent'), { 'a2a.agent': agent.config.slug })
      : undefined;
    try {
      const result = await dispatchRpc(body, versionHeader, {
        service,
        context: {
          principalKey: principal.key,
          agentSlug: agent.config.slug,
          backend: agent.backend,
          // The principal itself: it carries clientId and kind, and is built once per client.
          caller: principal,
        },
        extendedCard: (version) =>
          cards.render(agent.config, version, cardBaseUrl(config.server.publicUrl, req.headers.host, port), true).body,
        onError: agent.onRpcError,
      });
      if (result.kind === 'json') {
        writeJson(res, 200, result.body);
        return;
      }
      if (result.kind === 'unavailable') {
        refuse(res, 503, 'UNAVAILABLE', result.message, { 'retry-after': String(result.retryAfterSeconds) });
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
    } finally {
      span?.end();
    }
  }

  async function serveAsk(
    req: IncomingMessage,
    res: ServerResponse,
    agent: PublishedAgent,
    caller: Caller,
  ): Promise<void> {
    let principal = admit(req, res, agent, caller);
    if (principal instanceof Promise) principal = await principal;
    if (principal === undefined) return;
    const body = await readJsonBody(req, res, (status, _code, message) => sendAskError(res, askError(status, message)));
    if (body === undefined) return;
    const span = tracingActive()
      ? startInboundSpan('a2a.ask', headerOf(req, 'traceparent'), { 'a2a.agent': agent.config.slug })
      : undefined;
    try {
      let parsed: unknown;
      try {
        parsed = JSON.parse(body.toString('utf8'));
      } catch {
        sendAskError(res, askError(400, 'The body is not valid JSON'));
        return;
      }
      // No length cap here: the turn policy applies maxInputChars, and audits the refusal.
      const request = parseAskRequest(parsed);
      const reply = await runAsk(
        service,
        { principalKey: principal.key, agentSlug: agent.config.slug, backend: agent.backend, caller: principal },
        request,
      );
      sendJson(res, 200, reply);
    } catch (error) {
      if (!(error instanceof A2AError) && !(error instanceof AskRequestError) && !(error instanceof CapacityError)) {
        agent.onRpcError(error);
      }
      sendAskError(res, askErrorResponse(error));
    } finally {
      span?.end();
    }
  }

  return {
    server,
    service,
    recoverInterrupted: async () => {
      // With a shared bus other replicas serve the same store: their running tasks are not ours.
      if (store.failRunning === undefined || options.bus?.requestCancel !== undefined) return 0;
      const failed = await store.failRunning((task, owner) => {
        const settled = failedByRestart(task);
        audit.restartFailed(owner, settled);
        return settled;
      });
      if (failed > 0) logger.warn({ event: 'tasks_failed_after_restart', count: failed });
      return failed;
    },
    listen: () =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(config.server.port, config.server.host, () => {
          server.off('error', reject);
          port = (server.address() as AddressInfo).port;
          resolve(`http://${hostForUrl(config.server.host)}:${port}`);
        });
      }),
    close: async () => {
      await service.close();
      await Promise.allSettled(ownBackends.map(async (backend) => backend.close?.()));
      // After the service: the final events of the turns it ended still go out to other replicas.
      await bus?.close?.();
      await sharedLimits?.close();
      approvalRoutes?.close();
      await store.close();
      await auth.close();
      audit.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/** A listen host as a URL writes it (an IPv6 address in brackets). */
function hostForUrl(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

/** Where a request comes from, as the gate judged it. */
interface Caller {
  remote: string | undefined;
  fromLoopback: boolean;
}

function sendAskError(res: ServerResponse, error: AskErrorResponse): void {
  const body = JSON.stringify(error.body);
  res.writeHead(error.status, {
    ...error.headers,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

function methodNotAllowed(res: ServerResponse, allow: string): void {
  const body = JSON.stringify({ error: { code: 405, status: 'METHOD_NOT_ALLOWED', message: `Use ${allow}` } });
  dropUnreadBody(res);
  res.writeHead(405, { ...JSON_HEADERS, allow, 'content-length': Buffer.byteLength(body) });
  res.end(body);
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

/**
 * An HTTP-level refusal, shaped like google.rpc.Status rather than JSON-RPC, so that clients
 * report the status itself instead of a malformed JSON-RPC exchange. The request body is
 * drained, never read.
 */
function refuse(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {},
): void {
  const body = JSON.stringify({ error: { code: status, status: code, message } });
  // Before the head: a connection that will be closed must say so (Connection: close).
  dropUnreadBody(res);
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/**
 * For an answer sent before the request body was read (call it before the head is written): a
 * request that has (or may have) a body closes its connection instead of reading what is left,
 * so a refused caller cannot make the server swallow an unbounded body; the answer says
 * `Connection: close`. Body-less requests keep their connection.
 */
function dropUnreadBody(res: ServerResponse): void {
  const req = res.req;
  if (req.complete) return;
  const length = req.headers['content-length'];
  if (req.headers['transfer-encoding'] === undefined && (length === undefined || length === '0')) return;
  res.shouldKeepAlive = false;
  res.once('finish', () => req.destroy());
}

function notFound(res: ServerResponse): void {
  dropUnreadBody(res);
  sendJson(res, 404, { error: { code: 'NOT_FOUND', message: 'No such route or agent' } });
}
