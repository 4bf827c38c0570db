/**
 * The `@a2a-js/sdk` AgentCard a test remote serves (v1.0 shape): one builder for the fields
 * every such remote repeats, so that a test names only what it is about (its name, endpoints,
 * skills, schemes).
 */
import { A2A_PROTOCOL_VERSION, type AgentCard, type AgentInterface, type AgentSkill } from '@a2a-js/sdk';

/**
 * What {@link sdkAgentCard} takes; everything else is the plain default (text in and out, no
 * schemes, no signatures, no push notifications).
 */
export interface SdkCardOptions {
  name: string;
  description: string;
  /** One JSON-RPC interface at this URL (v1.0); `interfaces` instead for any other set. */
  url?: string;
  interfaces?: AgentInterface[];
  /** Default true. */
  streaming?: boolean;
  skills?: AgentSkill[];
  securitySchemes?: AgentCard['securitySchemes'];
  securityRequirements?: AgentCard['securityRequirements'];
}

/**
 * An SDK AgentCard for a test remote.
 *
 * @example
 * ```ts
 * const card = sdkAgentCard({ name: 'Booking', description: 'Books tables.', url: `${base}/a2a/jsonrpc` });
 * ```
 */
export function sdkAgentCard(options: SdkCardOptions): AgentCard {
  return {
    name: options.name,
    description: options.description,
    version: '1.0.0',
    provider: undefined,
    supportedInterfaces: options.interfaces ?? (options.url === undefined ? [] : [sdkInterface(options.url)]),
    capabilities: {
      streaming: options.streaming ?? true,
      pushNotifications: false,
      extensions: [],
      extendedAgentCard: false,
    },
    securitySchemes: options.securitySchemes ?? {},
    securityRequirements: options.securityRequirements ?? [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: options.skills ?? [],
    signatures: [],
  };
}

/**
 * One interface of an SDK card: JSON-RPC at v1.0 unless told otherwise.
 *
 * @example
 * ```ts
 * sdkInterface(`${base}/rest`, 'HTTP+JSON');
 * ```
 */
export function sdkInterface(
  url: string,
  protocolBinding = 'JSONRPC',
  protocolVersion: string = A2A_PROTOCOL_VERSION,
): AgentInterface {
  return { url, protocolBinding, tenant: '', protocolVersion };
}

/**
 * A skill of an SDK card, with empty examples, modes and requirements.
 *
 * @example
 * ```ts
 * sdkSkill({ id: 'echo', name: 'Echo', description: 'Echoes.', tags: ['echo'] });
 * ```
 */
export function sdkSkill(skill: Pick<AgentSkill, 'id' | 'name' | 'description' | 'tags'>): AgentSkill {
  return { ...skill, examples: [], inputModes: [], outputModes: [], securityRequirements: [] };
}
