/**
 * Inbound identity: configured client tokens (Authorization or, when enabled, X-API-Key) and,
 * when configured, JWTs from an identity provider. Client tokens are decided synchronously
 * (no promise on the hot path); only a JWT makes the decision asynchronous.
 *
 * @example
 * ```ts
 * const auth = Authenticator.fromConfig(config);
 * const pending = auth.authenticate({ authorization, apiKey }, slug, fromLoopback, anonymousLoopback);
 * const outcome = pending instanceof Promise ? await pending : pending;
 * ```
 */
import type { AirlockConfig, ClientEntry, JwtSettings } from '../../config/load.js';
import type { SecurityScheme } from '../../protocol/model.js';
import { API_KEY_HEADER, bearerToken, ClientAuthenticator, type Credentials } from './clients.js';
import { JwtAuthenticator, looksLikeJwt, type JwtAuthenticatorOptions, type JwtVerification } from './jwt.js';
import type { AuthOutcome } from './outcome.js';

export { escapePrincipalPart, makePrincipal, principalKey } from '../../identity/principal.js';
export type { Principal, PrincipalKind } from '../../identity/principal.js';
export type { AuthOutcome } from './outcome.js';
export { API_KEY_HEADER, bearerToken, ClientAuthenticator } from './clients.js';
export type { ClientAuthenticatorOptions, Credentials } from './clients.js';
export {
  guardedJwksFetcher,
  JWKS_ON_DEMAND_INTERVAL_MS,
  JwtAuthenticator,
  JwtConfigError,
  looksLikeJwt,
  MAX_ACTOR_DEPTH,
  MAX_ID_LENGTH,
  MAX_JWKS_BYTES,
} from './jwt.js';
export type { JwksFetcher, JwtAuthenticatorOptions, JwtFailure, JwtVerification } from './jwt.js';
export {
  isNotAPerson,
  jwtPersonId,
  PersonAuthenticator,
  personUserId,
  type JwtVerifier,
  type NotAPerson,
  type Person,
} from './persons.js';

export interface AuthenticatorOptions {
  clients: readonly ClientEntry[];
  /** Also accept a client token in `X-API-Key` (Authorization wins when both are sent). */
  apiKeyHeader?: boolean;
  /** Verify JWT bearer tokens too; absent → only client tokens. */
  jwt?: JwtSettings | undefined;
  /** For a JWKS URL: the fetcher or guarded client, logger and clock (defaults: see JwtAuthenticator). */
  jwtOptions?: JwtAuthenticatorOptions;
}

/**
 * Composes client tokens and JWTs. A bearer value that is a configured client token is always
 * that client, whatever its shape; otherwise, when JWT auth is configured and the value is
 * shaped like a JWT, it is verified as one. X-API-Key carries client tokens only.
 *
 * @example
 * ```ts
 * const auth = new Authenticator({ clients: config.clients, apiKeyHeader: true, jwt: config.jwt });
 * const outcome = await auth.authenticate({ authorization: 'Bearer eyJ…' }, 'echo', false, false);
 * ```
 */
export class Authenticator {
  // Replaced on a config reload (replaceClients, replaceJwt): each request reads the current ones.
  #clients: ClientAuthenticator;
  #jwt: JwtAuthenticator | undefined;

  constructor(options: AuthenticatorOptions) {
    this.#clients = new ClientAuthenticator(options.clients, { apiKeyHeader: options.apiKeyHeader === true });
    this.#jwt = options.jwt === undefined ? undefined : new JwtAuthenticator(options.jwt, options.jwtOptions);
  }

  /**
   * Takes new clients (a config reload): every authentication from now on uses them; one
   * already decided keeps its outcome.
   *
   * @example
   * ```ts
   * auth.replaceClients(next.clients, next.server.apiKeyHeader);
   * ```
   */
  replaceClients(clients: readonly ClientEntry[], apiKeyHeader: boolean): void {
    this.#clients = new ClientAuthenticator(clients, { apiKeyHeader });
  }

  /**
   * Takes new JWT settings (a config reload) and stops the previous JWKS refresh. With a JWKS
   * URL the new keys are fetched as at start. Adding or removing JWT auth is a restart (cards
   * and the approvals' person check depend on it), so `jwt` is absent only when it was.
   *
   * @example
   * ```ts
   * auth.replaceJwt(next.jwt, { logger });
   * ```
   */
  replaceJwt(jwt: JwtSettings | undefined, jwtOptions?: JwtAuthenticatorOptions): void {
    const previous = this.#jwt;
    this.#jwt = jwt === undefined ? undefined : new JwtAuthenticator(jwt, jwtOptions);
    void previous?.close();
  }

  /**
   * The authenticator a loaded configuration describes. Throws `JwtConfigError` (at startup)
   * when the configured JWT key cannot verify any allowed algorithm. With a JWKS URL, the first
   * fetch starts here without blocking (see {@link Authenticator.ready}); `jwtOptions` choose the
   * guarded client (default: one from the AIRLOCK_* environment) and the logger.
   *
   * @example
   * ```ts
   * const auth = Authenticator.fromConfig(loadConfigFile('airlock.yaml'));
   * ```
   */
  static fromConfig(
    config: Pick<AirlockConfig, 'clients' | 'jwt'> & { server: Pick<AirlockConfig['server'], 'apiKeyHeader'> },
    jwtOptions?: JwtAuthenticatorOptions,
  ): Authenticator {
    return new Authenticator({
      clients: config.clients,
      apiKeyHeader: config.server.apiKeyHeader,
      jwt: config.jwt,
      ...(jwtOptions !== undefined && { jwtOptions }),
    });
  }

  /**
   * Settles when a JWKS URL's first fetch has finished (true: keys loaded); true at once
   * otherwise. Never rejects; the gateway does not wait for it.
   *
   * @example
   * ```ts
   * await auth.ready();
   * ```
   */
  ready(): Promise<boolean> {
    return this.#jwt?.ready() ?? Promise.resolve(true);
  }

  /**
   * Stops a JWKS URL's background refresh (its timer never keeps the process alive anyway).
   *
   * @example
   * ```ts
   * await auth.close();
   * ```
   */
  async close(): Promise<void> {
    await this.#jwt?.close();
  }

  /**
   * Verifies a JWT with the configured issuer, audience, algorithms and keys, before any agent
   * is considered; undefined without JWT auth. For signing people in (PersonAuthenticator).
   *
   * @example
   * ```ts
   * const persons = new PersonAuthenticator(config.approvals?.people ?? [], auth.jwtVerifier());
   * ```
   */
  jwtVerifier(): ((token: string) => Promise<JwtVerification>) | undefined {
    if (this.#jwt === undefined) return undefined;
    // Read at each call, so a reload's new keys and issuer apply to people signing in too.
    return (token) => this.#jwt?.verify(token) ?? Promise.resolve({ ok: false, failure: 'no_matching_key' });
  }

  /**
   * Decides who the caller is and whether it may reach `slug`. Returns the outcome directly for
   * client tokens and anonymous callers, and a Promise (that never rejects) only when a JWT is
   * verified: check with `instanceof Promise` rather than always awaiting, to keep the hot path
   * free of promises.
   *
   * @example
   * ```ts
   * const pending = auth.authenticate({ authorization: req.headers.authorization }, 'echo', true, false);
   * const outcome = pending instanceof Promise ? await pending : pending;
   * ```
   */
  authenticate(
    credentials: Credentials,
    slug: string,
    fromLoopback: boolean,
    anonymousLoopback: boolean,
  ): AuthOutcome | Promise<AuthOutcome> {
    const outcome = this.#clients.authenticate(credentials, slug, fromLoopback, anonymousLoopback);
    if (outcome.ok || outcome.reason !== 'invalid_credentials' || this.#jwt === undefined) return outcome;
    // Only an Authorization bearer value can be a JWT. A 401 here came from Authorization
    // whenever that header was sent (it wins over X-API-Key), so re-reading it is exact.
    const { authorization } = credentials;
    if (authorization === undefined || authorization.length === 0) return outcome;
    const token = bearerToken(authorization);
    if (token === undefined || !looksLikeJwt(token)) return outcome;
    return this.#jwt.authenticate(token, slug);
  }
}

/**
 * The security schemes a card should list for this configuration: `bearer` always (a client
 * token, or a JWT when JWT auth is configured), and `apiKey` (the X-API-Key header) when the
 * API-key header is enabled. Each scheme is an alternative: a card lists one requirement per
 * scheme (`[{ bearer: [] }, { apiKey: [] }]`), never both in one requirement.
 *
 * @example
 * ```ts
 * const schemes = securitySchemesFor({ apiKeyHeader: config.server.apiKeyHeader, jwt: config.jwt });
 * Object.keys(schemes); // ['bearer', 'apiKey'] when the API-key header is on
 * ```
 */
export function securitySchemesFor(options: {
  apiKeyHeader: boolean;
  jwt?: JwtSettings | undefined;
}): Record<string, SecurityScheme> {
  const bearer: SecurityScheme =
    options.jwt === undefined
      ? { type: 'http', scheme: 'bearer', description: 'A client token issued by the operator' }
      : {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: 'A client token issued by the operator, or a JWT from the configured identity provider',
        };
  if (!options.apiKeyHeader) return { bearer };
  return {
    bearer,
    apiKey: {
      type: 'apiKey',
      location: 'header',
      name: API_KEY_HEADER,
      description: 'A client token issued by the operator, for callers that cannot send Authorization: Bearer',
    },
  };
}
