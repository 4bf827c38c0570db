import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { base64url, decodeProtectedHeader, flattenedVerify, importJWK, type JWK } from 'jose';
import { cardSigningPayload } from './canonical.js';
import { generateSigningKey } from './generate.js';
import { importSigningKey, type SigningKey } from './keys.js';
import { signCard, type AgentCardSignature } from './sign.js';

const CARD = {
  name: 'Echo',
  description: 'Echoes.',
  supportedInterfaces: [{ url: 'https://e.example/rpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
  version: '1',
  capabilities: { streaming: true },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [{ id: 'echo', name: 'Echo', description: 'Echoes.', tags: ['echo'] }],
};

async function signer(alg: Parameters<typeof generateSigningKey>[0]): Promise<{ key: SigningKey; publicJwk: object }> {
  const generated = await generateSigningKey(alg);
  return { key: importSigningKey(generated.privateJwk), publicJwk: generated.publicJwk };
}

describe('signCard', () => {
  it('writes one detached flattened JWS per key, in key order, over the canonical payload', async () => {
    const keys = [await signer('ES256'), await signer('EdDSA'), await signer('PS256')];
    const signed = signCard(
      CARD,
      keys.map((k) => k.key),
    );
    const signatures = signed.signatures as AgentCardSignature[];
    assert.equal(signatures.length, 3);
    const payload = base64url.encode(cardSigningPayload(CARD));
    for (const [i, entry] of signatures.entries()) {
      assert.deepEqual(Object.keys(entry), ['protected', 'signature']);
      assert.deepEqual(decodeProtectedHeader(entry), { alg: keys[i]!.key.alg, kid: keys[i]!.key.kid, typ: 'JOSE' });
      // jose, not Airlock's verifier: the signature is a plain RFC 7515 one.
      const publicKey = await importJWK(keys[i]!.publicJwk as JWK, keys[i]!.key.alg);
      await flattenedVerify({ ...entry, payload }, publicKey, { algorithms: [keys[i]!.key.alg] });
    }
  });

  it('replaces existing signatures, leaves the card untouched and keeps member order', async () => {
    const { key } = await signer('ES256');
    const original = { ...CARD, signatures: [{ protected: 'old', signature: 'old' }], extra: 1 };
    const before = JSON.stringify(original);
    const signed = signCard(original, [key]);
    assert.equal(JSON.stringify(original), before);
    assert.deepEqual(Object.keys(signed), [...Object.keys(CARD), 'extra', 'signatures']);
    assert.equal((signed.signatures as unknown[]).length, 1);
    // Signing the signed card again gives the same payload, hence an equally valid signature.
    assert.equal(cardSigningPayload(signed), cardSigningPayload(CARD));
  });

  it('puts jku in the protected header when asked, and checks it is a URL', async () => {
    const { key } = await signer('EdDSA');
    const jku = 'https://gw.example/.well-known/jwks.json';
    const [entry] = signCard(CARD, [key], { jku }).signatures as AgentCardSignature[];
    assert.deepEqual(decodeProtectedHeader(entry!), { alg: 'EdDSA', kid: key.kid, typ: 'JOSE', jku });
    assert.throws(() => signCard(CARD, [key], { jku: '/relative' }), TypeError);
    assert.throws(() => signCard(CARD, [key], { jku: 'file:///etc/passwd' }), TypeError);
  });

  it('needs a key, and a card with a canonical form', async () => {
    const { key } = await signer('ES256');
    assert.throws(() => signCard(CARD, []), TypeError);
    assert.throws(() => signCard({ ...CARD, name: 'lone \ud800' }, [key]), { code: 'card_malformed' });
  });

  it('is deterministic for EdDSA and RS256 (same card, same key → same signature)', async () => {
    for (const alg of ['EdDSA', 'RS256'] as const) {
      const { key } = await signer(alg);
      assert.deepEqual(signCard(CARD, [key]).signatures, signCard(structuredClone(CARD), [key]).signatures);
    }
  });
});
