/**
 * Key material read from the configuration: a JWKS document or a PEM public key. Both are
 * checked when the authenticator is built, so a key that cannot verify any allowed algorithm
 * fails at startup rather than on the first request.
 *
 * @example
 * ```ts
 * const key = localJwksResolver(settings.keys.jwks);
 * const { usable, resolver } = pemResolver(pem, ['ES256', 'RS256']); // usable: ['ES256'] for a P-256 key
 * ```
 */
import { createPublicKey } from 'node:crypto';
import { createLocalJWKSet, importSPKI, type CryptoKey, type JSONWebKeySet, type JWTHeaderParameters } from 'jose';
import { JwtConfigError } from './config-error.js';

/**
 * Finds the key that verifies a token, from its protected header (jose's key function shape).
 *
 * @example
 * ```ts
 * const resolver: KeyResolver = localJwksResolver(jwks);
 * await jwtVerify(token, resolver, options);
 * ```
 */
export type KeyResolver = (header: JWTHeaderParameters) => Promise<CryptoKey>;

/** Which algorithms can use which SPKI key type (and, for EC, curve). */
const ALGS_FOR_KEY: Readonly<Record<string, readonly string[]>> = {
  rsa: ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'],
  'rsa-pss': ['PS256', 'PS384', 'PS512'],
  'ec:prime256v1': ['ES256'],
  'ec:secp384r1': ['ES384'],
  'ec:secp521r1': ['ES512'],
  ed25519: ['EdDSA'],
};

/**
 * A key resolver for a configured JWKS document; a malformed one fails here, at startup.
 *
 * @example
 * ```ts
 * const key = localJwksResolver({ keys: [publicJwk] });
 * ```
 */
export function localJwksResolver(jwks: JSONWebKeySet): KeyResolver {
  try {
    return createLocalJWKSet(jwks);
  } catch (cause) {
    throw new JwtConfigError('auth.jwt: the JWKS is malformed', { cause });
  }
}

/**
 * A key resolver for a PEM public key: imported once per algorithm (jose binds a CryptoKey to
 * one algorithm), with the algorithm taken from the token header only when it is allowed and
 * fits the key type. Checks the PEM synchronously so that a bad key fails at startup.
 *
 * @example
 * ```ts
 * const pem = pemResolver(settings.keys.pem, settings.algorithms);
 * algorithms = pem.usable; // only what this key can verify
 * ```
 */
export function pemResolver(pem: string, allowed: readonly string[]): { usable: string[]; resolver: KeyResolver } {
  let type: string;
  try {
    const key = createPublicKey(pem);
    const curve = key.asymmetricKeyDetails?.namedCurve;
    type = key.asymmetricKeyType === 'ec' ? `ec:${curve ?? ''}` : (key.asymmetricKeyType ?? '');
  } catch (cause) {
    throw new JwtConfigError('auth.jwt: the public key is not a readable PEM SPKI key', { cause });
  }
  const fits = ALGS_FOR_KEY[type] ?? [];
  const usable = allowed.filter((alg) => fits.includes(alg));
  if (usable.length === 0) {
    throw new JwtConfigError(
      `auth.jwt: the public key (${type || 'unknown type'}) cannot verify any of the allowed algorithms (${allowed.join(', ')})`,
    );
  }
  const imported = new Map<string, Promise<CryptoKey>>();
  const resolver: KeyResolver = async (header) => {
    const { alg } = header;
    // jose has already refused algorithms outside the pinned list; checked again so that an
    // attacker-chosen name can never reach importSPKI or grow the cache.
    if (typeof alg !== 'string' || !usable.includes(alg)) {
      throw Object.assign(new Error('alg not allowed'), { code: 'ERR_JOSE_ALG_NOT_ALLOWED' });
    }
    let key = imported.get(alg);
    if (key === undefined) {
      key = importSPKI(pem, alg);
      imported.set(alg, key);
    }
    return key;
  };
  return { usable, resolver };
}
