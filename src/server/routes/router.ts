/**
 * The gateway's router: the network gate first (for every path), then the Origin step for the
 * A2A routes (every path but the person's surface, which checks its own origin, and
 * `/healthz`), then the path decides the route.
 *
 *   GET  /.well-known/agent-card.json                 the default agent's card
 *   GET  {basePath}/{slug}/.well-known/agent-card.json an agent's card (also pinned: /v1.0/…, /v0.3/…)
 *   POST {basePath}/{slug}                            JSON-RPC 2.0 (both dialects), SSE for streams
 *   POST {basePath}/{slug}/ask, GET …/openapi.json     the REST ask endpoint, when enabled
 *   {basePath}/{slug}/message:send, …/tasks/{id}, …    the A2A HTTP+JSON binding, unless `server.httpJson: false`
 *   GET  /.well-known/jwks.json                       the card signing keys (also per agent), when signing
 *   /approvals…, /console…                            the person's surface, when approvals are on
 *   GET  /healthz                                     liveness
 *   GET  /readyz                                      readiness (503 while draining or the store is down)
 *
 * @example
 * ```ts
 * const route = createRouter({ config, agents, gate, documents, rpc, ask, approvals });
 * createServer((req, res) => route(req, res));
 * ```
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AirlockConfig } from '../../config/load.js';
import type { DialectVersion } from '../../protocol/dialect.js';
import { matchHttpJsonRoute, type HttpJsonRoute } from '../../protocol/http-json/index.js';
import { REFUSED, type Refused } from '../admission/compose.js';
import { forAgent, type AgentInbound, type Arrival } from '../admission/inbound.js';
import type { ApprovalRoutes } from '../approvals/routes.js';
import type { PublishedAgent } from '../published-agents.js';
import { methodNotAllowed, notFound, requestPath, sendJson } from '../respond/response.js';
import type { Readiness } from '../lifecycle/readiness.js';
import type { DocumentRoutes } from './documents.js';

const CARD_PATHS = new Set(['/.well-known/agent-card.json', '/.well-known/agent.json']);
/** The public keys of card signatures (RFC 8615 well-known location, as signature `jku`s name it). */
const JWKS_PATH = '/.well-known/jwks.json';
/**
 * Cards of one version whatever the request's header: for clients that fetch a card without
 * sending A2A-Version yet expect the v1.0 shape (the v1.0 conformance kit does).
 */
const PINNED_CARD_PATHS = new Map<string, DialectVersion>([
  ['/v1.0/.well-known/agent-card.json', '1.0'],
  ['/v0.3/.well-known/agent-card.json', '0.3'],
]);

/**
 * The routes the router dispatches to.
 *
 * @example
 * ```ts
 * const routes: GatewayRoutes = { config, agents, gate, documents, rpc: serveRpc, ask: serveAsk };
 * ```
 */
export interface GatewayRoutes {
  config: AirlockConfig;
  agents: ReadonlyMap<string, PublishedAgent>;
  gate: (req: IncomingMessage, res: ServerResponse) => Arrival | Refused;
  /** The Origin step (admission/origin.ts): web pages on origins not allowed are refused. */
  origin: (arrival: Arrival) => Arrival | Refused;
  documents: DocumentRoutes;
  rpc: (inbound: AgentInbound) => Promise<void>;
  ask: (inbound: AgentInbound) => Promise<void>;
  /** The HTTP+JSON binding (routes/http-json.ts); absent, its paths are 404s. */
  httpJson?: ((inbound: AgentInbound, route: HttpJsonRoute) => Promise<void>) | undefined;
  approvals?: ApprovalRoutes | undefined;
  /** `GET /readyz`: not ready while draining or while the store does not answer (lifecycle/readiness.ts). */
  readiness?: () => Promise<Readiness>;
}

/**
 * Routes a request; calls that need credentials or a body go on asynchronously.
 *
 * @example
 * ```ts
 * const route = createRouter(routes);
 * const pending = route(req, res); // void, or a promise that settles once answered
 * ```
 */
export function createRouter(
  routes: GatewayRoutes,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> | void {
  const { config, agents, gate, origin, documents, approvals } = routes;
  const { publicCard, rest, defaultAgent } = config.server;
  const basePrefix = `${config.server.basePath}/`;
  const defaultPublished = (): PublishedAgent | undefined =>
    defaultAgent === undefined ? undefined : agents.get(defaultAgent);

  return (req, res) => {
    const arrival = gate(req, res);
    if (arrival === REFUSED) return;
    const path = requestPath(req.url);
    // The console is a page of this origin and the approvals API judges Origin itself (CSRF).
    const personSurface = approvals !== undefined && (path.startsWith('/approvals') || path.startsWith('/console'));
    if (!personSurface && path !== '/healthz' && path !== '/readyz' && origin(arrival) === REFUSED) return;

    if (CARD_PATHS.has(path)) {
      const agent = defaultPublished();
      if (agent === undefined) return notFound(res);
      return documents.card(forAgent(arrival, agent));
    }
    if (path === JWKS_PATH) {
      if (publicCard) return documents.openJwks(req, res);
      // Gated as the root card is: with publicCard off, only a caller admitted to the default agent.
      const agent = defaultPublished();
      if (agent === undefined) return notFound(res);
      return documents.jwks(forAgent(arrival, agent));
    }
    if (path === '/healthz') return sendJson(res, 200, { status: 'ok' });
    if (path === '/readyz') {
      const readiness = routes.readiness;
      if (readiness === undefined) return sendJson(res, 200, { status: 'ready' });
      return readiness().then((answer) =>
        answer.ready
          ? sendJson(res, 200, { status: 'ready' })
          : sendJson(res, 503, { status: 'not_ready', reason: answer.reason }, { 'retry-after': '5' }),
      );
    }
    if (personSurface) {
      const handled = approvals.handle(req, res, path, arrival.remote);
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
    const agent = agents.get(slash === -1 ? restOfPath : restOfPath.slice(0, slash));
    if (agent === undefined) return notFound(res);
    const tail = slash === -1 ? '' : restOfPath.slice(slash);
    if (tail === '' || tail === '/') {
      if (req.method !== 'POST') return methodNotAllowed(res, 'POST');
      return routes.rpc(forAgent(arrival, agent));
    }
    if (CARD_PATHS.has(tail)) return documents.card(forAgent(arrival, agent));
    if (tail === JWKS_PATH) return documents.jwks(forAgent(arrival, agent));
    const pinned = PINNED_CARD_PATHS.get(tail);
    if (pinned !== undefined) return documents.card(forAgent(arrival, agent), pinned);
    if (rest && tail === '/ask') {
      if (req.method !== 'POST') return methodNotAllowed(res, 'POST');
      return routes.ask(forAgent(arrival, agent));
    }
    if (rest && tail === '/openapi.json') return documents.openApi(forAgent(arrival, agent));
    if (routes.httpJson !== undefined) {
      const binding = matchHttpJsonRoute(req.method, tail);
      if (binding?.kind === 'method-not-allowed') return methodNotAllowed(res, binding.allow);
      if (binding !== undefined) return routes.httpJson(forAgent(arrival, agent), binding);
    }
    return notFound(res);
  };
}
