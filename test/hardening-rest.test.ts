/**
 * The REST ask endpoint and its OpenAPI document (server.rest), and cards behind credentials
 * (server.publicCard: false), end to end over HTTP.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MemoryAuditSink } from '../src/audit/index.js';
import { rpc, startGateway, TOKEN_A, TOKEN_B, TOKEN_C, withServer, type TestGateway } from './helpers/gateway.js';

async function ask(
  url: string,
  body: unknown,
  token: string | null = TOKEN_A,
  raw?: string,
): Promise<{ status: number; body: any; headers: Headers }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  const response = await fetch(url, { method: 'POST', headers, body: raw ?? JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, body: text.length > 0 ? JSON.parse(text) : undefined, headers: response.headers };
}

describe('REST ask (server.rest: true)', () => {
  let gw: TestGateway;
  let sink: MemoryAuditSink;
  let askUrl: string;
  before(async () => {
    sink = new MemoryAuditSink();
    gw = await startGateway(withServer('{ host: 127.0.0.1, port: 0, defaultAgent: echo, rest: true }'), {
      auditSink: sink,
    });
    askUrl = `${gw.url}/a2a/echo/ask`;
  });
  after(() => gw.close());

  it('answers POST /ask {message} with {reply, state: completed, taskId, contextId}', async () => {
    const response = await ask(askUrl, { message: 'hello over REST' });
    assert.equal(response.status, 200);
    assert.deepEqual(Object.keys(response.body).sort(), ['contextId', 'reply', 'state', 'taskId']);
    assert.equal(response.body.reply, 'hello over REST');
    assert.equal(response.body.state, 'completed');
    assert.ok(response.body.taskId.length > 0);
    assert.ok(response.body.contextId.length > 0);
    // The task is the caller's own, like any JSON-RPC task.
    const got = await rpc(`${gw.url}/a2a/echo`, 'GetTask', { id: response.body.taskId }, { version: '1.0' });
    assert.equal(got.body.result.contextId, response.body.contextId);
    const theirs = await rpc(
      `${gw.url}/a2a/echo`,
      'GetTask',
      { id: response.body.taskId },
      { version: '1.0', token: TOKEN_B },
    );
    assert.equal(theirs.body.error.code, -32001);
  });

  it('continues the conversation in the same context when the contextId is passed back', async () => {
    const first = await ask(askUrl, { message: 'first' });
    const second = await ask(askUrl, { message: 'second', contextId: first.body.contextId });
    assert.equal(second.status, 200);
    assert.equal(second.body.contextId, first.body.contextId);
    assert.notEqual(second.body.taskId, first.body.taskId);
    const listed = await rpc(
      `${gw.url}/a2a/echo`,
      'ListTasks',
      { contextId: first.body.contextId },
      { version: '1.0' },
    );
    assert.deepEqual(
      listed.body.result.tasks.map((task: { id: string }) => task.id).sort(),
      [first.body.taskId, second.body.taskId].sort(),
    );
  });

  it('refuses a call without credentials with 401 and runs nothing', async () => {
    const before = sink.ofType('a2a.task.submitted').length;
    const response = await ask(askUrl, { message: 'hi' }, null);
    assert.equal(response.status, 401);
    assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer/);
    assert.equal(response.body.error.code, 401);
    const wrong = await ask(askUrl, { message: 'hi' }, 'not-a-client-token-0123456789abcdefghij');
    assert.equal(wrong.status, 401);
    const forbidden = await ask(`${gw.url}/a2a/writer/ask`, { message: 'hi' }, TOKEN_C);
    assert.equal(forbidden.status, 403);
    assert.equal(sink.ofType('a2a.task.submitted').length, before);
  });

  const badBodies: [string, unknown, string?][] = [
    ['not JSON', undefined, '{message: hi'],
    ['an array', ['hi']],
    ['no message', { contextId: 'c-1' }],
    ['an empty message', { message: '' }],
    ['a message that is not a string', { message: { text: 'hi' } }],
    ['an unknown field', { message: 'hi', contextID: 'c-1' }],
    ['a contextId with spaces', { message: 'hi', contextId: 'a b' }],
    ['a message over maxInputChars', { message: 'x'.repeat(8193) }],
  ];
  for (const [what, body, raw] of badBodies) {
    it(`refuses a body with ${what} with 400 and runs nothing`, async () => {
      const before = sink.ofType('a2a.task.submitted').length;
      const response = await ask(askUrl, body, TOKEN_A, raw);
      assert.equal(response.status, 400);
      assert.equal(response.body.error.code, 400);
      assert.equal(response.body.error.status, 'INVALID_ARGUMENT');
      assert.equal(sink.ofType('a2a.task.submitted').length, before);
    });
  }

  it('serves GET /openapi.json with one server URL and operationId ask_echo', async () => {
    const response = await fetch(`${gw.url}/a2a/echo/openapi.json`);
    assert.equal(response.status, 200);
    const doc = (await response.json()) as any;
    assert.deepEqual(doc.servers, [{ url: `${gw.url}/a2a/echo` }]);
    assert.deepEqual(Object.keys(doc.paths), ['/ask']);
    assert.equal(doc.paths['/ask'].post.operationId, 'ask_echo');
    assert.deepEqual(doc.security, [{ bearer: [] }]);
    assert.equal(
      doc.paths['/ask'].post.requestBody.content['application/json'].schema.properties.message.maxLength,
      8192,
    );
  });
});

describe('REST off (the default)', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway();
  });
  after(() => gw.close());

  it('answers /ask and /openapi.json with 404, credentials or not', async () => {
    const asked = await ask(`${gw.url}/a2a/echo/ask`, { message: 'hi' });
    assert.equal(asked.status, 404);
    const openapi = await fetch(`${gw.url}/a2a/echo/openapi.json`, { headers: { authorization: `Bearer ${TOKEN_A}` } });
    assert.equal(openapi.status, 404);
    assert.equal(gw.gateway.service.running, 0);
    const listed = await rpc(`${gw.url}/a2a/echo`, 'ListTasks', {}, { version: '1.0' });
    assert.equal(listed.body.result.totalSize, 0);
  });
});

describe('publicCard: false', () => {
  let gw: TestGateway;
  before(async () => {
    // Each anonymous fetch below is a failed authentication: keep the lockout out of the way.
    const yaml = withServer('{ host: 127.0.0.1, port: 0, defaultAgent: echo, rest: true, publicCard: false }');
    gw = await startGateway(`${yaml}\nlimits: { authFailuresPerMinute: 1000 }\n`);
  });
  after(() => gw.close());

  const paths = [
    '/.well-known/agent-card.json',
    '/.well-known/agent.json',
    '/a2a/echo/.well-known/agent-card.json',
    '/a2a/echo/v1.0/.well-known/agent-card.json',
    '/a2a/echo/v0.3/.well-known/agent-card.json',
    '/a2a/echo/openapi.json',
  ];

  it('puts every card and openapi.json behind credentials: 401 without, 200 with a token', async () => {
    for (const path of paths) {
      const anonymous = await fetch(`${gw.url}${path}`);
      assert.equal(anonymous.status, 401, path);
      assert.match(anonymous.headers.get('www-authenticate') ?? '', /^Bearer/, path);
      const body = await anonymous.text();
      assert.doesNotMatch(body, /Echo|skills|\/a2a\/echo/, `${path}: nothing of the card in a refusal`);
      const authenticated = await fetch(`${gw.url}${path}`, { headers: { authorization: `Bearer ${TOKEN_B}` } });
      assert.equal(authenticated.status, 200, path);
      assert.match(authenticated.headers.get('cache-control') ?? '', /^private/, path);
      await authenticated.text();
    }
  });

  it('refuses a wrong token (401) and a client that may not call the agent (403)', async () => {
    const wrong = await fetch(`${gw.url}/a2a/echo/.well-known/agent-card.json`, {
      headers: { authorization: 'Bearer not-a-client-token-0123456789abcdefghij' },
    });
    assert.equal(wrong.status, 401);
    const forbidden = await fetch(`${gw.url}/a2a/writer/.well-known/agent-card.json`, {
      headers: { authorization: `Bearer ${TOKEN_C}` },
    });
    assert.equal(forbidden.status, 403);
  });
});
