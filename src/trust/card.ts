/**
 * Card trust for registry entries: fetch a remote agent's card through the guarded client,
 * accept it in either shape, check its endpoints, and hold it to a pin.
 *
 * - The card is fetched with `A2A-Version: 1.0` (a dual-dialect server then serves the v1.0
 *   shape; a v0.3-only one serves v0.3, which `decodeAnyCard` reads too) and a byte cap
 *   (default 256 KiB) that the guarded client enforces while reading.
 * - With `cardKeys` (the registry's `card_keys`), the exact bytes fetched are verified with the
 *   operator's keys before anything else is done with them (`signing/verify.ts`): an unsigned
 *   card (when a signature is required), a forged or tampered one, or one whose signature does
 *   not cover its endpoints is refused (`card_signature_invalid`, logged as
 *   `card_signature_refused`) and never pinned. Keys come from the entry only: a key file,
 *   inline keys, or a `jwksUrl` on the card's origin, fetched through the same client and
 *   cached for `keySetTtlS` (300 s); never from the card or a signature header (`jku`).
 * - Every JSON-RPC interface must pass `chooseInterface`'s https and origin rules.
 * - The pin is the trust digest (`digest.ts`). A configured `card_sha256` must match; without
 *   one, the first digest seen is pinned (trust on first use, logged as `card_pinned_tofu`)
 *   and a later different digest disables the entry (`card_pin_drift`) until an operator
 *   runs `airlock registry pin <name>`. A disabled entry is refused without a fetch.
 * - A trusted card is cached per entry for `cardRefreshS` seconds, then fetched and checked
 *   again, so a remote that changes its card is caught within that time.
 *
 * The card's description and skill text are the remote's words, not Airlock's: they are
 * returned for display and routing, and must never be put into a model's tool declarations
 * (those are built from operator config).
 *
 * Transport failures (address refused, redirect, timeout, network) are the client's
 * `OutboundError`s and propagate unchanged; only what the remote served (too large,
 * malformed, not a card) becomes `CardTrustError('card_invalid')`.
 *
 * @example
 * ```ts
 * const trust = new CardTrust({ client, pins: new PinStore('.airlock/pins.json'), log });
 * const { endpoint, card } = await trust.resolve({ name: 'weather', cardUrl, cardRefreshS: 300, timeouts });
 * ```
 */
import { createHash } from 'node:crypto';
import type { AgentCard } from '../protocol/model.js';
import { decodeCard, fetchCardBytes, parseCardJson } from './card-document.js';
import { CardKeyring, DEFAULT_KEY_SET_TTL_S } from './card-keys.js';
import type {
  CardPins,
  CardSignatureInfo,
  CardTrustEntry,
  CardTrustLog,
  CardTrustOptions,
  TrustedCard,
} from './contracts.js';
import { cardTrustDigest, normalizeDigest } from './digest.js';
import { CardTrustError, showUrl } from './errors.js';
import type { CardFetcher } from './fetcher.js';
import { chooseInterface } from './interfaces.js';
import type { OperatorKeySet } from './signing/keys.js';

export { DEFAULT_MAX_CARD_BYTES } from './card-document.js';
export { DEFAULT_KEY_SET_TTL_S } from './card-keys.js';
export type {
  CardPins,
  CardSignatureInfo,
  CardSignatureKeys,
  CardTrustEntry,
  CardTrustLog,
  CardTrustLogFields,
  CardTrustOptions,
  TrustedCard,
} from './contracts.js';
export type { CardFetcher, CardRequestOptions, CardResponse, RequestTimeouts } from './fetcher.js';

interface CacheSlot {
  /** The entry settings the card was checked under: a config change means a fresh check. */
  key: string;
  trusted: TrustedCard;
}

/**
 * Fetches, checks and pins remote agent cards, one per registry entry.
 *
 * @example
 * ```ts
 * const trust = new CardTrust({ client, pins });
 * const trusted = await trust.resolve(entry); // throws CardTrustError when refused
 * ```
 */
export class CardTrust {
  private readonly client: CardFetcher;
  private readonly pins: CardPins;
  private readonly now: () => number;
  private readonly log: CardTrustLog;
  private readonly keyring: CardKeyring;
  private readonly cache = new Map<string, CacheSlot>();
  /** One fetch per entry at a time: concurrent callers share it. */
  private readonly inflight = new Map<string, { key: string; promise: Promise<TrustedCard> }>();

  constructor(options: CardTrustOptions) {
    this.client = options.client;
    this.pins = options.pins;
    this.now = options.now ?? Date.now;
    this.log = options.log ?? (() => undefined);
    this.keyring = new CardKeyring({
      client: this.client,
      now: this.now,
      log: this.log,
      keySetTtlMs: (options.keySetTtlS ?? DEFAULT_KEY_SET_TTL_S) * 1000,
    });
  }

  /**
   * The trusted card of `entry`: from the cache while it is younger than `cardRefreshS`,
   * otherwise fetched, checked (its signature first, when the entry names keys) and held to the
   * pin. Throws `CardTrustError` when refused (`card_invalid`, `card_signature_invalid`,
   * `card_pin_mismatch`), the client's `OutboundError` when the card (or the entry's key set)
   * could not be fetched, and `TypeError` for a malformed entry (bad URLs, bad `cardSha256`,
   * a signature required without keys).
   *
   * @example
   * ```ts
   * const { endpoint } = await trust.resolve(entry);
   * ```
   */
  async resolve(entry: CardTrustEntry): Promise<TrustedCard> {
    const key = entryKey(entry);
    const slot = this.cache.get(entry.name);
    if (slot !== undefined && slot.key === key && this.now() - slot.trusted.fetchedAt < entry.cardRefreshS * 1000) {
      return slot.trusted;
    }
    const running = this.inflight.get(entry.name);
    if (running !== undefined && running.key === key) return running.promise;

    const promise = this.check(entry).then(
      (trusted) => {
        this.cache.set(entry.name, { key, trusted });
        return trusted;
      },
      (error: unknown) => {
        // A refused or unreachable card is never served from an older check.
        this.cache.delete(entry.name);
        throw error;
      },
    );
    const settled = promise.finally(() => {
      if (this.inflight.get(entry.name)?.promise === settled) this.inflight.delete(entry.name);
    });
    this.inflight.set(entry.name, { key, promise: settled });
    return settled;
  }

  /**
   * Fetches and checks a card (its signature included, when the entry names keys) without
   * consulting or changing pins and without caching the card: what `airlock registry pin
   * <name>` shows before it calls `pins.set(name, digest, 'operator')`. Throws as `resolve`
   * does, except for pin mismatches.
   *
   * @example
   * ```ts
   * const { digest } = await trust.inspect(entry);
   * await pins.set(entry.name, digest, 'operator');
   * ```
   */
  async inspect(entry: CardTrustEntry): Promise<TrustedCard> {
    const { card, signature } = await this.fetchCard(entry);
    const endpoint = chooseInterface(card, { cardUrl: entry.cardUrl, rpcUrl: entry.rpcUrl, entry: entry.name });
    let digest: string;
    try {
      digest = cardTrustDigest(card);
    } catch (error) {
      throw new CardTrustError('card_invalid', entry.name, 'a trust field holds a value RFC 8785 cannot encode', {
        cause: error,
      });
    }
    return { card, digest, endpoint, fetchedAt: this.now(), ...(signature !== undefined && { signature }) };
  }

  /**
   * Drops the cached card of `name` (or of every entry), e.g. after a re-pin or a registry
   * reload, so the next `resolve` fetches.
   *
   * @example
   * ```ts
   * trust.forget('weather');
   * ```
   */
  forget(name?: string): void {
    if (name === undefined) this.cache.clear();
    else this.cache.delete(name);
  }

  private async check(entry: CardTrustEntry): Promise<TrustedCard> {
    if (entry.cardSha256 !== undefined) return this.checkConfigured(entry, entry.cardSha256);
    // Refuse a disabled entry before any request: its remote is not to be contacted again
    // until an operator has looked at the change.
    const pinned = await this.pins.get(entry.name);
    if (pinned?.drift !== undefined) {
      throw new CardTrustError(
        'card_pin_mismatch',
        entry.name,
        `the entry is disabled: its card changed from the pinned digest ${pinned.digest} to ${pinned.drift.digest}; review the card, then run \`airlock registry pin ${entry.name}\``,
      );
    }
    const trusted = await this.inspect(entry);
    if (pinned === undefined) {
      await this.pins.set(entry.name, trusted.digest, 'tofu');
      this.log('card_pinned_tofu', { entry: entry.name, digest: trusted.digest, cardUrl: showUrl(entry.cardUrl) });
      return trusted;
    }
    if (pinned.digest !== trusted.digest) {
      await this.pins.markDrift(entry.name, trusted.digest);
      this.log('card_pin_drift', {
        entry: entry.name,
        pinned: pinned.digest,
        seen: trusted.digest,
        cardUrl: showUrl(entry.cardUrl),
      });
      throw new CardTrustError(
        'card_pin_mismatch',
        entry.name,
        `the card's trust digest changed from ${pinned.digest} (${pinned.source}) to ${trusted.digest}; the entry is disabled until an operator reviews the card and runs \`airlock registry pin ${entry.name}\``,
      );
    }
    return trusted;
  }

  /**
   * A configured pin is the authority: the stored pin and drift state are not consulted, and
   * a mismatch is refused without disabling anything (the fix is a config change or the
   * remote reverting, not `registry pin`). A match is recorded as the stored pin, so the
   * entry keeps its pin if `card_sha256` is later removed from the config.
   */
  private async checkConfigured(entry: CardTrustEntry, configured: string): Promise<TrustedCard> {
    const expected = normalizeDigest(configured);
    if (expected === undefined) {
      throw new TypeError(`Registry entry "${entry.name}": card_sha256 must be a SHA-256 digest in hex`);
    }
    const trusted = await this.inspect(entry);
    if (trusted.digest !== expected) {
      this.log('card_pin_mismatch', {
        entry: entry.name,
        expected,
        seen: trusted.digest,
        cardUrl: showUrl(entry.cardUrl),
      });
      throw new CardTrustError(
        'card_pin_mismatch',
        entry.name,
        `the card's trust digest ${trusted.digest} does not match the configured card_sha256 ${expected}`,
      );
    }
    const stored = await this.pins.get(entry.name);
    if (stored?.digest !== expected || stored.source !== 'configured' || stored.drift !== undefined) {
      await this.pins.set(entry.name, expected, 'configured');
    }
    return trusted;
  }

  private async fetchCard(entry: CardTrustEntry): Promise<{ card: AgentCard; signature?: CardSignatureInfo }> {
    if (entry.cardKeys === undefined && entry.requireSignedCard === true) {
      throw new TypeError(`Registry entry "${entry.name}": requiring a signed card needs card_keys to check it with`);
    }
    const body = await fetchCardBytes(this.client, entry);
    const where = showUrl(entry.cardUrl);
    // The signature is checked on the bytes as received, and the card is decoded from the very
    // parse it was checked on: what was verified is what is used (and pinned).
    const { value, signature } =
      entry.cardKeys === undefined
        ? { value: parseCardJson(body, entry.name, where), signature: undefined }
        : await this.keyring.verify(entry, entry.cardKeys, body, where);
    return { card: decodeCard(value, entry.name, where), ...(signature !== undefined && { signature }) };
  }
}

/**
 * The entry settings a trusted card was checked under; a card checked under other settings
 * (other keys included) is checked again rather than served from the cache.
 */
function entryKey(entry: CardTrustEntry): string {
  const keys = entry.cardKeys;
  return JSON.stringify([
    entry.cardUrl,
    entry.rpcUrl ?? null,
    entry.cardSha256 ?? null,
    entry.maxCardBytes ?? null,
    entry.privateNetwork === true,
    keys === undefined
      ? null
      : [keys.keySet === undefined ? null : keySetIdentity(keys.keySet), keys.jwksUrl ?? null, keys.coverage ?? null],
    entry.requireSignedCard ?? null,
  ]);
}

/** Key sets are immutable: each one's identity is computed once (on the hot path of `resolve`). */
const KEY_SET_IDENTITIES = new WeakMap<OperatorKeySet, string>();

/** The SHA-256 of the set's public JWKs: the same keys give the same identity, any change another. */
function keySetIdentity(keySet: OperatorKeySet): string {
  let identity = KEY_SET_IDENTITIES.get(keySet);
  if (identity === undefined) {
    identity = createHash('sha256').update(JSON.stringify(keySet.toJwks())).digest('hex');
    KEY_SET_IDENTITIES.set(keySet, identity);
  }
  return identity;
}
