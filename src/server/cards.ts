/**
 * Agent cards, built only from configuration: the internal backend, its settings and the
 * client list never appear on a card. The public card is minimal (one generic skill); the
 * configured skills are on the extended card, for authenticated callers only. Each (agent,
 * dialect, base URL, public or extended) renders once and is served from a small cache with a
 * strong ETag.
 *
 * @example
 * ```ts
 * const cards = new CardCache(config);
 * const rendered = cards.render(agent, '1.0', 'http://127.0.0.1:41241', false);
 * ```
 */
import { createHash } from 'node:crypto';
import type { AirlockConfig } from '../config/load.js';
import type { AgentConfig } from '../config/schema.js';
import type { DialectVersion } from '../protocol/dialect.js';
import type { AgentCard, AgentSkill, SecurityScheme } from '../protocol/model.js';
import { v03 } from '../protocol/v03.js';
import { v10 } from '../protocol/v10.js';
import { securitySchemesFor } from './auth/index.js';

export interface RenderedCard {
  body: string;
  etag: string;
}

/** Host header values we are willing to echo into a card: loopback names and addresses only. */
const LOOPBACK_HOST = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::(\d{1,5}))?$/i;

/**
 * The base URL for cards: the configured public URL, else the request's Host when it is a
 * loopback name, else the address we listen on. A non-loopback Host never reaches a card.
 *
 * @example
 * ```ts
 * cardBaseUrl(undefined, 'localhost:8080', 41241);   // 'http://localhost:8080'
 * cardBaseUrl(undefined, 'evil.example', 41241);     // 'http://127.0.0.1:41241'
 * ```
 */
export function cardBaseUrl(publicUrl: string | undefined, host: string | undefined, port: number): string {
  if (publicUrl !== undefined) return publicUrl;
  if (host !== undefined) {
    const match = LOOPBACK_HOST.exec(host);
    if (match !== null) {
      const hostPort = match[2] === undefined ? undefined : Number(match[2]);
      if (hostPort === undefined || (hostPort > 0 && hostPort <= 65535)) return `http://${host.toLowerCase()}`;
    }
  }
  return `http://127.0.0.1:${port}`;
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
    interfaces: [
      { url: endpointUrl, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url: endpointUrl, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
    ],
    capabilities: { streaming: true, pushNotifications: false, extendedAgentCard: true },
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

  constructor(config: AirlockConfig) {
    this.#config = config;
    this.#securitySchemes = securitySchemesFor({ apiKeyHeader: config.server.apiKeyHeader, jwt: config.jwt });
  }

  endpointUrl(agent: AgentConfig, baseUrl: string): string {
    return `${baseUrl}${this.#config.server.basePath}/${agent.slug}`;
  }

  render(agent: AgentConfig, version: DialectVersion, baseUrl: string, extended: boolean): RenderedCard {
    const key = `${agent.slug}\n${version}\n${baseUrl}\n${extended ? 1 : 0}`;
    const cached = this.#cache.get(key);
    if (cached !== undefined) return cached;
    const card = this.card(agent, baseUrl, extended);
    const body = JSON.stringify(version === '1.0' ? v10.encodeCard(card) : v03.encodeCard(card));
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
    const rendered = { body, etag };
    // Loopback Host headers can name any port: keep the cache bounded.
    if (this.#cache.size >= MAX_CACHED) this.#cache.clear();
    this.#cache.set(key, rendered);
    return rendered;
  }

  /** The card as a canonical object (for the extended-card JSON-RPC method). */
  card(agent: AgentConfig, baseUrl: string, extended: boolean): AgentCard {
    return buildAgentCard(agent, this.endpointUrl(agent, baseUrl), extended, this.#securitySchemes);
  }
}
