/**
 * Tokens already verified, so that a client sending the same JWT call after call pays for its
 * signature once (an ES256 or RS256 verification costs 130–190 µs; a lookup about 2). An entry
 * holds what the verification decided (the principal, its grants and claims) under the token's
 * SHA-256, never the token, and is used only while everything that decision depended on still
 * holds:
 *
 * - the key set it was verified with is still the one in use (a JWKS URL whose keys changed
 *   empties the cache: a key taken out of the set stops admitting tokens at once, as before);
 * - its time claims still pass, checked again on every use as jose checks them (`exp` and `nbf`
 *   with the clock tolerance, and Airlock's own `iat` check): a token that has expired in the
 *   cache is verified afresh, and refused with its failure code as it would have been;
 * - refusals are never kept: a bad token costs a full verification every time, as before.
 *
 * Bounded: at most {@link MAX_VERIFIED_TOKENS} entries (the oldest goes first) and at most
 * {@link MAX_TOKENS_PER_PRINCIPAL} per principal (its own oldest goes), so a principal that
 * fetches a new token for every call can neither grow the cache nor push other callers' tokens
 * out of it.
 *
 * @example
 * ```ts
 * const verified = new VerifiedTokens(30);
 * const hit = verified.get(token, keysGeneration); // undefined: verify, then
 * verified.put(token, verification, payload, keysGeneration);
 * ```
 */
import type { JWTPayload } from 'jose';
import { tokenDigestHex } from '../../../config/tokens.js';
import type { JwtVerification } from './principal.js';

/** Most tokens kept. */
export const MAX_VERIFIED_TOKENS = 4096;
/** Most tokens kept for one principal; its oldest goes when it brings another. */
export const MAX_TOKENS_PER_PRINCIPAL = 4;

type Verified = Extract<JwtVerification, { ok: true }>;

interface Entry {
  readonly verification: Verified;
  readonly principalKey: string;
  readonly generation: number;
  /** The time claims, seconds since the epoch, as verified (undefined when absent). */
  readonly exp: number | undefined;
  readonly nbf: number | undefined;
  readonly iat: number | undefined;
}

const numberOrUndefined = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);

/**
 * The cache of one authenticator (one issuer, audience and key set).
 *
 * @example
 * ```ts
 * const tokens = new VerifiedTokens(settings.clockToleranceSeconds);
 * ```
 */
export class VerifiedTokens {
  readonly #tolerance: number;
  readonly #now: () => number;
  readonly #entries = new Map<string, Entry>();
  /** Each principal's digests, oldest first. */
  readonly #byPrincipal = new Map<string, string[]>();

  /**
   * @param toleranceSeconds the clock tolerance the tokens were verified with
   * @param now milliseconds clock (tests); jose reads `Date.now()` too
   */
  constructor(toleranceSeconds: number, now: () => number = Date.now) {
    this.#tolerance = toleranceSeconds;
    this.#now = now;
  }

  /** Entries kept (tests, metrics). */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * The verification of `token`, when it was verified with key set `generation` and its time
   * claims pass now; otherwise undefined (and an entry that no longer passes is dropped).
   */
  get(token: string, generation: number): Verified | undefined {
    if (this.#entries.size === 0) return undefined;
    const digest = tokenDigestHex(token);
    const entry = this.#entries.get(digest);
    if (entry === undefined) return undefined;
    if (entry.generation !== generation || !this.#timely(entry)) {
      this.#drop(digest, entry.principalKey);
      return undefined;
    }
    return entry.verification;
  }

  /** Keeps a successful verification of `token` (its payload for the time claims). */
  put(token: string, verification: Verified, payload: JWTPayload, generation: number): void {
    const digest = tokenDigestHex(token);
    const principalKey = verification.principal.key;
    const existing = this.#entries.get(digest);
    if (existing !== undefined) this.#drop(digest, existing.principalKey);
    const own = this.#byPrincipal.get(principalKey) ?? [];
    while (own.length >= MAX_TOKENS_PER_PRINCIPAL) this.#entries.delete(own.shift() as string);
    while (this.#entries.size >= MAX_VERIFIED_TOKENS) {
      const [oldest, entry] = this.#entries.entries().next().value as [string, Entry];
      this.#drop(oldest, entry.principalKey);
    }
    own.push(digest);
    this.#byPrincipal.set(principalKey, own);
    this.#entries.set(digest, {
      verification,
      principalKey,
      generation,
      exp: numberOrUndefined(payload.exp),
      nbf: numberOrUndefined(payload.nbf),
      iat: numberOrUndefined(payload.iat),
    });
  }

  /** Forgets every token (the key set changed). */
  clear(): void {
    this.#entries.clear();
    this.#byPrincipal.clear();
  }

  /** jose's `exp` and `nbf` checks and Airlock's `iat` check, at the same clock and tolerance. */
  #timely(entry: Entry): boolean {
    const now = Math.floor(this.#now() / 1000);
    const tolerance = this.#tolerance;
    if (entry.exp === undefined || entry.exp <= now - tolerance) return false;
    if (entry.nbf !== undefined && entry.nbf > now + tolerance) return false;
    if (entry.iat !== undefined && entry.iat > now + tolerance) return false;
    return true;
  }

  #drop(digest: string, principalKey: string): void {
    this.#entries.delete(digest);
    const own = this.#byPrincipal.get(principalKey);
    if (own === undefined) return;
    const at = own.indexOf(digest);
    if (at !== -1) own.splice(at, 1);
    if (own.length === 0) this.#byPrincipal.delete(principalKey);
  }
}
