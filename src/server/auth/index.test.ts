import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import fc from 'fast-check';
import { base64url, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from 'jose';
import { parseConfig, type JwtSettings } from '../../config/load.js';
import { Authenticator, securitySchemesFor, type AuthOutcome, type Credentials } from './index.js';

const TOKEN = 'index-test-token-0123456789abcdefghijklmn';
/** A configured client token that happens to look like a JWT: it stays that client's token. */
const JWT_SHAPED_TOKEN = `${base64url.encode('{"alg":"ES256"}')}.${base64url.encode('{"sub":"x"}')}.client-token-0123456789`;
const ISSUER = 'https://idp.example';
const AUDIENCE = 'airlock';

const config = parseConfig(
  `
agents:
  - { slug: open, name: Open, description: d, skills: [{ id: s, name: s, description: d }], backend: { type: echo }, anonymousLoopback: true }
  - { slug: closed, name: Closed, description: d, skills: [{ id: s, name: s, description: d }], backend: { type: echo } }
clients:
  - { id: a, token: "\${TOKEN}", agents: [open] }
  - { id: shaped, token: "\${SHAPED}", agents: [open] }
`,
  { TOKEN, SHAPED: JWT_SHAPED_TOKEN },
);

let privateKey: CryptoKey;
let jwt: JwtSettings;

async function mint(claims: JWTPayload = {}): Promise<string> {
  return new SignJWT({ iss: ISSUER, aud: AUDIENCE, sub: 'svc-1', exp: Math.floor(Date.now() / 1000) + 300, ...claims })
    .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
    .sign(privateKey);
}

/** Awaits only when there is something to await, the way the gateway should. */
async function settle(outcome: AuthOutcome | Promise<AuthOutcome>): Promise<AuthOutcome> {
  return outcome instanceof Promise ? await outcome : outcome;
}

before(async () => {
  const pair = await generateKeyPair('ES256');
  privateKey = pair.privateKey;
  jwt = {
    issuer: ISSUER,
    audience: AUDIENCE,
    algorithms: ['ES256'],
    agentsClaim: 'scope',
    agentsPrefix: 'a2a:',
    clockToleranceSeconds: 30,
    keys: { kind: 'jwks', jwks: { keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1' }] } },
  };
});

describe('Authenticator', () => {
  it('decides client tokens and anonymous callers synchronously (no promise on the hot path)', () => {
    const auth = new Authenticator({ clients: config.clients, jwt });
    const outcome = auth.authenticate({ authorization: `Bearer ${TOKEN}` }, 'open', false, false);
    assert.ok(!(outcome instanceof Promise));
    assert.ok(outcome.ok);
    assert.equal(outcome.principal.key, 'client:a::a');
    const anonymous = auth.authenticate({}, 'open', true, true);
    assert.ok(!(anonymous instanceof Promise) && anonymous.ok);
    const refused = auth.authenticate({ authorization: 'Bearer not-a-jwt-and-not-a-token' }, 'open', false, false);
    assert.ok(!(refused instanceof Promise));
    assert.equal(!refused.ok && refused.status, 401);
  });

  it('verifies a JWT asynchronously', async () => {
    const auth = new Authenticator({ clients: config.clients, jwt });
    const pending = auth.authenticate(
      { authorization: `Bearer ${await mint({ scope: 'a2a:closed' })}` },
      'closed',
      false,
      false,
    );
    assert.ok(pending instanceof Promise);
    const outcome = await pending;
    assert.ok(outcome.ok);
    assert.equal(outcome.principal.kind, 'service');
  });

  it('refuses a JWT without the grant with 403', async () => {
    const auth = new Authenticator({ clients: config.clients, jwt });
    const outcome = await settle(
      auth.authenticate({ authorization: `Bearer ${await mint({ scope: 'a2a:open' })}` }, 'closed', false, false),
    );
    assert.equal(!outcome.ok && outcome.status, 403);
  });

  it('refuses a JWT when JWT auth is not configured', async () => {
    const auth = new Authenticator({ clients: config.clients });
    const outcome = auth.authenticate(
      { authorization: `Bearer ${await mint({ scope: 'a2a:open' })}` },
      'open',
      false,
      false,
    );
    assert.ok(!(outcome instanceof Promise));
    assert.deepEqual(outcome, { ok: false, status: 401, reason: 'invalid_credentials' });
  });

  it('keeps a JWT-shaped client token that client, even with JWT auth configured', () => {
    const auth = new Authenticator({ clients: config.clients, jwt });
    const outcome = auth.authenticate({ authorization: `Bearer ${JWT_SHAPED_TOKEN}` }, 'open', false, false);
    assert.ok(!(outcome instanceof Promise) && outcome.ok);
    assert.equal(outcome.principal.clientId, 'shaped');
  });

  it('accepts client tokens only in X-API-Key, never a JWT', async () => {
    const auth = new Authenticator({ clients: config.clients, apiKeyHeader: true, jwt });
    assert.equal((await settle(auth.authenticate({ apiKey: TOKEN }, 'open', false, false))).ok, true);
    const outcome = auth.authenticate({ apiKey: await mint({ scope: 'a2a:open' }) }, 'open', false, false);
    assert.deepEqual(outcome, { ok: false, status: 401, reason: 'invalid_credentials' });
  });

  it('ignores X-API-Key unless enabled', () => {
    const auth = new Authenticator({ clients: config.clients, jwt });
    assert.deepEqual(auth.authenticate({ apiKey: TOKEN }, 'open', false, false), {
      ok: false,
      status: 401,
      reason: 'missing_credentials',
    });
  });

  it('lets Authorization win: a bad JWT in Authorization is refused even with a good API key', async () => {
    const auth = new Authenticator({ clients: config.clients, apiKeyHeader: true, jwt });
    const expired = await mint({ scope: 'a2a:open', exp: Math.floor(Date.now() / 1000) - 600 });
    const outcome = await settle(
      auth.authenticate({ authorization: `Bearer ${expired}`, apiKey: TOKEN }, 'open', false, false),
    );
    assert.deepEqual(outcome, { ok: false, status: 401, reason: 'invalid_credentials' });
  });

  it('is built from a loaded configuration', () => {
    const auth = Authenticator.fromConfig({ ...config, server: { ...config.server, apiKeyHeader: true } });
    assert.equal((auth.authenticate({ apiKey: TOKEN }, 'open', false, false) as AuthOutcome).ok, true);
  });
});

describe('Authenticator: properties', () => {
  const headerish = fc.oneof(
    fc.string({ maxLength: 200 }),
    fc.string({ unit: 'binary', maxLength: 100 }),
    fc.string({ maxLength: 200 }).map((value) => `Bearer ${value}`),
    // JWT-shaped: a header with `alg`, then arbitrary payload and signature segments.
    fc
      .tuple(
        fc.constantFrom('ES256', 'RS256', 'HS256', 'none', 'EdDSA', ''),
        fc.option(fc.string({ maxLength: 8 }), { nil: undefined }),
        fc.json({ maxDepth: 2 }),
        fc.uint8Array({ maxLength: 80 }),
      )
      .map(
        ([alg, kid, payload, signature]) =>
          `Bearer ${base64url.encode(JSON.stringify({ alg, ...(kid !== undefined && { kid }) }))}.${base64url.encode(payload)}.${base64url.encode(signature)}`,
      ),
  );
  const credentials: fc.Arbitrary<Credentials> = fc.record(
    { authorization: headerish, apiKey: headerish },
    { requiredKeys: [] },
  );

  it('never throws and never admits without a matching token', async () => {
    const auth = new Authenticator({ clients: config.clients, apiKeyHeader: true, jwt });
    await fc.assert(
      fc.asyncProperty(
        credentials,
        fc.constantFrom('open', 'closed'),
        fc.boolean(),
        async (sent, slug, fromLoopback) => {
          // Anonymous callers are not allowed here, so nothing but a real token may pass.
          const outcome = await settle(auth.authenticate(sent, slug, fromLoopback, false));
          assert.equal(outcome.ok, false);
          assert.ok(outcome.ok || outcome.status === 401, JSON.stringify(sent));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('never admits a real JWT with any character of its signed part changed', async () => {
    const auth = new Authenticator({ clients: config.clients, jwt });
    const token = await mint({ sub: 'svc-1', scope: 'a2a:open' });
    const signedLength = token.lastIndexOf('.');
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.';
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: signedLength - 1 }), fc.constantFrom(...alphabet), async (index, char) => {
        fc.pre(token[index] !== char);
        const mutated = `${token.slice(0, index)}${char}${token.slice(index + 1)}`;
        const outcome = await settle(auth.authenticate({ authorization: `Bearer ${mutated}` }, 'open', false, false));
        assert.equal(outcome.ok, false, mutated);
      }),
      { numRuns: 300 },
    );
    assert.equal(
      (await settle(auth.authenticate({ authorization: `Bearer ${token}` }, 'open', false, false))).ok,
      true,
    );
  });
});

describe('securitySchemesFor', () => {
  it('lists bearer only by default, with no bearerFormat', () => {
    assert.deepEqual(securitySchemesFor({ apiKeyHeader: false }), {
      bearer: { type: 'http', scheme: 'bearer', description: 'A client token issued by the operator' },
    });
  });

  it('says JWT when JWT auth is configured', () => {
    const schemes = securitySchemesFor({ apiKeyHeader: false, jwt });
    assert.equal(schemes.bearer?.type === 'http' && schemes.bearer.bearerFormat, 'JWT');
    assert.match(schemes.bearer?.description ?? '', /JWT/);
    assert.deepEqual(Object.keys(schemes), ['bearer']);
  });

  it('adds the X-API-Key header scheme when enabled', () => {
    const schemes = securitySchemesFor({ apiKeyHeader: true, jwt });
    assert.deepEqual(Object.keys(schemes), ['bearer', 'apiKey']);
    assert.deepEqual(
      { ...schemes.apiKey, description: undefined },
      {
        type: 'apiKey',
        location: 'header',
        name: 'X-API-Key',
        description: undefined,
      },
    );
  });
});
