/**
 * Signed JWT assertions (RFC 7523): for client authentication (`private_key_jwt`, §2.2) and for
 * the JWT bearer authorization grant (§2.1). Short-lived (60 s), unique (`jti`), for the token
 * endpoint (`aud`), signed with a private JWK from an `AIRLOCK_SECRET_*` variable.
 *
 * @example
 * ```ts
 * const jwt = await signAssertion(oauth.assertionKey!, { iss: 'airlock', sub: 'airlock', aud: tokenEndpoint }, Date.now);
 * ```
 */
import { randomUUID } from 'node:crypto';
import { SignJWT, importJWK, type JWK } from 'jose';
import type { EnvSecret } from './config.js';
import { OutboundAuthError } from './errors.js';

/**
 * The claims that vary per assertion.
 *
 * @example
 * ```ts
 * const claims: AssertionClaims = { iss: 'airlock', sub: 'alice', aud: 'https://idp.example/token' };
 * ```
 */
export interface AssertionClaims {
  readonly iss: string;
  readonly sub: string;
  readonly aud: string;
}

/**
 * A signed assertion with `claims`, `iat`, `exp` (60 s later) and a random `jti`. The
 * algorithm is the JWK's `alg`, else the usual one for its key type.
 *
 * @example
 * ```ts
 * form.set('assertion', await signAssertion(key, claims, Date.now));
 * ```
 * @throws OutboundAuthError `client_assertion_failed`, naming the variable, never the key
 */
export async function signAssertion(key: EnvSecret, claims: AssertionClaims, now: () => number): Promise<string> {
  try {
    const jwk = JSON.parse(key.reveal()) as JWK;
    const alg = jwk.alg ?? defaultAlg(jwk);
    const signing = await importJWK(jwk, alg);
    const iat = Math.floor(now() / 1000);
    return await new SignJWT({})
      .setProtectedHeader({ alg, ...(jwk.kid !== undefined && { kid: jwk.kid }) })
      .setIssuer(claims.iss)
      .setSubject(claims.sub)
      .setAudience(claims.aud)
      .setJti(randomUUID())
      .setIssuedAt(iat)
      .setExpirationTime(iat + 60)
      .sign(signing);
  } catch {
    // The key's own error could quote it: say only which variable.
    throw new OutboundAuthError(
      'client_assertion_failed',
      'remote_auth_failed',
      `the assertion could not be signed with the key in ${key.env}`,
    );
  }
}

function defaultAlg(jwk: JWK): string {
  if (jwk.kty === 'OKP') return 'EdDSA';
  if (jwk.kty === 'EC') return jwk.crv === 'P-384' ? 'ES384' : jwk.crv === 'P-521' ? 'ES512' : 'ES256';
  return 'RS256';
}
