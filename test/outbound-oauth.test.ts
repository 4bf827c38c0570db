/**
 * Outbound OAuth 2.0 end to end: Airlock's outbound client, with its real guarded transport,
 * card trust and pin file, gets tokens from a real authorization server on loopback
 * (`oidc-provider`: client credentials with client_secret_basic and private_key_jwt, RFC 8693
 * token exchange, RFC 7523 JWT bearer) and calls an `@a2a-js/sdk` server whose middleware verifies every JWT against
 * the authorization server's keys (issuer, audience, expiry) and records its claims. Negative
 * cases: a card requiring a scheme the entry does not supply, a token endpoint on a forbidden
 * address (at load and at connect), a redirecting and an oversized token endpoint, an expired
 * token renewed, a 401 retried exactly once; and no token or client secret in any output.
 */
import { loadRegistryFile } from '../src/client/registry.js';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { agentsCommand } from '../src/cli/agents.js';
import type { CommandIO } from '../src/cli/registry.js';
import { sendCommand } from '../src/cli/send.js';
import { createUpstreamConnector } from '../src/client/upstream.js';
import { createOutboundClient, parseRegistry, type CallResult, type OutboundRuntime } from '../src/client/index.js';
import {
  CLIENT_SECRET,
  JWT_CLIENT_ID,
  startAuthServer,
  startFakeEndpoint,
  startPeer,
  type AuthServer,
  type Peer,
} from './helpers/oauth-server.js';

function entry(name: string, card: string, base: string, auth: string): string {
  return `  - name: ${name}
    card_url: ${base}/cards/${card}.json
    description: OAuth peer (${name}).
    effect: read_only
    max_wait_s: 5
    timeouts: { connect: 2, read: 3, total: 5 }
    auth:
${auth
  .trim()
  .split('\n')
  .map((line) => `      ${line}`)
  .join('\n')}
`;
}

function clientAuth(kind: string, tokenEndpoint: string, resource: string, extra = ''): string {
  return `${kind}:
  token_endpoint: ${tokenEndpoint}
  client_id: airlock
  client_secret_env: AIRLOCK_SECRET_CLIENT
  scopes: [a2a.send]
  resource: ${resource}
${extra}`;
}

describe('outbound OAuth 2.0 against a real authorization server and an @a2a-js/sdk server', () => {
  let peer: Peer;
  let as: AuthServer;
  let redirecting: Awaited<ReturnType<typeof startFakeEndpoint>>;
  let oversized: Awaited<ReturnType<typeof startFakeEndpoint>>;
  let dir: string;
  let registryPath: string;
  let env: Record<string, string>;
  let userToken: string;
  let client: OutboundRuntime;
  const logs: string[] = [];
  const outputs: string[] = [];

  // The commands in process (a child's start-up costs seconds); their own audit file.
  const run = async (command: (io: CommandIO) => Promise<number>, columns?: number) => {
    let stdout = '';
    let stderr = '';
    const io: CommandIO = {
      stdout: (text) => (stdout += text),
      stderr: (text) => (stderr += text),
      isTTY: false,
      env: { ...env, AIRLOCK_AUDIT_FILE: join(dir, 'cli-audit.jsonl') },
      ...(columns !== undefined && { columns }),
    };
    const code = await command(io);
    outputs.push(stdout, stderr);
    return { code, stdout, stderr };
  };

  const send = async (agent: string, message: string): Promise<CallResult> => {
    const result = await client.send({ agent, message });
    outputs.push(JSON.stringify(result));
    return result;
  };

  before(async () => {
    peer = await startPeer();
    as = await startAuthServer({ resource: `${peer.base}/` });
    peer.setKeys(as.jwks, as.issuer);
    redirecting = await startFakeEndpoint((res) => {
      res.writeHead(302, { location: `${as.tokenEndpoint}` });
      res.end();
    });
    oversized = await startFakeEndpoint((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ access_token: 'x'.repeat(200_000), token_type: 'Bearer' }));
    });
    dir = mkdtempSync(join(tmpdir(), 'airlock-oauth-'));
    userToken = await as.userToken('alice', { act: { sub: 'inbound-gateway' } });
    const resource = `${peer.base}/`;
    const yaml = [
      'agents:\n',
      entry('cc', 'open', peer.base, clientAuth('oauth2_client_credentials', as.tokenEndpoint, resource)),
      entry('cc-short', 'open', peer.base, clientAuth('oauth2_client_credentials', as.tokenEndpoint, resource)),
      entry('cc-401', 'open', peer.base, clientAuth('oauth2_client_credentials', as.tokenEndpoint, resource)),
      entry(
        'cc-jwt',
        'open',
        peer.base,
        `oauth2_client_credentials:
  token_endpoint: ${as.tokenEndpoint}
  client_id: ${JWT_CLIENT_ID}
  client_assertion_key_env: AIRLOCK_SECRET_ASSERTION
  scopes: [a2a.send]
  resource: ${resource}`,
      ),
      entry(
        'card-ok',
        'oauth',
        peer.base,
        `from_card: true\ncard_scheme: oauth\n${clientAuth('oauth2_client_credentials', as.tokenEndpoint, resource)}`,
      ),
      entry(
        'card-unknown',
        'mtls',
        peer.base,
        `from_card: true\ncard_scheme: oauth\n${clientAuth('oauth2_client_credentials', as.tokenEndpoint, resource)}`,
      ),
      entry(
        'exchange',
        'open',
        peer.base,
        clientAuth('token_exchange', as.tokenEndpoint, resource, '  subject_token_env: AIRLOCK_SECRET_USER'),
      ),
      // For delegation only: no subject_token_env, so its subject is always an inbound caller's JWT.
      entry('delegated', 'open', peer.base, clientAuth('token_exchange', as.tokenEndpoint, resource)),
      entry(
        'bearer-grant',
        'open',
        peer.base,
        clientAuth(
          'jwt_bearer',
          as.tokenEndpoint,
          resource,
          '  assertion_key_env: AIRLOCK_SECRET_GRANT\n  assertion_subject: bob',
        ),
      ),
      entry('blocked', 'open', peer.base, clientAuth('oauth2_client_credentials', 'https://idp.test/token', resource)),
      entry('redirect', 'open', peer.base, clientAuth('oauth2_client_credentials', redirecting.url, resource)),
      entry('oversized', 'open', peer.base, clientAuth('oauth2_client_credentials', oversized.url, resource)),
    ].join('');
    registryPath = join(dir, 'registry.yaml');
    writeFileSync(registryPath, yaml);
    env = {
      AIRLOCK_SECRET_CLIENT: CLIENT_SECRET,
      AIRLOCK_SECRET_ASSERTION: JSON.stringify(as.clientAssertionJwk),
      AIRLOCK_SECRET_USER: userToken,
      AIRLOCK_SECRET_GRANT: JSON.stringify(as.grantAssertionJwk),
      AIRLOCK_PINS: join(dir, 'pins.json'),
      AIRLOCK_AUDIT_FILE: join(dir, 'audit.jsonl'),
    };
    client = createOutboundClient({
      registryPath,
      env,
      log: (event, fields) => logs.push(JSON.stringify({ event, ...fields })),
      // idp.test resolves to a private address: the transport must refuse to dial it.
      resolve: async (hostname) =>
        hostname === 'idp.test' ? [{ address: '10.1.2.3', family: 4 }] : [{ address: '127.0.0.1', family: 4 }],
    });
  });

  after(async () => {
    await client?.close();
    await Promise.all([peer?.close(), as?.close(), redirecting?.close(), oversized?.close()]);
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('client credentials (client_secret_basic): the SDK server verifies the JWT; the token is cached', async () => {
    const before = as.grants.length;
    const first = await send('cc', 'hello');
    assert.equal(first.status, 'success', JSON.stringify(first));
    assert.match(first.reply, /echo: hello/);
    const claims = peer.calls.at(-1)!;
    assert.equal(claims.client_id, 'airlock');
    assert.equal(claims.scope, 'a2a.send');
    const second = await send('cc', 'again');
    assert.equal(second.status, 'success');
    assert.equal(as.grants.length - before, 1, 'one token request for two calls');
  });

  it('client credentials with a private_key_jwt client assertion', async () => {
    const result = await send('cc-jwt', 'signed');
    assert.equal(result.status, 'success', JSON.stringify(result));
    assert.equal(peer.calls.at(-1)!.client_id, JWT_CLIENT_ID);
  });

  it('token exchange: the remote sees the user as subject and the client as actor, the earlier act nested', async () => {
    const result = await send('exchange', 'as alice');
    assert.equal(result.status, 'success', JSON.stringify(result));
    const claims = peer.calls.at(-1)!;
    assert.equal(claims.sub, 'alice');
    assert.deepEqual(claims.act, { sub: 'airlock', act: { sub: 'inbound-gateway' } });
    assert.equal(as.grants.at(-1), 'urn:ietf:params:oauth:grant-type:token-exchange');
    // The user's own token went to the token endpoint only, never to the remote.
    assert.notEqual(peer.calls.at(-1)!.iss, 'https://users.test');
  });

  it('JWT bearer grant (RFC 7523): the remote sees the assertion subject', async () => {
    const result = await send('bearer-grant', 'as bob');
    assert.equal(result.status, 'success', JSON.stringify(result));
    assert.equal(peer.calls.at(-1)!.sub, 'bob');
    assert.equal(as.grants.at(-1), 'urn:ietf:params:oauth:grant-type:jwt-bearer');
  });

  it('from_card: the card requiring the entry scheme gets a token with the card scopes', async () => {
    const result = await send('card-ok', 'by card');
    assert.equal(result.status, 'success', JSON.stringify(result));
    assert.equal(peer.calls.at(-1)!.scope, 'a2a.send');
  });

  it('from_card: a card requiring a scheme the entry does not supply is refused before any token request', async () => {
    const grants = as.grants.length;
    const calls = peer.calls.length + peer.refused;
    const result = await send('card-unknown', 'hi');
    assert.equal(result.error_type, 'card_invalid');
    assert.match(result.error_message ?? '', /requires "mtls"; the entry supplies only "oauth"/);
    assert.equal(as.grants.length, grants);
    assert.equal(peer.calls.length + peer.refused, calls, 'the remote was not called');
  });

  it('a token endpoint whose name resolves to a private address is refused at connect', async () => {
    const result = await send('blocked', 'hi');
    assert.equal(result.error_type, 'address_blocked', JSON.stringify(result));
    assert.match(result.error_message ?? '', /token endpoint/);
  });

  it('a token endpoint that redirects is refused, the redirect not followed', async () => {
    const grants = as.grants.length;
    const result = await send('redirect', 'hi');
    assert.equal(result.error_type, 'redirect_refused', JSON.stringify(result));
    assert.equal(redirecting.hits(), 1);
    assert.equal(as.grants.length, grants, 'the redirect target was not asked');
  });

  it('an oversized token response is refused while reading', async () => {
    const result = await send('oversized', 'hi');
    assert.equal(result.error_type, 'response_too_large', JSON.stringify(result));
  });

  it('an expired token is renewed before use, not sent', async () => {
    as.setTtl(2);
    try {
      const grants = as.grants.length;
      const refused = peer.refused;
      assert.equal((await send('cc-short', 'one')).status, 'success');
      await new Promise((done) => setTimeout(done, 2100));
      assert.equal((await send('cc-short', 'two')).status, 'success');
      assert.equal(as.grants.length - grants, 2, 'a new token for the second call');
      assert.equal(peer.refused, refused, 'no expired token reached the remote');
    } finally {
      as.setTtl(300);
    }
  });

  it('a 401 drops the cached token and retries exactly once', async () => {
    assert.equal((await send('cc-401', 'warm')).status, 'success');
    const grants = as.grants.length;
    peer.force401 = 1;
    const renewed = await send('cc-401', 'after one 401');
    assert.equal(renewed.status, 'success', JSON.stringify(renewed));
    assert.equal(as.grants.length - grants, 1, 'a new token after the 401');

    const refused = peer.refused;
    peer.force401 = 5;
    const failed = await send('cc-401', 'always 401');
    assert.equal(failed.error_type, 'remote_auth_failed');
    assert.equal(peer.refused - refused, 2, 'the first try and exactly one retry');
    peer.force401 = 0;
  });

  it('a token the remote echoes is redacted from the reply', async () => {
    const result = await send('cc', 'leak');
    assert.equal(result.status, 'success');
    assert.match(result.reply, /your token is/);
    for (const token of as.issued) assert.ok(!result.reply.includes(token));
  });

  it('the a2a upstream connector: a client credentials token per upstream, known to the reply filter', async () => {
    const connector = createUpstreamConnector({
      registryPath,
      registry: loadRegistryFile(registryPath, env),
      pinsPath: join(dir, 'upstream-pins.json'),
      env,
    });
    try {
      const agent = connector.open('cc-jwt');
      const channel = await agent.connect(AbortSignal.timeout(5000));
      const sent = await channel.send({ text: 'leak', signal: AbortSignal.timeout(5000), timeoutMs: 5000 });
      assert.equal(sent.kind, 'message');
      const token = peer.lastToken();
      assert.equal(decodeJwt(token).client_id, JWT_CLIENT_ID);
      // The relay scrubs what it passes on of these (src/agents/upstream/reply.ts).
      assert.ok(agent.secrets.includes(token));
      const refusing = connector.open('card-unknown');
      await assert.rejects(refusing.connect(AbortSignal.timeout(5000)), (error: Error & { type?: string }) => {
        assert.equal(error.type, 'card_invalid');
        return true;
      });
    } finally {
      await connector.close();
    }
  });

  it('a token endpoint on a blocked literal address is refused at load, naming the key', () => {
    const text = `agents:\n${entry('meta', 'open', peer.base, clientAuth('oauth2_client_credentials', 'http://169.254.169.254/token', `${peer.base}/`))}`;
    assert.throws(
      () => parseRegistry(text, env),
      /agents\[0\] "meta": auth\.oauth2_client_credentials\.token_endpoint: must be https|token_endpoint: host 169\.254\.169\.254 is in a blocked range/,
    );
  });

  it('airlock agents shows each auth kind and whether a token could be had; airlock send works', async () => {
    const agents = await run((io) => agentsCommand({ json: true, registry: registryPath }, io));
    const rows = JSON.parse(agents.stdout) as { name: string; auth: { kind: string; token: string | null } }[];
    const byName = Object.fromEntries(rows.map((row) => [row.name, row.auth]));
    assert.deepEqual(byName.cc, { kind: 'oauth2_client_credentials', token: 'ok' });
    assert.deepEqual(byName.exchange, { kind: 'token_exchange', token: 'ok' });
    assert.deepEqual(byName['card-unknown'], { kind: 'oauth2_client_credentials', token: 'failed' });
    assert.deepEqual(byName.redirect, { kind: 'oauth2_client_credentials', token: 'failed' });
    const table = await run((io) => agentsCommand({ json: false, registry: registryPath }, io));
    assert.match(table.stdout, /AUTH/);
    assert.match(table.stdout, /cc-jwt .*oauth2 ok\n/);
    const sent = await run((io) =>
      sendCommand({ agent: 'exchange', text: 'from the CLI', confirm: false, json: true, registry: registryPath }, io),
    );
    assert.equal(sent.code, 0, sent.stderr);
    assert.match(sent.stdout, /echo: from the CLI/);
    assert.equal(peer.calls.at(-1)!.sub, 'alice');
  });

  it('a token_exchange entry without subject_token_env: agents shows "per caller", send refuses, nothing exchanged', async () => {
    const callsBefore = peer.calls.length;
    const agents = await run((io) => agentsCommand({ json: true, registry: registryPath }, io));
    const rows = JSON.parse(agents.stdout) as { name: string; status: string; auth: unknown }[];
    const delegated = rows.find((row) => row.name === 'delegated')!;
    assert.equal(delegated.status, 'ok', 'the card is usable; only the token waits for a caller');
    assert.deepEqual(delegated.auth, { kind: 'token_exchange', token: 'per_caller' });
    // A wide terminal, so the cell is not wrapped.
    const table = await run((io) => agentsCommand({ json: false, registry: registryPath }, io), 160);
    assert.match(table.stdout, /delegated .*exchange per caller \(delegated\)\n/);
    const grantsBeforeSend = as.grants.length;
    const sent = await run((io) =>
      sendCommand({ agent: 'delegated', text: 'no caller', confirm: false, json: true, registry: registryPath }, io),
    );
    assert.equal(sent.code, 1);
    assert.equal(sent.stdout, '');
    assert.equal(
      sent.stderr,
      'airlock: remote_auth_failed: registry entry "delegated" is for delegation (token_exchange without subject_token_env): airlock send has no caller to delegate from\n',
    );
    assert.equal(as.grants.length, grantsBeforeSend, 'send requested no token');
    assert.equal(peer.calls.length, callsBefore, 'the remote was never called');
  });

  it('no token, client secret or subject token appears in any result, log, audit row or state file', () => {
    assert.ok(as.issued.length >= 8, `tokens issued: ${as.issued.length}`);
    const files = readdirSync(dir)
      .filter((name) => name !== 'registry.yaml')
      .map((name) => {
        try {
          return readFileSync(join(dir, name), 'utf8');
        } catch {
          return '';
        }
      });
    const haystack = [...outputs, ...logs, ...files].join('\n');
    assert.ok(haystack.includes('a2a.client.send'), 'the audit rows were scanned');
    const secrets = [
      ...as.issued,
      CLIENT_SECRET,
      userToken,
      String(as.clientAssertionJwk.d),
      String(as.grantAssertionJwk.d),
    ];
    for (const secret of secrets) {
      assert.ok(!haystack.includes(secret), `a secret leaked (${secret.slice(0, 6)}…)`);
      // Nor a JWT's signature part (a token cut short).
      const signature = secret.split('.')[2];
      if (signature !== undefined) assert.ok(!haystack.includes(signature));
    }
    // The decoded claims are fine to have verified; the tokens themselves were never shown.
    assert.ok(decodeJwt(as.issued[0]!).iss === as.issuer);
  });
});
