/**
 * Outbound auth for one client (or one upstream connector): for each call, which token goes in
 * the `Authorization` header. A `bearer_env` entry sends its static token; an OAuth entry gets
 * one from its token endpoint (client credentials, or a token exchange for the call's
 * subject: a relay's delegated caller, else the configured one; a relay's service caller gets
 * client credentials), cached per (entry, subject, audience, scopes). With `from_card`, the trusted card's
 * requirements decide whether a token is sent and with which scopes ({@link selectScheme}).
 * A remote's 401 drops the cached token; the caller retries once with a new one.
 *
 * @example
 * ```ts
 * const auth = new OutboundAuth({ transport });
 * const endpointAuth = auth.forEndpoint(entry, trusted.card, endpoint.url, {});
 * headers.authorization = await endpointAuth?.header();
 * ```
 */
import type { GuardedClient } from '../contracts.js';
import type { RegistryEntry } from '../registry.js';
import { TokenCache, subjectKey, tokenCacheKey, type TokenCacheOptions } from './cache.js';
import { clientCredentialsParams } from './client-credentials.js';
import { OutboundAuthError } from './errors.js';
import { jwtBearerParams } from './jwt-bearer.js';
import { cardSecurityOf, selectScheme } from './schemes.js';
import { DEFAULT_MAX_TOKEN_RESPONSE_BYTES, requestToken } from './token-endpoint.js';
import { exchangeSubjectOf, tokenExchangeParams, type ExchangeSubject } from './token-exchange.js';

/**
 * Settings of {@link OutboundAuth}.
 *
 * @example
 * ```ts
 * const options: OutboundAuthOptions = { transport, cache: { skewMs: 1000 } };
 * ```
 */
export interface OutboundAuthOptions {
  /** The guarded transport token requests go through. */
  transport: GuardedClient;
  cache?: TokenCacheOptions;
  /** Cap on a token response. Default 64 KiB. */
  maxTokenResponseBytes?: number;
  now?: () => number;
}

/**
 * The auth of one endpoint for one call's subject: the header to send, and what to do when the
 * remote refuses it.
 *
 * @example
 * ```ts
 * const value = await auth.header(); // 'Bearer …'
 * auth.invalidate();                  // after a 401: the next header() fetches a new token
 * ```
 */
export interface EndpointAuth {
  /** The `Authorization` header value. Throws {@link OutboundAuthError}. */
  header(): Promise<string>;
  /** Drops the cached token; true when there was one to renew (a static token cannot be). */
  invalidate(): boolean;
}

/**
 * The card fields {@link OutboundAuth.forEndpoint} reads.
 *
 * @example
 * ```ts
 * auth.forEndpoint(entry, trusted.card, endpoint.url);
 * ```
 */
export type CardSecurityFields = Parameters<typeof cardSecurityOf>[0];

/**
 * Tokens for outbound calls, cached in memory.
 *
 * @example
 * ```ts
 * const auth = new OutboundAuth({ transport });
 * ```
 */
export class OutboundAuth {
  readonly #transport: GuardedClient;
  readonly #cache: TokenCache;
  readonly #maxBytes: number;
  readonly #now: () => number;

  constructor(options: OutboundAuthOptions) {
    this.#transport = options.transport;
    this.#now = options.now ?? options.cache?.now ?? Date.now;
    this.#cache = new TokenCache({ ...options.cache, now: this.#now });
    this.#maxBytes = options.maxTokenResponseBytes ?? DEFAULT_MAX_TOKEN_RESPONSE_BYTES;
  }

  /**
   * The auth of `entry`'s endpoint at `url` for a call by `subject`: undefined when nothing is
   * sent. Refuses (throws {@link OutboundAuthError}) when the card asks for what the entry
   * cannot supply.
   *
   * @example
   * ```ts
   * const endpointAuth = auth.forEndpoint(entry, trusted.card, 'https://travel.example/a2a', { subjectToken });
   * ```
   */
  forEndpoint(
    entry: RegistryEntry,
    card: CardSecurityFields,
    url: string,
    subject: ExchangeSubject = {},
  ): EndpointAuth | undefined {
    if (entry.auth !== undefined) {
      const header = entry.auth.header();
      return { header: () => Promise.resolve(header), invalidate: () => false };
    }
    const oauth = entry.oauth;
    if (oauth === undefined) return undefined;
    let scopes: readonly string[] = oauth.scopes;
    if (oauth.fromCard) {
      const choice = selectScheme(cardSecurityOf(card), {
        cardScheme: oauth.cardScheme ?? '',
        tokenEndpoint: oauth.tokenEndpoint,
        scopes: oauth.scopes,
        grant: oauth.kind === 'oauth2_client_credentials' ? 'client_credentials' : oauth.kind,
      });
      if (choice.kind === 'none') return undefined;
      if (choice.kind === 'refused') {
        throw new OutboundAuthError(
          choice.code,
          choice.code === 'token_endpoint_origin' ? 'origin_mismatch' : 'card_invalid',
          `agent "${entry.name}": ${choice.reason}`,
        );
      }
      scopes = choice.scopes;
    }
    // Requested audience: the operator's, else the remote's origin.
    const remote = new URL(url).origin;
    const audience = oauth.audience ?? oauth.resource ?? remote;
    // A token exchange entry called for a service caller (no subject) uses client credentials.
    const subjectToken = oauth.kind === 'token_exchange' ? exchangeSubjectOf(oauth, subject) : undefined;
    const fetchToken = async () => {
      const params =
        subjectToken !== undefined
          ? {
              ...(oauth.audience === undefined && oauth.resource === undefined && { audience: remote }),
              ...tokenExchangeParams(oauth, subjectToken, scopes),
            }
          : oauth.kind === 'jwt_bearer'
            ? await jwtBearerParams(oauth, scopes, this.#now)
            : clientCredentialsParams(oauth, scopes);
      return requestToken(this.#transport, oauth, params, {
        privateNetwork: entry.privateNetwork,
        timeouts: entry.timeouts,
        maxResponseBytes: this.#maxBytes,
        now: this.#now,
      });
    };
    const who =
      subjectToken !== undefined
        ? subjectKey(subjectToken)
        : oauth.assertion !== undefined
          ? `assertion:${oauth.assertion.subject}`
          : 'client';
    const key = tokenCacheKey(entry.name, who, audience, scopes);
    return {
      header: async () => `Bearer ${(await this.#cache.get(key, fetchToken)).accessToken}`,
      invalidate: () => {
        this.#cache.drop(key);
        return true;
      },
    };
  }
}
