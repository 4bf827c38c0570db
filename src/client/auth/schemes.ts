/**
 * Which scheme a call uses, chosen from the trusted (pinned, signature-checked) card and the
 * entry's configuration: a pure function. The card may only pick among what the operator
 * configured: it names the scheme (`card_scheme`) and the scopes it asks for, never a token
 * endpoint of its own (a token URL on the card must be on the entry's token endpoint origin),
 * never a scope outside the entry's list (when the entry has one).
 *
 * @example
 * ```ts
 * const choice = selectScheme(card, { cardScheme: 'oauth', tokenEndpoint: 'https://idp.example/token', scopes: [] });
 * if (choice.kind === 'refused') throw new OutboundAuthError(choice.code, …);
 * ```
 */
import type { SecurityScheme } from '../../protocol/model.js';

/**
 * One security scheme as the card declares it. `oauth2` and `openIdConnect` carry the URLs that
 * name the card's authorization server (a requirement may still name a scheme the decoder did
 * not keep, such as HTTP Basic).
 *
 * @example
 * ```ts
 * const scheme: CardSchemeView = { type: 'oauth2', tokenUrls: ['https://idp.example/token'], flows: ['clientCredentials'] };
 * ```
 */
export type CardSchemeView =
  | { type: 'http'; scheme: string }
  | { type: 'apiKey' }
  /** `tokenUrls`: every flow's token and refresh URL, and the metadata URL; `flows`: the flow kinds declared. */
  | { type: 'oauth2'; tokenUrls: readonly string[]; flows?: readonly string[] }
  | { type: 'openIdConnect'; discoveryUrl: string }
  | { type: 'mutualTLS' };

/**
 * The security part of a trusted card.
 *
 * @example
 * ```ts
 * const security: CardSecurity = { schemes: { oauth: { type: 'http', scheme: 'bearer' } }, requirements: [{ oauth: ['a2a'] }] };
 * ```
 */
export interface CardSecurity {
  readonly schemes: Readonly<Record<string, CardSchemeView>>;
  /** Alternatives, in the card's order; each maps scheme names to the scopes it needs. */
  readonly requirements: readonly Readonly<Record<string, readonly string[]>>[];
}

/**
 * What the entry is configured for.
 *
 * @example
 * ```ts
 * const want: SchemeConfig = { cardScheme: 'oauth', tokenEndpoint: 'https://idp.example/token', scopes: ['a2a.send'] };
 * ```
 */
export interface SchemeConfig {
  /** The card's name of the scheme this entry supplies. */
  readonly cardScheme: string;
  readonly tokenEndpoint: string;
  /** The scopes the entry may ask for; empty: whatever the card's requirement names. */
  readonly scopes: readonly string[];
  /**
   * The entry's grant. A `client_credentials` entry cannot supply an `oauth2` scheme that
   * declares flows but no `clientCredentials` one (it asks for a user's login).
   */
  readonly grant?: 'client_credentials' | 'token_exchange' | 'jwt_bearer';
}

/**
 * The choice: send a token with these scopes, send none (the card requires nothing, or lists an
 * empty alternative and none the entry supplies), or refuse the call.
 *
 * @example
 * ```ts
 * const choice: SchemeChoice = { kind: 'token', scopes: ['a2a.send'] };
 * ```
 */
export type SchemeChoice =
  | { kind: 'token'; scopes: readonly string[] }
  | { kind: 'none' }
  | { kind: 'refused'; code: 'outbound_auth_unsupported_scheme' | 'token_endpoint_origin'; reason: string };

/** A scheme name shown in a reason: only when it is a plain identifier (card text is not echoed). */
function shown(name: string): string {
  return /^[A-Za-z0-9_.-]{1,64}$/.test(name) ? `"${name}"` : 'a scheme';
}

/**
 * Chooses how to authenticate to the remote from its card's requirements and the entry's
 * configuration. Rules, in order:
 * - no requirement on the card: no token (nothing is sent that the remote did not ask for);
 * - the first alternative made of exactly the entry's scheme wins: its scopes are asked for
 *   (or the entry's own, when the card names none), each within the entry's list if it has one;
 * - else an empty alternative (`{}`) means no token;
 * - else refused: the card asks for something the entry cannot supply.
 * The entry's scheme, when the card declares it, must be a bearer-carrying kind (`oauth2`,
 * `openIdConnect`, HTTP bearer), and every token URL it names on the entry's token endpoint origin.
 *
 * @example
 * ```ts
 * selectScheme({ schemes: {}, requirements: [{ oauth: ['a2a'] }] }, { cardScheme: 'oauth', tokenEndpoint, scopes: [] });
 * // { kind: 'token', scopes: ['a2a'] }
 * ```
 */
export function selectScheme(card: CardSecurity, config: SchemeConfig): SchemeChoice {
  if (card.requirements.length === 0) return { kind: 'none' };
  const name = config.cardScheme;
  const declared = Object.hasOwn(card.schemes, name) ? card.schemes[name] : undefined;
  if (declared !== undefined) {
    const problem = schemeProblem(declared, config.tokenEndpoint, config.grant);
    if (problem !== undefined) return { kind: 'refused', ...problem, reason: `${shown(name)} ${problem.reason}` };
  }
  let optional = false;
  let outOfScope: string | undefined;
  for (const alternative of card.requirements) {
    const names = Object.keys(alternative);
    if (names.length === 0) {
      optional = true;
      continue;
    }
    if (names.length !== 1 || names[0] !== name) continue;
    const asked = alternative[name] ?? [];
    const scopes = asked.length > 0 ? [...asked] : [...config.scopes];
    const allowed = new Set(config.scopes);
    const extra = config.scopes.length === 0 ? undefined : scopes.find((scope) => !allowed.has(scope));
    if (extra !== undefined) {
      outOfScope ??= extra;
      continue;
    }
    return { kind: 'token', scopes: dedupe(scopes) };
  }
  if (optional) return { kind: 'none' };
  if (outOfScope !== undefined) {
    return {
      kind: 'refused',
      code: 'outbound_auth_unsupported_scheme',
      reason: `the card asks ${shown(name)} for a scope outside the entry's auth scopes`,
    };
  }
  const wanted = card.requirements
    .map((alternative) => Object.keys(alternative).map(shown).join(' + '))
    .slice(0, 4)
    .join(', or ');
  return {
    kind: 'refused',
    code: 'outbound_auth_unsupported_scheme',
    reason: `the card requires ${wanted}; the entry supplies only ${shown(name)}`,
  };
}

function schemeProblem(
  scheme: CardSchemeView,
  tokenEndpoint: string,
  grant: SchemeConfig['grant'],
): { code: 'outbound_auth_unsupported_scheme' | 'token_endpoint_origin'; reason: string } | undefined {
  switch (scheme.type) {
    case 'http':
      return scheme.scheme.toLowerCase() === 'bearer'
        ? undefined
        : { code: 'outbound_auth_unsupported_scheme', reason: 'is not a bearer scheme on the card' };
    case 'oauth2': {
      const origin = originOf(tokenEndpoint);
      const foreign = scheme.tokenUrls.some((url) => originOf(url) !== origin || origin === undefined);
      if (foreign) {
        return { code: 'token_endpoint_origin', reason: "names a token URL outside the entry's token endpoint origin" };
      }
      const flows = scheme.flows ?? [];
      return grant === 'client_credentials' && flows.length > 0 && !flows.includes('clientCredentials')
        ? {
            code: 'outbound_auth_unsupported_scheme',
            reason: "declares no client credentials flow on the card (it asks for a user's sign-in)",
          }
        : undefined;
    }
    case 'openIdConnect':
      return originOf(scheme.discoveryUrl) === originOf(tokenEndpoint) && originOf(tokenEndpoint) !== undefined
        ? undefined
        : {
            code: 'token_endpoint_origin',
            reason: "names an OpenID Connect issuer outside the entry's token endpoint origin",
          };
    case 'apiKey':
    case 'mutualTLS':
      return {
        code: 'outbound_auth_unsupported_scheme',
        reason: `is a ${scheme.type} scheme on the card, not a bearer token`,
      };
  }
}

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

function dedupe(values: readonly string[]): string[] {
  return [...new Set(values)];
}

/**
 * The card's security as {@link selectScheme} reads it, from the canonical card model (which
 * keeps `http` bearer, `apiKey`, `oauth2`, `openIdConnect` and `mutualTLS` schemes, and every
 * requirement as sent).
 *
 * @example
 * ```ts
 * const security = cardSecurityOf(trusted.card);
 * ```
 */
export function cardSecurityOf(card: {
  securitySchemes: Readonly<Record<string, SecurityScheme>>;
  securityRequirements: readonly Readonly<Record<string, readonly string[]>>[];
}): CardSecurity {
  const schemes: Record<string, CardSchemeView> = {};
  for (const [name, scheme] of Object.entries(card.securitySchemes)) schemes[name] = viewOf(scheme);
  return { schemes, requirements: card.securityRequirements };
}

function viewOf(scheme: SecurityScheme): CardSchemeView {
  switch (scheme.type) {
    case 'http':
      return { type: 'http', scheme: scheme.scheme };
    case 'apiKey':
      return { type: 'apiKey' };
    case 'oauth2': {
      const flows = Object.values(scheme.flows);
      const urls = flows.flatMap((flow) => [flow.tokenUrl, flow.refreshUrl]);
      const tokenUrls = [...urls, scheme.metadataUrl].filter((url): url is string => url !== undefined);
      return { type: 'oauth2', tokenUrls, flows: Object.keys(scheme.flows) };
    }
    case 'openIdConnect':
      return { type: 'openIdConnect', discoveryUrl: scheme.openIdConnectUrl };
    case 'mutualTLS':
      return { type: 'mutualTLS' };
  }
}
