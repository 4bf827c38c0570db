import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  base64url,
  exportJWK,
  exportPKCS8,
  exportSPKI,
  generateKeyPair,
  importPKCS8,
  SignJWT,
  type CryptoKey,
  type JWK,
  type JWTPayload,
} from 'jose';
import { parseConfig, type JwtSettings } from '../../config/load.js';
import { JwtAuthenticator, JwtConfigError, looksLikeJwt, MAX_ACTOR_DEPTH, type JwtFailure } from './jwt.js';

const ISSUER = 'https://idp.example';
const AUDIENCE = 'airlock';
const now = () => Math.floor(Date.now() / 1000);

interface KeyPair {
  publicKey: CryptoKey;
  privateKey: CryptoKey;
}

let es: KeyPair;
let esOther: KeyPair;
let rsa: KeyPair;
/** The RSA private key again, bound to PS256 (WebCrypto binds a key to one algorithm). */
let rsaPss: CryptoKey;
let ed: KeyPair;
let esJwk: JWK;
let rsaJwk: JWK;
let edJwk: JWK;

function settings(overrides: Partial<JwtSettings> = {}): JwtSettings {
  return {
    issuer: ISSUER,
    audience: AUDIENCE,
    algorithms: ['RS256', 'ES256', 'EdDSA'],
    agentsClaim: 'scope',
    agentsPrefix: 'a2a:',
    clockToleranceSeconds: 30,
    keys: { kind: 'jwks', jwks: { keys: [{ ...esJwk }, { ...rsaJwk }, { ...edJwk }] } },
    ...overrides,
  };
}

interface MintOptions {
  alg?: string;
  key?: CryptoKey | Uint8Array;
  kid?: string | undefined;
  /** Claims to drop from the defaults (iss, aud, sub, exp). */
  omit?: string[];
}

/** A token signed with the ES256 key `k1` unless told otherwise; iss/aud/sub/exp filled in. */
async function mint(claims: JWTPayload = {}, options: MintOptions = {}): Promise<string> {
  const alg = options.alg ?? 'ES256';
  const kid = 'kid' in options ? options.kid : alg === 'ES256' ? 'k1' : alg === 'RS256' ? 'r1' : 'e1';
  const defaults: JWTPayload = { iss: ISSUER, aud: AUDIENCE, sub: 'svc-1', exp: now() + 300, iat: now() };
  for (const name of options.omit ?? []) delete defaults[name];
  const key = options.key ?? (alg === 'ES256' ? es.privateKey : alg === 'RS256' ? rsa.privateKey : ed.privateKey);
  return new SignJWT({ ...defaults, ...claims })
    .setProtectedHeader({ alg, ...(kid !== undefined && { kid }) })
    .sign(key);
}

async function failure(auth: JwtAuthenticator, token: string): Promise<JwtFailure | 'ok'> {
  const verified = await auth.verify(token);
  return verified.ok ? 'ok' : verified.failure;
}

/** `{ sub: 'agent-1', act: { sub: 'agent-2', act: … } }`, `depth` levels deep. */
function actChain(depth: number): Record<string, unknown> {
  let act: Record<string, unknown> | undefined;
  for (let level = depth; level >= 1; level--) act = { sub: `agent-${level}`, ...(act !== undefined && { act }) };
  return act ?? {};
}

before(async () => {
  es = await generateKeyPair('ES256', { extractable: true });
  esOther = await generateKeyPair('ES256', { extractable: true });
  rsa = await generateKeyPair('RS256', { extractable: true });
  rsaPss = await importPKCS8(await exportPKCS8(rsa.privateKey), 'PS256');
  ed = await generateKeyPair('EdDSA', { extractable: true });
  esJwk = { ...(await exportJWK(es.publicKey)), kid: 'k1', use: 'sig' };
  rsaJwk = { ...(await exportJWK(rsa.publicKey)), kid: 'r1' };
  edJwk = { ...(await exportJWK(ed.publicKey)), kid: 'e1' };
});

describe('JwtAuthenticator: verification', () => {
  it('admits a good token as a service principal', async () => {
    const auth = new JwtAuthenticator(settings());
    const verified = await auth.verify(await mint({ sub: 'svc-1' }));
    assert.ok(verified.ok);
    assert.deepEqual(
      { ...verified.principal },
      { kind: 'service', clientId: ISSUER, subject: 'svc-1', key: `service:https%3A//idp.example::svc-1` },
    );
  });

  it('verifies every configured key type (ES256, RS256, EdDSA)', async () => {
    const auth = new JwtAuthenticator(settings());
    for (const alg of ['ES256', 'RS256', 'EdDSA']) assert.equal(await failure(auth, await mint({}, { alg })), 'ok');
  });

  it('takes the client id from azp, else client_id, else the issuer', async () => {
    const auth = new JwtAuthenticator(settings());
    const clientOf = async (claims: JWTPayload) => {
      const verified = await auth.verify(await mint(claims));
      assert.ok(verified.ok);
      return verified.principal.clientId;
    };
    assert.equal(await clientOf({ azp: 'app-1', client_id: 'app-2' }), 'app-1');
    assert.equal(await clientOf({ client_id: 'app-2' }), 'app-2');
    assert.equal(await clientOf({}), ISSUER);
  });

  it('refuses a client id claim that is present but not a string, never falling back to the next one or the issuer', async () => {
    const auth = new JwtAuthenticator(settings());
    for (const value of [7, null, true, ['app-1'], { id: 'app-1' }]) {
      for (const claims of [
        { azp: value },
        { client_id: value },
        { azp: value, client_id: 'app-2' },
        { azp: 'app-1', client_id: value },
      ]) {
        assert.equal(
          await failure(auth, await mint(claims as JWTPayload)),
          'invalid_client_id',
          JSON.stringify(claims),
        );
      }
    }
  });

  it('refuses an issuer or audience that is not a string (or an array of strings)', async () => {
    const auth = new JwtAuthenticator(settings());
    assert.equal(await failure(auth, await mint({ iss: [ISSUER] as never })), 'wrong_issuer');
    assert.equal(await failure(auth, await mint({ iss: { iss: ISSUER } as never })), 'wrong_issuer');
    assert.equal(await failure(auth, await mint({ aud: 7 as never })), 'wrong_audience');
    assert.equal(await failure(auth, await mint({ aud: [AUDIENCE, 7] as never })), 'invalid_claim');
    assert.equal(await failure(auth, await mint({ aud: [AUDIENCE, null] as never })), 'invalid_claim');
  });

  it('refuses an iat in the future beyond the clock tolerance (jose checks iat only with maxTokenAge)', async () => {
    const auth = new JwtAuthenticator(settings());
    assert.equal(await failure(auth, await mint({ iat: now() + 3600, exp: now() + 7200 })), 'issued_in_future');
    assert.equal(await failure(auth, await mint({ iat: now() + 60 })), 'issued_in_future');
    // Within the tolerance (30 s) a clock a little ahead is fine; with 0 s it is not.
    assert.equal(await failure(auth, await mint({ iat: now() + 10 })), 'ok');
    assert.equal(
      await failure(new JwtAuthenticator(settings({ clockToleranceSeconds: 0 })), await mint({ iat: now() + 10 })),
      'issued_in_future',
    );
    assert.equal(await failure(auth, await mint({ iat: 'now' as never })), 'invalid_claim');
    assert.equal(await failure(auth, await mint({}, { omit: ['iat'] })), 'ok');
  });

  it('logs the failure of a refused token (the code only, never the token)', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = {
      info: () => undefined,
      warn: (fields: Record<string, unknown>) => lines.push(fields),
      error: () => undefined,
    };
    const auth = new JwtAuthenticator(settings(), { logger });
    const token = await mint({ azp: 42 });
    assert.deepEqual(await auth.authenticate(token, 'echo'), { ok: false, status: 401, reason: 'invalid_credentials' });
    assert.deepEqual(lines, [{ event: 'jwt_refused', failure: 'invalid_client_id' }]);
    assert.ok(!JSON.stringify(lines).includes(token));
  });

  it('refuses an expired token, beyond the clock tolerance', async () => {
    const auth = new JwtAuthenticator(settings());
    assert.equal(await failure(auth, await mint({ exp: now() - 120 })), 'expired');
  });

  it('honours the clock tolerance (a token expired 5 s ago passes with 30 s, fails with 0 s)', async () => {
    const token = await mint({ exp: now() - 5 });
    assert.equal(await failure(new JwtAuthenticator(settings()), token), 'ok');
    assert.equal(await failure(new JwtAuthenticator(settings({ clockToleranceSeconds: 0 })), token), 'expired');
  });

  it('refuses a token that is not yet valid', async () => {
    const auth = new JwtAuthenticator(settings());
    assert.equal(await failure(auth, await mint({ nbf: now() + 120 })), 'not_yet_valid');
  });

  it('refuses a token without expiry', async () => {
    const auth = new JwtAuthenticator(settings());
    assert.equal(await failure(auth, await mint({}, { omit: ['exp'] })), 'missing_claim');
  });

  it('refuses a wrong or missing issuer', async () => {
    const auth = new JwtAuthenticator(settings());
    assert.equal(await failure(auth, await mint({ iss: 'https://evil.example' })), 'wrong_issuer');
    assert.equal(await failure(auth, await mint({ iss: `${ISSUER}/` })), 'wrong_issuer');
    assert.equal(await failure(auth, await mint({}, { omit: ['iss'] })), 'missing_claim');
  });

  it('refuses a wrong or missing audience, and accepts the audience inside an array', async () => {
    const auth = new JwtAuthenticator(settings());
    assert.equal(await failure(auth, await mint({ aud: 'other-service' })), 'wrong_audience');
    assert.equal(await failure(auth, await mint({}, { omit: ['aud'] })), 'missing_claim');
    assert.equal(await failure(auth, await mint({ aud: ['other', AUDIENCE] })), 'ok');
  });

  it('refuses HS256 (an HMAC secret is not one of the pinned algorithms)', async () => {
    const auth = new JwtAuthenticator(settings());
    const secret = new TextEncoder().encode('a-shared-secret-that-nobody-configured');
    assert.equal(await failure(auth, await mint({}, { alg: 'HS256', key: secret })), 'alg_not_allowed');
  });

  it('refuses alg "none"', async () => {
    const auth = new JwtAuthenticator(settings());
    const payload = { iss: ISSUER, aud: AUDIENCE, sub: 'svc-1', exp: now() + 300 };
    const header = base64url.encode(JSON.stringify({ alg: 'none' }));
    const body = base64url.encode(JSON.stringify(payload));
    assert.equal(await failure(auth, `${header}.${body}.`), 'alg_not_allowed');
    assert.equal(await failure(auth, `${header}.${body}.c2ln`), 'alg_not_allowed');
  });

  it('refuses an algorithm the key supports but the configuration does not allow', async () => {
    // The RSA key is in the JWKS and signs correctly: only the pinned list stands in the way.
    const auth = new JwtAuthenticator(settings({ algorithms: ['ES256'] }));
    assert.equal(await failure(auth, await mint({}, { alg: 'RS256' })), 'alg_not_allowed');
  });

  it('refuses a bad signature: another key under the same kid, and a tampered payload', async () => {
    const auth = new JwtAuthenticator(settings());
    assert.equal(await failure(auth, await mint({}, { key: esOther.privateKey })), 'bad_signature');
    const [header, , signature] = (await mint({ sub: 'svc-1' })).split('.');
    const forged = base64url.encode(JSON.stringify({ iss: ISSUER, aud: AUDIENCE, sub: 'admin', exp: now() + 300 }));
    assert.equal(await failure(auth, `${header}.${forged}.${signature}`), 'bad_signature');
  });

  it('refuses a kid that is not in the key set', async () => {
    const auth = new JwtAuthenticator(settings());
    assert.equal(await failure(auth, await mint({}, { kid: 'unknown' })), 'no_matching_key');
  });

  it('tries each matching key when a token has no kid and several keys fit (key rotation)', async () => {
    const otherJwk = { ...(await exportJWK(esOther.publicKey)) };
    const noKids = settings({
      keys: { kind: 'jwks', jwks: { keys: [{ ...otherJwk }, { ...esJwk, kid: undefined }] } },
    });
    const auth = new JwtAuthenticator(noKids);
    assert.equal(await failure(auth, await mint({}, { kid: undefined })), 'ok');
    const stranger = await generateKeyPair('ES256');
    assert.equal(await failure(auth, await mint({}, { kid: undefined, key: stranger.privateKey })), 'bad_signature');
    // A real failure of the token (not of the key) is reported as such, not as a signature problem.
    assert.equal(await failure(auth, await mint({ exp: now() - 600 }, { kid: undefined })), 'expired');
  });

  it('refuses garbage without throwing', async () => {
    const auth = new JwtAuthenticator(settings());
    for (const token of [
      '',
      'a.b.c',
      'a.b',
      '...',
      `${base64url.encode('{"alg":"ES256"}')}.e30.`,
      'x'.repeat(20_000),
    ]) {
      const verified = await auth.verify(token);
      assert.equal(verified.ok, false);
    }
  });

  it('refuses a malformed JWKS at construction', () => {
    assert.throws(
      () => new JwtAuthenticator(settings({ keys: { kind: 'jwks', jwks: { keys: 'nope' as never } } })),
      JwtConfigError,
    );
  });
});

describe('JwtAuthenticator: PEM keys', () => {
  it('verifies with a PEM SPKI key, imported for the token header algorithm', async () => {
    const pem = await exportSPKI(rsa.publicKey);
    const auth = new JwtAuthenticator(settings({ algorithms: ['RS256', 'PS256'], keys: { kind: 'pem', pem } }));
    assert.equal(await failure(auth, await mint({}, { alg: 'RS256', kid: undefined })), 'ok');
    assert.equal(await failure(auth, await mint({}, { alg: 'PS256', kid: undefined, key: rsaPss })), 'ok');
  });

  it('refuses an algorithm that the PEM key supports but the configuration does not allow', async () => {
    const pem = await exportSPKI(rsa.publicKey);
    const auth = new JwtAuthenticator(settings({ algorithms: ['RS256'], keys: { kind: 'pem', pem } }));
    const token = await mint({}, { alg: 'PS256', kid: undefined, key: rsaPss });
    assert.equal(await failure(auth, token), 'alg_not_allowed');
  });

  it('uses a PEM key only for the allowed algorithms that fit its type', async () => {
    // ES256 is allowed, but the key is RSA: the token is refused as a disallowed algorithm,
    // never handed to importSPKI with an algorithm the key cannot have.
    const pem = await exportSPKI(rsa.publicKey);
    const auth = new JwtAuthenticator(settings({ algorithms: ['RS256', 'ES256'], keys: { kind: 'pem', pem } }));
    assert.equal(await failure(auth, await mint({}, { alg: 'ES256', kid: undefined })), 'alg_not_allowed');
  });

  it('refuses HS256 signed with the public key text as the secret (algorithm confusion)', async () => {
    const pem = await exportSPKI(rsa.publicKey);
    const auth = new JwtAuthenticator(settings({ keys: { kind: 'pem', pem } }));
    const token = await mint({}, { alg: 'HS256', kid: undefined, key: new TextEncoder().encode(pem) });
    assert.equal(await failure(auth, token), 'alg_not_allowed');
  });

  it('refuses a token signed by another key', async () => {
    const pem = await exportSPKI(es.publicKey);
    const auth = new JwtAuthenticator(settings({ keys: { kind: 'pem', pem } }));
    assert.equal(await failure(auth, await mint({}, { key: esOther.privateKey, kid: undefined })), 'bad_signature');
  });

  it('fails at construction when the key cannot verify any allowed algorithm, or is not PEM', async () => {
    const pem = await exportSPKI(es.publicKey);
    assert.throws(
      () => new JwtAuthenticator(settings({ algorithms: ['RS256'], keys: { kind: 'pem', pem } })),
      JwtConfigError,
    );
    assert.throws(
      () => new JwtAuthenticator(settings({ keys: { kind: 'pem', pem: '-----BEGIN PUBLIC KEY-----\nnope\n' } })),
      JwtConfigError,
    );
  });
});

describe('JwtAuthenticator: key files through the configuration loader', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'airlock-jwt-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  function configWith(keyLine: string): JwtSettings {
    const config = parseConfig(`
agents:
  - { slug: echo, name: Echo, description: d, skills: [{ id: s, name: s, description: d }], backend: { type: echo } }
auth:
  jwt:
    issuer: ${ISSUER}
    audience: ${AUDIENCE}
    ${keyLine}
`);
    assert.ok(config.jwt !== undefined);
    return config.jwt;
  }

  it('reads a JWKS file', async () => {
    const file = join(dir, 'jwks.json');
    writeFileSync(file, JSON.stringify({ keys: [esJwk, rsaJwk] }));
    const auth = new JwtAuthenticator(configWith(`jwksFile: ${JSON.stringify(file)}`));
    assert.equal(await failure(auth, await mint({ scope: 'a2a:echo' })), 'ok');
    assert.equal(await failure(auth, await mint({}, { key: esOther.privateKey })), 'bad_signature');
  });

  it('reads a PEM public key file', async () => {
    const file = join(dir, 'key.pem');
    writeFileSync(file, await exportSPKI(ed.publicKey));
    const auth = new JwtAuthenticator(configWith(`publicKeyFile: ${JSON.stringify(file)}`));
    assert.equal(await failure(auth, await mint({}, { alg: 'EdDSA', kid: undefined })), 'ok');
    assert.equal(await failure(auth, await mint({}, { alg: 'ES256', kid: undefined })), 'alg_not_allowed');
  });
});

describe('JwtAuthenticator: principals', () => {
  it('makes a delegated principal from act: subject is the user, acting agent is act.sub', async () => {
    const auth = new JwtAuthenticator(settings());
    const verified = await auth.verify(await mint({ sub: 'alice', azp: 'app', act: { sub: 'agent-7' } }));
    assert.ok(verified.ok);
    assert.deepEqual(
      { ...verified.principal },
      {
        kind: 'delegated',
        clientId: 'app',
        subject: 'alice',
        actingAgent: 'agent-7',
        key: 'delegated:app:agent-7:alice',
      },
    );
  });

  it('takes the outermost act.sub as the acting agent of a nested chain', async () => {
    const auth = new JwtAuthenticator(settings());
    const verified = await auth.verify(await mint({ sub: 'alice', act: actChain(3) }));
    assert.ok(verified.ok);
    assert.equal(verified.principal.actingAgent, 'agent-1');
  });

  it(`accepts a chain of ${MAX_ACTOR_DEPTH} actors and refuses a deeper one`, async () => {
    const auth = new JwtAuthenticator(settings());
    assert.equal(await failure(auth, await mint({ act: actChain(MAX_ACTOR_DEPTH) })), 'ok');
    assert.equal(await failure(auth, await mint({ act: actChain(MAX_ACTOR_DEPTH + 1) })), 'actor_chain_too_deep');
  });

  it('refuses an act claim that is not an actor anywhere in the chain', async () => {
    const auth = new JwtAuthenticator(settings());
    for (const act of [
      null,
      'agent',
      ['agent'],
      {},
      { sub: 7 },
      { sub: '' },
      { sub: 'a', act: { iss: 'x' } },
      { sub: 'a', act: null },
    ]) {
      assert.equal(await failure(auth, await mint({ act })), 'invalid_actor', JSON.stringify(act));
    }
  });

  it('refuses a subject that is missing, not a string, empty, too long or ill-formed', async () => {
    const auth = new JwtAuthenticator(settings());
    assert.equal(await failure(auth, await mint({}, { omit: ['sub'] })), 'missing_claim');
    for (const sub of [7, '', 'x'.repeat(257), 'bad\ud800']) {
      assert.equal(await failure(auth, await mint({ sub: sub as string })), 'invalid_subject', String(sub).slice(0, 8));
    }
    assert.equal(await failure(auth, await mint({ sub: 'x'.repeat(256) })), 'ok');
  });

  it('refuses an oversized client id rather than falling back to the issuer', async () => {
    const auth = new JwtAuthenticator(settings());
    assert.equal(await failure(auth, await mint({ azp: 'x'.repeat(257) })), 'invalid_client_id');
    assert.equal(await failure(auth, await mint({ client_id: '' })), 'invalid_client_id');
  });

  it('gives principals that differ in any part distinct keys, even with ":" inside the parts', async () => {
    const auth = new JwtAuthenticator(settings());
    const keyOf = async (claims: JWTPayload) => {
      const verified = await auth.verify(await mint(claims));
      assert.ok(verified.ok);
      return verified.principal.key;
    };
    const keys = [
      await keyOf({ azp: 'app', sub: 'x:y' }),
      await keyOf({ azp: 'app:x', sub: 'y' }),
      await keyOf({ azp: 'app', sub: 'u', act: { sub: 'a:b' } }),
      await keyOf({ azp: 'app', sub: 'b:u', act: { sub: 'a' } }),
      await keyOf({ azp: 'app:a', sub: 'u', act: { sub: 'b' } }),
      await keyOf({ azp: 'app', sub: 'a%3Ab', act: { sub: 'u' } }),
      await keyOf({ azp: 'app', sub: 'a:b', act: { sub: 'u' } }),
    ];
    assert.equal(new Set(keys).size, keys.length, keys.join('\n'));
    for (const key of keys) assert.equal(key.split(':').length, 4);
  });

  it('never makes a client principal, so a JWT can never share tasks with a configured client', async () => {
    const auth = new JwtAuthenticator(settings());
    const verified = await auth.verify(await mint({ azp: 'a', sub: 'a' }));
    assert.ok(verified.ok);
    assert.equal(verified.principal.kind, 'service');
    assert.notEqual(verified.principal.key, 'client:a::a');
  });
});

describe('JwtAuthenticator: agent grants', () => {
  it('grants agents from a space-separated scope string', async () => {
    const auth = new JwtAuthenticator(settings());
    const token = await mint({ scope: 'openid a2a:echo  a2a:writer profile' });
    assert.equal((await auth.authenticate(token, 'echo')).ok, true);
    assert.equal((await auth.authenticate(token, 'writer')).ok, true);
  });

  it('grants agents from an array claim of strings', async () => {
    const auth = new JwtAuthenticator(settings({ agentsClaim: 'agents' }));
    const token = await mint({ agents: ['openid', 'a2a:echo'] });
    assert.equal((await auth.authenticate(token, 'echo')).ok, true);
  });

  it('refuses (401, not 403) an agents claim that is not a string or an array of strings', async () => {
    const auth = new JwtAuthenticator(settings({ agentsClaim: 'agents' }));
    for (const agents of [[7, 'a2a:echo'], ['a2a:echo', null], [['a2a:echo']], 7, { 'a2a:echo': true }, null, true]) {
      const token = await mint({ agents });
      assert.equal(await failure(auth, token), 'invalid_agents_claim', JSON.stringify(agents));
      assert.deepEqual(await auth.authenticate(token, 'echo'), {
        ok: false,
        status: 401,
        reason: 'invalid_credentials',
      });
    }
    // Absent: no grants, so a 403 for a valid token.
    assert.equal(((await auth.authenticate(await mint({}), 'echo')) as { status?: number }).status, 403);
  });

  it('refuses an agent the token does not grant with 403 and the principal', async () => {
    const auth = new JwtAuthenticator(settings());
    const outcome = await auth.authenticate(await mint({ sub: 'svc-9', scope: 'a2a:echo' }), 'writer');
    assert.equal(!outcome.ok && outcome.status, 403);
    assert.equal(!outcome.ok && outcome.status === 403 && outcome.principal.subject, 'svc-9');
  });

  it('grants only exact prefix + slug entries', async () => {
    const auth = new JwtAuthenticator(settings());
    for (const scope of ['echo', 'a2a:', 'a2a:echo2', 'a2a:ech', 'x-a2a:echo', 'A2A:echo', 'a2a:echo,a2a:other']) {
      const outcome = await auth.authenticate(await mint({ scope }), 'echo');
      assert.equal(!outcome.ok && outcome.status, 403, scope);
    }
  });

  it('reads the grants from the configured claim only', async () => {
    const auth = new JwtAuthenticator(settings({ agentsClaim: 'agents' }));
    const outcome = await auth.authenticate(await mint({ scope: 'a2a:echo' }), 'echo');
    assert.equal(!outcome.ok && outcome.status, 403);
  });

  it('gives 401, never 403, for a token that fails verification', async () => {
    const auth = new JwtAuthenticator(settings());
    const outcome = await auth.authenticate(await mint({ scope: 'a2a:echo', exp: now() - 600 }), 'echo');
    assert.deepEqual(outcome, { ok: false, status: 401, reason: 'invalid_credentials' });
  });
});

describe('looksLikeJwt', () => {
  it('tells JWT-shaped values from client tokens', async () => {
    assert.equal(looksLikeJwt(await mint()), true);
    assert.equal(looksLikeJwt(`${base64url.encode('{"alg":"none"}')}.e30.`), true);
    for (const value of [
      'a-random-client-token-0123456789abcdef',
      'a.b.c',
      `${base64url.encode('{"typ":"JWT"}')}.e30.sig`,
      `${base64url.encode('["alg"]')}.e30.sig`,
      `${base64url.encode('{"alg":"ES256"}')}.e30.sig.extra`,
      `${base64url.encode('{"alg":"ES256"}')}.e30`,
      `.e30.sig`,
      `${base64url.encode('{"alg":"ES256"}')}=.e30.sig`,
    ]) {
      assert.equal(looksLikeJwt(value), false, value);
    }
  });
});
