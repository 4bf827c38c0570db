/**
 * The token exchange grant (RFC 8693): a token for the remote, issued for a subject — the
 * inbound caller's verified JWT when a delegated caller is behind the call, else the subject
 * token the entry configures — optionally with an actor token; the requested audience is the
 * remote. The subject's own token is only ever sent to the token endpoint, never to the remote.
 *
 * @example
 * ```ts
 * tokenExchangeParams(oauth, { subjectToken: jwt }, ['a2a.send']);
 * ```
 */
import type { OAuthSettings } from './config.js';
import { OutboundAuthError } from './errors.js';

/**
 * RFC 8693 §3 token type identifiers.
 *
 * @example
 * ```ts
 * TOKEN_TYPE.jwt; // 'urn:ietf:params:oauth:token-type:jwt'
 * ```
 */
export const TOKEN_TYPE = {
  jwt: 'urn:ietf:params:oauth:token-type:jwt',
  accessToken: 'urn:ietf:params:oauth:token-type:access_token',
} as const;

/**
 * RFC 8693's grant type.
 *
 * @example
 * ```ts
 * params.grant_type === TOKEN_EXCHANGE_GRANT;
 * ```
 */
export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';

/**
 * Who the exchanged token is for: the delegated caller's verified JWT (preferred), else the
 * entry's configured subject token.
 *
 * @example
 * ```ts
 * const subject: ExchangeSubject = { subjectToken: principalJwt };
 * ```
 */
export interface ExchangeSubject {
  readonly subjectToken?: string;
  /**
   * The call is made for an inbound caller (a relay's turn): without the caller's own token (a
   * service caller) the entry's client credentials are used, never its configured subject token,
   * so no service caller acts as that subject.
   */
  readonly forInboundCaller?: boolean;
}

/**
 * The subject token a token exchange entry uses for this call, or undefined when the call goes
 * with the entry's client credentials instead (a relay's service caller).
 *
 * @example
 * ```ts
 * exchangeSubjectOf(oauth, { forInboundCaller: true }); // undefined: client credentials
 * ```
 * @throws OutboundAuthError `token_exchange_no_subject`
 */
export function exchangeSubjectOf(oauth: OAuthSettings, subject: ExchangeSubject): string | undefined {
  if (subject.subjectToken !== undefined) return subject.subjectToken;
  if (subject.forInboundCaller === true) return undefined;
  return subjectTokenOf(oauth, subject);
}

/**
 * Whether the entry is for delegation only: a token exchange with no configured subject token,
 * so its subject is always the inbound caller's JWT (a relay's turn). Callers without an inbound
 * principal (`airlock send`, `airlock agents`) have no token to exchange through it.
 *
 * @example
 * ```ts
 * if (delegatesCallerOnly(entry.oauth)) return 'per_caller';
 * ```
 */
export function delegatesCallerOnly(oauth: OAuthSettings | undefined): boolean {
  return oauth?.kind === 'token_exchange' && oauth.subjectToken === undefined;
}

/**
 * The subject token a request uses, or a refusal when there is none.
 *
 * @example
 * ```ts
 * const token = subjectTokenOf(oauth, { subjectToken: undefined }); // the configured one
 * ```
 * @throws OutboundAuthError `token_exchange_no_subject`
 */
export function subjectTokenOf(oauth: OAuthSettings, subject: ExchangeSubject): string {
  const token = subject.subjectToken ?? oauth.subjectToken?.reveal();
  if (token === undefined) {
    throw new OutboundAuthError(
      'token_exchange_no_subject',
      'remote_auth_failed',
      'a token exchange needs a subject: a delegated caller, or auth.token_exchange.subject_token_env',
    );
  }
  return token;
}

/**
 * The form parameters of a token exchange request (client authentication is added by
 * `requestToken`).
 *
 * @example
 * ```ts
 * const params = tokenExchangeParams(entry.oauth!, 'eyJ…', ['a2a.send']);
 * ```
 */
export function tokenExchangeParams(
  oauth: OAuthSettings,
  subjectToken: string,
  scopes: readonly string[],
): Record<string, string> {
  return {
    grant_type: TOKEN_EXCHANGE_GRANT,
    subject_token: subjectToken,
    subject_token_type: TOKEN_TYPE.jwt,
    requested_token_type: TOKEN_TYPE.accessToken,
    ...(oauth.actorToken !== undefined && { actor_token: oauth.actorToken.reveal(), actor_token_type: TOKEN_TYPE.jwt }),
    ...(scopes.length > 0 && { scope: scopes.join(' ') }),
    ...(oauth.audience !== undefined && { audience: oauth.audience }),
    ...(oauth.resource !== undefined && { resource: oauth.resource }),
  };
}
