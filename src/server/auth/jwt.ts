/**
 * JWT bearer tokens from an identity provider, verified with jose: pinned algorithms, exact
 * issuer, audience, expiry (required) and not-before, with a small clock tolerance. A verified
 * token becomes a `service` principal, or a `delegated` one when it carries an `act` claim
 * (RFC 8693: an agent acting for the token's subject). Never a human principal: a JWT caller is
 * always a service or an agent, whoever it acts for.
 *
 * @example
 * ```ts
 * const jwt = new JwtAuthenticator(config.jwt);
 * const outcome = await jwt.authenticate(token, 'echo'); // AuthOutcome, never rejects
 * ```
 *
 * Keys come from a JWKS, a PEM public key (`jwt/local-keys.ts`) or a JWKS URL with refresh
 * (`jwt/remote-keys.ts`). The claim checks and jose's refusals live in `jwt/claims.ts`, the
 * `act` chain in `jwt/actors.ts`, the principal and grants in `jwt/principal.ts`; this file
 * composes them and is the one the rest of auth imports.
 */
import type { JWTVerifyOptions } from 'jose';
import type { JwtSettings } from '../../config/load.js';
import type { AuthOutcome } from './outcome.js';
import { claimChecks, verifySignedClaims } from './jwt/claims.js';
import { localJwksResolver, pemResolver, type KeyResolver } from './jwt/local-keys.js';
import { principalFromClaims, type JwtVerification, type PrincipalMapping } from './jwt/principal.js';
import { RemoteKeySet, type JwtAuthenticatorOptions } from './jwt/remote-keys.js';
import { VerifiedTokens } from './jwt/verified-tokens.js';

export { MAX_ACTOR_DEPTH } from './jwt/actors.js';
export type { JwtFailure } from './jwt/claims.js';
export { JwtConfigError } from './jwt/config-error.js';
export type { JwtVerification } from './jwt/principal.js';
export {
  guardedJwksFetcher,
  JWKS_ON_DEMAND_INTERVAL_MS,
  MAX_JWKS_BYTES,
  type JwksFetcher,
  type JwtAuthenticatorOptions,
} from './jwt/remote-keys.js';
export { looksLikeJwt, MAX_ID_LENGTH } from './jwt/shape.js';

/**
 * Verifies bearer JWTs against one configured issuer, audience and key set, and turns a
 * verified token into a principal and its agent grants. Construction is synchronous and
 * checks the key material, so a key that cannot verify any allowed algorithm fails at startup.
 *
 * @example
 * ```ts
 * const jwt = new JwtAuthenticator({
 *   issuer: 'https://idp.example', audience: 'airlock', algorithms: ['ES256'],
 *   agentsClaim: 'scope', agentsPrefix: 'a2a:', clockToleranceSeconds: 30,
 *   keys: { kind: 'jwks', jwks: { keys: [publicJwk] } },
 * });
 * const verified = await jwt.verify(token); // { ok: true, principal, grants } | { ok: false, failure }
 * ```
 */
export class JwtAuthenticator {
  readonly #options: JWTVerifyOptions;
  readonly #key: KeyResolver;
  readonly #mapping: PrincipalMapping;
  readonly #remote: RemoteKeySet | undefined;
  /** Where refusals are logged with their failure (the caller only ever sees a plain 401). */
  readonly #logger: JwtAuthenticatorOptions['logger'];
  /** Tokens verified with the key set of `#generation` (`jwt/verified-tokens.ts`). */
  readonly #verified: VerifiedTokens;
  #generation = 0;

  /**
   * @param options only for a JWKS URL: how it is fetched (default: a guarded client from the
   *   AIRLOCK_* environment) and where refresh failures are logged. The first fetch starts here.
   */
  constructor(settings: JwtSettings, options: JwtAuthenticatorOptions = {}) {
    this.#mapping = {
      issuer: settings.issuer,
      agentsClaim: settings.agentsClaim,
      agentsPrefix: settings.agentsPrefix,
    };
    let algorithms = [...new Set<string>(settings.algorithms)];
    if (settings.keys.kind === 'jwks') {
      this.#key = localJwksResolver(settings.keys.jwks);
    } else if (settings.keys.kind === 'url') {
      this.#remote = new RemoteKeySet(settings.keys, options);
      this.#key = this.#remote.resolve;
    } else {
      const pem = pemResolver(settings.keys.pem, algorithms);
      // Only algorithms this key can verify: a token claiming another one is refused before import.
      algorithms = pem.usable;
      this.#key = pem.resolver;
    }
    this.#options = claimChecks(settings, algorithms);
    this.#logger = options.logger;
    this.#verified = new VerifiedTokens(settings.clockToleranceSeconds);
  }

  /**
   * Settles when the first fetch of a JWKS URL has finished: true when it brought keys. Already
   * true for local key material. Never rejects.
   *
   * @example
   * ```ts
   * const jwt = new JwtAuthenticator(settings); // keys: { kind: 'url', ... }
   * if (!(await jwt.ready())) console.warn('the IdP is unreachable; JWTs get 401 until it answers');
   * ```
   */
  ready(): Promise<boolean> {
    return this.#remote?.ready ?? Promise.resolve(true);
  }

  /**
   * Fetches the JWKS URL again now, ignoring the on-demand rate limit; keeps the last good set
   * when it fails. True when the set was replaced; false for local key material.
   *
   * @example
   * ```ts
   * await jwt.refreshKeys();
   * ```
   */
  refreshKeys(): Promise<boolean> {
    return this.#remote?.refresh() ?? Promise.resolve(false);
  }

  /**
   * Stops the background refresh, aborts a fetch under way and closes the guarded client this
   * authenticator created.
   *
   * @example
   * ```ts
   * await jwt.close();
   * ```
   */
  async close(): Promise<void> {
    await this.#remote?.close();
  }

  /**
   * Verifies a compact JWT and derives its principal and grants. Never rejects: every failure
   * is a typed `{ ok: false, failure }`. A token verified before with the same keys, whose time
   * claims still pass, is answered from the cache of verified tokens.
   *
   * @example
   * ```ts
   * const verified = await jwt.verify(token);
   * if (!verified.ok) logger.warn({ event: 'jwt_refused', failure: verified.failure });
   * ```
   */
  async verify(token: string): Promise<JwtVerification> {
    const generation = this.#remote?.generation ?? 0;
    if (generation !== this.#generation) {
      this.#verified.clear();
      this.#generation = generation;
    }
    const known = this.#verified.get(token, generation);
    if (known !== undefined) return known;
    const checked = await verifySignedClaims(token, this.#key, this.#options);
    const verified = checked.ok ? principalFromClaims(checked.payload, this.#mapping) : checked;
    // The failure code only: never the token or a claim's value.
    if (!verified.ok) this.#logger?.warn({ event: 'jwt_refused', failure: verified.failure });
    // Kept under the key set it started with: a set replaced meanwhile makes the entry stale.
    else if (checked.ok) this.#verified.put(token, verified, checked.payload, generation);
    return verified;
  }

  /**
   * Verifies and decides for one agent: admitted, 401 (any verification failure) or 403 (a
   * valid token that does not grant `slug`). Never rejects.
   *
   * @example
   * ```ts
   * const outcome = await jwt.authenticate(token, 'echo');
   * ```
   */
  async authenticate(token: string, slug: string): Promise<AuthOutcome> {
    const verified = await this.verify(token);
    if (!verified.ok) return { ok: false, status: 401, reason: 'invalid_credentials' };
    if (!verified.grants.has(slug)) {
      return { ok: false, status: 403, reason: 'agent_not_allowed', principal: verified.principal };
    }
    return { ok: true, principal: verified.principal };
  }
}
