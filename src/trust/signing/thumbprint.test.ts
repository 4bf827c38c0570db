import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { describe, it } from 'node:test';
import { calculateJwkThumbprint } from 'jose';
import { jwkThumbprint } from './thumbprint.js';

describe('jwkThumbprint (RFC 7638)', () => {
  it('matches RFC 8037 §A.3’s Ed25519 example', () => {
    const jwk = { kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo' };
    assert.equal(jwkThumbprint(jwk), 'kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k');
  });

  it('matches jose for EC, OKP and RSA keys, ignoring members RFC 7638 leaves out', async () => {
    const keys = [
      generateKeyPairSync('ec', { namedCurve: 'P-256' }),
      generateKeyPairSync('ec', { namedCurve: 'P-384' }),
      generateKeyPairSync('ed25519'),
      generateKeyPairSync('rsa', { modulusLength: 2048 }),
    ];
    for (const { publicKey, privateKey } of keys) {
      const jwk = publicKey.export({ format: 'jwk' }) as Record<string, unknown>;
      const expected = await calculateJwkThumbprint(jwk);
      assert.equal(jwkThumbprint(jwk), expected);
      assert.equal(jwkThumbprint({ ...jwk, kid: 'x', alg: 'y', use: 'sig' }), expected);
      assert.equal(jwkThumbprint(privateKey.export({ format: 'jwk' }) as Record<string, unknown>), expected);
    }
  });

  it('refuses keys without their required members and other key types', () => {
    assert.throws(() => jwkThumbprint({ kty: 'EC', crv: 'P-256', x: 'a' }), { code: 'key_malformed' });
    assert.throws(() => jwkThumbprint({ kty: 'oct', k: 'a' }), { code: 'key_unsupported' });
    assert.throws(() => jwkThumbprint({ kty: 'toString' }), { code: 'key_unsupported' });
  });
});
