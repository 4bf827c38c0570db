/**
 * The client credentials grant (RFC 6749 §4.4): the parameters of a token request for the
 * client's own token, with the audience (RFC 8707 `resource`, or `audience`) and scopes.
 *
 * @example
 * ```ts
 * clientCredentialsParams(oauth, ['a2a.send']); // { grant_type: 'client_credentials', scope: 'a2a.send', … }
 * ```
 */
import type { OAuthSettings } from './config.js';

/**
 * The form parameters of a client credentials request (client authentication is added by
 * `requestToken`).
 *
 * @example
 * ```ts
 * const params = clientCredentialsParams(entry.oauth!, ['a2a.send']);
 * ```
 */
export function clientCredentialsParams(oauth: OAuthSettings, scopes: readonly string[]): Record<string, string> {
  return {
    grant_type: 'client_credentials',
    ...(scopes.length > 0 && { scope: scopes.join(' ') }),
    ...(oauth.audience !== undefined && { audience: oauth.audience }),
    ...(oauth.resource !== undefined && { resource: oauth.resource }),
  };
}
