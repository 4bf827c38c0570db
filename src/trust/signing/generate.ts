/**
 * New card signing keys. The key id is the RFC 7638 thumbprint of the public key, so it is
 * unique without coordination and anyone holding the public JWK can check it.
 *
 * @example
 * ```ts
 * const { kid, privateJwk, publicJwk } = await generateSigningKey('ES256');
 * ```
 */
import { generateKeyPair, type JsonWebKey, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import { importSigningKey, type PublicJwk, type SigningAlgorithm } from './keys.js';
import { jwkThumbprint } from './thumbprint.js';

/**
 * The algorithms `generateSigningKey` makes keys for.
 *
 * @example
 * ```ts
 * GENERATED_ALGORITHMS.includes('EdDSA'); // true
 * ```
 */
export const GENERATED_ALGORITHMS = ['ES256', 'ES384', 'ES512', 'EdDSA', 'RS256', 'PS256'] as const;

/**
 * One of `GENERATED_ALGORITHMS`.
 *
 * @example
 * ```ts
 * const alg: GeneratedAlgorithm = 'RS256';
 * ```
 */
export type GeneratedAlgorithm = (typeof GENERATED_ALGORITHMS)[number];

/**
 * A new key pair as JWKs, both carrying `kid`, `alg` and `use: "sig"`. `privateJwk` is a
 * secret: store it readable by its owner only.
 *
 * @example
 * ```ts
 * const generated: GeneratedSigningKey = await generateSigningKey('EdDSA');
 * generated.publicJwk.kid === generated.kid; // true
 * ```
 */
export interface GeneratedSigningKey {
  kid: string;
  alg: SigningAlgorithm;
  privateJwk: JsonWebKey & { kid: string; alg: SigningAlgorithm; use: 'sig' };
  publicJwk: PublicJwk;
}

/** New RSA keys get 3072 bits (NIST's level for use beyond 2030); 2048-bit keys are still accepted. */
const RSA_BITS = 3072;

const generate = promisify(generateKeyPair) as (
  type: 'ec' | 'ed25519' | 'rsa',
  options: { namedCurve?: string; modulusLength?: number },
) => Promise<{ publicKey: KeyObject; privateKey: KeyObject }>;

/**
 * Generates a signing key for `alg`: P-256/P-384/P-521 for ES256/ES384/ES512, Ed25519 for
 * EdDSA, 3072-bit RSA for RS256 and PS256. Throws `TypeError` for another algorithm.
 *
 * @example
 * ```ts
 * const { kid, privateJwk, publicJwk } = await generateSigningKey('ES256');
 * writeFileSync(`${kid}.private.jwk.json`, JSON.stringify(privateJwk), { mode: 0o600 });
 * ```
 */
export async function generateSigningKey(alg: GeneratedAlgorithm): Promise<GeneratedSigningKey> {
  const pair = await generatePair(alg);
  const privateMembers = pair.privateKey.export({ format: 'jwk' });
  const publicMembers = pair.publicKey.export({ format: 'jwk' });
  const kid = jwkThumbprint(publicMembers);
  const privateJwk = { ...privateMembers, kid, alg, use: 'sig' as const };
  // The import runs the same checks a configured key gets, and yields the published form.
  const { publicJwk } = importSigningKey(privateJwk, 'the generated key');
  return { kid, alg, privateJwk, publicJwk };
}

function generatePair(alg: GeneratedAlgorithm): Promise<{ publicKey: KeyObject; privateKey: KeyObject }> {
  switch (alg) {
    case 'ES256':
      return generate('ec', { namedCurve: 'P-256' });
    case 'ES384':
      return generate('ec', { namedCurve: 'P-384' });
    case 'ES512':
      return generate('ec', { namedCurve: 'P-521' });
    case 'EdDSA':
      return generate('ed25519', {});
    case 'RS256':
    case 'PS256':
      return generate('rsa', { modulusLength: RSA_BITS });
    default:
      throw new TypeError(`cannot generate keys for ${String(alg)}`);
  }
}
