import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SigningKeyError, type SigningKeyErrorCode } from './errors.js';
import {
  OperatorKeySet,
  algorithmsForJwk,
  combineKeySets,
  importKeySet,
  importSigningKey,
  importVerificationKey,
  readKeySetFile,
  readSigningKeyFile,
} from './keys.js';
import { jwkThumbprint } from './thumbprint.js';

type Jwk = Record<string, unknown>;

function pair(type: 'ec' | 'ed25519' | 'ed448' | 'rsa', options: { namedCurve?: string; modulusLength?: number } = {}) {
  const { privateKey, publicKey } =
    type === 'ec'
      ? generateKeyPairSync('ec', { namedCurve: options.namedCurve ?? 'P-256' })
      : type === 'rsa'
        ? generateKeyPairSync('rsa', { modulusLength: options.modulusLength ?? 2048 })
        : type === 'ed25519'
          ? generateKeyPairSync('ed25519')
          : generateKeyPairSync('ed448');
  return {
    privateJwk: privateKey.export({ format: 'jwk' }) as Jwk,
    publicJwk: publicKey.export({ format: 'jwk' }) as Jwk,
  };
}

function refused(fn: () => unknown, code: SigningKeyErrorCode): SigningKeyError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof SigningKeyError, String(error));
    assert.equal(error.code, code, error.message);
    return error;
  }
  assert.fail(`expected ${code}`);
}

const P256 = pair('ec');
const RSA2048 = pair('rsa');
const ED25519 = pair('ed25519');

describe('algorithmsForJwk', () => {
  it('maps each key type to the algorithms it fits', () => {
    assert.deepEqual(algorithmsForJwk(P256.publicJwk), ['ES256']);
    assert.deepEqual(algorithmsForJwk(pair('ec', { namedCurve: 'P-384' }).publicJwk), ['ES384']);
    assert.deepEqual(algorithmsForJwk(pair('ec', { namedCurve: 'P-521' }).publicJwk), ['ES512']);
    assert.deepEqual(algorithmsForJwk(ED25519.publicJwk), ['EdDSA', 'Ed25519']);
    assert.deepEqual(algorithmsForJwk(RSA2048.publicJwk), ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512']);
  });

  it('narrows to the key’s alg, and refuses an alg the key does not fit', () => {
    assert.deepEqual(algorithmsForJwk({ ...RSA2048.publicJwk, alg: 'PS256' }), ['PS256']);
    refused(() => algorithmsForJwk({ ...P256.publicJwk, alg: 'ES384' }), 'key_unsupported');
    refused(() => algorithmsForJwk({ ...P256.publicJwk, alg: 'HS256' }), 'key_unsupported');
    refused(() => algorithmsForJwk({ ...RSA2048.publicJwk, alg: 'none' }), 'key_unsupported');
  });

  it('refuses symmetric keys, small RSA keys, other curves and types', () => {
    refused(() => algorithmsForJwk({ kty: 'oct', k: randomBytes(32).toString('base64url') }), 'key_symmetric');
    refused(() => algorithmsForJwk(pair('rsa', { modulusLength: 1024 }).publicJwk), 'key_too_small');
    assert.deepEqual(algorithmsForJwk(pair('rsa', { modulusLength: 2048 }).publicJwk).length, 6);
    refused(() => algorithmsForJwk(pair('ed448').publicJwk), 'key_unsupported');
    refused(() => algorithmsForJwk(pair('ec', { namedCurve: 'secp256k1' }).publicJwk), 'key_unsupported');
    refused(() => algorithmsForJwk({ kty: 'AKP', alg: 'ML-DSA-44', pub: 'x' }), 'key_unsupported');
  });
});

describe('importSigningKey', () => {
  it('takes the alg from the curve, the kid from the thumbprint, and publishes only public members', () => {
    const signer = importSigningKey(P256.privateJwk);
    assert.equal(signer.alg, 'ES256');
    assert.equal(signer.kid, jwkThumbprint(P256.publicJwk));
    assert.deepEqual(signer.publicJwk, { ...P256.publicJwk, kid: signer.kid, use: 'sig', alg: 'ES256' });
    assert.equal(importSigningKey(RSA2048.privateJwk).alg, 'RS256');
    assert.equal(importSigningKey(ED25519.privateJwk).alg, 'EdDSA');
    assert.equal(importSigningKey({ ...RSA2048.privateJwk, alg: 'PS384', kid: 'rsa-1' }).kid, 'rsa-1');
    assert.equal(importSigningKey({ ...RSA2048.privateJwk, alg: 'PS384' }).alg, 'PS384');
  });

  it('refuses public keys, symmetric keys, non-signature keys and mismatched halves', () => {
    refused(() => importSigningKey(P256.publicJwk), 'key_not_private');
    refused(() => importSigningKey({ kty: 'oct', k: 'c2VjcmV0' }), 'key_symmetric');
    refused(() => importSigningKey({ ...P256.privateJwk, use: 'enc' }), 'key_use_mismatch');
    refused(() => importSigningKey({ ...P256.privateJwk, key_ops: ['verify'] }), 'key_use_mismatch');
    assert.equal(importSigningKey({ ...P256.privateJwk, key_ops: ['sign'] }).alg, 'ES256');
    const other = pair('ed25519');
    refused(() => importSigningKey({ ...ED25519.privateJwk, x: other.publicJwk.x }), 'key_malformed');
    refused(() => importSigningKey({ ...P256.privateJwk, kid: '' }), 'key_malformed');
    refused(() => importSigningKey('not a key'), 'key_malformed');
  });
});

describe('importVerificationKey and importKeySet', () => {
  it('refuses private key material in a public set, naming the key', () => {
    const error = refused(
      () => importKeySet({ keys: [P256.publicJwk, RSA2048.privateJwk] }, 'jwks.json'),
      'key_private_in_public_set',
    );
    assert.match(error.message, /^jwks\.json: keys\[1\] holds private key material \(d, p, q, dp, dq, qi\)/);
    refused(() => importVerificationKey(ED25519.privateJwk), 'key_private_in_public_set');
  });

  it('refuses symmetric keys as such (an HMAC secret is no public key)', () => {
    refused(() => importKeySet({ keys: [{ kty: 'oct', k: 'c2VjcmV0', kid: 'h' }] }), 'key_symmetric');
  });

  it('accepts a set, an array or a single JWK, and keys them by kid', () => {
    const withKid = { ...P256.publicJwk, kid: 'ec-1' };
    const set = importKeySet({ keys: [withKid, ED25519.publicJwk] });
    assert.equal(set.size, 2);
    assert.deepEqual(set.get('ec-1')?.algorithms, ['ES256']);
    assert.deepEqual(set.get(jwkThumbprint(ED25519.publicJwk))?.algorithms, ['EdDSA', 'Ed25519']);
    assert.equal(importKeySet([withKid]).size, 1);
    assert.equal(importKeySet(withKid).size, 1);
    assert.deepEqual(set.toJwks().keys[0], { ...P256.publicJwk, kid: 'ec-1', use: 'sig' });
  });

  it('refuses duplicate kids, empty sets and non-sets', () => {
    refused(
      () =>
        importKeySet({
          keys: [
            { ...P256.publicJwk, kid: 'a' },
            { ...ED25519.publicJwk, kid: 'a' },
          ],
        }),
      'keyset_duplicate_kid',
    );
    refused(() => importKeySet({ keys: [] }), 'keyset_empty');
    refused(() => importKeySet({ keys: 'no' }), 'key_malformed');
    refused(() => importKeySet({ keys: [{ kty: 'EC', crv: 'P-256', x: 'AAAA', y: 'AAAA' }] }), 'key_malformed');
  });

  it('combines sets: the same key twice is kept once, two keys under one kid are refused', () => {
    const a = importKeySet([{ ...P256.publicJwk, kid: 'k' }]);
    const b = importKeySet([{ ...P256.publicJwk, kid: 'k' }, ED25519.publicJwk]);
    assert.equal(combineKeySets([a, b]).size, 2);
    const clash = importKeySet([{ ...RSA2048.publicJwk, kid: 'k' }]);
    refused(() => combineKeySets([a, clash]), 'keyset_duplicate_kid');
    refused(() => new OperatorKeySet([a.get('k')!, clash.get('k')!]), 'keyset_duplicate_kid');
  });
});

describe('key files', () => {
  it('reads a private JWK file and a JWKS file, and says which file is wrong', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'airlock-keys-'));
    writeFileSync(join(dir, 'private.jwk.json'), JSON.stringify(P256.privateJwk));
    writeFileSync(join(dir, 'jwks.json'), JSON.stringify({ keys: [P256.publicJwk] }));
    writeFileSync(join(dir, 'bad.json'), Buffer.from([0x7b, 0xff, 0x7d]));
    const signer = await readSigningKeyFile(join(dir, 'private.jwk.json'));
    const set = await readKeySetFile(join(dir, 'jwks.json'));
    assert.deepEqual(set.kids(), [signer.kid]);
    assert.equal(signer.privateKey.type, 'private');
    await assert.rejects(readKeySetFile(join(dir, 'missing.json')), (error: unknown) => {
      assert.ok(error instanceof SigningKeyError);
      assert.equal(error.code, 'key_unreadable');
      assert.match(error.message, /missing\.json \(ENOENT\)/);
      return true;
    });
    await assert.rejects(readKeySetFile(join(dir, 'bad.json')), { code: 'key_malformed' });
    await assert.rejects(readKeySetFile(join(dir, 'private.jwk.json')), { code: 'key_private_in_public_set' });
  });
});
