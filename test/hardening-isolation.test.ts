/**
 * Isolation between callers, end to end over HTTP, for what test/server.test.ts does not cover
 * yet: a task that is still RUNNING, compared byte for byte with a missing one in both
 * dialects; invented task ids; and spoofed Host headers on the extended card and openapi.json.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { MemoryAuditSink } from '../src/audit/index.js';
import {
  rpc,
  rpcText,
  startGateway,
  TOKEN_A,
  TOKEN_B,
  v03Message,
  v10Message,
  type TestGateway,
} from './helpers/gateway.js';

const YAML = `
server: { host: 127.0.0.1, port: 0, defaultAgent: echo, rest: true }
agents:
  - slug: echo
    name: Echo
    description: Echoes.
    skills: [{ id: echo, name: Echo, description: Echoes text }]
    backend: { type: echo }
    extendedCard: { description: 'Echoes, for members.' }
  - slug: slow
    name: Slow
    description: Writes slowly.
    skills: [{ id: write, name: Write, description: Writes text }]
    backend: { type: writer, chunkDelayMs: 10000 }
clients:
  - { id: a, token: "\${TOKEN_A}", agents: [echo, slow] }
  - { id: b, token: "\${TOKEN_B}", agents: [echo, slow] }
`;

let gw: TestGateway;
let sink: MemoryAuditSink;
before(async () => {
  sink = new MemoryAuditSink();
  gw = await startGateway(YAML, { auditSink: sink });
});
after(() => gw.close());

describe('a running task of another client', () => {
  it('is answered exactly like a missing id by GetTask, CancelTask, SubscribeToTask and ListTasks (v1.0), and stays running', async () => {
    const slow = `${gw.url}/a2a/slow`;
    const started = await rpc(
      slow,
      'SendMessage',
      { message: v10Message('a long story'), configuration: { returnImmediately: true } },
      { version: '1.0' },
    );
    const { id, contextId } = started.body.result.task;
    try {
      assert.equal(
        (await rpc(slow, 'GetTask', { id }, { version: '1.0' })).body.result.status.state,
        'TASK_STATE_WORKING',
      );
      const missing = 'no-such-task-00000000000000000000';
      for (const method of ['GetTask', 'CancelTask', 'SubscribeToTask']) {
        const absent = await rpcText(slow, method, { id: missing }, { version: '1.0', token: TOKEN_B });
        const theirs = await rpcText(slow, method, { id }, { version: '1.0', token: TOKEN_B });
        assert.equal(JSON.parse(absent.text).error.code, -32001, method);
        assert.equal(theirs.status, absent.status, method);
        assert.equal(theirs.headers.get('content-type'), absent.headers.get('content-type'), method);
        assert.equal(theirs.text, absent.text, `${method}: the same bytes as for a missing id`);
      }
      const listedByContext = await rpcText(slow, 'ListTasks', { contextId }, { version: '1.0', token: TOKEN_B });
      const listedNowhere = await rpcText(
        slow,
        'ListTasks',
        { contextId: 'no-such-context' },
        { version: '1.0', token: TOKEN_B },
      );
      assert.equal(listedByContext.text, listedNowhere.text);
      const listedAll = await rpc(slow, 'ListTasks', {}, { version: '1.0', token: TOKEN_B });
      assert.equal(listedAll.body.result.totalSize, 0);
      // b's CancelTask did nothing: the task still runs for a.
      assert.equal(
        (await rpc(slow, 'GetTask', { id }, { version: '1.0' })).body.result.status.state,
        'TASK_STATE_WORKING',
      );
      assert.equal(gw.gateway.service.running, 1);
    } finally {
      await rpc(slow, 'CancelTask', { id }, { version: '1.0' });
    }
  });

  it('is answered exactly like a missing id by tasks/get, tasks/cancel and tasks/resubscribe (v0.3), and stays running', async () => {
    const slow = `${gw.url}/a2a/slow`;
    const started = await rpc(slow, 'message/send', {
      message: v03Message('a long story'),
      configuration: { blocking: false },
    });
    const { id } = started.body.result;
    try {
      const missing = 'no-such-task-00000000000000000000';
      for (const method of ['tasks/get', 'tasks/cancel', 'tasks/resubscribe']) {
        const absent = await rpcText(slow, method, { id: missing }, { token: TOKEN_B });
        const theirs = await rpcText(slow, method, { id }, { token: TOKEN_B });
        assert.match(absent.text, /-32001/, method);
        assert.equal(theirs.status, absent.status, method);
        assert.equal(theirs.headers.get('content-type'), absent.headers.get('content-type'), method);
        assert.equal(theirs.text, absent.text, `${method}: the same bytes as for a missing id`);
      }
      assert.equal((await rpc(slow, 'tasks/get', { id })).body.result.status.state, 'working');
    } finally {
      await rpc(slow, 'tasks/cancel', { id });
    }
  });

  it('cannot be continued by another client: its id in a message is -32001 (not "still running")', async () => {
    const slow = `${gw.url}/a2a/slow`;
    const started = await rpc(
      slow,
      'SendMessage',
      { message: v10Message('a long story'), configuration: { returnImmediately: true } },
      { version: '1.0' },
    );
    const { id } = started.body.result.task;
    try {
      const own = await rpc(slow, 'SendMessage', { message: v10Message('more', { taskId: id }) }, { version: '1.0' });
      assert.equal(own.body.error.code, -32004, 'the owner is told the task is busy');
      const absent = await rpcText(
        slow,
        'SendMessage',
        { message: v10Message('more', { taskId: 'no-such-task-00000000000000000000' }) },
        { version: '1.0', token: TOKEN_B },
      );
      const theirs = await rpcText(
        slow,
        'SendMessage',
        { message: v10Message('more', { taskId: id }) },
        { version: '1.0', token: TOKEN_B },
      );
      assert.equal(JSON.parse(theirs.text).error.code, -32001);
      assert.equal(theirs.text, absent.text);
    } finally {
      await rpc(slow, 'CancelTask', { id }, { version: '1.0' });
    }
  });
});

describe('client-invented task ids', () => {
  it('a message naming a taskId the gateway never issued is -32001 in both dialects, and creates no task', async () => {
    const echo = `${gw.url}/a2a/echo`;
    const before = sink.ofType('a2a.task.submitted').length;
    const v10 = await rpc(
      echo,
      'SendMessage',
      { message: v10Message('x', { taskId: 'my-own-task-id-1' }) },
      { version: '1.0' },
    );
    assert.equal(v10.body.error.code, -32001);
    const v03 = await rpc(echo, 'message/send', { message: v03Message('x', { taskId: 'my-own-task-id-2' }) });
    assert.equal(v03.body.error.code, -32001);
    const stream = await rpcText(echo, 'message/stream', { message: v03Message('x', { taskId: 'my-own-task-id-3' }) });
    assert.match(stream.text, /-32001/);
    assert.equal(sink.ofType('a2a.task.submitted').length, before);
    for (const id of ['my-own-task-id-1', 'my-own-task-id-2', 'my-own-task-id-3']) {
      assert.equal((await rpc(echo, 'GetTask', { id }, { version: '1.0' })).body.error.code, -32001);
    }
  });
});

/** fetch() will not send a Host header of our choosing; node:http will. */
function withHost(
  url: string,
  host: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: options.method ?? 'GET', headers: { ...options.headers, host, 'x-forwarded-host': host } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

describe('spoofed Host headers', () => {
  const SPOOFED = 'evil.example:443';

  it('never put a non-loopback Host in the extended card (both dialects) or openapi.json', async () => {
    const echo = `${gw.url}/a2a/echo`;
    const own = new RegExp(`http://127\\.0\\.0\\.1:${new URL(gw.url).port}/a2a/echo`);
    const rpcHeaders = { 'content-type': 'application/json', authorization: `Bearer ${TOKEN_A}` };
    const answers = [
      await withHost(echo, SPOOFED, {
        method: 'POST',
        headers: { ...rpcHeaders, 'a2a-version': '1.0' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetExtendedAgentCard', params: {} }),
      }),
      await withHost(echo, SPOOFED, {
        method: 'POST',
        headers: rpcHeaders,
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'agent/getAuthenticatedExtendedCard' }),
      }),
      await withHost(`${echo}/openapi.json`, SPOOFED),
      await withHost(`${echo}/v1.0/.well-known/agent-card.json`, SPOOFED),
      await withHost(`${gw.url}/.well-known/agent-card.json`, 'evil.example'),
    ];
    for (const answer of answers) {
      assert.equal(answer.status, 200, answer.text.slice(0, 200));
      assert.doesNotMatch(answer.text, /evil\.example/);
      assert.match(answer.text, own);
    }
    assert.match(answers[0]!.text, /Echoes, for members\./, 'it is the extended card');
  });
});
