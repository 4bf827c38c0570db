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
import { A2AError } from '../protocol/errors.js';
import { decodeAnyCard } from '../protocol/card.js';
import type { AgentCard } from '../protocol/model.js';
import { assertDepth, cardTrustDigest, normalizeDigest } from './digest.js';
import type { SignatureCoverage } from './signing/coverage.js';
import { CardSignatureError, SigningKeyError } from './signing/errors.js';
import { fetchKeySet } from './signing/fetch-keys.js';
import { combineKeySets, type OperatorKeySet, type SigningAlgorithm } from './signing/keys.js';
import { verifyCardSignatures, type CardSignatureVerdict } from './signing/verify.js';
import { CardTrustError, showUrl } from './errors.js';
import { chooseInterface } from './interfaces.js';
import type { ChosenEndpoint } from './interfaces.js';
import type { PinRecord, PinSource } from './pins.js';

/**
 * The request options card trust passes to the guarded client; a structural subset of
 * `src/net`'s `GuardedRequestOptions`, so this module compiles on its own.
 *
 * @example
 * ```ts
 * const options: CardRequestOptions = { method: 'GET', url, maxResponseBytes: 262144, timeouts };
 * ```
 */
export interface CardRequestOptions {
  method: 'GET' | 'POST';
  url: string;
  headers?: Record<string, string>;
  body?: string;
  maxResponseBytes: number;
  timeouts: RequestTimeouts;
  privateNetwork?: boolean;
  signal?: AbortSignal;
}

/**
 * Connect, read and total timeouts in milliseconds, as the guarded client takes them.
 *
 * @example
 * ```ts
 * const timeouts: RequestTimeouts = { connectMs: 5000, readMs: 60000, totalMs: 120000 };
 * ```
 */
export interface RequestTimeouts {
  connectMs: number;
  readMs: number;
  totalMs: number;
}

/**
 * A response as the guarded client returns it (headers lower-cased, body fully read).
 *
 * @example
 * ```ts
 * const response: CardResponse = { status: 200, headers: {}, body: Buffer.from('{}') };
 * ```
 */
export interface CardResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * What card trust needs of the guarded HTTP client (`src/net`): one request method that
 * enforces `maxResponseBytes` while reading and throws an `OutboundError` (with a `code`
 * such as `response_too_large`) on failure.
 *
 * @example
 * ```ts
 * const client: CardFetcher = { request: async () => ({ status: 200, headers: {}, body }) };
 * ```
 */
export interface CardFetcher {
  request(options: CardRequestOptions): Promise<CardResponse>;
}

/**
 * The part of `PinStore` card trust uses (a `PinStore` fits).
 *
 * @example
 * ```ts
 * const pins: CardPins = new PinStore('.airlock/pins.json');
 * ```
 */
export interface CardPins {
  get(name: string): Promise<PinRecord | undefined>;
  set(name: string, digest: string, source: PinSource): Promise<PinRecord>;
  markDrift(name: string, seenDigest: string): Promise<void>;
}

/**
 * Structured log fields. Values are identifiers, URLs and digests, never card text.
 *
 * @example
 * ```ts
 * const fields: CardTrustLogFields = { entry: 'weather', digest };
 * ```
 */
export type CardTrustLogFields = Record<string, string | number | boolean>;

/**
 * Events: `card_pinned_tofu` (first digest pinned), `card_pin_drift` (TOFU/operator pin no
 * longer matches; entry disabled), `card_pin_mismatch` (configured pin does not match),
 * `card_signature_refused` (the card's signature was required or present and did not verify
 * with the entry's keys, or the keys could not be had; `reason` is the stable code).
 *
 * @example
 * ```ts
 * const log: CardTrustLog = (event, fields) => logger.warn({ event, ...fields });
 * ```
 */
export type CardTrustLog = (event: string, fields: CardTrustLogFields) => void;

/**
 * Collaborators of a `CardTrust`.
 *
 * @example
 * ```ts
 * const options: CardTrustOptions = { client, pins, now: () => clock.now(), log };
 * ```
 */
export interface CardTrustOptions {
  client: CardFetcher;
  pins: CardPins;
  /** Epoch milliseconds; defaults to `Date.now`. */
  now?: () => number;
  log?: CardTrustLog;
  /** How long a key set fetched from a `jwksUrl` is used before it is fetched again; default 300. */
  keySetTtlS?: number;
}

/**
 * The operator's keys for one entry's card signatures (the registry's `card_keys`). At least
 * one of `keySet` and `jwksUrl`; with both, either's keys verify.
 *
 * @example
 * ```ts
 * const keys: CardSignatureKeys = { keySet: await readKeySetFile('travel-jwks.json'), coverage: 'trust-fields' };
 * ```
 */
export interface CardSignatureKeys {
  /** Keys read from the operator's files or config (`jwks_file`, inline `keys`). */
  keySet?: OperatorKeySet;
  /** A JWK Set URL on the card's own origin, fetched through the card client and cached briefly. */
  jwksUrl?: string;
  /** What a verified signature must cover; default `trust-fields`. */
  coverage?: SignatureCoverage;
}

/**
 * The signature a trusted card was accepted with.
 *
 * @example
 * ```ts
 * const signature: CardSignatureInfo = { kid: 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs', alg: 'ES256' };
 * ```
 */
export interface CardSignatureInfo {
  kid: string;
  alg: SigningAlgorithm;
}

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
 * A registry entry as card trust sees it.
 *
 * @example
 * ```ts
 * const entry: CardTrustEntry = {
 *   name: 'weather',
 *   cardUrl: 'https://weather.example/.well-known/agent-card.json',
 *   cardRefreshS: 300,
 *   timeouts: { connectMs: 5000, readMs: 60000, totalMs: 120000 },
 * };
 * ```
 */
export interface CardTrustEntry {
  name: string;
  cardUrl: string;
  /** Another origin the card's JSON-RPC interfaces may use. */
  rpcUrl?: string;
  /** A configured pin (hex SHA-256 of the trust fields); without it, trust on first use. */
  cardSha256?: string;
  /** How long a trusted card is used before it is fetched and checked again. */
  cardRefreshS: number;
  /** Byte cap on the card response; defaults to `DEFAULT_MAX_CARD_BYTES`. */
  maxCardBytes?: number;
  privateNetwork?: boolean;
  timeouts: RequestTimeouts;
  /** The keys the card's signatures are checked with; without them, signatures are not checked. */
  cardKeys?: CardSignatureKeys;
  /** Refuse a card without a signature that verifies; default: true when `cardKeys` is set. */
  requireSignedCard?: boolean;
}

/**
 * A card that passed every check. `card.description` and skill text are remote text: never
 * put them in a model's tool declarations.
 *
 * @example
 * ```ts
 * const { endpoint } = await trust.resolve(entry); // endpoint.url, endpoint.version
 * ```
 */
export interface TrustedCard {
  card: AgentCard;
  /** The trust digest (`cardTrustDigest`). */
  digest: string;
  endpoint: ChosenEndpoint;
  /** Epoch milliseconds when the card was fetched. */
  fetchedAt: number;
  /** The signature that verified, when the entry names keys and the card was signed. */
  signature?: CardSignatureInfo;
}

/**
 * The default byte cap on a card: generous for any real card, small enough to read at once.
 *
 * @example
 * ```ts
 * entry.maxCardBytes ?? DEFAULT_MAX_CARD_BYTES; // 262144
 * ```
 */
export const DEFAULT_MAX_CARD_BYTES = 256 * 1024;

/** Agent cards are a few levels deep; this leaves room for extension params and refuses nesting bombs. */
const MAX_CARD_DEPTH = 64;

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
  private readonly keySetTtlMs: number;
  private readonly cache = new Map<string, CacheSlot>();
  /** Key sets fetched from `jwksUrl`s, by URL and network setting. */
  private readonly keySets = new Map<string, { keySet: OperatorKeySet; fetchedAt: number }>();
  private readonly keySetFetches = new Map<string, Promise<{ keySet: OperatorKeySet; fetchedAt: number }>>();
  /** One fetch per entry at a time: concurrent callers share it. */
  private readonly inflight = new Map<string, { key: string; promise: Promise<TrustedCard> }>();

  constructor(options: CardTrustOptions) {
    this.client = options.client;
    this.pins = options.pins;
    this.now = options.now ?? Date.now;
    this.log = options.log ?? (() => undefined);
    this.keySetTtlMs = (options.keySetTtlS ?? DEFAULT_KEY_SET_TTL_S) * 1000;
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
    const cap = entry.maxCardBytes ?? DEFAULT_MAX_CARD_BYTES;
    const where = showUrl(entry.cardUrl);
    let response: CardResponse;
    try {
      response = await this.client.request({
        method: 'GET',
        url: entry.cardUrl,
        headers: { 'A2A-Version': '1.0', accept: 'application/json' },
        maxResponseBytes: cap,
        timeouts: entry.timeouts,
        privateNetwork: entry.privateNetwork === true,
      });
    } catch (error) {
      const code = outboundCode(error);
      if (code === 'response_too_large') {
        throw new CardTrustError('card_invalid', entry.name, `the card at ${where} is larger than ${cap} bytes`, {
          cause: error,
        });
      }
      if (code === 'invalid_response') {
        throw new CardTrustError('card_invalid', entry.name, `the response for the card at ${where} is malformed`, {
          cause: error,
        });
      }
      throw error;
    }
    // The client enforces the cap; checking again costs nothing and keeps the promise here.
    if (response.body.length > cap) {
      throw new CardTrustError('card_invalid', entry.name, `the card at ${where} is larger than ${cap} bytes`);
    }
    if (response.status !== 200) {
      throw new CardTrustError(
        'card_invalid',
        entry.name,
        `the card fetch from ${where} answered HTTP ${response.status}`,
      );
    }
    // The signature is checked on the bytes as received, and the card is decoded from the very
    // parse it was checked on: what was verified is what is used (and pinned).
    const { value, signature } =
      entry.cardKeys === undefined
        ? { value: parseCardJson(response.body, entry.name, where), signature: undefined }
        : await this.verifySignature(entry, entry.cardKeys, response.body, where);
    try {
      return { card: decodeAnyCard(value), ...(signature !== undefined && { signature }) };
    } catch (error) {
      throw new CardTrustError(
        'card_invalid',
        entry.name,
        `the document at ${where} is not a valid agent card${fieldOf(error)}`,
        {
          cause: error,
        },
      );
    }
  }

  /**
   * The card's parse once a signature verified with the entry's keys (or, when none is required,
   * once it is found unsigned). Refusals are `CardTrustError`s: `card_invalid` for bytes that
   * are no card at all, `card_signature_invalid` for everything about signatures and keys.
   */
  private async verifySignature(
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
    this.log('card_signature_refused', { entry: entry.name, reason: error.code, cardUrl: showUrl(entry.cardUrl) });
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

function parseCardJson(body: Buffer, entry: string, where: string): unknown {
  let value: unknown;
  try {
    // Fatal decoding: invalid UTF-8 is refused rather than silently replaced.
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
  } catch (error) {
    throw new CardTrustError('card_invalid', entry, `the card at ${where} is not UTF-8 JSON`, { cause: error });
  }
  try {
    assertDepth(value, MAX_CARD_DEPTH);
  } catch (error) {
    throw new CardTrustError('card_invalid', entry, `the card at ${where} nests deeper than ${MAX_CARD_DEPTH} levels`, {
      cause: error,
    });
  }
  return value;
}

/**
 * The field path of a decoding error, when it is plain (`card.skills[0].id`). Paths can embed
 * map keys from the card (a security scheme's name), which are the remote's text: anything
 * but identifier characters, dots and indexes is left out.
 */
function fieldOf(error: unknown): string {
  if (!(error instanceof A2AError)) return '';
  const field = error.field;
  return field !== undefined && /^[A-Za-z0-9_.[\]]{1,120}$/.test(field) ? ` (${field})` : '';
}

/** The `code` of an `OutboundError`, read structurally so `src/net` is not a compile-time dependency. */
function outboundCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
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
