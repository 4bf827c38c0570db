/**
 * Agent cards as Airlock serves them (the server side of digest §6): the v1.0 card lists
 * `supportedInterfaces` with a version each and wraps security schemes in oneof keys; the
 * v0.3 card has one `url` plus `additionalInterfaces`, and tags schemes with `type`.
 *
 * @example
 * ```ts
 * const wire = encodeCardV10(card); // serve with A2A-Version: 1.0
 * ```
 */
import { A2AError } from '../errors.js';
import type { AgentCard, AgentExtension, AgentInterface, AgentSkill, OAuthFlow, SecurityScheme } from '../model.js';
import type { Rec } from '../validation/primitives.js';

/**
 * One interface in the v1.0 shape (also embedded in v0.3 cards).
 *
 * @example
 * ```ts
 * encodeInterfaceV10({ url: 'https://a.example/rpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0' });
 * ```
 */
export function encodeInterfaceV10(i: AgentInterface): Rec {
  const out: Rec = { url: i.url, protocolBinding: i.protocolBinding, protocolVersion: i.protocolVersion };
  if (i.tenant !== undefined) out.tenant = i.tenant;
  return out;
}

function encodeSkill(skill: AgentSkill): Rec {
  const out: Rec = { id: skill.id, name: skill.name, description: skill.description, tags: skill.tags };
  if (skill.examples !== undefined) out.examples = skill.examples;
  if (skill.inputModes !== undefined) out.inputModes = skill.inputModes;
  if (skill.outputModes !== undefined) out.outputModes = skill.outputModes;
  return out;
}

function encodeSchemeV10(scheme: SecurityScheme): Rec {
  if (scheme.type === 'http') {
    // Auth scheme names are case-insensitive (RFC 9110); the proto's example spells it `Bearer`.
    const inner: Rec = { scheme: 'Bearer' };
    if (scheme.bearerFormat !== undefined) inner.bearerFormat = scheme.bearerFormat;
    if (scheme.description !== undefined) inner.description = scheme.description;
    return { httpAuthSecurityScheme: inner };
  }
  if (scheme.type === 'oauth2') return { oauth2SecurityScheme: schemeBody(scheme) };
  if (scheme.type === 'openIdConnect') return { openIdConnectSecurityScheme: schemeBody(scheme) };
  if (scheme.type === 'mutualTLS') return { mtlsSecurityScheme: schemeBody(scheme) };
  const inner: Rec = { location: scheme.location, name: scheme.name };
  if (scheme.description !== undefined) inner.description = scheme.description;
  return { apiKeySecurityScheme: inner };
}

function encodeSchemeV03(scheme: SecurityScheme): Rec {
  if (scheme.type === 'http') {
    const out: Rec = { type: 'http', scheme: 'bearer' };
    if (scheme.bearerFormat !== undefined) out.bearerFormat = scheme.bearerFormat;
    if (scheme.description !== undefined) out.description = scheme.description;
    return out;
  }
  if (scheme.type === 'oauth2' || scheme.type === 'openIdConnect' || scheme.type === 'mutualTLS') {
    return { type: scheme.type, ...schemeBody(scheme) };
  }
  const out: Rec = { type: 'apiKey', in: scheme.location, name: scheme.name };
  if (scheme.description !== undefined) out.description = scheme.description;
  return out;
}

/**
 * The body of an OAuth 2.0, OpenID Connect or mTLS scheme, the same in both shapes. Scope
 * descriptions are not kept by the decoder, so each scope is written with an empty one.
 */
function schemeBody(scheme: Extract<SecurityScheme, { type: 'oauth2' | 'openIdConnect' | 'mutualTLS' }>): Rec {
  const out: Rec = {};
  if (scheme.type === 'oauth2') {
    out.flows = mapValues(scheme.flows as Record<string, OAuthFlow>, (flow) => {
      const { scopes, ...urls } = flow;
      return { ...urls, scopes: Object.fromEntries(scopes.map((scope) => [scope, ''])) };
    });
    if (scheme.metadataUrl !== undefined) out.oauth2MetadataUrl = scheme.metadataUrl;
  }
  if (scheme.type === 'openIdConnect') out.openIdConnectUrl = scheme.openIdConnectUrl;
  if (scheme.description !== undefined) out.description = scheme.description;
  return out;
}

/** Maps a record's values; `Object.fromEntries` keeps a key such as `__proto__` an own key. */
function mapValues<T, U>(record: Readonly<Record<string, T>>, map: (value: T) => U): Record<string, U> {
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, map(value)]));
}

/** `capabilities.extensions`, the same in both dialects; left out when the card declares none. */
function withExtensions(capabilities: Rec, card: AgentCard): Rec {
  const extensions = card.capabilities.extensions;
  if (extensions !== undefined && extensions.length > 0) capabilities.extensions = extensions.map(encodeExtension);
  return capabilities;
}

function encodeExtension(extension: AgentExtension): Rec {
  const out: Rec = { uri: extension.uri };
  if (extension.description !== undefined) out.description = extension.description;
  out.required = extension.required;
  if (extension.params !== undefined) out.params = extension.params;
  return out;
}

function addCommon(out: Rec, card: AgentCard): void {
  if (card.provider !== undefined) out.provider = { url: card.provider.url, organization: card.provider.organization };
  if (card.documentationUrl !== undefined) out.documentationUrl = card.documentationUrl;
  if (card.iconUrl !== undefined) out.iconUrl = card.iconUrl;
}

/**
 * The card in the v1.0 shape. Empty `securitySchemes`/`securityRequirements` are omitted.
 *
 * @example
 * ```ts
 * encodeCardV10(card).supportedInterfaces; // [{ url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }, ...]
 * ```
 */
export function encodeCardV10(card: AgentCard): Rec {
  const out: Rec = {
    name: card.name,
    description: card.description,
    supportedInterfaces: card.interfaces.map(encodeInterfaceV10),
    version: card.version,
  };
  addCommon(out, card);
  out.capabilities = withExtensions(
    {
      streaming: card.capabilities.streaming,
      pushNotifications: card.capabilities.pushNotifications,
      extendedAgentCard: card.capabilities.extendedAgentCard,
    },
    card,
  );
  if (Object.keys(card.securitySchemes).length > 0)
    out.securitySchemes = mapValues(card.securitySchemes, encodeSchemeV10);
  if (card.securityRequirements.length > 0) {
    out.securityRequirements = card.securityRequirements.map((requirement) => ({
      schemes: mapValues(requirement, (scopes) => ({ list: scopes })),
    }));
  }
  out.defaultInputModes = card.defaultInputModes;
  out.defaultOutputModes = card.defaultOutputModes;
  out.skills = card.skills.map(encodeSkill);
  return out;
}

/**
 * The card in the v0.3 shape.
 *
 * - `url`/`preferredTransport`: the first interface declared at 0.3, else the first interface.
 * - `additionalInterfaces`: the distinct url+transport pairs of the other 0.3 interfaces (or of
 *   all interfaces when none is declared at 0.3), with the main one first as the v0.3 spec
 *   recommends; omitted when the main interface is the only one. v1.0-only interfaces are not
 *   offered to v0.3 clients, which would speak 0.3 to them.
 * - `supportedInterfaces`: the full list in the v1.0 shape, as a2a-js embeds it, so that a
 *   v1.0 client that fetched this shape still finds its interface.
 *
 * Throws `A2AError('INTERNAL')` for a card without interfaces (a configuration error).
 *
 * @example
 * ```ts
 * encodeCardV03(card).protocolVersion; // '0.3.0'
 * ```
 */
export function encodeCardV03(card: AgentCard): Rec {
  const legacy = card.interfaces.filter((i) => i.protocolVersion === '0.3');
  const candidates = legacy.length > 0 ? legacy : card.interfaces;
  const primary = candidates[0];
  if (primary === undefined) throw new A2AError('INTERNAL', 'The agent card has no interfaces');
  const out: Rec = {
    protocolVersion: '0.3.0',
    name: card.name,
    description: card.description,
    url: primary.url,
    preferredTransport: primary.protocolBinding,
  };
  const additional = distinctTransports(candidates);
  if (additional.length > 1) out.additionalInterfaces = additional;
  out.version = card.version;
  addCommon(out, card);
  out.capabilities = withExtensions(
    {
      streaming: card.capabilities.streaming,
      pushNotifications: card.capabilities.pushNotifications,
      stateTransitionHistory: false,
    },
    card,
  );
  if (Object.keys(card.securitySchemes).length > 0)
    out.securitySchemes = mapValues(card.securitySchemes, encodeSchemeV03);
  if (card.securityRequirements.length > 0) {
    out.security = card.securityRequirements.map((requirement) => mapValues(requirement, (scopes) => scopes));
  }
  out.defaultInputModes = card.defaultInputModes;
  out.defaultOutputModes = card.defaultOutputModes;
  out.skills = card.skills.map(encodeSkill);
  out.supportsAuthenticatedExtendedCard = card.capabilities.extendedAgentCard;
  out.supportedInterfaces = card.interfaces.map(encodeInterfaceV10);
  return out;
}

function distinctTransports(interfaces: readonly AgentInterface[]): Rec[] {
  const seen = new Set<string>();
  const out: Rec[] = [];
  for (const i of interfaces) {
    const key = `${i.protocolBinding} ${i.url}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ url: i.url, transport: i.protocolBinding });
  }
  return out;
}
