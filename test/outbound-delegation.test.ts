/**
 * Inbound → outbound delegation end to end (issue 22, point 4): a real gateway verifies the
 * callers' JWTs against the user issuer's keys and relays to an `@a2a-js/sdk` server through its
 * `a2a` upstream backend, whose registry entry uses the token exchange grant against a real
 * authorization server (`oidc-provider`). The upstream's middleware verifies every token (issuer,
 * audience) and records its claims.
 *
 * Checked: a delegated caller (a JWT with `act`) is exchanged for a token to the upstream with
 * the user as subject and the `act` chain kept; each user gets their own token (no cached token
 * crosses subjects); a service JWT and a client token get the entry's client credentials; a
 * delegated caller whose token is not at hand is refused, never relayed as the gateway; and the
 * caller's own token reaches the upstream never, nor any log line, audit row, result or file.
 */
import { loadRegistryFile } from '../src/client/registry.js';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { inspect } from 'node:util';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import type { AgentBackend } from '../src/agents/backend.js';
import { createUpstreamBackend } from '../src/agents/upstream/index.js';
import { MemoryAuditSink } from '../src/audit/memory.js';
import { createUpstreamConnector, type UpstreamConnectorRuntime } from '../src/client/upstream.js';
import { DelegatedToken } from '../src/identity/delegation.js';
import {
  CLIENT_SECRET,
  TOKEN_EXCHANGE,
  startAuthServer,
  startPeer,
  type AuthServer,
  type Peer,
} from './helpers/oauth-server.js';
import { rpc, startGateway, TOKEN_A, v10Message, type TestGateway } from './helpers/gateway.js';

describe('delegation: a delegated caller is exchanged for a token to the upstream, a service caller gets client credentials', () => {
  let peer: Peer;
  let as: AuthServer;
  let dir: string;
  let connector: UpstreamConnectorRuntime;
  let gw: TestGateway;
  const audit = new MemoryAuditSink();
  const logs: string[] = [];
  const outputs: string[] = [];
  const callerTokens: string[] = [];

  const relay = async (token: string, text: string): Promise<string> => {
    const answer = await rpc(
      `${gw.url}/a2a/relay`,
      'SendMessage',
      { message: v10Message(text) },
      { token, version: '1.0' },
    );
    const shown = JSON.stringify(answer.body);
    outputs.push(shown);
    assert.equal(answer.status, 200, shown);
    return shown;
  };

  before(async () => {
    peer = await startPeer();
    as = await startAuthServer({ resource: `${peer.base}/` });
    peer.setKeys(as.jwks, as.issuer);
    dir = mkdtempSync(join(tmpdir(), 'airlock-delegation-'));
    const registryPath = join(dir, 'upstreams.yaml');
    writeFileSync(
      registryPath,
      `agents:
  - name: upstream
    card_url: ${peer.base}/cards/open.json
    description: The upstream behind the relay.
    effect: read_only
    max_wait_s: 5
    timeouts: { connect: 2, read: 3, total: 5 }
    auth:
      token_exchange:
        token_endpoint: ${as.tokenEndpoint}
        client_id: airlock
        client_secret_env: AIRLOCK_SECRET_CLIENT
        scopes: [a2a.send]
        resource: ${peer.base}/
`,
    );
    const jwksFile = join(dir, 'users-jwks.json');
    writeFileSync(jwksFile, JSON.stringify(as.userJwks));
    const log = (event: string, fields?: unknown) => logs.push(JSON.stringify({ event, fields }));
    connector = createUpstreamConnector({
      registryPath,
      registry: loadRegistryFile(registryPath, { AIRLOCK_SECRET_CLIENT: CLIENT_SECRET }),
      pinsPath: join(dir, 'pins.json'),
      env: { AIRLOCK_SECRET_CLIENT: CLIENT_SECRET },
      log,
    });
    const backends: Record<string, AgentBackend> = {
      relay: createUpstreamBackend(
        { type: 'a2a', agent: 'upstream' },
        { agent: 'relay', log: (level, event, fields) => logs.push(JSON.stringify({ level, event, fields })) },
        connector,
      ),
    };
    gw = await startGateway(
      `server: { host: 127.0.0.1, port: 0, defaultAgent: relay }
agents:
  - slug: relay
    name: Relay
    description: Relays to the upstream.
    skills: [{ id: relay, name: Relay, description: Relays, tags: [test] }]
    backend: { type: echo }
clients:
  - { id: a, token: "\${TOKEN_A}", agents: [relay] }
auth:
  jwt: { issuer: '${as.userIssuer}', audience: 'airlock', algorithms: [ES256], jwksFile: '${jwksFile}' }
`,
      { backends, auditSink: audit },
    );
  });

  after(async () => {
    await gw?.close();
    await connector?.close();
    await Promise.all([peer?.close(), as?.close()]);
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('a delegated caller: the upstream sees the user as subject, the act chain kept, a token for its audience', async () => {
    const alice = await as.userToken('alice', { scope: 'a2a:relay', act: { sub: 'planner' } });
    callerTokens.push(alice);
    const reply = await relay(alice, 'hello');
    assert.match(reply, /echo: hello/);
    assert.equal(as.grants.at(-1), TOKEN_EXCHANGE);
    const claims = peer.calls.at(-1)!;
    assert.equal(claims.sub, 'alice');
    assert.equal(claims.iss, as.issuer);
    assert.equal(claims.aud, `${peer.base}/`);
    assert.deepEqual(claims.act, { sub: 'airlock', act: { sub: 'planner' } });
    // What reached the upstream is the authorization server's token, not the caller's.
    assert.notEqual(peer.lastToken(), alice);
    assert.ok(as.issued.includes(peer.lastToken()));
  });

  it('each delegated user gets their own exchanged token: none is reused across subjects', async () => {
    const bob = await as.userToken('bob', { scope: 'a2a:relay', act: { sub: 'planner' } });
    callerTokens.push(bob);
    const grants = as.grants.length;
    assert.match(await relay(bob, 'as bob'), /echo: as bob/);
    assert.equal(as.grants.length - grants, 1, 'a new exchange for a new subject');
    assert.equal(peer.calls.at(-1)!.sub, 'bob');
  });

  it('a service JWT (no act) gets the entry client credentials: the upstream sees the client', async () => {
    const service = await as.userToken('batch-job', { scope: 'a2a:relay' });
    callerTokens.push(service);
    assert.match(await relay(service, 'as a service'), /echo: as a service/);
    assert.equal(as.grants.at(-1), 'client_credentials');
    const claims = peer.calls.at(-1)!;
    assert.notEqual(claims.sub, 'batch-job');
    assert.equal(claims.client_id, 'airlock');
    assert.equal(claims.act, undefined);
  });

  it('a client token caller gets client credentials too', async () => {
    assert.match(await relay(TOKEN_A, 'as client a'), /echo: as client a/);
    const claims = peer.calls.at(-1)!;
    assert.equal(claims.client_id, 'airlock');
    assert.equal(claims.act, undefined);
  });

  it('the upstream echoing its token: the relay scrubs it from the reply', async () => {
    const carol = await as.userToken('carol', { scope: 'a2a:relay', act: { sub: 'planner' } });
    callerTokens.push(carol);
    const reply = await relay(carol, 'leak');
    assert.match(reply, /your token is/);
    assert.ok(!reply.includes(peer.lastToken()));
  });

  it('a delegated caller whose token is not at hand is refused, not relayed as the gateway', async () => {
    const agent = connector.open('upstream');
    const calls = peer.calls.length + peer.refused;
    await assert.rejects(
      agent.connect(AbortSignal.timeout(5000), { kind: 'delegated', token: undefined }),
      (error: Error & { type?: string }) => {
        assert.equal(error.type, 'remote_auth_failed');
        assert.match(error.message, /delegated caller's token is not at hand/);
        return true;
      },
    );
    assert.equal(peer.calls.length + peer.refused, calls);
  });

  it('the wrapper never shows the token', () => {
    const wrapped = new DelegatedToken('eyJ.secret.value');
    assert.equal(JSON.stringify({ wrapped }), '{"wrapped":"[delegated caller token]"}');
    assert.equal(String(wrapped), '[delegated caller token]');
    assert.equal(inspect(wrapped), '[delegated caller token]');
  });

  it("no caller's token appears in a log line, audit row, result or file", () => {
    assert.ok(callerTokens.length >= 4);
    assert.ok(audit.lines.length > 0, 'audit rows were written');
    const files = readdirSync(dir).map((name) => readFileSync(join(dir, name), 'utf8'));
    const haystack = [...logs, ...audit.lines, ...outputs, ...files].join('\n');
    for (const token of callerTokens) {
      assert.ok(!haystack.includes(token), 'a caller token leaked');
      assert.ok(!haystack.includes(token.split('.')[2]!), "a caller token's signature leaked");
    }
    // The upstream only ever saw tokens the authorization server issued.
    for (const claims of peer.calls) assert.equal(claims.iss, as.issuer);
    assert.ok(decodeJwt(as.issued[0]!).iss === as.issuer);
  });
});
