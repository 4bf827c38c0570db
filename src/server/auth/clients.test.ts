import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from '../../config/load.js';
import { bearerToken, ClientAuthenticator } from './clients.js';

const TOKEN = 'auth-test-token-0123456789abcdefghijklmn';
const ANON_TOKEN = 'auth-test-token-for-the-client-named-anon';
const config = parseConfig(
  `
agents:
  - { slug: open, name: Open, description: d, skills: [{ id: s, name: s, description: d }], backend: { type: echo }, anonymousLoopback: true }
  - { slug: closed, name: Closed, description: d, skills: [{ id: s, name: s, description: d }], backend: { type: echo } }
clients:
  - { id: a, token: "\${TOKEN}", agents: [open] }
  - { id: anonymous, token: "\${ANON_TOKEN}", agents: [open, closed] }
`,
  { TOKEN, ANON_TOKEN },
);
const auth = new ClientAuthenticator(config.clients);
const withApiKey = new ClientAuthenticator(config.clients, { apiKeyHeader: true });

describe('ClientAuthenticator', () => {
  it('admits a known token for an agent the client lists', () => {
    const outcome = auth.authenticate(`Bearer ${TOKEN}`, 'open', false, false);
    assert.ok(outcome.ok);
    assert.equal(outcome.principal.key, 'client:a::a');
  });

  it('takes the credentials as an object too', () => {
    const outcome = auth.authenticate({ authorization: `Bearer ${TOKEN}` }, 'open', false, false);
    assert.ok(outcome.ok);
    assert.equal(outcome.principal.key, 'client:a::a');
  });

  it('refuses an agent the client does not list with 403', () => {
    const outcome = auth.authenticate(`Bearer ${TOKEN}`, 'closed', true, false);
    assert.equal(outcome.ok, false);
    assert.equal(!outcome.ok && outcome.status, 403);
  });

  for (const header of [`Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, `Basic ${TOKEN}`, 'Bearer', TOKEN, '']) {
    it(`refuses ${JSON.stringify(header.slice(0, 24))}… with 401`, () => {
      const outcome = auth.authenticate(header, 'open', true, true);
      // An empty header counts as no header, which the anonymous rule may admit; anything else never is.
      if (header === '') return;
      assert.equal(outcome.ok, false);
      assert.equal(!outcome.ok && outcome.status, 401);
    });
  }

  it('admits no credentials only for an anonymous-loopback agent, and only from loopback', () => {
    assert.equal(auth.authenticate(undefined, 'open', true, true).ok, true);
    assert.equal(auth.authenticate(undefined, 'open', false, true).ok, false);
    assert.equal(auth.authenticate(undefined, 'closed', true, false).ok, false);
    assert.equal(auth.authenticate({}, 'open', false, true).ok, false);
  });

  it('keeps anonymous callers apart from a client that happens to be named "anonymous"', () => {
    const anonymous = auth.authenticate(undefined, 'open', true, true);
    const named = auth.authenticate(`Bearer ${ANON_TOKEN}`, 'open', false, false);
    assert.ok(anonymous.ok && named.ok);
    assert.notEqual(anonymous.principal.key, named.principal.key);
  });

  it('hands out frozen principals, so that one request cannot change the next caller', () => {
    const outcome = auth.authenticate(`Bearer ${TOKEN}`, 'open', false, false);
    assert.ok(outcome.ok);
    assert.ok(Object.isFrozen(outcome.principal));
    assert.ok(Object.isFrozen(outcome));
  });
});

describe('ClientAuthenticator with X-API-Key', () => {
  it('ignores X-API-Key when the option is off: 401 missing_credentials', () => {
    const outcome = auth.authenticate({ apiKey: TOKEN }, 'open', false, false);
    assert.deepEqual(outcome, { ok: false, status: 401, reason: 'missing_credentials' });
  });

  it('ignores X-API-Key when the option is off, so the anonymous rule still applies', () => {
    const outcome = auth.authenticate({ apiKey: 'not-a-token' }, 'open', true, true);
    assert.ok(outcome.ok);
    assert.equal(outcome.principal.clientId, '*anonymous');
  });

  it('accepts a client token in X-API-Key when the option is on', () => {
    const outcome = withApiKey.authenticate({ apiKey: TOKEN }, 'open', false, false);
    assert.ok(outcome.ok);
    assert.equal(outcome.principal.key, 'client:a::a');
  });

  it('applies the client agent list to an API key too (403)', () => {
    const outcome = withApiKey.authenticate({ apiKey: TOKEN }, 'closed', false, false);
    assert.equal(!outcome.ok && outcome.status, 403);
  });

  for (const apiKey of [`${TOKEN}x`, `Bearer ${TOKEN}`, `${TOKEN} ${TOKEN}`, `${TOKEN}, ${TOKEN}`, ' ']) {
    it(`refuses the API key ${JSON.stringify(apiKey.slice(0, 24))}… with 401 invalid_credentials`, () => {
      const outcome = withApiKey.authenticate({ apiKey }, 'open', true, true);
      assert.deepEqual(outcome, { ok: false, status: 401, reason: 'invalid_credentials' });
    });
  }

  it('lets Authorization win over X-API-Key: a wrong Authorization is refused even with a good key', () => {
    const outcome = withApiKey.authenticate({ authorization: `Bearer ${TOKEN}x`, apiKey: TOKEN }, 'open', false, false);
    assert.deepEqual(outcome, { ok: false, status: 401, reason: 'invalid_credentials' });
    const malformed = withApiKey.authenticate({ authorization: `Basic ${TOKEN}`, apiKey: TOKEN }, 'open', false, false);
    assert.equal(malformed.ok, false);
  });

  it('lets Authorization win over X-API-Key: the principal is the Authorization client', () => {
    const outcome = withApiKey.authenticate(
      { authorization: `Bearer ${ANON_TOKEN}`, apiKey: TOKEN },
      'closed',
      false,
      false,
    );
    assert.ok(outcome.ok);
    assert.equal(outcome.principal.clientId, 'anonymous');
  });

  it('treats an empty X-API-Key as absent', () => {
    assert.deepEqual(withApiKey.authenticate({ apiKey: '' }, 'open', false, false), {
      ok: false,
      status: 401,
      reason: 'missing_credentials',
    });
  });
});

describe('bearerToken', () => {
  it('reads a bearer token, whatever the scheme case', () => {
    assert.equal(bearerToken('Bearer abc'), 'abc');
    assert.equal(bearerToken('bearer  abc '), 'abc');
  });

  it('refuses other schemes, inner white space and oversized tokens', () => {
    assert.equal(bearerToken('Basic abc'), undefined);
    assert.equal(bearerToken('Bearer a b'), undefined);
    assert.equal(bearerToken(`Bearer ${'a'.repeat(4097)}`), undefined);
    assert.equal(bearerToken(undefined), undefined);
  });
});
