/**
 * RFC 7638 JWK thumbprints: the SHA-256 of a key's required public members, serialised with
 * sorted names and no whitespace. Airlock uses them as key ids, so a `kid` names exactly one
 * public key and anyone can recompute it from the published JWK.
 *
 * @example
 * ```ts
 * jwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo' });
 * // 'kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k' (RFC 8037 §A.3)
 * ```
 */
import { createHash } from 'node:crypto';
import { SigningKeyError } from './errors.js';

/** The members RFC 7638 §3.2 hashes, per key type, in lexicographic order. */
const REQUIRED_MEMBERS: Readonly<Record<string, readonly string[]>> = {
  EC: ['crv', 'kty', 'x', 'y'],
  OKP: ['crv', 'kty', 'x'],
  RSA: ['e', 'kty', 'n'],
};

/**
 * The RFC 7638 SHA-256 thumbprint of a public (or private) EC, OKP or RSA JWK, base64url
 * without padding. Throws `SigningKeyError('key_malformed')` when a required member is missing
 * or not a string, and `key_unsupported` for other key types.
 *
 * @example
 * ```ts
 * const kid = jwkThumbprint(publicJwk); // 43 base64url characters
 * ```
 */
export function jwkThumbprint(jwk: Readonly<Record<string, unknown>>): string {
  const kty = jwk.kty;
  const members = typeof kty === 'string' && Object.hasOwn(REQUIRED_MEMBERS, kty) ? REQUIRED_MEMBERS[kty] : undefined;
  if (members === undefined) throw new SigningKeyError('key_unsupported', 'a thumbprint needs an EC, OKP or RSA key');
  const picked: Record<string, string> = {};
  for (const name of members) {
    const value = jwk[name];
    if (typeof value !== 'string') throw new SigningKeyError('key_malformed', `the JWK lacks its "${name}" member`);
    picked[name] = value;
  }
  // Insertion order is the sorted order above; the values are base64url or names, so
  // JSON.stringify's escaping is RFC 7638's.
  return createHash('sha256').update(JSON.stringify(picked), 'utf8').digest('base64url');
}
