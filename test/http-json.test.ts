/**
 * The HTTP+JSON binding (v1.0 §11) against a real gateway on loopback: every route in success
 * and refusal, with the same admission as JSON-RPC (credentials, the agents a client may reach,
 * ownership, limits, content rules, Content-Type, version) and the v1.0.1 error mapping
 * (HTTP status + google.rpc.Status body with ErrorInfo).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { MemoryAuditSink } from '../src/audit/index.js';
import {
  DEFAULT_YAML,
  startGateway,
  TOKEN_A,
  TOKEN_B,
  TOKEN_C,
  withServer,
  type TestGateway,
} from './helpers/gateway.js';

const ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo';

interface RestOptions {
  method?: string;
  body?: unknown;
  token?: string | null;
  version?: string | null;
  headers?: Record<string, string>;
}

interface RestAnswer {
  status: number;
  body: any;
  text: string;
  headers: Headers;
}

/** One binding request; `version` defaults to 1.0, `token` to client a's. */
async function rest(base: string, path: string, options: RestOptions = {}): Promise<RestAnswer> {
  const headers: Record<string, string> = {};
  const token = options.token === undefined ? TOKEN_A : options.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  const version = options.version === undefined ? '1.0' : options.version;
  if (version !== null) headers['a2a-version'] = version;
  if (options.body !== undefined) headers['content-type'] = 'application/a2a+json';
  headers.accept = 'application/a2a+json';
  Object.assign(headers, options.headers);
  const init: RequestInit = { method: options.method ?? (options.body === undefined ? 'GET' : 'POST'), headers };
  if (options.body !== undefined)
    init.body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  const response = await fetch(`${base}${path}`, init);
  const text = await response.text();
  let body: unknown;
  try {
    body = text.length > 0 ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: response.status, body, text, headers: response.headers };
}

/** The `data:` payloads of an SSE body. */
function frames(text: string): any[] {
  return text
    .split('\n\n')
    .map((frame) => frame.split('\n').find((line) => line.startsWith('data: ')))
    .filter((line): line is string => line !== undefined)
    .map((line) => JSON.parse(line.slice(6)));
}

function message(text: string, messageId = `m-${randomUUID()}`): Record<string, unknown> {
  return { messageId, role: 'ROLE_USER', parts: [{ text }] };
}

/** The A2A error a refusal names: the HTTP status, the google.rpc code and the ErrorInfo reason. */
function assertA2AError(answer: RestAnswer, status: number, rpcStatus: string, reason: string): void {
  assert.equal(answer.status, status, answer.text);
  assert.equal(answer.headers.get('content-type'), 'application/a2a+json');
  assert.equal(answer.body.error.code, status);
  assert.equal(answer.body.error.status, rpcStatus);
  const info = answer.body.error.details.find((detail: any) => detail['@type'] === ERROR_INFO);
  assert.equal(info?.reason, reason, answer.text);
  assert.equal(info?.domain, 'a2a-protocol.org');
}

let gw: TestGateway;
let sink: MemoryAuditSink;
let echo: string;

before(async () => {
  sink = new MemoryAuditSink();
  gw = await startGateway(DEFAULT_YAML, { auditSink: sink });
  echo = `${gw.url}/a2a/echo`;
});
after(() => gw.close());

/** A task of client a at the tck agent, waiting for input (so it can be canceled). */
async function waitingTask(token = TOKEN_A): Promise<string> {
  const sent = await rest(`${gw.url}/a2a/tck`, '/message:send', {
    token,
    body: { message: message('wait', `tck-input-required-${randomUUID()}`) },
  });
  assert.equal(sent.status, 200, sent.text);
  assert.equal(sent.body.task.status.state, 'TASK_STATE_INPUT_REQUIRED');
  return sent.body.task.id as string;
}

describe('HTTP+JSON: the card', () => {
  it('lists the HTTP+JSON interface at the agent URL next to JSON-RPC, in both card shapes', async () => {
    const v10 = await fetch(`${echo}/.well-known/agent-card.json`, { headers: { 'a2a-version': '1.0' } });
    const card = (await v10.json()) as any;
    assert.deepEqual(
      card.supportedInterfaces.map((i: any) => `${i.protocolBinding} ${i.protocolVersion} ${i.url}`),
      [`JSONRPC 1.0 ${echo}`, `JSONRPC 0.3 ${echo}`, `HTTP+JSON 1.0 ${echo}`],
    );
    const v03 = (await (await fetch(`${echo}/.well-known/agent-card.json`)).json()) as any;
    assert.ok(v03.supportedInterfaces.some((i: any) => i.protocolBinding === 'HTTP+JSON'));
    assert.equal(v03.preferredTransport, 'JSONRPC');
  });
});

describe('HTTP+JSON: routes', () => {
  it('POST message:send: a task in the v1.0 shape, application/a2a+json, audited like JSON-RPC', async () => {
    const submitted = sink.ofType('a2a.task.submitted').length;
    const sent = await rest(echo, '/message:send', { body: { message: message('hello rest') } });
    assert.equal(sent.status, 200, sent.text);
    assert.equal(sent.headers.get('content-type'), 'application/a2a+json');
    assert.equal(sent.body.jsonrpc, undefined, 'no JSON-RPC envelope');
    assert.equal(sent.body.task.status.state, 'TASK_STATE_COMPLETED');
    assert.match(JSON.stringify(sent.body.task.artifacts), /hello rest/);
    assert.equal(sink.ofType('a2a.task.submitted').length, submitted + 1);
  });

  it('a v1.0.0 client (application/json, no Accept for a2a+json) gets application/json, errors too', async () => {
    const plain = { 'content-type': 'application/json', accept: '*/*' };
    const sent = await rest(echo, '/message:send', { body: { message: message('plain json') }, headers: plain });
    assert.equal(sent.status, 200, sent.text);
    assert.equal(sent.headers.get('content-type'), 'application/json');
    const missing = await rest(echo, '/tasks/no-such-task', { headers: { accept: '*/*' } });
    assert.equal(missing.status, 404, missing.text);
    assert.equal(missing.headers.get('content-type'), 'application/json');
  });

  it('an inline push config is refused (400 PushNotificationNotSupported), never silently dropped; no task', async () => {
    const submitted = sink.ofType('a2a.task.submitted').length;
    const answer = await rest(echo, '/message:send', {
      body: {
        message: message('notify me'),
        configuration: { taskPushNotificationConfig: { url: 'https://hooks.example.com/a2a', token: 'tok-1' } },
      },
    });
    assertA2AError(answer, 400, 'FAILED_PRECONDITION', 'PUSH_NOTIFICATION_NOT_SUPPORTED');
    assert.equal(sink.ofType('a2a.task.submitted').length, submitted);
  });

  it('POST message:send accepts application/json too', async () => {
    const sent = await rest(echo, '/message:send', {
      body: { message: message('plain json') },
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(sent.status, 200, sent.text);
  });

  it('GET tasks/{id} with historyLength; a negative one is 400 naming the field', async () => {
    const sent = await rest(echo, '/message:send', { body: { message: message('history') } });
    const id = sent.body.task.id as string;
    const full = await rest(echo, `/tasks/${id}`);
    assert.equal(full.status, 200);
    assert.equal(full.body.id, id);
    assert.ok(full.body.history.length >= 1);
    const none = await rest(echo, `/tasks/${id}?historyLength=0`);
    assert.equal(none.body.history, undefined);
    const bad = await rest(echo, `/tasks/${id}?historyLength=-1`);
    assertA2AError(bad, 400, 'INVALID_ARGUMENT', 'INVALID_PARAMS');
    assert.ok(bad.body.error.details.some((d: any) => d.fieldViolations?.[0]?.field === 'historyLength'));
    const text = await rest(echo, `/tasks/${id}?historyLength=two`);
    assertA2AError(text, 400, 'INVALID_ARGUMENT', 'INVALID_PARAMS');
  });

  it('GET tasks: ListTasks with its query parameters, only the caller’s own tasks', async () => {
    const contextId = `ctx-${randomUUID()}`;
    await rest(echo, '/message:send', { body: { message: { ...message('one'), contextId } } });
    await rest(echo, '/message:send', { body: { message: { ...message('two'), contextId } } });
    const listed = await rest(echo, `/tasks?contextId=${contextId}&pageSize=1&status=TASK_STATE_COMPLETED`);
    assert.equal(listed.status, 200, listed.text);
    assert.equal(listed.body.tasks.length, 1);
    assert.equal(listed.body.totalSize, 2);
    assert.equal(listed.body.tasks[0].artifacts, undefined, 'artifacts only with includeArtifacts');
    assert.notEqual(listed.body.nextPageToken, '');
    const next = await rest(
      echo,
      `/tasks?contextId=${contextId}&pageSize=1&includeArtifacts=true&pageToken=${encodeURIComponent(listed.body.nextPageToken)}`,
    );
    assert.equal(next.body.tasks.length, 1);
    assert.ok(next.body.tasks[0].artifacts.length > 0);
    assert.equal(next.body.nextPageToken, '');
    const other = await rest(echo, `/tasks?contextId=${contextId}`, { token: TOKEN_B });
    assert.equal(other.body.totalSize, 0, 'client b sees none of client a’s tasks');
    assertA2AError(await rest(echo, '/tasks?pageSize=0'), 400, 'INVALID_ARGUMENT', 'INVALID_PARAMS');
    assertA2AError(await rest(echo, '/tasks?pageSize=1&pageSize=2'), 400, 'INVALID_ARGUMENT', 'INVALID_PARAMS');
  });

  it('another caller’s task is answered exactly like a missing one (404) on get, cancel and subscribe', async () => {
    const id = await waitingTask();
    const tck = `${gw.url}/a2a/tck`;
    for (const [path, method] of [
      [`/tasks/${id}`, 'GET'],
      [`/tasks/${id}:cancel`, 'POST'],
      [`/tasks/${id}:subscribe`, 'GET'],
      [`/tasks/${id}:subscribe`, 'POST'],
    ] as const) {
      const theirs = await rest(tck, path, { method, token: TOKEN_B });
      const missing = await rest(tck, path.replace(id, 'no-such-task'), { method, token: TOKEN_B });
      assertA2AError(theirs, 404, 'NOT_FOUND', 'TASK_NOT_FOUND');
      assert.equal(theirs.body.error.message, missing.body.error.message);
    }
    assert.equal((await rest(tck, `/tasks/${id}`)).body.status.state, 'TASK_STATE_INPUT_REQUIRED', 'untouched');
  });

  it('POST tasks/{id}:cancel cancels (no body, as the SDK sends it); a finished task is 400 (v1.0.1, not 409)', async () => {
    const id = await waitingTask();
    const canceled = await rest(`${gw.url}/a2a/tck`, `/tasks/${id}:cancel`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(canceled.status, 200, canceled.text);
    assert.equal(canceled.body.status.state, 'TASK_STATE_CANCELED');
    const again = await rest(`${gw.url}/a2a/tck`, `/tasks/${id}:cancel`, { body: {} });
    assertA2AError(again, 400, 'FAILED_PRECONDITION', 'TASK_NOT_CANCELABLE');
  });

  it('POST message:stream: SSE of bare StreamResponses, task first, closed on completion', async () => {
    const response = await rest(`${gw.url}/a2a/writer`, '/message:stream', { body: { message: message('a sea') } });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    const events = frames(response.text);
    assert.ok(events[0].task, 'the task first');
    assert.ok(events.every((event) => event.jsonrpc === undefined && Object.keys(event).length === 1));
    assert.ok(events.some((event) => event.artifactUpdate !== undefined));
    assert.equal(events.at(-1).statusUpdate.status.state, 'TASK_STATE_COMPLETED');
  });

  for (const method of ['GET', 'POST']) {
    it(`${method} tasks/{id}:subscribe: the snapshot first, then updates to the end; a finished task is 400`, async () => {
      const tck = `${gw.url}/a2a/tck`;
      const sent = await rest(tck, '/message:send', {
        body: {
          message: message('hold', `test-resubscribe-message-id-${randomUUID()}`),
          configuration: { returnImmediately: true },
        },
      });
      const id = sent.body.task.id as string;
      const stream = await rest(tck, `/tasks/${id}:subscribe`, { method });
      assert.match(stream.headers.get('content-type') ?? '', /^text\/event-stream/);
      const events = frames(stream.text);
      assert.equal(events[0].task.id, id);
      assert.equal(events.at(-1).statusUpdate.status.state, 'TASK_STATE_COMPLETED');
      const finished = await rest(tck, `/tasks/${id}:subscribe`, { method });
      assertA2AError(finished, 400, 'FAILED_PRECONDITION', 'UNSUPPORTED_OPERATION');
    });
  }

  it('GET extendedAgentCard: the v1.0 extended card with the configured skills', async () => {
    const card = await rest(echo, '/extendedAgentCard');
    assert.equal(card.status, 200, card.text);
    assert.deepEqual(
      card.body.skills.map((skill: any) => skill.id),
      ['echo'],
    );
    assert.ok(card.body.supportedInterfaces.some((i: any) => i.protocolBinding === 'HTTP+JSON'));
  });

  it('a wrong method is 405 with Allow; an unknown path is 404', async () => {
    const list = await rest(echo, '/tasks', { method: 'DELETE' });
    assert.equal(list.status, 405);
    assert.equal(list.headers.get('allow'), 'GET');
    const send = await rest(echo, '/message:send', { method: 'GET' });
    assert.equal(send.status, 405);
    assert.equal(send.headers.get('allow'), 'POST');
    assert.equal((await rest(echo, '/tasks/a/b')).status, 404);
    assert.equal((await rest(echo, '/message:nope', { body: {} })).status, 404);
  });
});

describe('HTTP+JSON: admission', () => {
  const routes: [string, string, unknown][] = [
    ['POST', '/message:send', { message: message('x') }],
    ['POST', '/message:stream', { message: message('x') }],
    ['GET', '/tasks/some-id', undefined],
    ['GET', '/tasks', undefined],
    ['POST', '/tasks/some-id:cancel', {}],
    ['GET', '/tasks/some-id:subscribe', undefined],
    ['POST', '/tasks/some-id:subscribe', {}],
    ['GET', '/extendedAgentCard', undefined],
  ];

  it('every route needs credentials: 401 with WWW-Authenticate, no task, audited', async () => {
    const submitted = sink.ofType('a2a.task.submitted').length;
    for (const [method, path, body] of routes) {
      const answer = await rest(echo, path, { method, body, token: null });
      assert.equal(answer.status, 401, `${method} ${path}`);
      assert.match(answer.headers.get('www-authenticate') ?? '', /^Bearer/);
      const wrong = await rest(echo, path, { method, body, token: 'not-a-token-of-anyone-0123456789abcdef' });
      assert.equal(wrong.status, 401, `${method} ${path} with a wrong token`);
    }
    assert.equal(sink.ofType('a2a.task.submitted').length, submitted);
  });

  it('a client reaches only the agents it lists: 403 on every route', async () => {
    for (const [method, path, body] of routes) {
      const answer = await rest(`${gw.url}/a2a/writer`, path, { method, body, token: TOKEN_C });
      assert.equal(answer.status, 403, `${method} ${path}`);
    }
  });

  it('content rules: a raw part is 400 ContentTypeNotSupported (-32005), no task, audited', async () => {
    const submitted = sink.ofType('a2a.task.submitted').length;
    const rejected = sink.ofType('a2a.task.rejected').length;
    const answer = await rest(echo, '/message:send', {
      body: { message: { messageId: 'm-raw', role: 'ROLE_USER', parts: [{ raw: 'aGVsbG8=' }] } },
    });
    assertA2AError(answer, 400, 'INVALID_ARGUMENT', 'CONTENT_TYPE_NOT_SUPPORTED');
    assert.equal(sink.ofType('a2a.task.submitted').length, submitted);
    assert.deepEqual(
      sink
        .ofType('a2a.task.rejected')
        .slice(rejected)
        .map((row) => row.reason),
      ['unsupported_content'],
    );
  });

  it('a tool-call-shaped text is refused on the stream route too', async () => {
    const answer = await rest(echo, '/message:stream', {
      body: { message: message(JSON.stringify({ tool_calls: [{ id: '1' }] })) },
    });
    assert.equal(answer.status, 400, answer.text);
  });

  it('a non-JSON Content-Type is 400 (v1.0.1, not 415) before the body is read', async () => {
    const answer = await rest(echo, '/message:send', {
      body: JSON.stringify({ message: message('x') }),
      headers: { 'content-type': 'text/plain' },
    });
    assertA2AError(answer, 400, 'INVALID_ARGUMENT', 'CONTENT_TYPE_NOT_SUPPORTED');
  });

  it('a body that is not JSON, or not an object, is 400', async () => {
    assertA2AError(await rest(echo, '/message:send', { body: '{nope' }), 400, 'INVALID_ARGUMENT', 'JSON_PARSE_ERROR');
    assertA2AError(await rest(echo, '/message:send', { body: '[1]' }), 400, 'INVALID_ARGUMENT', 'INVALID_REQUEST');
  });

  it('A2A-Version: missing or empty (0.3) and unknown versions are 400; the query parameter works', async () => {
    for (const version of [null, '', '2.0', '0.3']) {
      const answer = await rest(echo, '/tasks', { version });
      assertA2AError(answer, 400, 'FAILED_PRECONDITION', 'VERSION_NOT_SUPPORTED');
    }
    assert.equal((await rest(echo, '/tasks?A2A-Version=1.0', { version: null })).status, 200);
  });

  it('A2A-Extensions and X-A2A-Extensions are read; no card declares one, so none is echoed or required', async () => {
    const answer = await rest(echo, '/tasks', {
      headers: { 'a2a-extensions': 'https://x.example/ext/v1', 'x-a2a-extensions': 'https://y.example/e' },
    });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('a2a-extensions'), null);
  });
});

describe('HTTP+JSON: limits', () => {
  let limited: TestGateway;
  let limitedSink: MemoryAuditSink;
  before(async () => {
    limitedSink = new MemoryAuditSink();
    limited = await startGateway(
      `${withServer('{ host: 127.0.0.1, port: 0, maxBodyBytes: 1024, bodyTimeoutMs: 300 }')}\nlimits: { requestsPerMinute: 5, maxInputChars: 10, maxStreamsPerPrincipal: 1, maxConcurrentTasksPerPrincipal: 1 }\n`,
      { auditSink: limitedSink },
    );
  });
  after(() => limited.close());

  it('413 while the body is still being sent, and the connection is closed', async () => {
    const { hostname, port } = new URL(limited.url);
    const socket = connect(Number(port), hostname);
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('error', () => undefined);
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write(
      `POST /a2a/echo/message:send HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN_A}\r\n` +
        'A2A-Version: 1.0\r\nContent-Type: application/a2a+json\r\nTransfer-Encoding: chunked\r\n\r\n',
    );
    let sent = 0;
    while (received === '' && sent < 256 * 1024 && !socket.destroyed) {
      socket.write(`200\r\n${'x'.repeat(512)}\r\n`);
      sent += 512;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    assert.match(received, /^HTTP\/1\.1 413 /);
    assert.ok(sent < 8 * 1024, `answered after ${sent} bytes`);
    assert.match(received, /"reason":"INVALID_REQUEST"/);
    await Promise.race([closed, new Promise((_, reject) => setTimeout(() => reject(new Error('not closed')), 1000))]);
    assert.equal(limitedSink.ofType('a2a.task.submitted').length, 0);
  });

  it('maxInputChars: 400 naming the limit, no task', async () => {
    const answer = await rest(`${limited.url}/a2a/echo`, '/message:send', {
      body: { message: message('far more than ten characters') },
      token: TOKEN_C,
    });
    assertA2AError(answer, 400, 'INVALID_ARGUMENT', 'INVALID_PARAMS');
    assert.equal(limitedSink.ofType('a2a.task.submitted').length, 0);
  });

  it('a refused inline push config gives its concurrency slot back', async () => {
    const echoUrl = `${limited.url}/a2a/echo`;
    const push = { taskPushNotificationConfig: { url: 'https://hooks.example.com/a2a' } };
    for (let i = 0; i < 2; i++) {
      const refused = await rest(echoUrl, '/message:send', {
        body: { message: message('hi'), configuration: push },
        token: TOKEN_C,
      });
      assert.equal(refused.status, 400, refused.text);
    }
    const sent = await rest(echoUrl, '/message:send', { body: { message: message('hi') }, token: TOKEN_C });
    assert.equal(sent.status, 200, sent.text);
  });

  it('maxStreamsPerPrincipal: a second open stream is 503 with Retry-After, on the shared slot count', async () => {
    const tck = `${limited.url}/a2a/tck`;
    const sent = await rest(tck, '/message:send', {
      body: {
        message: message('hold', `test-resubscribe-message-id-${randomUUID()}`),
        configuration: { returnImmediately: true },
      },
    });
    const id = sent.body.task.id as string;
    const open = await fetch(`${tck}/tasks/${id}:subscribe`, {
      headers: { authorization: `Bearer ${TOKEN_A}`, 'a2a-version': '1.0' },
    });
    const second = await rest(tck, `/tasks/${id}:subscribe`);
    assert.equal(second.status, 503, second.text);
    assert.ok(second.headers.get('retry-after'));
    assert.equal(limitedSink.ofType('a2a.server.rate_limited').at(-1)?.reason, 'stream_limit');
    await open.text();
  });

  it('requestsPerMinute: 429 with Retry-After on the binding’s routes, the same budget as JSON-RPC', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++)
      statuses.push((await rest(`${limited.url}/a2a/echo`, '/tasks', { token: TOKEN_B })).status);
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429]);
    const rpc = await fetch(`${limited.url}/a2a/echo`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN_B}`, 'content-type': 'application/json', 'a2a-version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} }),
    });
    assert.equal(rpc.status, 429);
  });
});

describe('HTTP+JSON: server.httpJson: false', () => {
  it('serves no binding route and lists no HTTP+JSON interface', async () => {
    const off = await startGateway(withServer('{ host: 127.0.0.1, port: 0, httpJson: false }'));
    try {
      const answer = await rest(`${off.url}/a2a/echo`, '/message:send', { body: { message: message('x') } });
      assert.equal(answer.status, 404);
      const card = (await (
        await fetch(`${off.url}/a2a/echo/.well-known/agent-card.json`, { headers: { 'a2a-version': '1.0' } })
      ).json()) as any;
      assert.ok(card.supportedInterfaces.every((i: any) => i.protocolBinding === 'JSONRPC'));
    } finally {
      await off.close();
    }
  });
});
