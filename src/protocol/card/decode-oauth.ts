/**
 * The OAuth 2.0, OpenID Connect and mutual TLS security schemes of a remote card, in either
 * shape (v0.3 `{type:"oauth2", flows, oauth2MetadataUrl}`, v1.0 `oauth2SecurityScheme{…}`; the
 * body is the same). Kept in the canonical model so that their URLs are covered by the trust
 * digest (a card that moves its token endpoint is a pin drift) and so that an outbound entry can
 * check them against the origins it allows. Bounded: at most {@link MAX_SCOPES} scopes per flow,
 * each name at most {@link MAX_SCOPE_NAME} characters, URLs at `LIMITS.urlLength`; a card over a
 * bound is refused, never cut (a cut would hide a change from the digest).
 *
 * @example
 * ```ts
 * const scheme = decodeOAuthScheme(rec, 'card.securitySchemes.oauth', RESPONSE);
 * ```
 */
import type { OAuthFlow, OAuthFlowKind, OAuthFlows, SecurityScheme } from '../model.js';
import type { Ctx } from '../validation/guard.js';
import { LIMITS, checkMap, checkRecord, checkUrl, isAbsent, optString } from '../validation/primitives.js';
import type { Rec } from '../validation/primitives.js';

/** Most scopes one flow may declare. */
export const MAX_SCOPES = 100;
/** Longest scope name kept. */
export const MAX_SCOPE_NAME = 256;
const TEXT_MAX = 64 * 1024;

const FLOW_KINDS: readonly OAuthFlowKind[] = [
  'authorizationCode',
  'clientCredentials',
  'deviceCode',
  'implicit',
  'password',
];
const FLOW_URLS = ['authorizationUrl', 'deviceAuthorizationUrl', 'tokenUrl', 'refreshUrl'] as const;

function withDescription<T extends SecurityScheme>(scheme: T, rec: Rec, path: string, ctx: Ctx): T {
  const description = optString(rec.description, `${path}.description`, ctx, TEXT_MAX, true);
  if (description !== undefined) scheme.description = description;
  return scheme;
}

function decodeFlow(value: unknown, path: string, ctx: Ctx): OAuthFlow {
  const rec = checkRecord(value, path, ctx);
  const flow: OAuthFlow = { scopes: [] };
  for (const key of FLOW_URLS) {
    const url = optString(rec[key], `${path}.${key}`, ctx, LIMITS.urlLength, true);
    if (url !== undefined) flow[key] = url;
  }
  if (!isAbsent(rec.scopes)) {
    const scopes = Object.keys(checkMap(rec.scopes, `${path}.scopes`, ctx));
    if (scopes.length > MAX_SCOPES) throw ctx.fail(`${path}.scopes`, `has more than ${MAX_SCOPES} scopes`);
    for (const scope of scopes) {
      if (scope.length === 0 || scope.length > MAX_SCOPE_NAME) {
        throw ctx.fail(`${path}.scopes`, `has a scope name that is empty or longer than ${MAX_SCOPE_NAME}`);
      }
    }
    flow.scopes = scopes;
  }
  return flow;
}

/**
 * An `oauth2` scheme's body: its known flows (others are skipped), metadata URL and description.
 *
 * @example
 * ```ts
 * decodeOAuthScheme({ flows: { clientCredentials: { tokenUrl, scopes: {} } } }, path, RESPONSE);
 * ```
 */
export function decodeOAuthScheme(rec: Rec, path: string, ctx: Ctx): SecurityScheme {
  const flowsRec = isAbsent(rec.flows) ? {} : checkRecord(rec.flows, `${path}.flows`, ctx);
  const flows: OAuthFlows = {};
  for (const kind of FLOW_KINDS) {
    if (!isAbsent(flowsRec[kind])) flows[kind] = decodeFlow(flowsRec[kind], `${path}.flows.${kind}`, ctx);
  }
  const scheme: SecurityScheme = { type: 'oauth2', flows };
  const metadataUrl = optString(rec.oauth2MetadataUrl, `${path}.oauth2MetadataUrl`, ctx, LIMITS.urlLength, true);
  if (metadataUrl !== undefined) scheme.metadataUrl = metadataUrl;
  return withDescription(scheme, rec, path, ctx);
}

/**
 * An `openIdConnect` scheme's body: its discovery URL (required) and description.
 *
 * @example
 * ```ts
 * decodeOpenIdScheme({ openIdConnectUrl: 'https://idp.example/.well-known/openid-configuration' }, path, RESPONSE);
 * ```
 */
export function decodeOpenIdScheme(rec: Rec, path: string, ctx: Ctx): SecurityScheme {
  const openIdConnectUrl = checkUrl(rec.openIdConnectUrl, `${path}.openIdConnectUrl`, ctx);
  return withDescription({ type: 'openIdConnect', openIdConnectUrl }, rec, path, ctx);
}

/**
 * A mutual TLS scheme's body: only a description.
 *
 * @example
 * ```ts
 * decodeMutualTlsScheme({}, path, RESPONSE); // { type: 'mutualTLS' }
 * ```
 */
export function decodeMutualTlsScheme(rec: Rec, path: string, ctx: Ctx): SecurityScheme {
  return withDescription({ type: 'mutualTLS' }, rec, path, ctx);
}
