/**
 * Card trust's contracts: the entry it checks, the card it hands back, its collaborators
 * (pins, log) and the operator's signature keys. Types only; `card.ts` does the work.
 *
 * @example
 * ```ts
 * const options: CardTrustOptions = { client, pins: new PinStore('.airlock/pins.json') };
 * const trusted: TrustedCard = await new CardTrust(options).resolve(entry);
 * ```
 */
import type { AgentCard } from '../protocol/model.js';
import type { CardFetcher, RequestTimeouts } from './fetcher.js';
import type { ChosenEndpoint } from './interfaces.js';
import type { PinRecord, PinSource } from './pins.js';
import type { SignatureCoverage } from './signing/coverage.js';
import type { OperatorKeySet, SigningAlgorithm } from './signing/keys.js';

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
