/**
 * Agent cards, built only from configuration: the internal backend, its settings and the
 * client list never appear on a card. The public card is minimal (one generic skill); the
 * configured skills are on the extended card, for authenticated callers only. Each (agent,
 * dialect, base URL, public or extended) renders once and is served from a small cache with a
 * strong ETag.
 *
 * With `signing` configured, each rendered card is signed as it is rendered (one signature per
 * key, A2A v1.0 §8.4), so signatures are computed once per card change, never per request;
 * the extended card is rendered, signed and cached the same way. The canonical model has no
 * `signatures`: they exist only on the wire shapes.
 *
 * @example
 * ```ts
 * const cards = new CardCache(config);
 * const rendered = cards.render(agent, '1.0', 'http://127.0.0.1:41241', false);
 * ```
 */
import { createHash } from 'node:crypto';
import type { AirlockConfig, SigningSettings } from '../config/load.js';
import type { AgentConfig } from '../config/schema.js';
import type { DialectVersion } from '../protocol/dialect.js';
import { encodeCardV03, encodeCardV10 } from '../protocol/card.js';
import type { AgentCard, AgentExtension, AgentSkill, JsonObject, SecurityScheme } from '../protocol/model.js';
import { cardSigningPayload, signCard } from '../trust/signing/index.js';
import { securitySchemesFor } from './auth/index.js';

/**
 * A document ready to serve: its JSON text and a strong ETag over it.
 *
 * @example
 * ```ts
 * const rendered: RenderedCard = cards.render(agent, '1.0', baseUrl, false);
 * res.setHeader('etag', rendered.etag);
 * res.end(rendered.body);
 * ```
 */
export interface RenderedCard {
  body: string;
  etag: string;
}

/** Host header values we are willing to echo into a card: loopback names and addresses only. */
const LOOPBACK_HOST = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::(\d{1,5}))?$/i;

/**
 * The base URL for cards: the configured public URL, else the request's Host when it is a
 * loopback name, else the address we listen on. A non-loopback Host never reaches a card.
 * `scheme` is the listener's: `https` with `server.tls`.
 *
 * @example
 * ```ts
 * cardBaseUrl(undefined, 'localhost:8080', 41241);          // 'http://localhost:8080'
 * cardBaseUrl(undefined, 'evil.example', 41241);            // 'http://127.0.0.1:41241'
 * cardBaseUrl(undefined, 'localhost:8443', 8443, 'https');  // 'https://localhost:8443'
 * ```
 */
export function cardBaseUrl(
  publicUrl: string | undefined,
  host: string | undefined,
  port: number,
  scheme: 'http' | 'https' = 'http',
): string {
  if (publicUrl !== undefined) return publicUrl;
  if (host !== undefined) {
    const match = LOOPBACK_HOST.exec(host);
    if (match !== null) {
      const hostPort = match[2] === undefined ? undefined : Number(match[2]);
      if (hostPort === undefined || (hostPort > 0 && hostPort <= 65535)) return `${scheme}://${host.toLowerCase()}`;
    }
  }
  return `${scheme}://127.0.0.1:${port}`;
}

/**
 * A listen host as a URL writes it (an IPv6 address in brackets).
 *
 * @example
 * ```ts
 * `http://${hostForUrl('::1')}:41241`; // 'http://[::1]:41241'
 * ```
 */
export function hostForUrl(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

const BEARER_ONLY: Readonly<Record<string, SecurityScheme>> = securitySchemesFor({ apiKeyHeader: false });

/** The id of the one skill a public card lists (the spec asks for at least one). */
export const PUBLIC_SKILL_ID = 'general';

/**
 * An agent's card. The public card (`extended: false`) is minimal: who the agent is, where to
 * call it and how to authenticate, with one generic skill standing in for the real ones; a
 * stranger learns nothing from it that would help to probe the agent. The configured skills,
 * with the `extendedCard` overrides, are only on the extended card that GetExtendedAgentCard
 * serves to authenticated callers, so every agent has one and every card announces it.
 *
 * Each scheme in `securitySchemes` is an alternative: one requirement is listed per scheme.
 *
 * @example
 * ```ts
 * const card = buildAgentCard(agent, 'https://gw.example/a2a/echo', false);
 * card.skills.map((skill) => skill.id); // ['general']
 * buildAgentCard(agent, url, true, securitySchemesFor({ apiKeyHeader: true })).securityRequirements;
 * // [{ bearer: [] }, { apiKey: [] }]
 * ```
 */
export function buildAgentCard(
  agent: AgentConfig,
  endpointUrl: string,
  extended: boolean,
  securitySchemes: Readonly<Record<string, SecurityScheme>> = BEARER_ONLY,
  bindings: { httpJson: boolean } = { httpJson: true },
  /** `push.enabled`: the card says `pushNotifications: true` only then. */
  pushNotifications = false,
): AgentCard {
  const description =
    extended && agent.extendedCard?.description !== undefined ? agent.extendedCard.description : agent.description;
  const skills = extended ? (agent.extendedCard?.skills ?? agent.skills).map(toSkill) : [publicSkill(agent)];
  return {
    name: agent.name,
    description,
    version: agent.version,
    ...(agent.provider !== undefined && { provider: agent.provider }),
    ...(agent.documentationUrl !== undefined && { documentationUrl: agent.documentationUrl }),
    // JSON-RPC first (preference order), then the HTTP+JSON binding at the same URL (v1.0 only).
    interfaces: [
      { url: endpointUrl, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url: endpointUrl, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
      ...(bindings.httpJson
        ? [{ url: endpointUrl, protocolBinding: 'HTTP+JSON' as const, protocolVersion: '1.0' as const }]
        : []),
    ],
    capabilities: {
      streaming: true,
      pushNotifications,
      extendedAgentCard: true,
      // On the public card too: a caller must learn a required extension before its first call.
      ...(agent.extensions !== undefined &&
        agent.extensions.length > 0 && { extensions: agent.extensions.map(toExtension) }),
    },
    // Copies: a caller that edits the card it got must not change the next one.
    securitySchemes: Object.fromEntries(Object.entries(securitySchemes).map(([name, scheme]) => [name, { ...scheme }])),
    securityRequirements: Object.keys(securitySchemes).map((name) => ({ [name]: [] })),
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills,
  };
}

/** Stands in for the real skills on the public card: it says no more than the card already does. */
function publicSkill(agent: AgentConfig): AgentSkill {
  return { id: PUBLIC_SKILL_ID, name: agent.name, description: agent.description, tags: [PUBLIC_SKILL_ID] };
}

/** A configured extension as the card lists it (a copy: the card must not share the config's objects). */
function toExtension(extension: NonNullable<AgentConfig['extensions']>[number]): AgentExtension {
  return {
    uri: extension.uri,
    ...(extension.description !== undefined && { description: extension.description }),
    required: extension.required ?? false,
    ...(extension.params !== undefined && { params: structuredClone(extension.params) as JsonObject }),
  };
}

function toSkill(skill: AgentConfig['skills'][number]): AgentSkill {
  return {
    id: skill.id,
    name: skill.name,
    description: skill.description,
    tags: skill.tags,
    ...(skill.examples !== undefined && { examples: skill.examples }),
  };
}

const MAX_CACHED = 512;

/** A strong ETag: 27 base64url characters of the body's SHA-256 (162 bits). */
function etagOf(body: string): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
}

/**
 * The wire card with one signature per configured key. The keys were checked at load and every
 * agent's cards were brought to their signing payload when the cache was made (`CardCache`'s constructor), so this
 * does not throw while serving.
 */
function signWith(wire: Record<string, unknown>, signing: SigningSettings): Record<string, unknown> {
  return signCard(wire, signing.keys, { ...(signing.jku !== undefined && { jku: signing.jku }) });
}

/**
 * Rendered cards by agent, dialect, base URL and kind (public or extended), with their ETags.
 * The security schemes follow the authentication settings (`securitySchemesFor`).
 *
 * @example
 * ```ts
 * const cards = new CardCache(config);
 * cards.render(agent, '0.3', baseUrl, false).etag; // '"…"' (the same until the config changes)
 * cards.card(agent, baseUrl, true).skills;         // the configured skills
 * ```
 */
export class CardCache {
  readonly #config: AirlockConfig;
  readonly #cache = new Map<string, RenderedCard>();
  /** Cards change only with the configuration, so the process start is their modification time. */
  readonly lastModified = new Date().toUTCString();

  /** What the authenticator accepts (bearer, JWT, X-API-Key), from the configuration. */
  readonly #securitySchemes: Readonly<Record<string, SecurityScheme>>;
  readonly #signing: SigningSettings | undefined;
  /** The served key set, when signing is configured. */
  readonly #jwks: RenderedCard | undefined;

  constructor(config: AirlockConfig) {
    this.#config = config;
    this.#securitySchemes = securitySchemesFor({ apiKeyHeader: config.server.apiKeyHeader, jwt: config.jwt });
    this.#signing = config.signing;
    if (config.signing !== undefined) {
      const body = JSON.stringify(config.signing.jwks);
      this.#jwks = { body, etag: etagOf(body) };
      this.#checkSignable();
    }
  }

  /**
   * Brings each agent's cards to their signing payload once, at startup: a card that has no
   * RFC 8785 form (a lone surrogate in a configured text) fails here, naming the agent, rather
   * than on every request. Only the payload can fail (the keys were checked at load), and the
   * base URL does not matter (URLs are always encodable).
   */
  #checkSignable(): void {
    for (const agent of this.#config.agents) {
      for (const extended of [false, true]) {
        try {
          cardSigningPayload(encodeCardV10(this.card(agent, 'https://gateway.invalid', extended)));
        } catch (error) {
          const reason = error instanceof Error ? error.message : String(error);
          throw new Error(`agent "${agent.slug}": its ${extended ? 'extended ' : ''}card cannot be signed: ${reason}`, {
            cause: error,
          });
        }
      }
    }
  }

  /**
   * The JWK Set that `/.well-known/jwks.json` serves (public keys only), or undefined when the
   * gateway does not sign its cards.
   *
   * @example
   * ```ts
   * const jwks = cards.jwks(); // { body: '{"keys":[{"kty":"EC",…}]}', etag: '"…"' }
   * ```
   */
  jwks(): RenderedCard | undefined {
    return this.#jwks;
  }

  endpointUrl(agent: AgentConfig, baseUrl: string): string {
    return `${baseUrl}${this.#config.server.basePath}/${agent.slug}`;
  }

  /**
   * The card in one shape, as served: signed when signing is configured. Rendered (and signed)
   * once per agent, shape, base URL and kind, then served from the cache.
   *
   * @example
   * ```ts
   * const { body, etag } = cards.render(agent, '0.3', 'https://gw.example', true); // the extended v0.3 card
   * ```
   */
  render(agent: AgentConfig, version: DialectVersion, baseUrl: string, extended: boolean): RenderedCard {
    const key = `${agent.slug}\n${version}\n${baseUrl}\n${extended ? 1 : 0}`;
    const cached = this.#cache.get(key);
    if (cached !== undefined) return cached;
    const card = this.card(agent, baseUrl, extended);
    const wire = version === '1.0' ? encodeCardV10(card) : encodeCardV03(card);
    const body = JSON.stringify(this.#signing === undefined ? wire : signWith(wire, this.#signing));
    const rendered = { body, etag: etagOf(body) };
    // Loopback Host headers can name any port: keep the cache bounded.
    if (this.#cache.size >= MAX_CACHED) this.#cache.clear();
    this.#cache.set(key, rendered);
    return rendered;
  }

  /** The card as a canonical object, unsigned (signatures exist on the wire shapes `render` makes). */
  card(agent: AgentConfig, baseUrl: string, extended: boolean): AgentCard {
    return buildAgentCard(
      agent,
      this.endpointUrl(agent, baseUrl),
      extended,
      this.#securitySchemes,
      {
        httpJson: this.#config.server.httpJson !== false,
      },
      this.#config.push.enabled,
    );
  }
}
