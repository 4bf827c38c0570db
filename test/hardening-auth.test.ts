/**
 * Inbound identity and admission, end to end over HTTP: the X-API-Key header, JWT principals
 * (service and delegated), the lockout after failed authentications, and the per-principal
 * request rate. Every test is a refusal that would turn into an admission if its control
 * were removed.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { base64url, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from 'jose';
import { MemoryAuditSink } from '../src/audit/index.js';
import {
  DEFAULT_YAML,
  rpc,
  startGateway,
  TOKEN_A,
  TOKEN_B,
  TOKEN_C,
  v03Message,
  v10Message,
  withServer,
  type TestGateway,
} from './helpers/gateway.js';

const WRONG_TOKEN = 'not-a-client-token-0123456789abcdefghij';

async function cardOf(gw: TestGateway, version: '0.3' | '1.0'): Promise<any> {
  const response = await fetch(`${gw.url}/a2a/echo/.well-known/agent-card.json`, {
    headers: { 'a2a-version': version },
  });
  assert.equal(response.status, 200);
  return response.json();
}

describe('X-API-Key header', () => {
  let off: TestGateway;
  let on: TestGateway;
  before(async () => {
    off = await startGateway();
    on = await startGateway(withServer('{ host: 127.0.0.1, port: 0, defaultAgent: echo, apiKeyHeader: true }'));
  });
  after(async () => {
    await off.close();
    await on.close();
  });

  it('is not accepted unless server.apiKeyHeader is on (401, no task), and the card then lists bearer only', async () => {
    const call = await rpc(
      `${off.url}/a2a/echo`,
      'message/send',
      { message: v03Message('hi') },
      { token: null, headers: { 'x-api-key': TOKEN_A } },
    );
    assert.equal(call.status, 401);
    assert.equal(call.body.error.status, 'UNAUTHENTICATED');
    assert.equal(off.gateway.service.running, 0);
    const listed = await rpc(`${off.url}/a2a/echo`, 'ListTasks', {}, { version: '1.0' });
    assert.equal(listed.body.result.totalSize, 0);
    assert.deepEqual(Object.keys((await cardOf(off, '0.3')).securitySchemes), ['bearer']);
    assert.deepEqual(Object.keys((await cardOf(off, '1.0')).securitySchemes), ['bearer']);
  });

  it('authenticates a client token with server.apiKeyHeader on, and the card lists an apiKey scheme', async () => {
    const call = await rpc(
      `${on.url}/a2a/echo`,
      'message/send',
      { message: v03Message('by key') },
      { token: null, headers: { 'x-api-key': TOKEN_A } },
    );
    assert.equal(call.status, 200);
    assert.equal(call.body.result.status.state, 'completed');
    // The key is client a's: the task is a's, not anyone else's.
    const mine = await rpc(`${on.url}/a2a/echo`, 'tasks/get', { id: call.body.result.id });
    assert.equal(mine.body.result.id, call.body.result.id);
    const theirs = await rpc(`${on.url}/a2a/echo`, 'tasks/get', { id: call.body.result.id }, { token: TOKEN_B });
    assert.equal(theirs.body.error.code, -32001);

    const v03 = await cardOf(on, '0.3');
    assert.deepEqual(v03.securitySchemes.apiKey, {
      type: 'apiKey',
      in: 'header',
      name: 'X-API-Key',
      description: v03.securitySchemes.apiKey.description,
    });
    assert.deepEqual(v03.security, [{ bearer: [] }, { apiKey: [] }]);
    const v10 = await cardOf(on, '1.0');
    assert.deepEqual(Object.keys(v10.securitySchemes).sort(), ['apiKey', 'bearer']);
    assert.match(JSON.stringify(v10.securitySchemes.apiKey), /X-API-Key/);
  });

  it('still applies the client agent list to an API key (403)', async () => {
    const call = await rpc(
      `${on.url}/a2a/writer`,
      'message/send',
      { message: v03Message('hi') },
      { token: null, headers: { 'x-api-key': TOKEN_C } },
    );
    assert.equal(call.status, 403);
  });

  it('lets Authorization win over X-API-Key: a wrong bearer token is 401 even with a valid key', async () => {
    const call = await rpc(
      `${on.url}/a2a/echo`,
      'message/send',
      { message: v03Message('hi') },
      { token: WRONG_TOKEN, headers: { 'x-api-key': TOKEN_A } },
    );
    assert.equal(call.status, 401);
    const malformed = await rpc(
      `${on.url}/a2a/echo`,
      'message/send',
      { message: v03Message('hi') },
      { token: null, headers: { authorization: `Basic ${TOKEN_A}`, 'x-api-key': TOKEN_A } },
    );
    assert.equal(malformed.status, 401);
  });

  it('lets Authorization win over X-API-Key: with both valid, the caller is the bearer client', async () => {
    const call = await rpc(
      `${on.url}/a2a/echo`,
      'message/send',
      { message: v03Message('who am i') },
      { token: TOKEN_B, headers: { 'x-api-key': TOKEN_A } },
    );
    assert.equal(call.status, 200);
    const id = call.body.result.id;
    assert.equal((await rpc(`${on.url}/a2a/echo`, 'tasks/get', { id }, { token: TOKEN_B })).body.result.id, id);
    assert.equal((await rpc(`${on.url}/a2a/echo`, 'tasks/get', { id }, { token: TOKEN_A })).body.error.code, -32001);
  });
});

describe('JWT bearer tokens', () => {
  const ISSUER = 'https://idp.airlock.test';
  const AUDIENCE = 'airlock-gateway';
  let dir: string;
  let privateKey: CryptoKey;
  let otherKey: CryptoKey;
  let gw: TestGateway;
  let echo: string;
  const sink = new MemoryAuditSink();

  /** A token the gateway should accept, with `claims` laid over it. */
  async function mint(claims: JWTPayload = {}, key: CryptoKey = privateKey): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({
      iss: ISSUER,
      aud: AUDIENCE,
      sub: 'svc-reporting',
      iat: now,
      exp: now + 300,
      scope: 'a2a:echo',
      ...claims,
    })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .sign(key);
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'airlock-jwt-'));
    const pair = await generateKeyPair('ES256');
    privateKey = pair.privateKey;
    otherKey = (await generateKeyPair('ES256')).privateKey;
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    const jwksFile = join(dir, 'jwks.json');
    writeFileSync(jwksFile, JSON.stringify({ keys: [jwk] }));
    // Failed logins here must not lock the test's own address out.
    const yaml = `${DEFAULT_YAML}
limits: { authFailuresPerMinute: 1000 }
auth:
  jwt:
    issuer: '${ISSUER}'
    audience: '${AUDIENCE}'
    algorithms: [ES256]
    jwksFile: '${jwksFile}'
`;
    gw = await startGateway(yaml, { auditSink: sink });
    echo = `${gw.url}/a2a/echo`;
  });
  after(async () => {
    await gw.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('admits a valid token that grants a2a:echo, as a service principal', async () => {
    const token = await mint();
    const call = await rpc(echo, 'SendMessage', { message: v10Message('from a service') }, { token, version: '1.0' });
    assert.equal(call.status, 200);
    assert.equal(call.body.result.task.status.state, 'TASK_STATE_COMPLETED');
    const submitted = sink.ofType('a2a.task.submitted').find((row) => row.taskId === call.body.result.task.id);
    assert.equal(submitted?.principalKind, 'service');
    assert.equal(submitted?.client, ISSUER);
    assert.ok(!sink.text().includes(token), 'the token is never written to the audit trail');
  });

  it('makes a token with an act claim a delegated principal, whose tasks the service principal with the same sub cannot see', async () => {
    const service = await mint({ sub: 'user-42' });
    const delegated = await mint({ sub: 'user-42', act: { sub: 'planner-agent' } });
    const byService = await rpc(echo, 'SendMessage', { message: v10Message('s') }, { token: service, version: '1.0' });
    const byAgent = await rpc(echo, 'SendMessage', { message: v10Message('d') }, { token: delegated, version: '1.0' });
    const serviceTask = byService.body.result.task.id;
    const agentTask = byAgent.body.result.task.id;
    const kinds = new Map(sink.ofType('a2a.task.submitted').map((row) => [row.taskId, row.principalKind]));
    assert.equal(kinds.get(serviceTask), 'service');
    assert.equal(kinds.get(agentTask), 'delegated');

    const missing = await rpc(echo, 'GetTask', { id: 'no-such-task-0001' }, { token: service, version: '1.0' });
    assert.equal(missing.body.error.code, -32001);
    const crossOne = await rpc(echo, 'GetTask', { id: agentTask }, { token: service, version: '1.0' });
    assert.deepEqual(crossOne.body.error, missing.body.error);
    const crossTwo = await rpc(echo, 'GetTask', { id: serviceTask }, { token: delegated, version: '1.0' });
    assert.deepEqual(crossTwo.body.error, missing.body.error);
    // Another agent acting for the same subject is another principal again.
    const otherAgent = await mint({ sub: 'user-42', act: { sub: 'billing-agent' } });
    const crossThree = await rpc(echo, 'GetTask', { id: agentTask }, { token: otherAgent, version: '1.0' });
    assert.deepEqual(crossThree.body.error, missing.body.error);
    // Each sees its own.
    assert.equal(
      (await rpc(echo, 'GetTask', { id: agentTask }, { token: delegated, version: '1.0' })).body.result.id,
      agentTask,
    );
    assert.equal(
      (await rpc(echo, 'GetTask', { id: serviceTask }, { token: service, version: '1.0' })).body.result.id,
      serviceTask,
    );
  });

  const refusals: [string, () => Promise<string>][] = [
    ['a wrong audience', () => mint({ aud: 'some-other-api' })],
    ['a wrong issuer', () => mint({ iss: 'https://evil.idp.test' })],
    [
      'an expired token',
      () => mint({ exp: Math.floor(Date.now() / 1000) - 3600, iat: Math.floor(Date.now() / 1000) - 7200 }),
    ],
    ['a token without exp', () => mint({ exp: undefined })],
    ['a signature by another key', () => mint({}, otherKey)],
    [
      'alg none',
      async () => {
        const now = Math.floor(Date.now() / 1000);
        const header = base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT', kid: 'k1' }));
        const payload = base64url.encode(
          JSON.stringify({ iss: ISSUER, aud: AUDIENCE, sub: 'svc-reporting', exp: now + 300, scope: 'a2a:echo' }),
        );
        return `${header}.${payload}.`;
      },
    ],
  ];
  for (const [what, token] of refusals) {
    it(`refuses ${what} with 401 and runs nothing`, async () => {
      const before = sink.ofType('a2a.task.submitted').length;
      const call = await rpc(
        echo,
        'SendMessage',
        { message: v10Message('x') },
        { token: await token(), version: '1.0' },
      );
      assert.equal(call.status, 401);
      assert.match(call.headers.get('www-authenticate') ?? '', /^Bearer/);
      assert.equal(call.body.error.status, 'UNAUTHENTICATED');
      assert.equal(sink.ofType('a2a.task.submitted').length, before);
    });
  }

  it('refuses a valid token that grants no access to this agent with 403', async () => {
    const token = await mint({ scope: 'a2a:writer a2a:tck' });
    const call = await rpc(echo, 'SendMessage', { message: v10Message('x') }, { token, version: '1.0' });
    assert.equal(call.status, 403);
    assert.equal(call.body.error.status, 'PERMISSION_DENIED');
    const admitted = await rpc(
      `${gw.url}/a2a/writer`,
      'SendMessage',
      { message: v10Message('ask me') },
      { token, version: '1.0' },
    );
    assert.equal(admitted.status, 200);
    const forbidden = sink.ofType('a2a.server.forbidden').at(-1);
    assert.equal(forbidden?.reason, 'agent_not_allowed');
    assert.equal(forbidden?.principalKind, 'service');
  });
});

describe('failed-authentication lockout', () => {
  it('answers the 11th request after 10 failed authentications from one address with 429, even with a valid token', async () => {
    const sink = new MemoryAuditSink();
    const gw = await startGateway(DEFAULT_YAML, { auditSink: sink });
    const echo = `${gw.url}/a2a/echo`;
    try {
      for (let i = 0; i < 9; i++) {
        const wrong = await rpc(echo, 'message/send', { message: v03Message('x') }, { token: `${WRONG_TOKEN}${i}` });
        assert.equal(wrong.status, 401);
      }
      // Nine failures: still admitted (the lockout is at ten, not before).
      const ninth = await rpc(echo, 'message/send', { message: v03Message('still fine') });
      assert.equal(ninth.status, 200);
      // A request with no credential at all is refused but not counted (issue 16): it guesses nothing.
      const bare = await rpc(echo, 'message/send', { message: v03Message('x') }, { token: null });
      assert.equal(bare.status, 401);
      const tenth = await rpc(echo, 'message/send', { message: v03Message('x') }, { token: `${WRONG_TOKEN}9` });
      assert.equal(tenth.status, 401);

      const locked = await rpc(echo, 'message/send', { message: v03Message('valid but locked') });
      assert.equal(locked.status, 429);
      const retryAfter = Number(locked.headers.get('retry-after'));
      assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
      assert.equal(locked.body.error.status, 'RESOURCE_EXHAUSTED');
      // Every client from that address is locked out, and nothing ran.
      const other = await rpc(echo, 'message/send', { message: v03Message('x') }, { token: TOKEN_B });
      assert.equal(other.status, 429);
      assert.equal(sink.ofType('a2a.task.submitted').length, 1);

      const rows = sink.ofType('a2a.server.rate_limited');
      assert.equal(rows.length, 2);
      assert.deepEqual(
        rows.map((row) => [row.reason, row.agent, row.remote]),
        [
          ['auth_failure_limit', 'echo', '127.0.0.1'],
          ['auth_failure_limit', 'echo', '127.0.0.1'],
        ],
      );
      assert.equal(sink.ofType('a2a.server.auth_failed').length, 11, 'the bare request is audited all the same');
    } finally {
      await gw.close();
    }
  });
});

describe('requestsPerMinute', () => {
  it('answers the 4th call of a principal in a minute with 429 and Retry-After, and leaves another client alone', async () => {
    const sink = new MemoryAuditSink();
    const gw = await startGateway(`${DEFAULT_YAML}\nlimits: { requestsPerMinute: 3 }\n`, { auditSink: sink });
    const echo = `${gw.url}/a2a/echo`;
    try {
      for (let i = 0; i < 3; i++) {
        const call = await rpc(echo, 'message/send', { message: v03Message(`n${i}`) });
        assert.equal(call.status, 200, `call ${i + 1}`);
      }
      const fourth = await rpc(echo, 'message/send', { message: v03Message('one too many') });
      assert.equal(fourth.status, 429);
      assert.equal(fourth.body.error.status, 'RESOURCE_EXHAUSTED');
      const retryAfter = Number(fourth.headers.get('retry-after'));
      assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1, `Retry-After ${retryAfter}`);
      // Reads count too: the principal is limited, not one method.
      assert.equal((await rpc(echo, 'tasks/get', { id: 'x' })).status, 429);

      const other = await rpc(echo, 'message/send', { message: v03Message('b is fine') }, { token: TOKEN_B });
      assert.equal(other.status, 200);
      assert.equal(other.body.result.status.state, 'completed');

      assert.equal(sink.ofType('a2a.task.submitted').length, 4);
      const limited = sink.ofType('a2a.server.rate_limited');
      assert.deepEqual(
        limited.map((row) => [row.reason, row.client, row.principalKind]),
        [
          ['client_rate_limit', 'a', 'client'],
          ['client_rate_limit', 'a', 'client'],
        ],
      );
    } finally {
      await gw.close();
    }
  });
});
