import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { describe, it } from 'node:test';
import { parseRegistry, RegistryError } from '../registry.js';

const SECRET = 'client-secret-0123456789';
const env = { AIRLOCK_SECRET_CLIENT: SECRET, AIRLOCK_SECRET_USER: 'user-token-0123456789' };

function registry(auth: string): string {
  return `agents:
  - name: travel
    card_url: https://travel.example/.well-known/agent-card.json
    description: Travel.
    effect: read_only
    auth:
${auth
  .trim()
  .split('\n')
  .map((line) => `      ${line}`)
  .join('\n')}
`;
}

const cc = (extra = '', endpoint = 'https://idp.example/token') => `oauth2_client_credentials:
  token_endpoint: ${endpoint}
  client_id: airlock
  client_secret_env: AIRLOCK_SECRET_CLIENT
  scopes: [a2a.send]
${extra}`;

function problems(text: string, environment: NodeJS.ProcessEnv = env): string[] {
  try {
    parseRegistry(text, environment);
  } catch (error) {
    assert.ok(error instanceof RegistryError);
    return error.problems.map((p) => `${p.key}: ${p.problem}`);
  }
  return [];
}

describe('registry auth kinds', () => {
  it('reads client credentials; the secret is never printed', () => {
    const entry = parseRegistry(registry(cc('  audience: https://travel.example')), env).get('travel');
    assert.equal(entry.oauth?.kind, 'oauth2_client_credentials');
    assert.equal(entry.oauth?.tokenEndpoint, 'https://idp.example/token');
    assert.deepEqual(entry.oauth?.scopes, ['a2a.send']);
    assert.equal(entry.auth, undefined);
    for (const shown of [JSON.stringify(entry), inspect(entry, { depth: 5 }), String(entry.oauth?.clientSecret)]) {
      assert.ok(!shown.includes(SECRET), shown);
    }
  });

  it('reads a token exchange with its subject token', () => {
    const text = registry(
      cc('  subject_token_env: AIRLOCK_SECRET_USER').replace('oauth2_client_credentials', 'token_exchange'),
    );
    const entry = parseRegistry(text, env).get('travel');
    assert.equal(entry.oauth?.kind, 'token_exchange');
    assert.equal(entry.oauth?.subjectToken?.env, 'AIRLOCK_SECRET_USER');
  });

  it('reads a JWT bearer grant: its assertion key checked, the issuer defaulting to the client id', () => {
    const key = '{"kty":"EC","crv":"P-256","x":"x","y":"y","d":"d-part-of-the-key"}';
    const text = registry(
      cc('  assertion_key_env: AIRLOCK_SECRET_GRANT\n  assertion_subject: bob').replace(
        'oauth2_client_credentials',
        'jwt_bearer',
      ),
    );
    const entry = parseRegistry(text, { ...env, AIRLOCK_SECRET_GRANT: key }).get('travel');
    assert.equal(entry.oauth?.kind, 'jwt_bearer');
    assert.deepEqual([entry.oauth?.assertion?.subject, entry.oauth?.assertion?.issuer], ['bob', 'airlock']);
    assert.ok(!JSON.stringify(entry).includes('d-part-of-the-key'));
    assert.deepEqual(problems(text, { ...env, AIRLOCK_SECRET_GRANT: 'not-a-json-web-key' }), [
      'auth.jwt_bearer.assertion_key_env: environment variable AIRLOCK_SECRET_GRANT must hold a private JWK as JSON',
    ]);
  });

  it('bearer_env still works as before', () => {
    const entry = parseRegistry(registry('bearer_env: AIRLOCK_SECRET_CLIENT'), env).get('travel');
    assert.equal(entry.auth?.env, 'AIRLOCK_SECRET_CLIENT');
    assert.equal(entry.oauth, undefined);
  });

  it('refuses two kinds, or none', () => {
    assert.deepEqual(problems(registry(`bearer_env: AIRLOCK_SECRET_CLIENT\n${cc()}`)), [
      'auth: must name exactly one of bearer_env, oauth2_client_credentials, token_exchange, jwt_bearer',
    ]);
    assert.deepEqual(problems(registry('from_card: false')), [
      'auth: must name exactly one of bearer_env, oauth2_client_credentials, token_exchange, jwt_bearer',
    ]);
  });

  it('needs exactly one client authentication', () => {
    const none = cc().replace('  client_secret_env: AIRLOCK_SECRET_CLIENT\n', '');
    assert.deepEqual(problems(registry(none)), [
      'auth.oauth2_client_credentials.client_secret_env: name exactly one of client_secret_env, client_assertion_key_env',
    ]);
  });

  it('names a missing secret, a short one, and a bad assertion key, never their values', () => {
    assert.deepEqual(problems(registry(cc()), {}), [
      'auth.oauth2_client_credentials.client_secret_env: environment variable AIRLOCK_SECRET_CLIENT is not set',
    ]);
    assert.match(problems(registry(cc()), { AIRLOCK_SECRET_CLIENT: 'short' })[0]!, /at least 8 characters/);
    const jwt = cc().replace('client_secret_env', 'client_assertion_key_env');
    const found = problems(registry(jwt), { AIRLOCK_SECRET_CLIENT: '{"kty":"EC","crv":"P-256","x":"a","y":"b"}' });
    assert.match(found[0]!, /client_assertion_key_env: environment variable AIRLOCK_SECRET_CLIENT must hold a private/);
  });

  it('holds the token endpoint to the registry URL rules and the address policy', () => {
    assert.deepEqual(problems(registry(cc('', 'http://idp.example/token'))), [
      'auth.oauth2_client_credentials.token_endpoint: must be https (plain http is allowed only to a loopback host)',
    ]);
    assert.deepEqual(problems(registry(cc('', 'https://169.254.169.254/token'))), [
      'auth.oauth2_client_credentials.token_endpoint: host 169.254.169.254 is in a blocked range (metadata)',
    ]);
    assert.match(
      problems(registry(cc('', 'https://10.0.0.5/token')))[0]!,
      /token_endpoint: host 10\.0\.0\.5 is a private address/,
    );
    assert.match(
      problems(registry(cc('', 'https://u:p@idp.example/token')))[0]!,
      /token_endpoint: must not carry credentials/,
    );
  });

  it('from_card needs card_scheme and an OAuth kind; card_scheme needs from_card', () => {
    assert.deepEqual(problems(registry(`from_card: true\n${cc()}`)), [
      "auth.card_scheme: is required with from_card: the card's name of the scheme this entry supplies",
    ]);
    assert.deepEqual(problems(registry(`card_scheme: oauth\n${cc()}`)), ['auth.card_scheme: needs from_card: true']);
    assert.deepEqual(problems(registry('from_card: true\ncard_scheme: oauth\nbearer_env: AIRLOCK_SECRET_CLIENT')), [
      'auth.from_card: needs an OAuth kind (oauth2_client_credentials, token_exchange or jwt_bearer)',
    ]);
  });

  it('unknown keys and a secret variable outside AIRLOCK_SECRET_ are schema errors', () => {
    const found = problems(registry(cc('  client_secret: inline-secret-value')));
    assert.deepEqual(found, ['auth.oauth2_client_credentials.client_secret: is not a known setting']);
    const outside = problems(registry(cc().replace('AIRLOCK_SECRET_CLIENT', 'AWS_SECRET_ACCESS_KEY')));
    assert.equal(outside.length, 1);
    assert.match(outside[0]!, /^auth\.oauth2_client_credentials\.client_secret_env: /);
  });
});
