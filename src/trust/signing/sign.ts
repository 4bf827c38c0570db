/**
 * Signing agent cards (A2A v1.0 §8.4.2): one detached flattened JWS per key over the card's
 * canonical payload (`canonical.ts`). Synchronous, so a card cache can sign while it renders:
 * sign once per card change and serve the result until the card changes again.
 *
 * Each signature is `{protected, signature}`: the protected header is
 * `{"alg", "kid", "typ": "JOSE"}` plus `jku` when asked for, the signing input is
 * `BASE64URL(protected) "." BASE64URL(payload)` (RFC 7515 §5.1, no `b64: false`), and the
 * payload member is left out because the card itself is the payload.
 *
 * @example
 * ```ts
 * const signed = signCard(encodeCardV10(card), [signer]);
 * signed.signatures; // [{ protected: 'eyJhbGciOiJFUzI1NiIs…', signature: '…' }]
 * ```
 */
import { constants, sign as cryptoSign, type KeyObject, type SignKeyObjectInput } from 'node:crypto';
import { cardSigningPayload } from './canonical.js';
import type { SigningAlgorithm, SigningKey } from './keys.js';

/**
 * One entry of a card's `signatures` (the A2A `AgentCardSignature`).
 *
 * @example
 * ```ts
 * const entry: AgentCardSignature = { protected: 'eyJ…', signature: 'MEUC…' };
 * ```
 */
export interface AgentCardSignature {
  /** base64url of the protected header's JSON. */
  protected: string;
  /** base64url of the signature. */
  signature: string;
  /** The unprotected header; Airlock never writes one. */
  header?: Record<string, unknown>;
}

/**
 * Options of `signCard`.
 *
 * @example
 * ```ts
 * const options: SignCardOptions = { jku: 'https://gw.example/.well-known/jwks.json' };
 * ```
 */
export interface SignCardOptions {
  /**
   * Where the signer's JWK Set is published, put in each protected header. A hint for
   * verifiers without a configured set; Airlock's own verifier never follows it (A2A#2096).
   */
  jku?: string;
}

/**
 * The card with `signatures` replaced by one fresh signature per key, in key order. The card
 * is not changed; the copy keeps its members in order, with `signatures` last. `card` is
 * card JSON in either shape (for a v0.3 card, only what the v1.0 payload holds is covered:
 * see `uncoveredTrustFields`).
 *
 * Throws `TypeError` without keys or with a `jku` that is not an absolute http(s) URL, and
 * `CardSignatureError` (`card_malformed`, `card_too_deep`) for a card with no canonical form.
 *
 * @example
 * ```ts
 * const signed = signCard(JSON.parse(text), [newKey, oldKey], { jku });
 * JSON.stringify(signed); // serve this
 * ```
 */
export function signCard(
  card: Readonly<Record<string, unknown>>,
  keys: readonly SigningKey[],
  options: SignCardOptions = {},
): Record<string, unknown> {
  if (keys.length === 0) throw new TypeError('signCard needs at least one key');
  if (options.jku !== undefined) checkJku(options.jku);
  const payload = Buffer.from(cardSigningPayload(card), 'utf8').toString('base64url');
  const signatures: AgentCardSignature[] = keys.map((key) => {
    const header: Record<string, string> = { alg: key.alg, kid: key.kid, typ: 'JOSE' };
    if (options.jku !== undefined) header.jku = options.jku;
    const protectedHeader = Buffer.from(JSON.stringify(header), 'utf8').toString('base64url');
    const input = Buffer.from(`${protectedHeader}.${payload}`, 'ascii');
    return { protected: protectedHeader, signature: signBytes(key.alg, key.privateKey, input).toString('base64url') };
  });
  // Object.entries/fromEntries keep a member named `__proto__` an own member of the copy.
  const rest = Object.entries(card).filter(([name]) => name !== 'signatures');
  return Object.fromEntries([...rest, ['signatures', signatures]]);
}

/** RFC 7518 §3: the hash and padding of each algorithm; ECDSA signatures are R || S. */
function signBytes(alg: SigningAlgorithm, key: KeyObject, input: Buffer): Buffer {
  switch (alg) {
    case 'ES256':
    case 'ES384':
    case 'ES512':
      return cryptoSign(`sha${alg.slice(2)}`, input, { key, dsaEncoding: 'ieee-p1363' });
    case 'EdDSA':
    case 'Ed25519':
      return cryptoSign(null, input, key);
    case 'RS256':
    case 'RS384':
    case 'RS512':
      return cryptoSign(`sha${alg.slice(2)}`, input, { key, padding: constants.RSA_PKCS1_PADDING });
    case 'PS256':
    case 'PS384':
    case 'PS512': {
      const options: SignKeyObjectInput = {
        key,
        padding: constants.RSA_PKCS1_PSS_PADDING,
        // RFC 7518 §3.5: the salt is as long as the hash.
        saltLength: Number(alg.slice(2)) / 8,
      };
      return cryptoSign(`sha${alg.slice(2)}`, input, options);
    }
  }
}

function checkJku(jku: string): void {
  let url: URL;
  try {
    url = new URL(jku);
  } catch {
    throw new TypeError('jku must be an absolute URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new TypeError('jku must be an http(s) URL');
}
