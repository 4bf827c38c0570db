import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { calculateJwkThumbprint, flattenedVerify, FlattenedSign, importJWK } from 'jose';
import { GENERATED_ALGORITHMS, generateSigningKey } from './generate.js';
import { importKeySet, importSigningKey } from './keys.js';

describe('generateSigningKey', () => {
  for (const alg of GENERATED_ALGORITHMS) {
    it(`makes a usable ${alg} key whose kid is its RFC 7638 thumbprint`, async () => {
      const generated = await generateSigningKey(alg);
      assert.equal(generated.alg, alg);
      assert.equal(generated.kid, await calculateJwkThumbprint(generated.publicJwk));
      assert.deepEqual(
        { kid: generated.privateJwk.kid, alg: generated.privateJwk.alg, use: generated.privateJwk.use },
        { kid: generated.kid, alg, use: 'sig' },
      );
      assert.equal(generated.publicJwk.kid, generated.kid);
      assert.equal(generated.publicJwk.alg, alg);
      for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi']) assert.ok(!(member in generated.publicJwk), member);
      // Imports as Airlock's signer and verifier, and works with jose directly.
      assert.equal(importSigningKey(generated.privateJwk).kid, generated.kid);
      assert.ok(importKeySet({ keys: [generated.publicJwk] }).get(generated.kid));
      const jws = await new FlattenedSign(new TextEncoder().encode('x'))
        .setProtectedHeader({ alg, kid: generated.kid })
        .sign(await importJWK(generated.privateJwk, alg));
      await flattenedVerify(jws, await importJWK(generated.publicJwk, alg));
    });
  }

  it('makes a different key each time', async () => {
    const [a, b] = await Promise.all([generateSigningKey('EdDSA'), generateSigningKey('EdDSA')]);
    assert.notEqual(a.kid, b.kid);
  });
});
