/**
 * The JWT bearer authorization grant (RFC 7523 §2.1): Airlock signs an assertion for the
 * configured subject (`assertion_subject`) with the entry's assertion key, and trades it for an
 * access token to the remote.
 *
 * @example
 * ```ts
 * const params = await jwtBearerParams(oauth, ['a2a.send'], Date.now);
 * ```
 */
import { signAssertion } from './assertion.js';
import type { OAuthSettings } from './config.js';

/**
 * RFC 7523's grant type.
 *
 * @example
 * ```ts
 * params.grant_type === JWT_BEARER_GRANT;
 * ```
 */
export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/**
 * The form parameters of a JWT bearer grant request (client authentication is added by
 * `requestToken`).
 *
 * @example
 * ```ts
 * const params = await jwtBearerParams(entry.oauth!, ['a2a.send'], Date.now);
 * ```
 * @throws OutboundAuthError when the assertion cannot be signed
 */
export async function jwtBearerParams(
  oauth: OAuthSettings,
  scopes: readonly string[],
  now: () => number,
): Promise<Record<string, string>> {
  const assertion = oauth.assertion!;
  return {
    grant_type: JWT_BEARER_GRANT,
    assertion: await signAssertion(
      assertion.key,
      { iss: assertion.issuer, sub: assertion.subject, aud: oauth.tokenEndpoint },
      now,
    ),
    ...(scopes.length > 0 && { scope: scopes.join(' ') }),
    ...(oauth.audience !== undefined && { audience: oauth.audience }),
    ...(oauth.resource !== undefined && { resource: oauth.resource }),
  };
}
