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
 */
import { createPublicKey } from 'node:crypto';
import {
  createLocalJWKSet,
  importSPKI,
  jwtVerify,
  type CryptoKey,
  type JWTHeaderParameters,
  type JWTPayload,
  type JWTVerifyOptions,
} from 'jose';
import type { JwtSettings } from '../../config/load.js';
import { makePrincipal, type AuthOutcome, type Principal } from './principal.js';

/** Why a token was refused: for logs and tests only; callers always get a plain 401. */
export type JwtFailure =
  | 'malformed'
  | 'alg_not_allowed'
  | 'no_matching_key'
  | 'bad_signature'
  | 'expired'
  | 'not_yet_valid'
  | 'wrong_issuer'
  | 'wrong_audience'
  | 'missing_claim'
  | 'invalid_claim'
  | 'invalid_subject'
  | 'invalid_client_id'
  | 'invalid_actor'
  | 'actor_chain_too_deep'
  | 'invalid';

/** The result of verifying a token, before any agent is considered. */
export type JwtVerification =
  | {
      ok: true;
      principal: Principal;
      /** Agent slugs the token grants (entries of the agents claim that carry the prefix). */
      grants: ReadonlySet<string>;
    }
  | { ok: false; failure: JwtFailure };

/**
 * The configured key material is unusable: a malformed JWKS, an unreadable PEM, or a key that
 * cannot verify any allowed algorithm. Raised at startup (construction), never per request.
 *
 * @example
 * ```ts
 * try {
 *   new JwtAuthenticator(settings);
 * } catch (error) {
 *   if (error instanceof JwtConfigError) exitWithConfigError(error.message);
 * }
 * ```
 */
export class JwtConfigError extends Error {
  readonly code = 'jwt_config';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'JwtConfigError';
  }
}

/** Deepest `act` chain accepted (act.act.act…): each level is one more agent in the delegation. */
export const MAX_ACTOR_DEPTH = 8;
/** Longest identifier (sub, act.sub, azp, client_id) put into a principal. */
export const MAX_ID_LENGTH = 256;
/** Longest token verified: anything larger is refused before parsing. */
const MAX_TOKEN_LENGTH = 16_384;
/** Longest protected header considered when telling a JWT from a client token. */
const MAX_HEADER_SEGMENT = 2048;
/** Most entries of the agents claim looked at. */
const MAX_GRANTS = 1000;
/** Most keys tried when several JWKS keys match a token without `kid` (key rotation). */
const MAX_CANDIDATE_KEYS = 8;

const BASE64URL = /^[A-Za-z0-9_-]+$/;
/** A lone surrogate: such a string has no UTF-8 form and no business in an identifier. */
const LONE_SURROGATE = /\p{Cs}/u;

/** Which algorithms can use which SPKI key type (and, for EC, curve). */
const ALGS_FOR_KEY: Readonly<Record<string, readonly string[]>> = {
  rsa: ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'],
  'rsa-pss': ['PS256', 'PS384', 'PS512'],
  'ec:prime256v1': ['ES256'],
  'ec:secp384r1': ['ES384'],
  'ec:secp521r1': ['ES512'],
  ed25519: ['EdDSA'],
};

type KeyResolver = (header: JWTHeaderParameters) => Promise<CryptoKey>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An own property only: a claim named `constructor` or `__proto__` must not reach Object.prototype. */
function own(record: Record<string, unknown>, name: string): unknown {
  return Object.hasOwn(record, name) ? record[name] : undefined;
}

/** A string fit to be part of a principal: non-empty, bounded, well-formed Unicode. */
function isIdentifier(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_ID_LENGTH && !LONE_SURROGATE.test(value);
}

/**
 * Whether a bearer value is shaped like a JWT: exactly two dots, and a first segment that
 * base64url-decodes to a JSON object with an `alg` member. Cheap and never throws; it decides
 * only which verifier to try, never whether to admit.
 *
 * @example
 * ```ts
 * looksLikeJwt('eyJhbGciOiJFUzI1NiJ9.e30.sig'); // true
 * looksLikeJwt('a-random-client-token'); // false
 * ```
 */
export function looksLikeJwt(token: string): boolean {
  const first = token.indexOf('.');
  if (first <= 0 || first > MAX_HEADER_SEGMENT) return false;
  const second = token.indexOf('.', first + 1);
  if (second < 0 || token.includes('.', second + 1)) return false;
  const header = token.slice(0, first);
  if (!BASE64URL.test(header)) return false;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(header, 'base64url').toString('utf8'));
    return isRecord(parsed) && Object.hasOwn(parsed, 'alg');
  } catch {
    return false;
  }
}

/** A jose error's `code` and, for claim failures, the claim and reason. */
function classify(error: unknown): JwtFailure {
  if (!isRecord(error)) return 'invalid';
  const { code, claim, reason } = error;
  switch (code) {
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
      return 'alg_not_allowed';
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return 'bad_signature';
    case 'ERR_JWT_EXPIRED':
      return 'expired';
    case 'ERR_JWKS_NO_MATCHING_KEY':
    case 'ERR_JOSE_NOT_SUPPORTED':
      return 'no_matching_key';
    case 'ERR_JWS_INVALID':
    case 'ERR_JWT_INVALID':
      return 'malformed';
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      if (reason === 'missing') return 'missing_claim';
      if (claim === 'iss') return 'wrong_issuer';
      if (claim === 'aud') return 'wrong_audience';
      if (claim === 'nbf') return 'not_yet_valid';
      return 'invalid_claim';
    default:
      // WebCrypto refusing a key for an algorithm (DataError) and anything unforeseen: refuse.
      return 'invalid';
  }
}

function isMultipleMatchingKeys(error: unknown): error is AsyncIterable<CryptoKey> {
  return (
    error instanceof Error &&
    (error as { code?: unknown }).code === 'ERR_JWKS_MULTIPLE_MATCHING_KEYS' &&
    typeof (error as Partial<AsyncIterable<CryptoKey>>)[Symbol.asyncIterator] === 'function'
  );
}

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
  readonly #agentsClaim: string;
  readonly #agentsPrefix: string;
  readonly #issuer: string;

  constructor(settings: JwtSettings) {
    this.#issuer = settings.issuer;
    this.#agentsClaim = settings.agentsClaim;
    this.#agentsPrefix = settings.agentsPrefix;
    let algorithms = [...new Set<string>(settings.algorithms)];
    if (settings.keys.kind === 'jwks') {
      try {
        this.#key = createLocalJWKSet(settings.keys.jwks);
      } catch (cause) {
        throw new JwtConfigError('auth.jwt: the JWKS is malformed', { cause });
      }
    } else {
      const pem = pemResolver(settings.keys.pem, algorithms);
      // Only algorithms this key can verify: a token claiming another one is refused before import.
      algorithms = pem.usable;
      this.#key = pem.resolver;
    }
    this.#options = {
      // Pinned: never `none`, never HMAC (a public key must not double as an HMAC secret).
      algorithms,
      issuer: settings.issuer,
      audience: settings.audience,
      clockTolerance: settings.clockToleranceSeconds,
      // A token without expiry would be good forever; a subject is what the principal is.
      requiredClaims: ['exp', 'sub'],
    };
  }

  /**
   * Verifies a compact JWT and derives its principal and grants. Never rejects: every failure
   * is a typed `{ ok: false, failure }`.
   *
   * @example
   * ```ts
   * const verified = await jwt.verify(token);
   * if (!verified.ok) logger.warn({ event: 'jwt_refused', failure: verified.failure });
   * ```
   */
  async verify(token: string): Promise<JwtVerification> {
    if (token.length > MAX_TOKEN_LENGTH) return { ok: false, failure: 'malformed' };
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.#key, this.#options));
    } catch (error) {
      if (!isMultipleMatchingKeys(error)) return { ok: false, failure: classify(error) };
      const retried = await this.#verifyWithCandidates(token, error);
      if (!retried.ok) return retried;
      payload = retried.payload;
    }
    return this.#principalFrom(payload);
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

  /**
   * Several JWKS keys fit a token without `kid` (typically during key rotation): jose leaves the
   * choice to the caller. Try each (a bounded number); the first whose signature holds decides.
   */
  async #verifyWithCandidates(
    token: string,
    candidates: AsyncIterable<CryptoKey>,
  ): Promise<{ ok: true; payload: JWTPayload } | { ok: false; failure: JwtFailure }> {
    let tried = 0;
    for await (const key of candidates) {
      if (++tried > MAX_CANDIDATE_KEYS) break;
      try {
        const { payload } = await jwtVerify(token, key, this.#options);
        return { ok: true, payload };
      } catch (error) {
        const failure = classify(error);
        // Only a signature mismatch means "another key may fit"; any other failure is the token's.
        if (failure !== 'bad_signature' && failure !== 'invalid') return { ok: false, failure };
      }
    }
    return { ok: false, failure: 'bad_signature' };
  }

  #principalFrom(payload: JWTPayload): JwtVerification {
    const claims = payload as Record<string, unknown>;
    const subject = own(claims, 'sub');
    if (!isIdentifier(subject)) return { ok: false, failure: 'invalid_subject' };
    let clientId: string = this.#issuer;
    for (const name of ['azp', 'client_id']) {
      const value = own(claims, name);
      if (typeof value !== 'string') continue;
      // A client id that is present but unfit refuses the token: falling back to the issuer
      // would fold that client into every other client of the issuer.
      if (!isIdentifier(value)) return { ok: false, failure: 'invalid_client_id' };
      clientId = value;
      break;
    }
    let actingAgent: string | undefined;
    if (Object.hasOwn(claims, 'act')) {
      // The outermost `act` is the current actor; nested ones are earlier actors in the chain.
      // jose does not interpret `act`, so the chain is checked here, to a bounded depth.
      let node: unknown = claims.act;
      for (let depth = 1; node !== undefined; depth++) {
        if (depth > MAX_ACTOR_DEPTH) return { ok: false, failure: 'actor_chain_too_deep' };
        if (!isRecord(node)) return { ok: false, failure: 'invalid_actor' };
        const actor = own(node, 'sub');
        if (!isIdentifier(actor)) return { ok: false, failure: 'invalid_actor' };
        actingAgent ??= actor;
        node = own(node, 'act');
      }
    }
    const principal = makePrincipal({
      kind: actingAgent === undefined ? 'service' : 'delegated',
      clientId,
      subject,
      ...(actingAgent !== undefined && { actingAgent }),
    });
    return { ok: true, principal, grants: this.#grantsFrom(own(claims, this.#agentsClaim)) };
  }

  /** Entries equal to `agentsPrefix + slug` grant `slug`; a claim of any other shape grants nothing. */
  #grantsFrom(claim: unknown): ReadonlySet<string> {
    const grants = new Set<string>();
    const entries = typeof claim === 'string' ? claim.split(' ', MAX_GRANTS) : Array.isArray(claim) ? claim : [];
    const prefix = this.#agentsPrefix;
    for (let i = 0; i < entries.length && i < MAX_GRANTS; i++) {
      const entry: unknown = entries[i];
      if (typeof entry === 'string' && entry.length > prefix.length && entry.startsWith(prefix)) {
        grants.add(entry.slice(prefix.length));
      }
    }
    return grants;
  }
}

/**
 * A key resolver for a PEM public key: imported once per algorithm (jose binds a CryptoKey to
 * one algorithm), with the algorithm taken from the token header only when it is allowed and
 * fits the key type. Checks the PEM synchronously so that a bad key fails at startup.
 */
function pemResolver(pem: string, allowed: readonly string[]): { usable: string[]; resolver: KeyResolver } {
  let type: string;
  try {
    const key = createPublicKey(pem);
    const curve = key.asymmetricKeyDetails?.namedCurve;
    type = key.asymmetricKeyType === 'ec' ? `ec:${curve ?? ''}` : (key.asymmetricKeyType ?? '');
  } catch (cause) {
    throw new JwtConfigError('auth.jwt: the public key is not a readable PEM SPKI key', { cause });
  }
  const fits = ALGS_FOR_KEY[type] ?? [];
  const usable = allowed.filter((alg) => fits.includes(alg));
  if (usable.length === 0) {
    throw new JwtConfigError(
      `auth.jwt: the public key (${type || 'unknown type'}) cannot verify any of the allowed algorithms (${allowed.join(', ')})`,
    );
  }
  const imported = new Map<string, Promise<CryptoKey>>();
  const resolver: KeyResolver = async (header) => {
    const { alg } = header;
    // jose has already refused algorithms outside the pinned list; checked again so that an
    // attacker-chosen name can never reach importSPKI or grow the cache.
    if (typeof alg !== 'string' || !usable.includes(alg)) {
      throw Object.assign(new Error('alg not allowed'), { code: 'ERR_JOSE_ALG_NOT_ALLOWED' });
    }
    let key = imported.get(alg);
    if (key === undefined) {
      key = importSPKI(pem, alg);
      imported.set(alg, key);
    }
    return key;
  };
  return { usable, resolver };
}
