/**
 * The checks jose makes on a token: pinned algorithms, exact issuer and audience, expiry
 * (required) and not-before with a small clock tolerance; and how each of jose's refusals maps
 * to a {@link JwtFailure}. Also the retry over several candidate keys during key rotation, and
 * two checks jose leaves out: an `iat` later than now plus the clock tolerance (jose checks
 * `iat` only with `maxTokenAge`), and an `aud` array holding anything but strings (jose only
 * looks for the expected audience in it).
 *
 * @example
 * ```ts
 * const options = claimChecks(settings, algorithms);
 * const checked = await verifySignedClaims(token, key, options); // { ok: true, payload } | { ok: false, failure }
 * ```
 */
import { jwtVerify, type CryptoKey, type JWTPayload, type JWTVerifyOptions } from 'jose';
import type { JwtSettings } from '../../../config/load.js';
import type { KeyResolver } from './local-keys.js';
import { KEYS_UNAVAILABLE } from './remote-keys.js';
import { isRecord } from './shape.js';

/** Why a token was refused: for logs and tests only; callers always get a plain 401. */
export type JwtFailure =
  | 'malformed'
  | 'alg_not_allowed'
  | 'no_matching_key'
  | 'bad_signature'
  | 'expired'
  | 'not_yet_valid'
  | 'issued_in_future'
  | 'wrong_issuer'
  | 'wrong_audience'
  | 'missing_claim'
  | 'invalid_claim'
  | 'invalid_subject'
  | 'invalid_client_id'
  | 'invalid_agents_claim'
  | 'invalid_actor'
  | 'actor_chain_too_deep'
  | 'keys_unavailable'
  | 'invalid';

/** Longest token verified: anything larger is refused before parsing. */
const MAX_TOKEN_LENGTH = 16_384;
/** Most keys tried when several JWKS keys match a token without `kid` (key rotation). */
const MAX_CANDIDATE_KEYS = 8;

/**
 * The jose options every token is checked against.
 *
 * @example
 * ```ts
 * const options = claimChecks(settings, ['ES256']);
 * ```
 */
export function claimChecks(
  settings: Pick<JwtSettings, 'issuer' | 'audience' | 'clockToleranceSeconds'>,
  algorithms: string[],
): JWTVerifyOptions {
  return {
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
 * Verifies a compact JWT's signature and registered claims. Never rejects: every failure is a
 * typed `{ ok: false, failure }`.
 *
 * @example
 * ```ts
 * const checked = await verifySignedClaims(token, key, options);
 * if (checked.ok) use(checked.payload);
 * ```
 */
export async function verifySignedClaims(
  token: string,
  key: KeyResolver,
  options: JWTVerifyOptions,
): Promise<{ ok: true; payload: JWTPayload } | { ok: false; failure: JwtFailure }> {
  if (token.length > MAX_TOKEN_LENGTH) return { ok: false, failure: 'malformed' };
  let checked: { ok: true; payload: JWTPayload } | { ok: false; failure: JwtFailure };
  try {
    const { payload } = await jwtVerify(token, key, options);
    checked = { ok: true, payload };
  } catch (error) {
    if (!isMultipleMatchingKeys(error)) return { ok: false, failure: classify(error) };
    checked = await verifyWithCandidates(token, error, options);
  }
  if (!checked.ok) return checked;
  const failure = claimsJoseLeaves(checked.payload, options);
  return failure === undefined ? checked : { ok: false, failure };
}

/**
 * What jose accepted but Airlock does not: an `iat` in the future beyond the clock tolerance
 * (a token minted ahead of time, or by an IdP whose clock is wrong: either way its `exp` says
 * less than it seems), and an `aud` array with an entry that is not a string. jose has
 * already checked that `iat`, when present, is a number.
 */
function claimsJoseLeaves(payload: JWTPayload, options: JWTVerifyOptions): JwtFailure | undefined {
  const tolerance = typeof options.clockTolerance === 'number' ? options.clockTolerance : 0;
  const { iat, aud } = payload;
  if (typeof iat === 'number' && iat > Math.floor(Date.now() / 1000) + tolerance) return 'issued_in_future';
  if (Array.isArray(aud) && !aud.every((entry) => typeof entry === 'string')) return 'invalid_claim';
  return undefined;
}

/**
 * Several JWKS keys fit a token without `kid` (typically during key rotation): jose leaves the
 * choice to the caller. Try each (a bounded number); the first whose signature holds decides.
 */
async function verifyWithCandidates(
  token: string,
  candidates: AsyncIterable<CryptoKey>,
  options: JWTVerifyOptions,
): Promise<{ ok: true; payload: JWTPayload } | { ok: false; failure: JwtFailure }> {
  let tried = 0;
  for await (const key of candidates) {
    if (++tried > MAX_CANDIDATE_KEYS) break;
    try {
      const { payload } = await jwtVerify(token, key, options);
      return { ok: true, payload };
    } catch (error) {
      const failure = classify(error);
      // Only a signature mismatch means "another key may fit"; any other failure is the token's.
      if (failure !== 'bad_signature' && failure !== 'invalid') return { ok: false, failure };
    }
  }
  return { ok: false, failure: 'bad_signature' };
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
