/**
 * Agent cards as a client reads them (the client side of digest §6): one decoder reads
 * either shape, v1.0 or v0.3, so a client can fetch a card without knowing in advance which
 * one it will get. Failures are INVALID_AGENT_RESPONSE.
 *
 * The schemes the canonical model represents survive decoding: HTTP bearer, API key, and (with
 * their URLs and scope names, bounded: `./decode-oauth.ts`) OAuth 2.0, OpenID Connect and mutual
 * TLS; others (HTTP Basic, unknown kinds) are skipped, while security requirements are kept as
 * sent, so a requirement may name a scheme the client cannot use. At most {@link MAX_SCHEMES}.
 *
 * @example
 * ```ts
 * const card = decodeAnyCard(await response.json());
 * ```
 */
import type { AgentCard, AgentInterface, AgentSkill, SecurityRequirement, SecurityScheme } from '../model.js';
import { RESPONSE, guard } from '../validation/guard.js';
import type { Ctx } from '../validation/guard.js';
import {
  LIMITS,
  asRecord,
  checkMap,
  checkRecord,
  checkString,
  checkUrl,
  isAbsent,
  optBool,
  optId,
  optString,
  stringArray,
} from '../validation/primitives.js';
import type { Rec } from '../validation/primitives.js';
import { decodeMutualTlsScheme, decodeOAuthScheme, decodeOpenIdScheme } from './decode-oauth.js';

/** Names and descriptions in cards are for people; they are bounded only loosely. */
const TEXT_MAX = 64 * 1024;
const NAME_MAX = LIMITS.listItemLength;

type Binding = AgentInterface['protocolBinding'];
const BINDINGS: ReadonlySet<unknown> = new Set<Binding>(['JSONRPC', 'GRPC', 'HTTP+JSON']);

/**
 * `"1.0"`, `"1.0.x"` → 1.0; `"0.3"`, `"0.3.x"` → 0.3; missing → 0.3 (as a2a-js reads a card
 * interface without a version); anything else is a version we cannot speak.
 */
function interfaceVersion(value: string | undefined): AgentInterface['protocolVersion'] | undefined {
  if (value === undefined) return '0.3';
  const m = /^(\d+)\.(\d+)(?:\.\d+)?$/.exec(value.trim());
  if (m === null) return undefined;
  if (m[1] === '1' && m[2] === '0') return '1.0';
  if (m[1] === '0' && m[2] === '3') return '0.3';
  return undefined;
}

function addInterface(out: AgentInterface[], candidate: AgentInterface): void {
  for (const i of out) {
    if (
      i.url === candidate.url &&
      i.protocolBinding === candidate.protocolBinding &&
      i.protocolVersion === candidate.protocolVersion &&
      i.tenant === candidate.tenant
    ) {
      return;
    }
  }
  out.push(candidate);
}

/** v1.0 `supportedInterfaces`; entries with a binding or version we do not speak are skipped. */
function decodeSupportedInterfaces(value: unknown, path: string, ctx: Ctx): AgentInterface[] {
  if (!Array.isArray(value)) throw ctx.fail(path, 'must be an array');
  const out: AgentInterface[] = [];
  for (let i = 0; i < value.length; i++) {
    const itemPath = `${path}[${i}]`;
    const rec = checkRecord(value[i], itemPath, ctx);
    const url = checkUrl(rec.url, `${itemPath}.url`, ctx);
    const binding = checkString(rec.protocolBinding, `${itemPath}.protocolBinding`, ctx, NAME_MAX);
    const version = interfaceVersion(
      optString(rec.protocolVersion, `${itemPath}.protocolVersion`, ctx, NAME_MAX, true),
    );
    const tenant = optId(rec.tenant, `${itemPath}.tenant`, ctx, true);
    if (!BINDINGS.has(binding) || version === undefined) continue;
    const entry: AgentInterface = { url, protocolBinding: binding as Binding, protocolVersion: version };
    if (tenant !== undefined) entry.tenant = tenant;
    out.push(entry);
  }
  return out;
}

/** v0.3 `url` + `preferredTransport` + `additionalInterfaces`, all at version 0.3. */
function decodeLegacyInterfaces(rec: Rec, ctx: Ctx): AgentInterface[] {
  const out: AgentInterface[] = [];
  const url = checkUrl(rec.url, 'card.url', ctx);
  const preferred = optString(rec.preferredTransport, 'card.preferredTransport', ctx, NAME_MAX) ?? 'JSONRPC';
  if (BINDINGS.has(preferred))
    addInterface(out, { url, protocolBinding: preferred as Binding, protocolVersion: '0.3' });
  if (isAbsent(rec.additionalInterfaces)) return out;
  if (!Array.isArray(rec.additionalInterfaces)) throw ctx.fail('card.additionalInterfaces', 'must be an array');
  rec.additionalInterfaces.forEach((item: unknown, i: number) => {
    const path = `card.additionalInterfaces[${i}]`;
    const entry = checkRecord(item, path, ctx);
    const entryUrl = checkUrl(entry.url, `${path}.url`, ctx);
    const transport = checkString(entry.transport, `${path}.transport`, ctx, NAME_MAX);
    if (BINDINGS.has(transport)) {
      addInterface(out, { url: entryUrl, protocolBinding: transport as Binding, protocolVersion: '0.3' });
    }
  });
  return out;
}

function decodeScheme(value: unknown, path: string, ctx: Ctx): SecurityScheme | undefined {
  const rec = checkRecord(value, path, ctx);
  if (typeof rec.type === 'string') {
    // v0.3: tagged by `type`.
    if (rec.type === 'http') return decodeHttpScheme(rec, path, ctx);
    if (rec.type === 'apiKey') return decodeApiKeyScheme(rec, rec.in, `${path}.in`, path, ctx);
    if (rec.type === 'oauth2') return decodeOAuthScheme(rec, path, ctx);
    if (rec.type === 'openIdConnect') return decodeOpenIdScheme(rec, path, ctx);
    if (rec.type === 'mutualTLS') return decodeMutualTlsScheme(rec, path, ctx);
    return undefined;
  }
  // v1.0: one wrapper key.
  if (!isAbsent(rec.httpAuthSecurityScheme)) {
    const inner = `${path}.httpAuthSecurityScheme`;
    return decodeHttpScheme(checkRecord(rec.httpAuthSecurityScheme, inner, ctx), inner, ctx);
  }
  if (!isAbsent(rec.apiKeySecurityScheme)) {
    const inner = `${path}.apiKeySecurityScheme`;
    const body = checkRecord(rec.apiKeySecurityScheme, inner, ctx);
    return decodeApiKeyScheme(body, body.location, `${inner}.location`, inner, ctx);
  }
  for (const [key, decode] of WRAPPED_SCHEMES) {
    if (!isAbsent(rec[key])) return decode(checkRecord(rec[key], `${path}.${key}`, ctx), `${path}.${key}`, ctx);
  }
  return undefined;
}

/** The v1.0 wrapper keys of the schemes `./decode-oauth.ts` reads. */
const WRAPPED_SCHEMES: readonly (readonly [string, (rec: Rec, path: string, ctx: Ctx) => SecurityScheme])[] = [
  ['oauth2SecurityScheme', decodeOAuthScheme],
  ['openIdConnectSecurityScheme', decodeOpenIdScheme],
  ['mtlsSecurityScheme', decodeMutualTlsScheme],
];

/** Most security schemes a card may declare: a card over it is refused (never cut, which would hide a change from the digest). */
export const MAX_SCHEMES = 64;

function decodeHttpScheme(rec: Rec, path: string, ctx: Ctx): SecurityScheme | undefined {
  const scheme = checkString(rec.scheme, `${path}.scheme`, ctx, NAME_MAX);
  if (scheme.toLowerCase() !== 'bearer') return undefined;
  const out: SecurityScheme = { type: 'http', scheme: 'bearer' };
  const bearerFormat = optString(rec.bearerFormat, `${path}.bearerFormat`, ctx, NAME_MAX, true);
  if (bearerFormat !== undefined) out.bearerFormat = bearerFormat;
  const description = optString(rec.description, `${path}.description`, ctx, TEXT_MAX, true);
  if (description !== undefined) out.description = description;
  return out;
}

function decodeApiKeyScheme(
  rec: Rec,
  location: unknown,
  locationPath: string,
  path: string,
  ctx: Ctx,
): SecurityScheme | undefined {
  const where = checkString(location, locationPath, ctx, NAME_MAX);
  const name = checkString(rec.name, `${path}.name`, ctx, NAME_MAX, 1);
  if (where !== 'header' && where !== 'query' && where !== 'cookie') return undefined;
  const out: SecurityScheme = { type: 'apiKey', location: where, name };
  const description = optString(rec.description, `${path}.description`, ctx, TEXT_MAX, true);
  if (description !== undefined) out.description = description;
  return out;
}

function decodeSchemes(value: unknown, ctx: Ctx): Record<string, SecurityScheme> {
  if (isAbsent(value)) return {};
  const rec = checkMap(value, 'card.securitySchemes', ctx);
  if (Object.keys(rec).length > MAX_SCHEMES)
    throw ctx.fail('card.securitySchemes', `has more than ${MAX_SCHEMES} schemes`);
  const entries: [string, SecurityScheme][] = [];
  for (const name of Object.keys(rec)) {
    const scheme = decodeScheme(rec[name], `card.securitySchemes.${name}`, ctx);
    if (scheme !== undefined) entries.push([name, scheme]);
  }
  return Object.fromEntries(entries);
}

/** Reads v1.0 `{schemes:{name:{list}}}` and v0.3 `{name:[scopes]}` entries alike. */
function decodeRequirements(value: unknown, path: string, ctx: Ctx): SecurityRequirement[] {
  if (isAbsent(value)) return [];
  if (!Array.isArray(value)) throw ctx.fail(path, 'must be an array');
  const out: SecurityRequirement[] = [];
  for (let i = 0; i < value.length; i++) {
    const itemPath = `${path}[${i}]`;
    const rec = checkMap(value[i], itemPath, ctx);
    const wrapped = asRecord(rec.schemes);
    const entries: [string, string[]][] = [];
    if (wrapped !== undefined) {
      for (const name of Object.keys(wrapped)) {
        const scopesPath = `${itemPath}.schemes.${name}`;
        const list = checkRecord(wrapped[name], scopesPath, ctx);
        entries.push([name, stringArray(list.list, `${scopesPath}.list`, ctx) ?? []]);
      }
    } else {
      for (const name of Object.keys(rec)) {
        const scopesPath = `${itemPath}.${name}`;
        const scopes = stringArray(rec[name], scopesPath, ctx);
        if (scopes === undefined) throw ctx.fail(scopesPath, 'must be an array of strings');
        entries.push([name, scopes]);
      }
    }
    out.push(Object.fromEntries(entries));
  }
  return out;
}

function decodeSkill(value: unknown, path: string, ctx: Ctx): AgentSkill {
  const rec = checkRecord(value, path, ctx);
  const skill: AgentSkill = {
    id: checkString(rec.id, `${path}.id`, ctx, NAME_MAX, 1),
    name: checkString(rec.name, `${path}.name`, ctx, NAME_MAX),
    description: optString(rec.description, `${path}.description`, ctx, TEXT_MAX) ?? '',
    tags: stringArray(rec.tags, `${path}.tags`, ctx) ?? [],
  };
  const examples = stringArray(rec.examples, `${path}.examples`, ctx);
  if (examples !== undefined) skill.examples = examples;
  const inputModes = stringArray(rec.inputModes, `${path}.inputModes`, ctx);
  if (inputModes !== undefined) skill.inputModes = inputModes;
  const outputModes = stringArray(rec.outputModes, `${path}.outputModes`, ctx);
  if (outputModes !== undefined) skill.outputModes = outputModes;
  return skill;
}

function decodeCardWith(value: unknown, ctx: Ctx): AgentCard {
  const rec = checkRecord(value, 'card', ctx);
  // A v0.3 card has `url`; a2a-js also embeds the v1.0 list in it, which is the richer source.
  let interfaces: AgentInterface[];
  if (!isAbsent(rec.supportedInterfaces)) {
    interfaces = decodeSupportedInterfaces(rec.supportedInterfaces, 'card.supportedInterfaces', ctx);
  } else if (!isAbsent(rec.url)) {
    interfaces = decodeLegacyInterfaces(rec, ctx);
  } else {
    throw ctx.fail('card', 'must have supportedInterfaces (v1.0) or url (v0.3)');
  }
  const caps = isAbsent(rec.capabilities) ? {} : checkRecord(rec.capabilities, 'card.capabilities', ctx);
  const extended =
    optBool(caps.extendedAgentCard, 'card.capabilities.extendedAgentCard', ctx) ??
    optBool(rec.supportsAuthenticatedExtendedCard, 'card.supportsAuthenticatedExtendedCard', ctx) ??
    false;
  const card: AgentCard = {
    name: checkString(rec.name, 'card.name', ctx, NAME_MAX),
    description: optString(rec.description, 'card.description', ctx, TEXT_MAX) ?? '',
    version: optString(rec.version, 'card.version', ctx, NAME_MAX) ?? '',
    interfaces,
    capabilities: {
      streaming: optBool(caps.streaming, 'card.capabilities.streaming', ctx) ?? false,
      pushNotifications: optBool(caps.pushNotifications, 'card.capabilities.pushNotifications', ctx) ?? false,
      extendedAgentCard: extended,
    },
    securitySchemes: decodeSchemes(rec.securitySchemes, ctx),
    securityRequirements: isAbsent(rec.securityRequirements)
      ? decodeRequirements(rec.security, 'card.security', ctx)
      : decodeRequirements(rec.securityRequirements, 'card.securityRequirements', ctx),
    defaultInputModes: stringArray(rec.defaultInputModes, 'card.defaultInputModes', ctx) ?? [],
    defaultOutputModes: stringArray(rec.defaultOutputModes, 'card.defaultOutputModes', ctx) ?? [],
    skills: decodeSkills(rec.skills, ctx),
  };
  if (!isAbsent(rec.provider)) {
    const provider = checkRecord(rec.provider, 'card.provider', ctx);
    card.provider = {
      organization: checkString(provider.organization, 'card.provider.organization', ctx, NAME_MAX),
      url: optString(provider.url, 'card.provider.url', ctx, LIMITS.urlLength) ?? '',
    };
  }
  const documentationUrl = optString(rec.documentationUrl, 'card.documentationUrl', ctx, LIMITS.urlLength, true);
  if (documentationUrl !== undefined) card.documentationUrl = documentationUrl;
  const iconUrl = optString(rec.iconUrl, 'card.iconUrl', ctx, LIMITS.urlLength, true);
  if (iconUrl !== undefined) card.iconUrl = iconUrl;
  return card;
}

function decodeSkills(value: unknown, ctx: Ctx): AgentSkill[] {
  if (isAbsent(value)) return [];
  if (!Array.isArray(value)) throw ctx.fail('card.skills', 'must be an array');
  const out: AgentSkill[] = [];
  for (let i = 0; i < value.length; i++) out.push(decodeSkill(value[i], `card.skills[${i}]`, ctx));
  return out;
}

/**
 * A remote agent card in either shape. Throws `A2AError('INVALID_AGENT_RESPONSE')` on a
 * malformed card. Interfaces with bindings or versions Airlock cannot speak are dropped, so
 * `interfaces` may come back empty; choosing one (and checking its URL) is the caller's job.
 *
 * @example
 * ```ts
 * const card = decodeAnyCard(await response.json());
 * const target = card.interfaces.find((i) => i.protocolVersion === '1.0');
 * ```
 */
export function decodeAnyCard(value: unknown): AgentCard {
  return guard(RESPONSE, () => decodeCardWith(value, RESPONSE));
}
