/**
 * An operator's verification keys from a `jwks_url`. The URL is operator configuration (a
 * registry entry's `card_keys.jwks_url`), never a card's or a header's `jku`: fetching a URL
 * the signer chose would let the signer pick its own trust root (A2A#2096).
 *
 * The fetch goes through the guarded client, like card fetches: same address policy, a byte
 * cap while reading, no redirects.
 *
 * @example
 * ```ts
 * const keySet = await fetchKeySet(client, { url: 'https://keys.example/jwks.json', timeouts });
 * ```
 */
import { showUrl } from '../errors.js';
import type { CardFetcher, RequestTimeouts } from '../fetcher.js';
import { SigningKeyError } from './errors.js';
import { importKeySet, parseKeyDocument, type OperatorKeySet } from './keys.js';

/**
 * Where and how to fetch a JWK Set.
 *
 * @example
 * ```ts
 * const request: KeySetRequest = { url, timeouts: { connectMs: 5000, readMs: 10000, totalMs: 15000 } };
 * ```
 */
export interface KeySetRequest {
  url: string;
  timeouts: RequestTimeouts;
  /** Byte cap on the response; default 64 KiB (a set of a dozen RSA keys is under 10 KiB). */
  maxBytes?: number;
  privateNetwork?: boolean;
  signal?: AbortSignal;
}

const DEFAULT_MAX_JWKS_BYTES = 64 * 1024;

/**
 * Fetches and imports the JWK Set at `request.url` (checked as `importKeySet` checks a file:
 * public keys only, no `oct`, no duplicate `kid`). Throws `SigningKeyError('key_unreadable')`
 * for a non-200 answer, `SigningKeyError` for a refused set, and the client's `OutboundError`
 * when the request fails.
 *
 * @example
 * ```ts
 * const keySet = await fetchKeySet(guardedClient, { url: entry.cardKeys.jwksUrl, timeouts: entry.timeouts });
 * ```
 */
export async function fetchKeySet(client: CardFetcher, request: KeySetRequest): Promise<OperatorKeySet> {
  const where = showUrl(request.url);
  const response = await client.request({
    method: 'GET',
    url: request.url,
    headers: { accept: 'application/jwk-set+json, application/json' },
    maxResponseBytes: request.maxBytes ?? DEFAULT_MAX_JWKS_BYTES,
    timeouts: request.timeouts,
    privateNetwork: request.privateNetwork === true,
    ...(request.signal !== undefined && { signal: request.signal }),
  });
  if (response.status !== 200) {
    throw new SigningKeyError('key_unreadable', `the key set at ${where} answered HTTP ${response.status}`);
  }
  return importKeySet(parseKeyDocument(response.body, `the key set at ${where}`), `the key set at ${where}`);
}
