/**
 * Card trust: fetching remote agent cards through the guarded client, checking their
 * endpoints and (when the registry names keys) their signatures, and pinning them by the
 * digest of their trust fields. Card signing itself (keys, sign, verify) is `signing/`,
 * re-exported here.
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
export type { CalledBinding, ChosenEndpoint, InterfaceContext } from './interfaces.js';
export { PinStore, parsePinFile } from './pins.js';
export type { PinRecord, PinSource, PinStoreOptions } from './pins.js';
export { CardTrust, DEFAULT_KEY_SET_TTL_S, DEFAULT_MAX_CARD_BYTES } from './card.js';
export type {
  CardFetcher,
  CardPins,
  CardRequestOptions,
  CardResponse,
  CardSignatureInfo,
  CardSignatureKeys,
  CardTrustEntry,
  CardTrustLog,
  CardTrustLogFields,
  CardTrustOptions,
  RequestTimeouts,
  TrustedCard,
} from './card.js';
export * from './signing/index.js';
