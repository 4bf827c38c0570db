/**
 * Card signatures checked with the operator's keys: the keyring that verifies a card's exact
 * bytes with an entry's `cardKeys` (its own set, plus the set at its `jwksUrl`, fetched and
 * cached here), and turns every signature or key problem into card trust's refusal.
 *
 * @example
 * ```ts
 * const keyring = new CardKeyring({ client, now: Date.now, log: () => undefined, keySetTtlMs: 300_000 });
 * const { value } = await keyring.verify(entry, keys, body, where);
 * ```
 */
import type { CardSignatureInfo, CardSignatureKeys, CardTrustEntry, CardTrustLog } from './contracts.js';
import { CardTrustError, showUrl } from './errors.js';
import { outboundCode, type CardFetcher } from './fetcher.js';
import { CardSignatureError, SigningKeyError } from './signing/errors.js';
import { fetchKeySet } from './signing/fetch-keys.js';
import { combineKeySets, type OperatorKeySet } from './signing/keys.js';
import { verifyCardSignatures, type CardSignatureVerdict } from './signing/verify.js';

/**
 * How long a key set fetched from a `jwksUrl` is reused, in seconds: short, so a key the remote
 * revokes stops verifying within minutes, long enough that a JWKS is not fetched per call.
 *
 * @example
 * ```ts
 * new CardTrust({ client, pins, keySetTtlS: DEFAULT_KEY_SET_TTL_S });
 * ```
 */
export const DEFAULT_KEY_SET_TTL_S = 300;

/**
 * When a card names a key the cached set lacks (the remote rotated), the set is fetched again
 * before refusing, but not more often than this: a remote cannot make Airlock fetch its JWKS
 * on every call by serving cards with made-up key ids.
 */
const KEY_SET_REFETCH_MIN_MS = 30_000;

/**
 * The operator's signature keys at work for card trust: a card's bytes verified with an
 * entry's keys, the sets at `jwksUrl`s fetched through the card client, cached for the key set
 * TTL, fetched again (at most every 30 s) when a card names a key the cached set lacks.
 *
 * @example
 * ```ts
 * const keyring = new CardKeyring({ client, now: Date.now, log, keySetTtlMs: 300_000 });
 * const { value, signature } = await keyring.verify(entry, entry.cardKeys!, body, showUrl(entry.cardUrl));
 * ```
 */
export class CardKeyring {
  private readonly client: CardFetcher;
  private readonly now: () => number;
  private readonly log: CardTrustLog;
  private readonly keySetTtlMs: number;
  /** Key sets fetched from `jwksUrl`s, by URL and network setting. */
  private readonly keySets = new Map<string, { keySet: OperatorKeySet; fetchedAt: number }>();
  private readonly keySetFetches = new Map<string, Promise<{ keySet: OperatorKeySet; fetchedAt: number }>>();

  constructor(options: { client: CardFetcher; now: () => number; log: CardTrustLog; keySetTtlMs: number }) {
    this.client = options.client;
    this.now = options.now;
    this.log = options.log;
    this.keySetTtlMs = options.keySetTtlMs;
  }

  /**
   * The card's parse once a signature verified with the entry's keys (or, when none is required,
   * once it is found unsigned). Refusals are `CardTrustError`s: `card_invalid` for bytes that
   * are no card at all, `card_signature_invalid` for everything about signatures and keys.
   */
  async verify(
    entry: CardTrustEntry,
    keys: CardSignatureKeys,
    body: Buffer,
    where: string,
  ): Promise<{ value: unknown; signature?: CardSignatureInfo }> {
    const options = { requireSigned: entry.requireSignedCard ?? true, coverage: keys.coverage ?? 'trust-fields' };
    let held = await this.keysOf(entry, keys, this.keySetTtlMs);
    let verdict: CardSignatureVerdict;
    try {
      verdict = await verifyCardSignatures(body, held.keySet, options);
    } catch (error) {
      const stale = held.fetchedAt !== undefined && this.now() - held.fetchedAt >= KEY_SET_REFETCH_MIN_MS;
      if (!stale || !namesUnknownKey(error)) throw this.signatureRefused(entry, error, where);
      // The remote may have rotated to a key published after our copy of its set was fetched.
      held = await this.keysOf(entry, keys, 0);
      try {
        verdict = await verifyCardSignatures(body, held.keySet, options);
      } catch (retried) {
        throw this.signatureRefused(entry, retried, where);
      }
    }
    if (verdict.status === 'verified' && verdict.omits !== undefined) {
      // Accepted (interfaces-only coverage), but the operator should know what is not vouched for.
      this.log('card_signature_partial', {
        entry: entry.name,
        omits: verdict.omits.join(','),
        cardUrl: showUrl(entry.cardUrl),
      });
    }
    return {
      value: verdict.card,
      ...(verdict.status === 'verified' && { signature: { kid: verdict.kid, alg: verdict.alg } }),
    };
  }

  /**
   * The entry's verification keys: its own set, plus the set at its `jwksUrl` (cached, fetched
   * when older than `maxAgeMs`; `fetchedAt` says when). Throws `CardTrustError`
   * (`card_signature_invalid`) when the fetched set is refused, and the client's errors when
   * it cannot be fetched.
   */
  private async keysOf(
    entry: CardTrustEntry,
    keys: CardSignatureKeys,
    maxAgeMs: number,
  ): Promise<{ keySet: OperatorKeySet; fetchedAt?: number }> {
    if (keys.jwksUrl === undefined) {
      if (keys.keySet === undefined) throw new TypeError(`Registry entry "${entry.name}": card_keys names no keys`);
      return { keySet: keys.keySet };
    }
    if (new URL(keys.jwksUrl).origin !== new URL(entry.cardUrl).origin) {
      throw new TypeError(`Registry entry "${entry.name}": card_keys.jwks_url must be on the card's origin`);
    }
    try {
      const fetched = await this.fetchKeySetCached(entry, keys.jwksUrl, maxAgeMs);
      const keySet = keys.keySet === undefined ? fetched.keySet : combineKeySets([keys.keySet, fetched.keySet]);
      return { keySet, fetchedAt: fetched.fetchedAt };
    } catch (error) {
      if (error instanceof SigningKeyError) throw this.signatureRefused(entry, error, showUrl(entry.cardUrl));
      const code = outboundCode(error);
      if (code === 'response_too_large' || code === 'invalid_response') {
        throw this.signatureRefused(
          entry,
          new SigningKeyError('key_unreadable', `the key set at ${showUrl(keys.jwksUrl)} is too large or malformed`),
          showUrl(entry.cardUrl),
        );
      }
      throw error;
    }
  }

  /** One fetch per key set URL at a time; a failed fetch leaves nothing cached. */
  private async fetchKeySetCached(
    entry: CardTrustEntry,
    url: string,
    maxAgeMs: number,
  ): Promise<{ keySet: OperatorKeySet; fetchedAt: number }> {
    const slotKey = JSON.stringify([url, entry.privateNetwork === true]);
    const cached = this.keySets.get(slotKey);
    if (cached !== undefined && this.now() - cached.fetchedAt < maxAgeMs) return cached;
    const running = this.keySetFetches.get(slotKey);
    if (running !== undefined) return running;
    const promise = fetchKeySet(this.client, {
      url,
      timeouts: entry.timeouts,
      privateNetwork: entry.privateNetwork === true,
    }).then(
      (keySet) => {
        const slot = { keySet, fetchedAt: this.now() };
        this.keySets.set(slotKey, slot);
        return slot;
      },
      (error: unknown) => {
        this.keySets.delete(slotKey);
        throw error;
      },
    );
    const settled = promise.finally(() => {
      if (this.keySetFetches.get(slotKey) === settled) this.keySetFetches.delete(slotKey);
    });
    this.keySetFetches.set(slotKey, settled);
    return settled;
  }

  /** A signature or key problem as the refusal card trust throws, logged with its stable code. */
  private signatureRefused(entry: CardTrustEntry, error: unknown, where: string): Error {
    if (error instanceof CardSignatureError) {
      // Bytes that are no card at all are refused as such, whether or not a signature was asked for.
      if (error.code === 'card_malformed' || error.code === 'card_too_deep') {
        return new CardTrustError('card_invalid', entry.name, `the card at ${where}: ${error.message}`, {
          cause: error,
        });
      }
    } else if (!(error instanceof SigningKeyError)) {
      return error instanceof Error ? error : new Error(String(error));
    }
    this.log('card_signature_refused', {
      entry: entry.name,
      reason: error.code,
      cardUrl: showUrl(entry.cardUrl),
      // What an @a2a-js/sdk ≤ 1.3 instance signature leaves out, when that is why.
      ...(error instanceof CardSignatureError && error.omits.length > 0 && { omits: error.omits.join(',') }),
    });
    const detail =
      error instanceof SigningKeyError
        ? `the signature of the card at ${where} cannot be checked: ${error.message}`
        : `the card at ${where} is refused: ${error.message}`;
    return new CardTrustError('card_signature_invalid', entry.name, detail, { cause: error });
  }
}

/** Whether a refusal is (at least partly) a signature naming a key the operator's set lacks. */
function namesUnknownKey(error: unknown): boolean {
  return (
    error instanceof CardSignatureError &&
    error.code === 'signature_unverified' &&
    error.failures.some((failure) => failure.code === 'kid_unknown')
  );
}
