/**
 * The card trust digest: SHA-256 over the RFC 8785 (JCS) form of the fields of an agent card
 * that decide where Airlock sends a request and what it may ask for. A remote that rewords its
 * description keeps working; one that moves its endpoint, changes its security, or changes
 * what its skills claim gets a new digest, and the pin check disables it (see `card.ts`).
 *
 * The trust fields are exactly:
 * - `interfaces`: each interface's `url`, `protocolBinding` and `protocolVersion` (not
 *   `tenant`), including gRPC and HTTP+JSON ones that Airlock never calls: a card that
 *   adds or moves any endpoint is a different card;
 * - `securitySchemes` and `securityRequirements`, as decoded: an OAuth 2.0 scheme with its
 *   flows' URLs (token, authorization, device, refresh), metadata URL and scope names, an
 *   OpenID Connect scheme with its discovery URL, a mutual TLS scheme by its type;
 * - `skills`, each without `examples`.
 *
 * Not covered: name, description, version, provider, URLs of documentation and icon,
 * capabilities, default media types, interface tenants, skill examples.
 *
 * Arrays keep the order the card publishes: JCS sorts object keys only. Interfaces are in
 * preference order (the first usable one is called), so reordering them changes the digest
 * on purpose; reordering skills or requirement alternatives does too, which costs a re-pin
 * but never hides a change.
 *
 * The digest is taken over the canonical model (`decodeAnyCard`), not the wire bytes, so the
 * same card served in the v1.0 and v0.3 shapes has one digest. The flip side: what the
 * decoder drops is not pinned either (interfaces with bindings or versions Airlock cannot
 * speak, HTTP Basic schemes, OAuth scope descriptions, per-skill security requirements).
 * Airlock cannot use any of those, so a change there cannot redirect or widen what it does.
 *
 * @example
 * ```ts
 * const digest = cardTrustDigest(decodeAnyCard(json)); // 64 lower-case hex digits
 * ```
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import type {
  AgentCard,
  AgentSkill,
  OAuthFlow,
  OAuthFlowKind,
  OAuthFlows,
  SecurityRequirement,
  SecurityScheme,
} from '../protocol/model.js';

/**
 * The pinned part of one interface.
 *
 * @example
 * ```ts
 * const pinned: TrustedInterfaceFields = { url: 'https://a.example/rpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0' };
 * ```
 */
export interface TrustedInterfaceFields {
  url: string;
  protocolBinding: string;
  protocolVersion: string;
}

/**
 * What the trust digest covers (see the module comment for why these and no others).
 *
 * @example
 * ```ts
 * const fields: CardTrustFields = trustFieldsOf(card);
 * fields.skills.every((skill) => !('examples' in skill)); // true
 * ```
 */
export interface CardTrustFields {
  interfaces: TrustedInterfaceFields[];
  securitySchemes: Record<string, SecurityScheme>;
  securityRequirements: SecurityRequirement[];
  skills: Omit<AgentSkill, 'examples'>[];
}

/**
 * The deepest JSON value `canonicalJson` accepts by default. `canonicalize` recurses, and a
 * deep enough value exhausts the stack (at about 20,000 levels); agent cards are a handful of
 * levels deep, so 64 refuses nothing real.
 *
 * @example
 * ```ts
 * canonicalJson(value, MAX_CANONICAL_DEPTH);
 * ```
 */
export const MAX_CANONICAL_DEPTH = 64;

/**
 * The trust fields of a card, copied field by field so that nothing else (an extra property
 * on an object handed in, say) can reach the digest. Optional fields that are absent stay
 * absent. Maps are rebuilt with `Object.fromEntries`, which keeps a key such as `__proto__`
 * an ordinary own key.
 *
 * @example
 * ```ts
 * trustFieldsOf(card).interfaces[0]; // { url, protocolBinding, protocolVersion }
 * ```
 */
export function trustFieldsOf(card: AgentCard): CardTrustFields {
  return {
    interfaces: card.interfaces.map((i) => ({
      url: i.url,
      protocolBinding: i.protocolBinding,
      protocolVersion: i.protocolVersion,
    })),
    securitySchemes: Object.fromEntries(
      Object.entries(card.securitySchemes).map(([name, scheme]) => [name, copyScheme(scheme)]),
    ),
    securityRequirements: card.securityRequirements.map((requirement) =>
      Object.fromEntries(Object.entries(requirement).map(([name, scopes]) => [name, [...scopes]])),
    ),
    skills: card.skills.map(copySkill),
  };
}

function copyScheme(scheme: SecurityScheme): SecurityScheme {
  if (scheme.type === 'http') {
    const out: SecurityScheme = { type: 'http', scheme: scheme.scheme };
    if (scheme.bearerFormat !== undefined) out.bearerFormat = scheme.bearerFormat;
    if (scheme.description !== undefined) out.description = scheme.description;
    return out;
  }
  if (scheme.type === 'apiKey') {
    const out: SecurityScheme = { type: 'apiKey', location: scheme.location, name: scheme.name };
    if (scheme.description !== undefined) out.description = scheme.description;
    return out;
  }
  let out: SecurityScheme;
  if (scheme.type === 'oauth2') {
    const flows: OAuthFlows = {};
    for (const [kind, flow] of Object.entries(scheme.flows) as [OAuthFlowKind, OAuthFlow][]) {
      flows[kind] = copyFlow(flow);
    }
    out = { type: 'oauth2', flows };
    if (scheme.metadataUrl !== undefined) out.metadataUrl = scheme.metadataUrl;
  } else if (scheme.type === 'openIdConnect') {
    out = { type: 'openIdConnect', openIdConnectUrl: scheme.openIdConnectUrl };
  } else {
    out = { type: 'mutualTLS' };
  }
  if (scheme.description !== undefined) out.description = scheme.description;
  return out;
}

/** A flow's URLs (those present) and scope names, in card order. */
function copyFlow(flow: OAuthFlow): OAuthFlow {
  const out: OAuthFlow = { scopes: [...flow.scopes] };
  for (const key of ['authorizationUrl', 'deviceAuthorizationUrl', 'tokenUrl', 'refreshUrl'] as const) {
    const url = flow[key];
    if (url !== undefined) out[key] = url;
  }
  return out;
}

function copySkill(skill: AgentSkill): Omit<AgentSkill, 'examples'> {
  const out: Omit<AgentSkill, 'examples'> = {
    id: skill.id,
    name: skill.name,
    description: skill.description,
    tags: [...skill.tags],
  };
  if (skill.inputModes !== undefined) out.inputModes = [...skill.inputModes];
  if (skill.outputModes !== undefined) out.outputModes = [...skill.outputModes];
  return out;
}

/**
 * The RFC 8785 (JCS) serialisation of a JSON value, via `canonicalize`: object keys sorted by
 * UTF-16 code units, ECMAScript number formatting, minimal string escaping, no whitespace.
 * Throws `RangeError` for a value nested deeper than `maxDepth` (checked without recursion,
 * before `canonicalize` recurses) and `Error` for what JCS cannot encode: NaN, infinities,
 * lone surrogates, cycles, or a top-level `undefined`.
 *
 * @example
 * ```ts
 * canonicalJson({ b: 1, a: [1e21, 4.5] }); // '{"a":[1e+21,4.5],"b":1}'
 * ```
 */
export function canonicalJson(value: unknown, maxDepth: number = MAX_CANONICAL_DEPTH): string {
  assertDepth(value, maxDepth);
  const text = canonicalize(value);
  if (text === undefined) throw new Error('JCS cannot encode this value');
  return text;
}

/**
 * Throws `RangeError` if `value` nests more than `max` arrays/objects. Iterative, so it is
 * safe on any input; a cyclic value ends here too, since its depth is unbounded.
 *
 * @example
 * ```ts
 * assertDepth([[[]]], 3); // fine
 * assertDepth([[[]]], 2); // throws RangeError
 * ```
 */
export function assertDepth(value: unknown, max: number): void {
  const stack: [unknown, number][] = [[value, 1]];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const [current, depth] = item;
    if (current === null || typeof current !== 'object') continue;
    if (depth > max) throw new RangeError(`JSON value nests deeper than ${max} levels`);
    const children: unknown[] = Array.isArray(current) ? current : Object.values(current);
    for (const child of children) stack.push([child, depth + 1]);
  }
}

/**
 * The card's trust digest: lower-case hex SHA-256 of `canonicalJson(trustFieldsOf(card))`.
 * Throws (see `canonicalJson`) if a trust field holds a string JCS refuses, such as one with
 * a lone surrogate; `CardTrust` reports that as an invalid card.
 *
 * @example
 * ```ts
 * cardTrustDigest(card) === cardTrustDigest({ ...card, description: 'reworded' }); // true
 * ```
 */
export function cardTrustDigest(card: AgentCard): string {
  return createHash('sha256')
    .update(canonicalJson(trustFieldsOf(card)), 'utf8')
    .digest('hex');
}

const DIGEST_PATTERN = /^[0-9a-f]{64}$/;

/**
 * A configured digest in the form `cardTrustDigest` returns (hex, lower case), or undefined if
 * it is not 64 hex digits. Accepts an optional `sha256:` prefix and upper case, as operators
 * paste digests from different tools.
 *
 * @example
 * ```ts
 * normalizeDigest('SHA256:AB…');  // 'ab…' (64 digits)
 * normalizeDigest('not-a-digest'); // undefined
 * ```
 */
export function normalizeDigest(value: string): string | undefined {
  const lower = value.trim().toLowerCase();
  const bare = lower.startsWith('sha256:') ? lower.slice('sha256:'.length) : lower;
  return DIGEST_PATTERN.test(bare) ? bare : undefined;
}
