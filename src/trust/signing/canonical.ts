/**
 * The card signing payload (A2A v1.0 §8.4.1): the bytes a card signature covers. One function,
 * `cardSigningPayload`, serves both signing and verifying, so the two can never drift apart
 * (a2a-js#605 had two).
 *
 * A2A#2249: §8.4.1 says explicitly set default values are kept, §8.4.2/§8.4.3 imply they are
 * dropped. A signature only helps if signer and verifier agree, so this follows what the
 * official SDKs do (a2a-js `canonicalizeAgentCard`, a2a-python `canonicalize_agent_card`),
 * byte for byte:
 *
 * 1. Round-trip the card through the v1.0 ProtoJSON `AgentCard` type: unknown members are
 *    dropped (so v0.3-only members such as `url`, `preferredTransport`, `security` and
 *    type-tagged `securitySchemes` are not signed), snake_case spellings are read as their
 *    camelCase fields, scalars are coerced as the SDK coerces them (`String(5)` → `"5"`), and
 *    proto3 defaults are dropped (`false` for the non-optional `required` and `pkceRequired`;
 *    the optional capability flags keep an explicit `false`).
 * 2. Remove `signatures`.
 * 3. Recursively remove empty strings, empty arrays, empty objects and nulls (also inside
 *    extension `params`), and any member named `__proto__` (the SDK's plain assignments
 *    lose it).
 * 4. Serialise with RFC 8785 (JCS).
 *
 * Where the SDK would still produce something for a malformed card, this refuses instead,
 * as a2a-python does: an object or array where the card has text, a null element in a list
 * of objects, a lone surrogate, a number beyond what a double holds. Such a card is not a
 * card Airlock would use anyway.
 *
 * Consequence worth knowing: the payload cannot tell an empty value from a missing one, so a
 * security requirement without scopes (`{"schemes":{"bearer":{}}}`) signs exactly like no
 * requirement at all. Card pins (`digest.ts`) keep that difference.
 *
 * @example
 * ```ts
 * const payload = cardSigningPayload(JSON.parse(body)); // '{"capabilities":{…},"name":"…",…}'
 * ```
 */
import { MAX_CANONICAL_DEPTH, assertDepth, canonicalJson } from '../digest.js';
import { CardSignatureError } from './errors.js';

/**
 * The deepest card `cardSigningPayload` accepts (the same cap card trust and the trust digest
 * use): checked without recursion, before anything recurses into the card.
 *
 * @example
 * ```ts
 * MAX_SIGNED_CARD_DEPTH; // 64
 * ```
 */
export const MAX_SIGNED_CARD_DEPTH = MAX_CANONICAL_DEPTH;

type Json = Record<string, unknown>;

/** How the v1.0 ProtoJSON type reads one field; `names` are the camelCase then snake_case spellings. */
type Field =
  | { kind: 'text'; names: readonly string[] }
  | { kind: 'flag'; names: readonly string[]; optional: boolean }
  | { kind: 'message'; names: readonly string[]; of: Message }
  | { kind: 'texts'; names: readonly string[] }
  | { kind: 'messages'; names: readonly string[]; of: Message }
  | { kind: 'messageMap'; names: readonly string[]; of: Message }
  | { kind: 'textMap'; names: readonly string[] }
  | { kind: 'struct'; names: readonly string[] }
  | { kind: 'oneof'; cases: readonly { name: string; names: readonly string[]; of: Message }[] };

interface Message {
  readonly fields: Readonly<Record<string, Field>>;
  /** Whether the SDK reads a null in a list or map of these as an empty message (else it throws). */
  readonly nullIsEmpty?: boolean;
}

const text = (...names: string[]): Field => ({ kind: 'text', names });
const texts = (...names: string[]): Field => ({ kind: 'texts', names });
const flag = (optional: boolean, ...names: string[]): Field => ({ kind: 'flag', names, optional });
const message = (of: Message, ...names: string[]): Field => ({ kind: 'message', names, of });
const messages = (of: Message, ...names: string[]): Field => ({ kind: 'messages', names, of });
const messageMap = (of: Message, ...names: string[]): Field => ({ kind: 'messageMap', names, of });
const textMap = (...names: string[]): Field => ({ kind: 'textMap', names });

// The v1.0 AgentCard and the messages it holds (a2a.proto, lf.a2a.v1), as ProtoJSON reads them.
const STRING_LIST: Message = { fields: { list: texts('list') }, nullIsEmpty: true };
const SECURITY_REQUIREMENT: Message = { fields: { schemes: messageMap(STRING_LIST, 'schemes') } };
const scopes = textMap('scopes');
const tokenUrl = text('tokenUrl', 'token_url');
const refreshUrl = text('refreshUrl', 'refresh_url');
const authorizationUrl = text('authorizationUrl', 'authorization_url');
const OAUTH_FLOWS: Message = {
  fields: {
    flow: {
      kind: 'oneof',
      cases: [
        {
          name: 'authorizationCode',
          names: ['authorizationCode', 'authorization_code'],
          of: {
            fields: {
              authorizationUrl,
              tokenUrl,
              refreshUrl,
              scopes,
              pkceRequired: flag(false, 'pkceRequired', 'pkce_required'),
            },
          },
        },
        {
          name: 'clientCredentials',
          names: ['clientCredentials', 'client_credentials'],
          of: { fields: { tokenUrl, refreshUrl, scopes } },
        },
        { name: 'implicit', names: ['implicit'], of: { fields: { authorizationUrl, refreshUrl, scopes } } },
        { name: 'password', names: ['password'], of: { fields: { tokenUrl, refreshUrl, scopes } } },
        {
          name: 'deviceCode',
          names: ['deviceCode', 'device_code'],
          of: {
            fields: {
              deviceAuthorizationUrl: text('deviceAuthorizationUrl', 'device_authorization_url'),
              tokenUrl,
              refreshUrl,
              scopes,
            },
          },
        },
      ],
    },
  },
};
const description = text('description');
const SECURITY_SCHEME: Message = {
  fields: {
    scheme: {
      kind: 'oneof',
      cases: [
        {
          name: 'apiKeySecurityScheme',
          names: ['apiKeySecurityScheme', 'api_key_security_scheme'],
          of: { fields: { description, location: text('location'), name: text('name') } },
        },
        {
          name: 'httpAuthSecurityScheme',
          names: ['httpAuthSecurityScheme', 'http_auth_security_scheme'],
          of: { fields: { description, scheme: text('scheme'), bearerFormat: text('bearerFormat', 'bearer_format') } },
        },
        {
          name: 'oauth2SecurityScheme',
          names: ['oauth2SecurityScheme', 'oauth2_security_scheme'],
          of: {
            fields: {
              description,
              flows: message(OAUTH_FLOWS, 'flows'),
              oauth2MetadataUrl: text('oauth2MetadataUrl', 'oauth2_metadata_url'),
            },
          },
        },
        {
          name: 'openIdConnectSecurityScheme',
          names: ['openIdConnectSecurityScheme', 'open_id_connect_security_scheme'],
          of: { fields: { description, openIdConnectUrl: text('openIdConnectUrl', 'open_id_connect_url') } },
        },
        {
          name: 'mtlsSecurityScheme',
          names: ['mtlsSecurityScheme', 'mtls_security_scheme'],
          of: { fields: { description } },
        },
      ],
    },
  },
};
const AGENT_INTERFACE: Message = {
  fields: {
    url: text('url'),
    protocolBinding: text('protocolBinding', 'protocol_binding'),
    tenant: text('tenant'),
    protocolVersion: text('protocolVersion', 'protocol_version'),
  },
};
const AGENT_EXTENSION: Message = {
  fields: {
    uri: text('uri'),
    description,
    required: flag(false, 'required'),
    params: { kind: 'struct', names: ['params'] },
  },
};
const AGENT_SKILL: Message = {
  fields: {
    id: text('id'),
    name: text('name'),
    description,
    tags: texts('tags'),
    examples: texts('examples'),
    inputModes: texts('inputModes', 'input_modes'),
    outputModes: texts('outputModes', 'output_modes'),
    securityRequirements: messages(SECURITY_REQUIREMENT, 'securityRequirements', 'security_requirements'),
  },
};
/** `signatures` is left out: step 2 of §8.4.1. */
const AGENT_CARD: Message = {
  fields: {
    name: text('name'),
    description,
    supportedInterfaces: messages(AGENT_INTERFACE, 'supportedInterfaces', 'supported_interfaces'),
    provider: message({ fields: { url: text('url'), organization: text('organization') } }, 'provider'),
    version: text('version'),
    documentationUrl: text('documentationUrl', 'documentation_url'),
    capabilities: message(
      {
        fields: {
          streaming: flag(true, 'streaming'),
          pushNotifications: flag(true, 'pushNotifications', 'push_notifications'),
          extensions: messages(AGENT_EXTENSION, 'extensions'),
          extendedAgentCard: flag(true, 'extendedAgentCard', 'extended_agent_card'),
        },
      },
      'capabilities',
    ),
    securitySchemes: messageMap(SECURITY_SCHEME, 'securitySchemes', 'security_schemes'),
    securityRequirements: messages(SECURITY_REQUIREMENT, 'securityRequirements', 'security_requirements'),
    defaultInputModes: texts('defaultInputModes', 'default_input_modes'),
    defaultOutputModes: texts('defaultOutputModes', 'default_output_modes'),
    skills: messages(AGENT_SKILL, 'skills'),
    iconUrl: text('iconUrl', 'icon_url'),
  },
};

/**
 * The canonical signing payload of a card (steps 1–4 in the module comment), as a string;
 * sign and verify its UTF-8 bytes. `card` is the parsed card JSON, in either shape, with or
 * without `signatures`.
 *
 * Throws `CardSignatureError`: `card_too_deep` for a card nested deeper than
 * `MAX_SIGNED_CARD_DEPTH` (checked first, without recursion), `card_malformed` for a card
 * that is not an object or that has no canonical form.
 *
 * @example
 * ```ts
 * cardSigningPayload({ name: 'Echo', capabilities: { streaming: false }, skills: [], signatures: [] });
 * // '{"capabilities":{"streaming":false},"name":"Echo"}'
 * ```
 */
export function cardSigningPayload(card: unknown): string {
  const cleaned = removeEmptyValues(cardV10Projection(card));
  try {
    return canonicalJson(cleaned ?? {}, MAX_SIGNED_CARD_DEPTH);
  } catch (error) {
    throw new CardSignatureError('card_malformed', `the card has no RFC 8785 form: ${reasonOf(error)}`, {
      cause: error,
    });
  }
}

/**
 * Step 1 alone: the card as the v1.0 `AgentCard` type reads it (known members only, camelCase
 * names, coerced scalars, proto3 defaults dropped), before empty values are removed and
 * without `signatures`. Coverage checks decode this to learn what a signature vouches for.
 * Throws as `cardSigningPayload` does.
 *
 * @example
 * ```ts
 * cardV10Projection({ name: 'Echo', url: 'https://e.example/rpc', supported_interfaces: [] });
 * // { name: 'Echo', supportedInterfaces: [] }
 * ```
 */
export function cardV10Projection(card: unknown): Json {
  try {
    assertDepth(card, MAX_SIGNED_CARD_DEPTH);
  } catch (error) {
    throw new CardSignatureError('card_too_deep', `the card nests deeper than ${MAX_SIGNED_CARD_DEPTH} levels`, {
      cause: error,
    });
  }
  if (!isPlainObject(card)) throw new CardSignatureError('card_malformed', 'the card is not a JSON object');
  return project(card, AGENT_CARD, 'card');
}

/**
 * Step 3: a copy of a JSON value without empty strings, empty arrays, empty objects, nulls and
 * `__proto__` members, recursively; `undefined` when nothing is left. `false` and `0` stay.
 *
 * @example
 * ```ts
 * removeEmptyValues({ a: '', b: [null, [], 'x'], c: { d: {} }, e: false }); // { b: ['x'], e: false }
 * removeEmptyValues([{}, '']);                                              // undefined
 * ```
 */
export function removeEmptyValues(value: unknown): unknown {
  if (value === '' || value === null || value === undefined) return undefined;
  if (Array.isArray(value)) {
    const items = value.map(removeEmptyValues).filter((item) => item !== undefined);
    return items.length > 0 ? items : undefined;
  }
  if (typeof value === 'object') {
    const out: Json = {};
    for (const [key, inner] of Object.entries(value)) {
      if (key === '__proto__') continue;
      const cleaned = removeEmptyValues(inner);
      if (cleaned !== undefined) out[key] = cleaned;
    }
    return Object.keys(out).length > 0 ? out : undefined;
  }
  return value;
}

// ---------------------------------------------------------------------------------------------
// The ProtoJSON round trip

/** A member as ProtoJSON's generated reader sees it: own members of objects; nothing on anything else. */
function member(value: unknown, name: string): unknown {
  return isPlainObject(value) && Object.hasOwn(value, name) ? value[name] : undefined;
}

/** The first spelling present by the field kind's own test (`isSet`, `Array.isArray`, `isObject`). */
function firstPresent(value: unknown, names: readonly string[], present: (v: unknown) => boolean): unknown {
  for (const name of names) {
    const candidate = member(value, name);
    if (present(candidate)) return candidate;
  }
  return undefined;
}

const isSet = (value: unknown): boolean => value !== null && value !== undefined;
const isObject = (value: unknown): boolean => typeof value === 'object' && value !== null;

function project(value: unknown, schema: Message, path: string): Json {
  const out: Json = {};
  for (const [name, field] of Object.entries(schema.fields)) {
    const at = `${path}.${name}`;
    switch (field.kind) {
      case 'text': {
        const raw = firstPresent(value, field.names, isSet);
        if (raw !== undefined) out[name] = asText(raw, at);
        break;
      }
      case 'flag': {
        const raw = firstPresent(value, field.names, isSet);
        // proto3: a non-optional bool at its default (false) is not written; an optional one is.
        if (raw !== undefined && (field.optional || Boolean(raw))) out[name] = Boolean(raw);
        break;
      }
      case 'message': {
        const raw = firstPresent(value, field.names, isSet);
        if (raw !== undefined) out[name] = project(raw, field.of, at);
        break;
      }
      case 'texts': {
        const raw = firstPresent(value, field.names, Array.isArray);
        if (Array.isArray(raw)) out[name] = raw.map((item, i) => asText(item, `${at}[${i}]`));
        break;
      }
      case 'messages': {
        const raw = firstPresent(value, field.names, Array.isArray);
        if (Array.isArray(raw)) out[name] = raw.map((item, i) => projectItem(item, field.of, `${at}[${i}]`));
        break;
      }
      case 'messageMap': {
        const raw = firstPresent(value, field.names, isObject);
        if (raw !== undefined) out[name] = mapEntries(raw, (item) => projectItem(item, field.of, `${at}[…]`));
        break;
      }
      case 'textMap': {
        const raw = firstPresent(value, field.names, isObject);
        if (raw !== undefined) out[name] = mapEntries(raw, (item) => asText(item, `${at}[…]`));
        break;
      }
      case 'struct': {
        // google.protobuf.Struct: kept as sent; step 3 still cleans inside it.
        const raw = firstPresent(value, field.names, isObject);
        if (raw !== undefined) out[name] = raw;
        break;
      }
      case 'oneof': {
        for (const option of field.cases) {
          const raw = firstPresent(value, option.names, isSet);
          if (raw === undefined) continue;
          out[option.name] = project(raw, option.of, `${path}.${option.name}`);
          break;
        }
        break;
      }
    }
  }
  return out;
}

/** An element of a list or map of messages: the SDK's reader throws on null for all but StringList. */
function projectItem(item: unknown, schema: Message, path: string): Json {
  if (item === null && schema.nullIsEmpty !== true) {
    throw new CardSignatureError('card_malformed', `the card has a null where A2A v1.0 has an object (${path})`);
  }
  return project(item, schema, path);
}

/** Map entries in order; `__proto__` is skipped, as the SDK's `acc[key] = …` loses it. */
function mapEntries(value: unknown, map: (item: unknown) => unknown): Json {
  const out: Json = {};
  for (const [key, item] of Object.entries(value as object)) {
    if (key === '__proto__') continue;
    out[key] = map(item);
  }
  return out;
}

/**
 * A scalar as text, coerced as ProtoJSON's reader coerces it (`String(value)`, so `null` in a
 * list reads as `"null"`). Objects and arrays are refused: the SDK would write
 * `"[object Object]"`, a2a-python would reject the card.
 */
function asText(value: unknown, path: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null) {
    throw new CardSignatureError('card_malformed', `the card has an object or array where A2A v1.0 has text (${path})`);
  }
  return String(value);
}

function isPlainObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : 'unknown';
}
