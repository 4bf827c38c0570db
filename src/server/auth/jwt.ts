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
 * Keys come from a JWKS, a PEM public key or a JWKS URL. A JWKS URL is fetched through the
 * guarded outbound client (https only, no redirects, 64 KiB cap) when the authenticator is
 * built, without blocking startup, then every `refreshSeconds` and on a token whose key is not
 * in the set (at most once per 30 s). A failed refresh keeps the last good set; until the first
 * fetch succeeds, every JWT is refused (401).
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
import { createGuardedClient, isOutboundError, parseEnvSettings, type GuardedClient } from '../../net/index.js';
import { createLogger, type Logger } from '../log.js';
import { makePrincipal, type Principal } from '../../identity/principal.js';
import type { AuthOutcome } from './outcome.js';
import { AirlockError } from '../../errors/index.js';

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
  | 'keys_unavailable'
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
export class JwtConfigError extends AirlockError {
  readonly code = 'jwt_config';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
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

/** Largest JWKS document accepted from a JWKS URL. */
export const MAX_JWKS_BYTES = 64 * 1024;
/** Shortest interval between two fetches of a JWKS URL caused by tokens (unknown kid). */
export const JWKS_ON_DEMAND_INTERVAL_MS = 30_000;
/** Timeouts of one JWKS fetch. */
const JWKS_TIMEOUTS = { connectMs: 5000, readMs: 10_000, totalMs: 15_000 } as const;
/** The code of the error a remote key set raises while it has no keys yet. */
const KEYS_UNAVAILABLE = 'ERR_AIRLOCK_JWKS_UNAVAILABLE';

/**
 * Fetches a JWKS URL and returns the parsed JSON document (validated by the caller). Rejects on
 * any transport failure, non-200 status or non-JSON body.
 */
export type JwksFetcher = (url: string, options: { privateNetwork: boolean; signal?: AbortSignal }) => Promise<unknown>;

/** How a JWKS URL is fetched and where its refresh failures are logged. */
export interface JwtAuthenticatorOptions {
  /** Fetches the JWKS; default: through `client`. */
  fetchJwks?: JwksFetcher;
  /** The guarded client JWKS fetches go through; default: one from the AIRLOCK_* environment. */
  client?: GuardedClient;
  /** Where refresh failures and keyless refusals are logged; default: JSON lines on stderr. */
  logger?: Logger;
  /** Milliseconds clock for the on-demand rate limit (tests). */
  now?: () => number;
}

/**
 * A {@link JwksFetcher} going through a guarded client: GET with `accept: application/json`,
 * 64 KiB cap, 5/10/15 s timeouts, redirects refused. Errors name the origin only, never the
 * path or query (which may carry a token).
 *
 * @example
 * ```ts
 * const fetchJwks = guardedJwksFetcher(createGuardedClient(parseEnvSettings(process.env)));
 * const jwks = await fetchJwks('https://idp.example/.well-known/jwks.json', { privateNetwork: false });
 * ```
 */
export function guardedJwksFetcher(client: GuardedClient): JwksFetcher {
  return async (url, { privateNetwork, signal }) => {
    const response = await client.request({
      method: 'GET',
      url,
      headers: { accept: 'application/json' },
      maxResponseBytes: MAX_JWKS_BYTES,
      timeouts: JWKS_TIMEOUTS,
      privateNetwork,
      ...(signal !== undefined && { signal }),
    });
    if (response.status !== 200) {
      throw Object.assign(new Error(`${originOf(url)} answered HTTP ${response.status}`), { reason: 'http_status' });
    }
    try {
      return JSON.parse(response.body.toString('utf8')) as unknown;
    } catch {
      throw Object.assign(new Error(`${originOf(url)} did not answer JSON`), { reason: 'invalid_jwks' });
    }
  };
}

/** `scheme://host[:port]` of a URL, for logs: never its path or query. */
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(invalid URL)';
  }
}

/** A JWKS document: an object with a non-empty `keys` array of objects. */
function isJwks(value: unknown): value is { keys: Record<string, unknown>[] } {
  if (!isRecord(value)) return false;
  const keys = own(value, 'keys');
  return Array.isArray(keys) && keys.length > 0 && keys.every(isRecord);
}

/** One line about a failed fetch, fit for a log: codes and origins, never bodies or queries. */
function describeFailure(error: unknown): { reason: string; error: string } {
  if (isOutboundError(error)) return { reason: error.code, error: error.message };
  if (error instanceof JwtConfigError) return { reason: 'invalid_jwks', error: error.message };
  const reason = (error as { reason?: unknown } | null)?.reason;
  return {
    reason: typeof reason === 'string' ? reason : 'fetch_failed',
    error: error instanceof Error ? error.message : 'unknown error',
  };
}

/**
 * The key set behind a JWKS URL: the last good set, replaced only by a fetched document that is
 * a valid JWKS. Fetches at start, every `refreshSeconds` (an unref'd timer: it never keeps the
 * process alive) and when a token's key is missing, at most once per
 * {@link JWKS_ON_DEMAND_INTERVAL_MS}; concurrent needs share one fetch.
 */
class RemoteKeySet {
  readonly #url: string;
  readonly #origin: string;
  readonly #privateNetwork: boolean;
  readonly #fetch: JwksFetcher;
  readonly #logger: Logger;
  readonly #now: () => number;
  readonly #ownedClient: GuardedClient | undefined;
  readonly #timer: NodeJS.Timeout;
  readonly #stop = new AbortController();
  readonly ready: Promise<boolean>;
  #current: KeyResolver | undefined;
  #inflight: Promise<boolean> | undefined;
  #lastFetchAt = Number.NEGATIVE_INFINITY;
  #lastUnavailableLogAt = Number.NEGATIVE_INFINITY;
  #closed = false;

  constructor(
    keys: { url: string; refreshSeconds: number; privateNetwork: boolean },
    options: JwtAuthenticatorOptions,
  ) {
    this.#url = keys.url;
    this.#origin = originOf(keys.url);
    this.#privateNetwork = keys.privateNetwork;
    this.#now = options.now ?? Date.now;
    this.#logger = options.logger ?? createLogger('info');
    let fetcher = options.fetchJwks;
    if (fetcher === undefined) {
      let client = options.client;
      if (client === undefined) {
        client = createGuardedClient(parseEnvSettings(process.env));
        this.#ownedClient = client;
      }
      fetcher = guardedJwksFetcher(client);
    }
    this.#fetch = fetcher;
    this.ready = this.refresh();
    this.#timer = setInterval(() => void this.refresh(), Math.max(1, keys.refreshSeconds * 1000));
    this.#timer.unref();
  }

  /** Resolves a token's key; on a missing key, fetches again (rate limited) and retries once. */
  readonly resolve: KeyResolver = async (header) => {
    if (this.#current === undefined) {
      // Still fetching at start (or an allowed retry): wait for it rather than refuse.
      await (this.#inflight ?? this.#onDemand());
      if (this.#current === undefined) throw this.#unavailable();
      return (this.#current as KeyResolver)(header);
    }
    const current = this.#current;
    try {
      return await current(header);
    } catch (error) {
      if ((error as { code?: unknown } | null)?.code !== 'ERR_JWKS_NO_MATCHING_KEY') throw error;
      const refreshed = await (this.#inflight ?? this.#onDemand());
      if (!refreshed || this.#current === current) throw error;
      return this.#current(header);
    }
  };

  /** Fetches now, whatever the rate limit (start, timer, tests). Never rejects; true when replaced. */
  refresh(): Promise<boolean> {
    if (this.#closed) return Promise.resolve(false);
    this.#inflight ??= this.#fetchOnce().finally(() => {
      this.#inflight = undefined;
    });
    return this.#inflight;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    this.#stop.abort();
    await this.#ownedClient?.close();
  }

  /** A token-caused fetch: only when the last fetch began at least 30 s ago. */
  #onDemand(): Promise<boolean> {
    if (this.#now() - this.#lastFetchAt < JWKS_ON_DEMAND_INTERVAL_MS) return Promise.resolve(false);
    return this.refresh();
  }

  async #fetchOnce(): Promise<boolean> {
    this.#lastFetchAt = this.#now();
    try {
      const document = await this.#fetch(this.#url, {
        privateNetwork: this.#privateNetwork,
        signal: this.#stop.signal,
      });
      if (!isJwks(document)) {
        throw new JwtConfigError(
          `the document at ${this.#origin} is not a JWKS (an object with a non-empty "keys" array)`,
        );
      }
      let resolver: KeyResolver;
      try {
        resolver = createLocalJWKSet({ keys: document.keys });
      } catch (cause) {
        throw new JwtConfigError(`the JWKS at ${this.#origin} is malformed`, { cause });
      }
      if (this.#closed) return false;
      const first = this.#current === undefined;
      this.#current = resolver;
      if (first) this.#logger.info({ event: 'jwks_loaded', jwksOrigin: this.#origin, keys: document.keys.length });
      return true;
    } catch (error) {
      if (this.#closed) return false;
      this.#logger.warn({
        event: 'jwks_refresh_failed',
        jwksOrigin: this.#origin,
        ...describeFailure(error),
        keeping: this.#current === undefined ? 'no keys yet: JWTs are refused' : 'the last good key set',
      });
      return false;
    }
  }

  #unavailable(): Error {
    const now = this.#now();
    if (now - this.#lastUnavailableLogAt >= JWKS_ON_DEMAND_INTERVAL_MS) {
      this.#lastUnavailableLogAt = now;
      this.#logger.warn({
        event: 'jwt_keys_unavailable',
        jwksOrigin: this.#origin,
        message: `JWT refused (401): no key set has been fetched from ${this.#origin} yet`,
      });
    }
    return Object.assign(new Error('no JWKS fetched yet'), { code: KEYS_UNAVAILABLE });
  }
}

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
    case KEYS_UNAVAILABLE:
      return 'keys_unavailable';
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
  readonly #remote: RemoteKeySet | undefined;

  /**
   * @param options only for a JWKS URL: how it is fetched (default: a guarded client from the
   *   AIRLOCK_* environment) and where refresh failures are logged. The first fetch starts here.
   */
  constructor(settings: JwtSettings, options: JwtAuthenticatorOptions = {}) {
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
    } else if (settings.keys.kind === 'url') {
      this.#remote = new RemoteKeySet(settings.keys, options);
      this.#key = this.#remote.resolve;
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
