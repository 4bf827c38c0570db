import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import fc from 'fast-check';
import { generateKeyPair, jwtVerify, SignJWT, type CryptoKey, type JWTPayload } from 'jose';
import { makePrincipal } from '../../../identity/principal.js';
import { JwtAuthenticator } from '../jwt.js';
import type { JwtVerification } from './principal.js';
import { MAX_TOKENS_PER_PRINCIPAL, MAX_VERIFIED_TOKENS, VerifiedTokens } from './verified-tokens.js';

type Verified = Extract<JwtVerification, { ok: true }>;

function verification(subject: string): Verified {
  return {
    ok: true,
    principal: makePrincipal({ kind: 'service', clientId: 'https://idp.example', subject }),
    grants: new Set(['echo']),
  };
}

/** A clock in seconds that the cache reads in milliseconds. */
function clock(start = 1_000_000): { now: () => number; at: (seconds: number) => void } {
  let seconds = start;
  return { now: () => seconds * 1000, at: (next) => (seconds = next) };
}

describe('VerifiedTokens: what a hit needs', () => {
  it('answers a token it kept, and nothing else', () => {
    const time = clock();
    const tokens = new VerifiedTokens(0, time.now);
    const kept = verification('svc-1');
    assert.equal(tokens.get('token-a', 0), undefined);
    tokens.put('token-a', kept, { exp: 1_000_300 }, 0);
    assert.equal(tokens.get('token-a', 0), kept);
    assert.equal(tokens.get('token-b', 0), undefined);
    assert.equal(tokens.get('token-a ', 0), undefined);
  });

  it('drops a token verified with another key set', () => {
    const tokens = new VerifiedTokens(0, clock().now);
    tokens.put('token-a', verification('svc-1'), { exp: 1_000_300 }, 1);
    assert.equal(tokens.get('token-a', 2), undefined);
    assert.equal(tokens.get('token-a', 1), undefined, 'dropped, not kept for the old set');
    assert.equal(tokens.size, 0);
  });

  it('stops answering a token once it expires, as jose would refuse it (tolerance included)', () => {
    const time = clock();
    const tokens = new VerifiedTokens(30, time.now);
    tokens.put('token-a', verification('svc-1'), { exp: 1_000_010 }, 0);
    time.at(1_000_039);
    assert.ok(tokens.get('token-a', 0));
    time.at(1_000_040);
    assert.equal(tokens.get('token-a', 0), undefined);
    assert.equal(tokens.size, 0);
  });

  it('never answers a token without expiry', () => {
    const tokens = new VerifiedTokens(30, clock().now);
    tokens.put('token-a', verification('svc-1'), {}, 0);
    assert.equal(tokens.get('token-a', 0), undefined);
  });
});

describe('VerifiedTokens: time claims decided as jose decides them', () => {
  let privateKey: CryptoKey;
  let publicKey: CryptoKey;
  before(async () => {
    ({ privateKey, publicKey } = await generateKeyPair('ES256'));
  });

  it('for any exp, nbf, iat, clock and tolerance: a hit exactly when jose (and the iat check) would admit', async () => {
    const base = 1_700_000_000;
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          exp: fc.integer({ min: -100, max: 100 }),
          nbf: fc.option(fc.integer({ min: -100, max: 100 }), { nil: undefined }),
          iat: fc.option(fc.integer({ min: -100, max: 100 }), { nil: undefined }),
          now: fc.integer({ min: -100, max: 100 }),
          tolerance: fc.integer({ min: 0, max: 60 }),
        }),
        async ({ exp, nbf, iat, now, tolerance }) => {
          const payload: JWTPayload = { sub: 'svc-1', exp: base + exp };
          if (nbf !== undefined) payload.nbf = base + nbf;
          if (iat !== undefined) payload.iat = base + iat;
          const token = await new SignJWT(payload).setProtectedHeader({ alg: 'ES256' }).sign(privateKey);
          const admitted = await jwtVerify(token, publicKey, {
            currentDate: new Date((base + now) * 1000),
            clockTolerance: tolerance,
          }).then(
            () => payload.iat === undefined || payload.iat <= base + now + tolerance,
            () => false,
          );
          const time = clock(base + now);
          const tokens = new VerifiedTokens(tolerance, time.now);
          tokens.put(token, verification('svc-1'), payload, 0);
          assert.equal(tokens.get(token, 0) !== undefined, admitted, JSON.stringify({ payload, now, tolerance }));
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('VerifiedTokens: bounded, and one principal cannot push out another', () => {
  it(`keeps ${MAX_TOKENS_PER_PRINCIPAL} tokens a principal, its newest`, () => {
    const tokens = new VerifiedTokens(0, clock().now);
    for (let i = 0; i < MAX_TOKENS_PER_PRINCIPAL + 3; i++) {
      tokens.put(`token-${i}`, verification('svc-1'), { exp: 1_000_300 }, 0);
    }
    assert.equal(tokens.size, MAX_TOKENS_PER_PRINCIPAL);
    assert.equal(tokens.get('token-0', 0), undefined);
    assert.ok(tokens.get(`token-${MAX_TOKENS_PER_PRINCIPAL + 2}`, 0));
  });

  it('a principal bringing a new token every call leaves the others in place', () => {
    const tokens = new VerifiedTokens(0, clock().now);
    tokens.put('other', verification('svc-other'), { exp: 1_000_300 }, 0);
    for (let i = 0; i < MAX_VERIFIED_TOKENS + 10; i++) {
      tokens.put(`churn-${i}`, verification('svc-churn'), { exp: 1_000_300 }, 0);
    }
    assert.ok(tokens.get('other', 0));
    assert.equal(tokens.size, MAX_TOKENS_PER_PRINCIPAL + 1);
  });

  it(`keeps at most ${MAX_VERIFIED_TOKENS} tokens in all, the oldest going first`, () => {
    const tokens = new VerifiedTokens(0, clock().now);
    for (let i = 0; i < MAX_VERIFIED_TOKENS + 5; i++) {
      tokens.put(`token-${i}`, verification(`svc-${i}`), { exp: 1_000_300 }, 0);
    }
    assert.equal(tokens.size, MAX_VERIFIED_TOKENS);
    assert.equal(tokens.get('token-4', 0), undefined);
    assert.ok(tokens.get('token-5', 0));
  });

  it('keeps a token put again once', () => {
    const tokens = new VerifiedTokens(0, clock().now);
    tokens.put('token-a', verification('svc-1'), { exp: 1_000_300 }, 0);
    tokens.put('token-a', verification('svc-1'), { exp: 1_000_300 }, 0);
    assert.equal(tokens.size, 1);
  });
});

describe('JwtAuthenticator with the cache of verified tokens', () => {
  const ISSUER = 'https://idp.example';
  let privateKey: CryptoKey;
  let jwt: JwtAuthenticator;
  const logs: Record<string, unknown>[] = [];

  before(async () => {
    const pair = await generateKeyPair('ES256', { extractable: true });
    privateKey = pair.privateKey;
    const { exportJWK } = await import('jose');
    jwt = new JwtAuthenticator(
      {
        issuer: ISSUER,
        audience: 'airlock',
        algorithms: ['ES256'],
        agentsClaim: 'scope',
        agentsPrefix: 'a2a:',
        clockToleranceSeconds: 0,
        keys: { kind: 'jwks', jwks: { keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1' }] } },
      },
      { logger: { info: () => undefined, warn: (fields) => logs.push(fields), error: () => undefined } },
    );
  });

  const mint = (claims: JWTPayload): Promise<string> =>
    new SignJWT({ iss: ISSUER, aud: 'airlock', sub: 'svc-1', scope: 'a2a:echo', ...claims })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .sign(privateKey);

  it('refuses a token verified before once it has expired, with its failure logged', async () => {
    // At least a whole second to mint and verify twice: with `+ 1` a start late in a second left
    // milliseconds, and a slow host saw the token expire before its first verify.
    const exp = Math.floor(Date.now() / 1000) + 2;
    const token = await mint({ exp });
    assert.equal((await jwt.verify(token)).ok, true);
    assert.equal((await jwt.verify(token)).ok, true);
    while (Math.floor(Date.now() / 1000) < exp) await new Promise((resolve) => setTimeout(resolve, 50));
    const late = await jwt.verify(token);
    assert.deepEqual(late, { ok: false, failure: 'expired' });
    assert.equal(logs.at(-1)?.failure, 'expired');
  });

  it('verifies a refused token afresh every time (refusals are never kept)', async () => {
    const token = await mint({ exp: Math.floor(Date.now() / 1000) + 300, aud: 'someone-else' });
    const before = logs.length;
    assert.equal((await jwt.verify(token)).ok, false);
    assert.equal((await jwt.verify(token)).ok, false);
    assert.equal(logs.length, before + 2);
  });
});
