/**
 * Card trust: fetching remote agent cards through the guarded client, checking their
 * endpoints, and pinning them by the digest of their trust fields.
 *
 * @example
 * ```ts
 * import { CardTrust, PinStore } from '../trust/index.js';
 * const trust = new CardTrust({ client, pins: new PinStore('.airlock/pins.json'), log });
 * const { endpoint } = await trust.resolve(entry);
 * ```
 */
export { CardTrustError, showUrl } from './errors.js';
export type { CardTrustErrorCode } from './errors.js';
export {
  MAX_CANONICAL_DEPTH,
  assertDepth,
  canonicalJson,
  cardTrustDigest,
  normalizeDigest,
  trustFieldsOf,
} from './digest.js';
export type { CardTrustFields, TrustedInterfaceFields } from './digest.js';
export { chooseInterface } from './interfaces.js';
export type { ChosenEndpoint, InterfaceContext } from './interfaces.js';
export { PinStore, parsePinFile } from './pins.js';
export type { PinRecord, PinSource, PinStoreOptions } from './pins.js';
export { CardTrust, DEFAULT_MAX_CARD_BYTES } from './card.js';
export type {
  CardFetcher,
  CardPins,
  CardRequestOptions,
  CardResponse,
  CardTrustEntry,
  CardTrustLog,
  CardTrustLogFields,
  CardTrustOptions,
  RequestTimeouts,
  TrustedCard,
} from './card.js';
