/**
 * The token cache: one token per (entry, subject, audience, scopes), used until shortly before
 * it expires, in memory only (never written to disk). Concurrent requests for one key share one
 * token request. It also remembers the tokens it handed out per entry, so that results can be
 * scrubbed of an echo of them.
 *
 * @example
 * ```ts
 * const cache = new TokenCache({ now: Date.now });
 * const token = await cache.get(tokenCacheKey('travel', 'client', 'https://travel.example', ['a2a']), () => fetchToken());
 * ```
 */
import { createHash } from 'node:crypto';
import type { IssuedToken } from './token-endpoint.js';

/**
 * Settings of {@link TokenCache}: the clock, how long before expiry a token is dropped, and how
 * long a token without a stated lifetime is kept.
 *
 * @example
 * ```ts
 * const options: TokenCacheOptions = { now: Date.now, skewMs: 30_000, defaultTtlMs: 60_000 };
 * ```
 */
export interface TokenCacheOptions {
  now?: () => number;
  /** Dropped this long before expiry (at most a tenth of the token's lifetime). Default 30 s. */
  skewMs?: number;
  /** Kept this long when the endpoint gave no `expires_in`. Default 60 s. */
  defaultTtlMs?: number;
}

/**
 * The cache key of a token: the entry, the subject (a digest of the subject token, or
 * `client` for the client's own token), the audience and the sorted scopes.
 *
 * @example
 * ```ts
 * tokenCacheKey('travel', 'client', 'https://travel.example', ['b', 'a']); // 'travel\u0000client\u0000https://travel.example\u0000a b'
 * ```
 */
export function tokenCacheKey(entry: string, subject: string, audience: string, scopes: readonly string[]): string {
  return [entry, subject, audience, [...new Set(scopes)].sort().join(' ')].join('\u0000');
}

/**
 * A subject token as a cache key part: its SHA-256, so the key never holds the token.
 *
 * @example
 * ```ts
 * subjectKey('eyJ…'); // 'sub:3a82…'
 * ```
 */
export function subjectKey(token: string): string {
  return `sub:${createHash('sha256').update(token).digest('hex')}`;
}

interface Slot {
  readonly token: IssuedToken;
  readonly useUntil: number;
}

/** The most tokens held at once (one per subject for token exchanges): the oldest go first. */
const MAX_SLOTS = 4096;

/** The most tokens remembered per entry for redaction. */
const MAX_REMEMBERED = 32;

/**
 * Tokens per key, until shortly before expiry.
 *
 * @example
 * ```ts
 * const token = await cache.get(key, () => requestToken(transport, oauth, params, options));
 * cache.drop(key); // after the remote answered 401
 * ```
 */
export class TokenCache {
  readonly #now: () => number;
  readonly #skewMs: number;
  readonly #defaultTtlMs: number;
  readonly #slots = new Map<string, Slot>();
  readonly #pending = new Map<string, Promise<IssuedToken>>();

  constructor(options: TokenCacheOptions = {}) {
    this.#now = options.now ?? Date.now;
    this.#skewMs = options.skewMs ?? 30_000;
    this.#defaultTtlMs = options.defaultTtlMs ?? 60_000;
  }

  /** The cached token of `key`, or a new one from `fetch` (one request for concurrent callers). */
  async get(key: string, fetch: () => Promise<IssuedToken>): Promise<IssuedToken> {
    const slot = this.#slots.get(key);
    if (slot !== undefined && this.#now() < slot.useUntil) return slot.token;
    if (slot !== undefined) this.#slots.delete(key);
    const pending = this.#pending.get(key);
    if (pending !== undefined) return pending;
    const request = fetch().then(
      (token) => {
        this.#pending.delete(key);
        this.#slots.set(key, { token, useUntil: this.#useUntil(token) });
        if (this.#slots.size > MAX_SLOTS) this.#slots.delete(this.#slots.keys().next().value!);
        rememberIssued(key.split('\u0000')[0]!, token.accessToken);
        return token;
      },
      (error: unknown) => {
        this.#pending.delete(key);
        throw error;
      },
    );
    this.#pending.set(key, request);
    return request;
  }

  /** Forgets the token of `key` (the remote refused it). */
  drop(key: string): void {
    this.#slots.delete(key);
  }

  /** How many tokens are held (for tests). */
  get size(): number {
    return this.#slots.size;
  }

  #useUntil(token: IssuedToken): number {
    const now = this.#now();
    if (token.expiresAt === undefined) return now + this.#defaultTtlMs;
    const lifetime = token.expiresAt - now;
    return token.expiresAt - Math.min(this.#skewMs, Math.max(0, lifetime) / 10);
  }
}

/** Tokens handed out per entry name, in this process: results of any client are scrubbed of them. */
const ISSUED = new Map<string, string[]>();

function rememberIssued(entry: string, token: string): void {
  const list = ISSUED.get(entry) ?? [];
  if (!list.includes(token)) list.push(token);
  if (list.length > MAX_REMEMBERED) list.splice(0, list.length - MAX_REMEMBERED);
  ISSUED.set(entry, list);
}

/**
 * The tokens lately handed out for the entry named `entry` (by any cache of this process), for
 * scrubbing an echo of them from results; never for output.
 *
 * @example
 * ```ts
 * redactSecrets(reply, issuedTokensFor('travel'));
 * ```
 */
export function issuedTokensFor(entry: string): readonly string[] {
  return [...(ISSUED.get(entry) ?? [])];
}
