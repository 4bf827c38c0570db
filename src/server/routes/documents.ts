/**
 * The documents the gateway serves about its agents: agent cards (any dialect, or pinned to
 * one), the card signing keys (JWKS) and the REST OpenAPI document. They are open to anyone
 * past the network gate unless `publicCard: false`; then only to a caller admitted to the
 * agent (the caller steps, as for a call).
 *
 * @example
 * ```ts
 * const documents = createDocumentRoutes({ config, cards, admitCaller, port: () => port });
 * return documents.card(inbound);
 * ```
 */
import type { IncomingMessage } from 'node:http';
import type { AirlockConfig } from '../../config/load.js';
import type { DialectVersion } from '../../protocol/dialect.js';
import { A2AError } from '../../protocol/errors.js';
import { jsonRpcError } from '../../protocol/jsonrpc.js';
import { parseA2AVersion } from '../../protocol/version.js';
import { andThen, REFUSED, type Step } from '../admission/compose.js';
import type { AdmittedInbound, AgentInbound } from '../admission/inbound.js';
import { cardBaseUrl, type CardCache } from '../cards.js';
import { headerOf, methodNotAllowed, notFound } from '../respond/response.js';
import { buildOpenApiDocument } from '../rest/openapi.js';
import { fallbackDialect } from '../rpc.js';

const JSON_HEADERS = { 'content-type': 'application/json' } as const;

/**
 * The document routes. Each serves GET and HEAD (405 otherwise); `jwks` without an agent is
 * the root key set, open to anyone when cards are public.
 *
 * @example
 * ```ts
 * documents.card(inbound, '1.0'); // the v1.0 card whatever A2A-Version says
 * ```
 */
export interface DocumentRoutes {
  card(inbound: AgentInbound, pinned?: DialectVersion): Promise<void> | void;
  jwks(inbound: AgentInbound): Promise<void> | void;
  /** The key set served without admission (cards are public). */
  openJwks(req: IncomingMessage, res: AgentInbound['res']): void;
  openApi(inbound: AgentInbound): Promise<void> | void;
}

/**
 * The document routes over the card cache.
 *
 * @example
 * ```ts
 * const documents = createDocumentRoutes({ config, cards, admitCaller, port: () => 41241 });
 * ```
 */
export function createDocumentRoutes(options: {
  config: AirlockConfig;
  cards: CardCache;
  admitCaller: Step<AgentInbound, AdmittedInbound>;
  /** The port the gateway listens on (known once it listens). */
  port: () => number;
}): DocumentRoutes {
  const { config, cards, admitCaller, port } = options;
  const { publicCard } = config.server;
  const cacheControl = publicCard ? 'public, max-age=300' : 'private, max-age=300';
  const openApiDocuments = new Map<string, string>();

  /** Open to anyone past the gate, unless `publicCard: false`. */
  function publicly(inbound: AgentInbound, serve: () => void): Promise<void> | void {
    const { req, res } = inbound;
    if (req.method !== 'GET' && req.method !== 'HEAD') return methodNotAllowed(res, 'GET, HEAD');
    if (publicCard) return serve();
    const served = andThen(admitCaller(inbound), (admitted) => {
      if (admitted !== REFUSED) serve();
      return undefined;
    });
    return served === REFUSED ? undefined : (served as Promise<void> | undefined);
  }

  function serveCard(inbound: AgentInbound, pinned?: DialectVersion): void {
    const { req, res, agent } = inbound;
    let version: DialectVersion;
    try {
      version = pinned ?? parseA2AVersion(headerOf(req, 'a2a-version') ?? queryVersion(req.url));
    } catch (error) {
      const a2aError = error instanceof A2AError ? error : new A2AError('VERSION_NOT_SUPPORTED');
      res.writeHead(400, { ...JSON_HEADERS, vary: 'A2A-Version' });
      res.end(JSON.stringify(jsonRpcError(null, fallbackDialect(undefined).encodeError(a2aError))));
      return;
    }
    const baseUrl = cardBaseUrl(
      config.server.publicUrl,
      req.headers.host,
      port(),
      config.server.tls !== undefined ? 'https' : 'http',
    );
    const card = cards.render(agent.config, version, baseUrl, false);
    const headers = {
      ...JSON_HEADERS,
      vary: publicCard ? 'A2A-Version' : 'A2A-Version, Authorization',
      etag: card.etag,
      'cache-control': cacheControl,
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
  function serveJwks(req: IncomingMessage, res: AgentInbound['res']): void {
    if (req.method !== 'GET' && req.method !== 'HEAD') return methodNotAllowed(res, 'GET, HEAD');
    const jwks = cards.jwks();
    if (jwks === undefined) return notFound(res);
    const headers = {
      'content-type': 'application/jwk-set+json',
      etag: jwks.etag,
      'cache-control': cacheControl,
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

  function serveOpenApi(inbound: AgentInbound): void {
    const { req, res, agent } = inbound;
    const baseUrl = cardBaseUrl(
      config.server.publicUrl,
      req.headers.host,
      port(),
      config.server.tls !== undefined ? 'https' : 'http',
    );
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
    res.writeHead(200, { ...JSON_HEADERS, 'content-length': Buffer.byteLength(body), 'cache-control': cacheControl });
    res.end(req.method === 'HEAD' ? undefined : body);
  }

  return {
    card: (inbound, pinned) => publicly(inbound, () => serveCard(inbound, pinned)),
    jwks: (inbound) => publicly(inbound, () => serveJwks(inbound.req, inbound.res)),
    openJwks: serveJwks,
    openApi: (inbound) => publicly(inbound, () => serveOpenApi(inbound)),
  };
}

/** The spec allows `?A2A-Version=1.0` in place of the header. */
function queryVersion(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  const query = url.indexOf('?');
  if (query === -1) return undefined;
  return new URLSearchParams(url.slice(query + 1)).get('A2A-Version') ?? undefined;
}
