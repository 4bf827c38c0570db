/**
 * Agent cards, built only from configuration: the internal backend, its settings and the
 * client list never appear on a card. Each (agent, dialect, base URL) renders once and is
 * served from a small cache with a strong ETag.
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
import type { AgentCard, AgentSkill } from '../protocol/model.js';
import { v03 } from '../protocol/v03.js';
import { v10 } from '../protocol/v10.js';

export interface RenderedCard {
  body: string;
  etag: string;
}

/** Host header values we are willing to echo into a card: loopback names and addresses only. */
const LOOPBACK_HOST = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::(\d{1,5}))?$/i;

/**
 * The base URL for cards: the configured public URL, else the request's Host when it is a
 * loopback name, else the address we listen on. A non-loopback Host never reaches a card.
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

export function buildAgentCard(agent: AgentConfig, endpointUrl: string, extended: boolean): AgentCard {
  const skills = extended && agent.extendedCard?.skills !== undefined ? agent.extendedCard.skills : agent.skills;
  const description =
    extended && agent.extendedCard?.description !== undefined ? agent.extendedCard.description : agent.description;
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
    capabilities: { streaming: true, pushNotifications: false, extendedAgentCard: agent.extendedCard !== undefined },
    securitySchemes: {
      bearer: { type: 'http', scheme: 'bearer', description: 'A client token issued by the operator' },
    },
    securityRequirements: [{ bearer: [] }],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: skills.map(toSkill),
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

export class CardCache {
  readonly #config: AirlockConfig;
  readonly #cache = new Map<string, RenderedCard>();
  /** Cards change only with the configuration, so the process start is their modification time. */
  readonly lastModified = new Date().toUTCString();

  constructor(config: AirlockConfig) {
    this.#config = config;
  }

  endpointUrl(agent: AgentConfig, baseUrl: string): string {
    return `${baseUrl}${this.#config.server.basePath}/${agent.slug}`;
  }

  render(agent: AgentConfig, version: DialectVersion, baseUrl: string, extended: boolean): RenderedCard {
    const key = `${agent.slug}\n${version}\n${baseUrl}\n${extended ? 1 : 0}`;
    const cached = this.#cache.get(key);
    if (cached !== undefined) return cached;
    const card = buildAgentCard(agent, this.endpointUrl(agent, baseUrl), extended);
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
    return buildAgentCard(agent, this.endpointUrl(agent, baseUrl), extended);
  }
}
