/**
 * The errors of card signing, each with a stable `code` that callers branch on and operators
 * can search for. Messages are one line and never quote the card's own text (names,
 * descriptions): a card is third-party input, and these messages end up in logs. Key ids
 * are quoted only when they look like key ids (short, URL-safe characters).
 *
 * @example
 * ```ts
 * try {
 *   verifyCardSignatures(body, keys, { requireSigned: true });
 * } catch (error) {
 *   if (error instanceof CardSignatureError && error.code === 'card_unsigned') refuse('unsigned card');
 * }
 * ```
 */
import { AirlockError } from '../../errors/index.js';

/**
 * Why an operator key or key set was refused.
 *
 * - `key_unreadable`: the file could not be read (missing, permissions, too large).
 * - `key_malformed`: not a JWK (or JWK Set) that parses and imports.
 * - `key_symmetric`: an `oct` key; a shared secret can sign as well as verify, so anyone
 *   who can check a card could forge one.
 * - `key_unsupported`: a key type, curve or `alg` this module does not sign or verify with.
 * - `key_too_small`: an RSA modulus under 2048 bits.
 * - `key_not_private`: a signing key without its private part.
 * - `key_private_in_public_set`: a verification set holding private key material, which
 *   means a private key is about to be published or was copied where it should not be.
 * - `key_use_mismatch`: `use` other than `sig`, or `key_ops` without the needed operation.
 * - `keyset_duplicate_kid`: two keys of one set share a `kid`, so a header could not
 *   name one of them unambiguously.
 * - `keyset_empty`: a verification set without keys.
 *
 * @example
 * ```ts
 * const code: SigningKeyErrorCode = 'key_symmetric';
 * ```
 */
export type SigningKeyErrorCode =
  | 'key_unreadable'
  | 'key_malformed'
  | 'key_symmetric'
  | 'key_unsupported'
  | 'key_too_small'
  | 'key_not_private'
  | 'key_private_in_public_set'
  | 'key_use_mismatch'
  | 'keyset_duplicate_kid'
  | 'keyset_empty';

/**
 * A refused operator key or key set (configuration, not a remote's doing).
 *
 * @example
 * ```ts
 * throw new SigningKeyError('key_symmetric', 'keys.json: keys[0] is a symmetric (oct) key');
 * ```
 */
export class SigningKeyError extends AirlockError {
  override readonly name = 'SigningKeyError';
  readonly code: SigningKeyErrorCode;

  constructor(code: SigningKeyErrorCode, detail: string, options?: { cause?: unknown }) {
    super(oneLine(detail, 600), options);
    this.code = code;
  }
}

/**
 * Why a card's signatures were refused.
 *
 * - `card_malformed`: the bytes are not a UTF-8 JSON object, the card cannot be brought to
 *   its canonical form (a lone surrogate, a number JSON cannot hold, an object where the
 *   A2A card has text), or it is not an agent card Airlock can read.
 * - `card_too_deep`: the card nests deeper than the cap; refused before canonicalizing.
 * - `card_unsigned`: a signature is required and the card has none.
 * - `signatures_malformed`: `signatures` is not an array, or holds more entries than the cap.
 * - `signature_unverified`: no signature verified with the operator's keys; `failures` says
 *   why, per signature.
 * - `signature_incomplete`: a signature verified, but a field Airlock trusts (the
 *   interfaces, or with full coverage also the security schemes and requirements and the
 *   skills) lies outside what it signs, e.g. a v0.3 card's `url` or `securitySchemes`, or the
 *   `securitySchemes` an `@a2a-js/sdk` ≤ 1.3 instance signature leaves out (`omits`).
 *
 * @example
 * ```ts
 * const code: CardSignatureErrorCode = 'signature_unverified';
 * ```
 */
export type CardSignatureErrorCode =
  | 'card_malformed'
  | 'card_too_deep'
  | 'card_unsigned'
  | 'signatures_malformed'
  | 'signature_unverified'
  | 'signature_incomplete';

/**
 * Why one signature did not verify.
 *
 * - `entry_malformed`: the entry is not `{protected, signature}` with base64url strings (and
 *   an optional `header` object).
 * - `header_malformed`: the protected header is not base64url JSON, or a header member
 *   has the wrong type.
 * - `alg_refused`: `none`, an HMAC algorithm, or an algorithm this module does not know.
 * - `alg_not_allowed_for_key`: the named key does not sign with that algorithm (its type
 *   or its `alg` member says otherwise).
 * - `kid_missing`: the protected header names no key.
 * - `kid_unknown`: no operator key has that `kid` (a `jku`, `jwk`, `x5u` or `x5c` in the
 *   header is never a source of keys).
 * - `crit_unsupported`: the header marks extensions critical; none is understood here.
 * - `typ_unsupported`: a `typ` other than `JOSE`.
 * - `b64_unsupported`: unencoded payloads (RFC 7797) are not part of card signing.
 * - `signature_mismatch`: the signature does not match the canonical card under that key.
 *
 * @example
 * ```ts
 * error.failures.map((failure) => failure.code); // ['kid_unknown', 'signature_mismatch']
 * ```
 */
export type SignatureFailureCode =
  | 'entry_malformed'
  | 'header_malformed'
  | 'alg_refused'
  | 'alg_not_allowed_for_key'
  | 'kid_missing'
  | 'kid_unknown'
  | 'crit_unsupported'
  | 'typ_unsupported'
  | 'b64_unsupported'
  | 'signature_mismatch';

/**
 * One signature that did not verify: its position in `signatures`, why, and the key id and
 * algorithm its header named (when they were readable strings).
 *
 * @example
 * ```ts
 * const failure: SignatureFailure = { index: 0, code: 'alg_refused', alg: 'none' };
 * ```
 */
export interface SignatureFailure {
  index: number;
  code: SignatureFailureCode;
  kid?: string;
  alg?: string;
}

/**
 * A refused card signature.
 *
 * @example
 * ```ts
 * throw new CardSignatureError('card_unsigned', 'the card has no signatures and one is required');
 * ```
 */
export class CardSignatureError extends AirlockError {
  override readonly name = 'CardSignatureError';
  readonly code: CardSignatureErrorCode;
  /** Per signature, why it did not verify (filled for `signature_unverified`). */
  readonly failures: readonly SignatureFailure[];
  /**
   * For `signature_incomplete` by a signature over the card without some members (an
   * `@a2a-js/sdk` ≤ 1.3 instance signature): those members, e.g. `['securitySchemes']`.
   */
  readonly omits: readonly string[];

  constructor(
    code: CardSignatureErrorCode,
    detail: string,
    options?: { cause?: unknown; failures?: readonly SignatureFailure[]; omits?: readonly string[] },
  ) {
    super(oneLine(detail, 800), options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.failures = options?.failures ?? [];
    this.omits = options?.omits ?? [];
  }
}

const KID_SHAPE = /^[A-Za-z0-9._~:+=/-]{1,100}$/;

/**
 * A key id as it may appear in a message: quoted when it has a key id's shape, else a
 * placeholder (the header is the remote's text).
 *
 * @example
 * ```ts
 * showKid('NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs'); // '"NzbLsXh8…"' in full
 * showKid('line\nbreak');                                  // '(an unprintable kid)'
 * ```
 */
export function showKid(kid: string): string {
  return KID_SHAPE.test(kid) ? `"${kid}"` : '(an unprintable kid)';
}

/** Collapses control characters and caps the length, so a message stays one log line. */
function oneLine(text: string, max: number): string {
  // eslint-disable-next-line no-control-regex
  const flat = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ');
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}
