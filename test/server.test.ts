/**
 * End to end over real HTTP on loopback: routes, auth, cards, JSON-RPC errors and every
 * method in both dialects, written as raw wire JSON (the SDK interop suite is separate).
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import {
  rpc,
  rpcStream,
  startGateway,
  TOKEN_B,
  TOKEN_C,
  v03Message,
  v10Message,
  type TestGateway,
} from './helpers/gateway.js';

let gw: TestGateway;
let echo: string;
let writer: string;
let tck: string;

before(async () => {
  gw = await startGateway();
  echo = `${gw.url}/a2a/echo`;
  writer = `${gw.url}/a2a/writer`;
  tck = `${gw.url}/a2a/tck`;
});
after(async () => {
  await gw.close();
});

describe('authentication', () => {
  it('refuses a call without a token with 401 and WWW-Authenticate, and creates no task', async () => {
    const response = await rpc(echo, 'SendMessage', { message: v10Message('hi') }, { token: null, version: '1.0' });
    assert.equal(response.status, 401);
    assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer/);
    assert.equal(gw.gateway.service.running, 0);
    const listed = await rpc(echo, 'ListTasks', {}, { version: '1.0' });
    assert.equal(listed.body.result.totalSize, 0);
  });

  it('refuses a wrong token with 401', async () => {
    const response = await rpc(echo, 'message/send', { message: v03Message('hi') }, { token: 'x'.repeat(40) });
    assert.equal(response.status, 401);
  });

  it('refuses a malformed Authorization header with 401', async () => {
    const response = await fetch(echo, {
      method: 'POST',
      headers: { authorization: 'Basic abc', 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(response.status, 401);
  });

  it('refuses a client that may not call this agent with 403, and admits it where it may', async () => {
    const refused = await rpc(writer, 'message/send', { message: v03Message('hi') }, { token: TOKEN_C });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.status, 'PERMISSION_DENIED');
    const admitted = await rpc(echo, 'message/send', { message: v03Message('hi') }, { token: TOKEN_C });
    assert.equal(admitted.status, 200);
  });

  it('admits the right token', async () => {
    const response = await rpc(echo, 'message/send', { message: v03Message('hi') });
    assert.equal(response.status, 200);
    assert.equal(response.body.result.kind, 'task');
  });
});

describe('agent cards', () => {
  it('serves the v0.3 shape without a version header', async () => {
    const response = await fetch(`${echo}/.well-known/agent-card.json`);
    assert.equal(response.status, 200);
    const card = (await response.json()) as any;
    assert.equal(card.protocolVersion, '0.3.0');
    assert.equal(card.url, echo);
    assert.equal(card.preferredTransport, 'JSONRPC');
    assert.deepEqual(card.securitySchemes.bearer.type, 'http');
    assert.equal(response.headers.get('vary'), 'A2A-Version');
    assert.ok(response.headers.get('etag'));
    assert.ok(response.headers.get('cache-control'));
    assert.ok(response.headers.get('last-modified'));
  });

  it('serves the v1.0 shape with A2A-Version: 1.0', async () => {
    const response = await fetch(`${echo}/.well-known/agent-card.json`, { headers: { 'a2a-version': '1.0' } });
    const card = (await response.json()) as any;
    assert.equal(card.protocolVersion, undefined);
    assert.deepEqual(
      card.supportedInterfaces.map((i: any) => [i.url, i.protocolBinding, i.protocolVersion]),
      [
        [echo, 'JSONRPC', '1.0'],
        [echo, 'JSONRPC', '0.3'],
        [echo, 'HTTP+JSON', '1.0'],
      ],
    );
    assert.ok(card.securitySchemes.bearer.httpAuthSecurityScheme);
  });

  it('serves the default agent at the root well-known path', async () => {
    const root = (await (await fetch(`${gw.url}/.well-known/agent-card.json`)).json()) as any;
    assert.equal(root.name, 'Echo');
  });

  it('answers an unsupported version with 400 and -32009', async () => {
    const response = await fetch(`${echo}/.well-known/agent-card.json`, { headers: { 'a2a-version': '9.9' } });
    assert.equal(response.status, 400);
    const body = (await response.json()) as any;
    assert.equal(body.error.code, -32009);
  });

  it('serves a version-pinned card whatever the header says', async () => {
    const v10Card = (await (await fetch(`${echo}/v1.0/.well-known/agent-card.json`)).json()) as any;
    assert.ok(Array.isArray(v10Card.supportedInterfaces));
    assert.equal(v10Card.protocolVersion, undefined);
    const v03Card = (await (
      await fetch(`${echo}/v0.3/.well-known/agent-card.json`, { headers: { 'a2a-version': '1.0' } })
    ).json()) as any;
    assert.equal(v03Card.protocolVersion, '0.3.0');
  });

  it('answers a matching If-None-Match with 304', async () => {
    const first = await fetch(`${echo}/.well-known/agent-card.json`);
    const etag = first.headers.get('etag') ?? '';
    const second = await fetch(`${echo}/.well-known/agent-card.json`, { headers: { 'if-none-match': etag } });
    assert.equal(second.status, 304);
  });

  /** fetch() will not send a Host header of our choosing; node:http will. */
  function cardWithHost(host: string): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      const req = request(`${echo}/.well-known/agent-card.json`, { headers: { host } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve(text));
      });
      req.on('error', reject);
      req.end();
    });
  }

  it('never puts a non-loopback Host header in a card', async () => {
    const body = await cardWithHost('evil.example:443');
    assert.doesNotMatch(body, /evil\.example/);
    assert.match(body, /http:\/\/127\.0\.0\.1:\d+\/a2a\/echo/);
  });

  it('uses a loopback Host header', async () => {
    const port = new URL(gw.url).port;
    const body = await cardWithHost(`localhost:${port}`);
    assert.match(body, new RegExp(`http://localhost:${port}/a2a/echo`));
  });

  it('does not reveal the backend or the clients', async () => {
    const text = await (
      await fetch(`${tck}/.well-known/agent-card.json`, { headers: { 'a2a-version': '1.0' } })
    ).text();
    assert.doesNotMatch(text, /"type":"conformance"|resubscribeHoldMs|token-for-client|clients|anonymousLoopback/);
  });
});

describe('JSON-RPC framing', () => {
  async function raw(body: string, version?: string): Promise<any> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      authorization: `Bearer ${TOKEN_B}`,
    };
    if (version !== undefined) headers['a2a-version'] = version;
    const response = await fetch(echo, { method: 'POST', headers, body });
    return response.json();
  }

  it('answers invalid JSON with -32700', async () => {
    assert.equal((await raw('{not json')).error.code, -32700);
  });
  it('refuses batches with -32600', async () => {
    assert.equal((await raw('[]')).error.code, -32600);
  });
  it('refuses notifications with -32600', async () => {
    assert.equal((await raw('{"jsonrpc":"2.0","method":"tasks/get","params":{"id":"x"}}')).error.code, -32600);
  });
  it('reports the most specific problem of a notification first', async () => {
    assert.equal((await raw('{"jsonrpc":"2.0","method":"message/ssend","params":{}}')).error.code, -32601);
    assert.equal((await raw('{"jsonrpc":"2.0","method":"message/send","params":{"":"x"}}')).error.code, -32602);
  });
  it('answers a failed v0.3 tasks/resubscribe as an event stream', async () => {
    const response = await fetch(echo, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN_B}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tasks/resubscribe', params: { id: 'nope' } }),
    });
    assert.match(response.headers.get('content-type') ?? '', /text\/event-stream/);
    const text = await response.text();
    assert.match(text, /^event: error\ndata: /);
    assert.equal(JSON.parse(text.split('data: ')[1]!).error.code, -32001);
  });
  it('refuses a wrong jsonrpc version with -32600, keeping the id', async () => {
    const body = await raw('{"jsonrpc":"1.0","id":"abc","method":"tasks/get"}');
    assert.equal(body.error.code, -32600);
    assert.equal(body.id, 'abc');
  });
  it('writes back a string id as sent, in a send answer and in every stream frame, in both dialects', async () => {
    const id = 'req "7" \\ é';
    for (const [version, send, stream, message] of [
      [undefined, 'message/send', 'message/stream', v03Message('hello')],
      ['1.0', 'SendMessage', 'SendStreamingMessage', v10Message('hello')],
    ] as const) {
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        authorization: `Bearer ${TOKEN_B}`,
      };
      if (version !== undefined) headers['a2a-version'] = version;
      const answer = await fetch(echo, {
        method: 'POST',
        headers,
        body: JSON.stringify({ jsonrpc: '2.0', id, method: send, params: { message } }),
      });
      assert.equal(((await answer.json()) as { id: unknown }).id, id);
      const streamed = await fetch(echo, {
        method: 'POST',
        headers,
        body: JSON.stringify({ jsonrpc: '2.0', id, method: stream, params: { message } }),
      });
      const frames = (await streamed.text()).split('\n').filter((line) => line.startsWith('data: '));
      assert.ok(frames.length >= 2, `${stream}: ${frames.length} frames`);
      for (const frame of frames) {
        const parsed = JSON.parse(frame.slice(6)) as { jsonrpc: string; id: unknown; result: unknown };
        assert.deepEqual([parsed.jsonrpc, parsed.id, typeof parsed.result], ['2.0', id, 'object'], frame);
      }
    }
  });
  it('answers an unknown method with -32601', async () => {
    assert.equal((await raw('{"jsonrpc":"2.0","id":1,"method":"tasks/explode","params":{}}')).error.code, -32601);
  });
  it('answers an unsupported A2A-Version with -32009', async () => {
    const body = await raw('{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}', '2.5');
    assert.equal(body.error.code, -32009);
  });
  it('shapes v1.0 errors with ErrorInfo', async () => {
    const body = await raw('{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"nope"}}', '1.0');
    assert.equal(body.error.code, -32001);
    assert.ok(Array.isArray(body.error.data));
    assert.equal(body.error.data[0]['@type'], 'type.googleapis.com/google.rpc.ErrorInfo');
    assert.equal(body.error.data[0].reason, 'TASK_NOT_FOUND');
  });
  it('refuses an oversized body with 413 before reading it whole', async () => {
    const big = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'message/send',
      params: { pad: 'x'.repeat(2_000_000) },
    });
    const response = await fetch(echo, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN_B}` },
      body: big,
    });
    assert.equal(response.status, 413);
    assert.equal(((await response.json()) as any).error.code, -32600);
  });
  it('refuses an empty parts list, a missing role and a negative historyLength with -32602', async () => {
    const noParts = await rpc(echo, 'message/send', { message: v03Message('x', { parts: [] }) });
    assert.equal(noParts.body.error.code, -32602);
    const message = v03Message('x');
    delete message.role;
    const noRole = await rpc(echo, 'message/send', { message });
    assert.equal(noRole.body.error.code, -32602);
    const negative = await rpc(echo, 'tasks/get', { id: 'x', historyLength: -1 });
    assert.equal(negative.body.error.code, -32602);
  });
  it('refuses a non-JSON Content-Type with -32005 before parsing', async () => {
    const response = await fetch(echo, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', authorization: `Bearer ${TOKEN_B}` },
      body: "{'jsonrpc': '2.0'}",
    });
    assert.equal(((await response.json()) as any).error.code, -32005);
  });

  it('accepts application/*+json', async () => {
    const response = await fetch(echo, {
      method: 'POST',
      headers: { 'content-type': 'application/a2a+json; charset=utf-8', authorization: `Bearer ${TOKEN_B}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: 'nope' } }),
    });
    assert.equal(((await response.json()) as any).error.code, -32001);
  });

  it('answers push-notification methods with -32003', async () => {
    const v03 = await rpc(echo, 'tasks/pushNotificationConfig/set', {
      taskId: 'x',
      pushNotificationConfig: { url: 'https://example.com' },
    });
    assert.equal(v03.body.error.code, -32003);
    const v10 = await rpc(
      echo,
      'CreateTaskPushNotificationConfig',
      { taskId: 'x', url: 'https://example.com' },
      { version: '1.0' },
    );
    assert.equal(v10.body.error.code, -32003);
  });
});

describe('v1.0 methods', () => {
  it('SendMessage blocks until completed and wraps the task', async () => {
    const { body } = await rpc(echo, 'SendMessage', { message: v10Message('hello') }, { version: '1.0' });
    const task = body.result.task;
    assert.equal(task.status.state, 'TASK_STATE_COMPLETED');
    assert.equal(task.kind, undefined);
    assert.equal(task.artifacts[0].parts[0].text, 'hello');
    assert.equal(task.history[0].role, 'ROLE_USER');
  });

  it('SendMessage with returnImmediately returns before the end; GetTask sees it finish', async () => {
    const { body } = await rpc(
      writer,
      'SendMessage',
      { message: v10Message('the sea'), configuration: { returnImmediately: true } },
      { version: '1.0' },
    );
    const task = body.result.task;
    assert.ok(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING'].includes(task.status.state));
    let state = task.status.state;
    for (let i = 0; i < 100 && state !== 'TASK_STATE_COMPLETED'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      state = (await rpc(writer, 'GetTask', { id: task.id }, { version: '1.0' })).body.result.status.state;
    }
    assert.equal(state, 'TASK_STATE_COMPLETED');
  });

  it('SendStreamingMessage streams the task, ≥ 5 artifact chunks, then completed', async () => {
    const { events, contentType } = await rpcStream(
      writer,
      'SendStreamingMessage',
      { message: v10Message('the sea') },
      { version: '1.0' },
    );
    assert.match(contentType ?? '', /text\/event-stream/);
    const results = events.map((event) => event.result);
    assert.ok(results[0].task, 'the first event is the task');
    const chunks = results.filter((result) => result.artifactUpdate);
    assert.ok(chunks.length >= 5, `got ${chunks.length} chunks`);
    assert.equal(chunks[0].artifactUpdate.append ?? false, false);
    assert.ok(chunks.slice(1).every((chunk) => chunk.artifactUpdate.append === true));
    const last = results[results.length - 1];
    assert.equal(last.statusUpdate.status.state, 'TASK_STATE_COMPLETED');
    assert.equal(last.statusUpdate.final, undefined);
  });

  it('a direct message reply has no task', async () => {
    const { body } = await rpc(
      tck,
      'SendMessage',
      { message: v10Message('x', { messageId: 'tck-message-response-1' }) },
      { version: '1.0' },
    );
    assert.equal(body.result.message.parts[0].text, 'Direct message response');
    assert.equal(body.result.task, undefined);
  });

  it('GetTask honours historyLength', async () => {
    const { body } = await rpc(echo, 'SendMessage', { message: v10Message('one') }, { version: '1.0' });
    const id = body.result.task.id;
    const none = await rpc(echo, 'GetTask', { id, historyLength: 0 }, { version: '1.0' });
    assert.equal(none.body.result.history, undefined);
    const one = await rpc(echo, 'GetTask', { id, historyLength: 1 }, { version: '1.0' });
    assert.equal(one.body.result.history.length, 1);
  });

  it('ListTasks pages newest first and omits artifacts unless asked', async () => {
    const contextId = `ctx-list-${Date.now()}`;
    for (let i = 0; i < 5; i++) {
      await rpc(echo, 'SendMessage', { message: v10Message(`n${i}`, { contextId }) }, { version: '1.0' });
    }
    const first = await rpc(echo, 'ListTasks', { contextId, pageSize: 2 }, { version: '1.0' });
    assert.equal(first.body.result.tasks.length, 2);
    assert.equal(first.body.result.totalSize, 5);
    assert.equal(first.body.result.pageSize, 2);
    assert.ok(first.body.result.nextPageToken.length > 0);
    assert.equal(first.body.result.tasks[0].artifacts, undefined);
    const seen = new Set<string>(first.body.result.tasks.map((task: any) => task.id));
    let token = first.body.result.nextPageToken;
    while (token !== '') {
      const page = await rpc(
        echo,
        'ListTasks',
        { contextId, pageSize: 2, pageToken: token, includeArtifacts: true },
        { version: '1.0' },
      );
      for (const task of page.body.result.tasks) {
        assert.ok(task.artifacts.length > 0);
        seen.add(task.id);
      }
      token = page.body.result.nextPageToken;
    }
    assert.equal(seen.size, 5);
    const bad = await rpc(echo, 'ListTasks', { pageSize: 101 }, { version: '1.0' });
    assert.equal(bad.body.error.code, -32602);
  });

  it('CancelTask cancels a waiting task and refuses a finished one with -32002', async () => {
    const { body } = await rpc(writer, 'SendMessage', { message: v10Message('ask me') }, { version: '1.0' });
    const task = body.result.task;
    assert.equal(task.status.state, 'TASK_STATE_INPUT_REQUIRED');
    const canceled = await rpc(writer, 'CancelTask', { id: task.id }, { version: '1.0' });
    assert.equal(canceled.body.result.status.state, 'TASK_STATE_CANCELED');
    const again = await rpc(writer, 'CancelTask', { id: task.id }, { version: '1.0' });
    assert.equal(again.body.error.code, -32002);
  });

  it('multi-turn: input-required, then the answer on the same task completes it', async () => {
    const first = await rpc(writer, 'SendMessage', { message: v10Message('ask me') }, { version: '1.0' });
    const task = first.body.result.task;
    assert.equal(task.status.state, 'TASK_STATE_INPUT_REQUIRED');
    const second = await rpc(
      writer,
      'SendMessage',
      { message: v10Message('mountains', { taskId: task.id, contextId: task.contextId }) },
      { version: '1.0' },
    );
    assert.equal(second.body.result.task.id, task.id);
    assert.equal(second.body.result.task.status.state, 'TASK_STATE_COMPLETED');
    assert.match(JSON.stringify(second.body.result.task.artifacts), /mountains/);
    const terminal = await rpc(
      writer,
      'SendMessage',
      { message: v10Message('more', { taskId: task.id }) },
      { version: '1.0' },
    );
    assert.equal(terminal.body.error.code, -32004);
  });

  it('refuses an unknown taskId with -32001 and a taskId/contextId mismatch with -32602', async () => {
    const unknown = await rpc(
      echo,
      'SendMessage',
      { message: v10Message('x', { taskId: 'made-up' }) },
      { version: '1.0' },
    );
    assert.equal(unknown.body.error.code, -32001);
    const first = await rpc(writer, 'SendMessage', { message: v10Message('ask me') }, { version: '1.0' });
    const mismatch = await rpc(
      writer,
      'SendMessage',
      { message: v10Message('x', { taskId: first.body.result.task.id, contextId: 'other-context' }) },
      { version: '1.0' },
    );
    assert.equal(mismatch.body.error.code, -32602);
  });

  it('a follow-up in the same contextId is a new task in that context', async () => {
    const first = await rpc(echo, 'SendMessage', { message: v10Message('one') }, { version: '1.0' });
    const contextId = first.body.result.task.contextId;
    const second = await rpc(echo, 'SendMessage', { message: v10Message('two', { contextId }) }, { version: '1.0' });
    assert.equal(second.body.result.task.contextId, contextId);
    assert.notEqual(second.body.result.task.id, first.body.result.task.id);
  });

  it('SubscribeToTask starts with the task snapshot; -32004 on a finished task', async () => {
    const { body } = await rpc(
      tck,
      'SendMessage',
      {
        message: v10Message('x', { messageId: 'test-resubscribe-message-id-1' }),
        configuration: { returnImmediately: true },
      },
      { version: '1.0' },
    );
    const id = body.result.task.id;
    const { events } = await rpcStream(tck, 'SubscribeToTask', { id }, { version: '1.0' });
    assert.equal(events[0].result.task.id, id);
    assert.equal(events[events.length - 1].result.statusUpdate.status.state, 'TASK_STATE_COMPLETED');
    const done = await rpc(tck, 'SubscribeToTask', { id }, { version: '1.0' });
    assert.equal(done.body.error.code, -32004);
  });

  it('SubscribeToTask on an input-required task stays open through the answering turn', async () => {
    const { body } = await rpc(writer, 'SendMessage', { message: v10Message('ask me') }, { version: '1.0' });
    const task = body.result.task;
    const subscribed = rpcStream(writer, 'SubscribeToTask', { id: task.id }, { version: '1.0' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const answer = await rpc(
      writer,
      'SendMessage',
      { message: v10Message('rivers', { taskId: task.id }) },
      { version: '1.0' },
    );
    assert.equal(answer.body.result.task.status.state, 'TASK_STATE_COMPLETED');
    const { events } = await subscribed;
    assert.equal(events[0].result.task.status.state, 'TASK_STATE_INPUT_REQUIRED');
    assert.ok(events.some((event) => event.result.artifactUpdate !== undefined));
    assert.equal(events[events.length - 1].result.statusUpdate.status.state, 'TASK_STATE_COMPLETED');
  });

  it('GetExtendedAgentCard returns the extended card with the real skills; the public card has one generic skill', async () => {
    const card = await rpc(echo, 'GetExtendedAgentCard', {}, { version: '1.0' });
    assert.equal(card.body.result.description, 'Echoes, for members.');
    const extended = await rpc(writer, 'GetExtendedAgentCard', {}, { version: '1.0' });
    assert.equal(extended.body.result.description, 'Writes.');
    assert.deepEqual(
      extended.body.result.skills.map((skill: { id: string }) => skill.id),
      ['write'],
    );
    const response = await fetch(`${writer}/.well-known/agent-card.json`, { headers: { 'a2a-version': '1.0' } });
    const publicCard = (await response.json()) as {
      skills: { id: string }[];
      capabilities: { extendedAgentCard: boolean };
    };
    assert.deepEqual(
      publicCard.skills.map((skill) => skill.id),
      ['general'],
    );
    assert.equal(publicCard.capabilities.extendedAgentCard, true);
  });
});

describe('v0.3 methods', () => {
  it('message/send returns a bare task with kind and lowercase states', async () => {
    const { body } = await rpc(echo, 'message/send', { message: v03Message('hello') });
    assert.equal(body.result.kind, 'task');
    assert.equal(body.result.status.state, 'completed');
    assert.equal(body.result.artifacts[0].parts[0].kind, 'text');
  });

  it('blocking: false returns at once', async () => {
    const { body } = await rpc(writer, 'message/send', {
      message: v03Message('slow'),
      configuration: { blocking: false },
    });
    assert.ok(['submitted', 'working'].includes(body.result.status.state));
  });

  it('message/stream ends with final: true', async () => {
    const { events } = await rpcStream(writer, 'message/stream', { message: v03Message('the sea') });
    const results = events.map((event) => event.result);
    assert.equal(results[0].kind, 'task');
    const chunks = results.filter((result) => result.kind === 'artifact-update');
    assert.ok(chunks.length >= 5);
    const last = results[results.length - 1];
    assert.equal(last.kind, 'status-update');
    assert.equal(last.final, true);
    assert.equal(last.status.state, 'completed');
    assert.ok(results.slice(0, -1).every((result) => result.final !== true));
  });

  it('message/stream closes on input-required with final: true', async () => {
    const { events } = await rpcStream(writer, 'message/stream', { message: v03Message('ask me') });
    const last = events[events.length - 1].result;
    assert.equal(last.status.state, 'input-required');
    assert.equal(last.final, true);
  });

  it('tasks/get, tasks/cancel and tasks/resubscribe', async () => {
    const { body } = await rpc(writer, 'message/send', { message: v03Message('ask me') });
    const id = body.result.id;
    const got = await rpc(writer, 'tasks/get', { id });
    assert.equal(got.body.result.status.state, 'input-required');
    // A subscription stays open across input-required and ends when the task does.
    const resubscribed = rpcStream(writer, 'tasks/resubscribe', { id });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const canceled = await rpc(writer, 'tasks/cancel', { id });
    assert.equal(canceled.body.result.status.state, 'canceled');
    const resub = await resubscribed;
    assert.equal(resub.events[0].result.kind, 'task');
    const last = resub.events[resub.events.length - 1].result;
    assert.equal(last.status.state, 'canceled');
    assert.equal(last.final, true);
    const done = await rpcStream(writer, 'tasks/resubscribe', { id });
    assert.equal(done.events[0].error.code, -32004);
  });

  it('ListTasks does not exist in v0.3', async () => {
    const { body } = await rpc(echo, 'tasks/list', {});
    assert.equal(body.error.code, -32601);
  });

  it('agent/getAuthenticatedExtendedCard returns the v0.3 shape', async () => {
    const { body } = await rpc(echo, 'agent/getAuthenticatedExtendedCard', undefined);
    assert.equal(body.result.protocolVersion, '0.3.0');
  });
});

describe('isolation between clients', () => {
  it('another client’s task is answered like a missing one', async () => {
    const { body } = await rpc(writer, 'SendMessage', { message: v10Message('ask me') }, { version: '1.0' });
    const id = body.result.task.id;
    const missing = await rpc(writer, 'GetTask', { id: 'no-such-task' }, { version: '1.0', token: TOKEN_B });
    const get = await rpc(writer, 'GetTask', { id }, { version: '1.0', token: TOKEN_B });
    assert.deepEqual(get.body.error, missing.body.error);
    const cancel = await rpc(writer, 'CancelTask', { id }, { version: '1.0', token: TOKEN_B });
    assert.equal(cancel.body.error.code, -32001);
    const resume = await rpc(
      writer,
      'SendMessage',
      { message: v10Message('x', { taskId: id }) },
      { version: '1.0', token: TOKEN_B },
    );
    assert.equal(resume.body.error.code, -32001);
    const list = await rpc(writer, 'ListTasks', {}, { version: '1.0', token: TOKEN_B });
    assert.ok(list.body.result.tasks.every((task: any) => task.id !== id));
    const mine = await rpc(writer, 'GetTask', { id }, { version: '1.0' });
    assert.equal(mine.body.result.id, id);
  });

  it('refuses outbound bookkeeping ids', async () => {
    const { body } = await rpc(echo, 'GetTask', { id: 'a2a-out-123' }, { version: '1.0' });
    assert.equal(body.error.code, -32001);
  });
});

describe('cancel mid-stream', () => {
  it('aborts the backend and ends the stream with canceled', async () => {
    const headers = {
      'content-type': 'application/json',
      authorization: `Bearer ${TOKEN_B}`,
      'a2a-version': '1.0',
    };
    const response = await fetch(tck, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendStreamingMessage',
        params: { message: v10Message('x', { messageId: 'test-resubscribe-message-id-2' }) },
      }),
    });
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes('\n\n')) text += decoder.decode((await reader.read()).value);
    const first = JSON.parse(text.split('\n\n')[0]!.slice(6));
    const id = first.result.task.id;
    const started = Date.now();
    const canceled = await rpc(tck, 'CancelTask', { id }, { version: '1.0', token: TOKEN_B });
    assert.equal(canceled.body.result.status.state, 'TASK_STATE_CANCELED');
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) break;
      text += decoder.decode(chunk.value);
    }
    assert.ok(Date.now() - started < 250, 'the stream ended promptly');
    assert.match(text, /TASK_STATE_CANCELED/);
    assert.doesNotMatch(text, /TASK_STATE_COMPLETED/);
    assert.equal(gw.gateway.service.running, 0);
  });
});
