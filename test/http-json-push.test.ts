/**
 * Push-notification configs over the HTTP+JSON binding, against a real gateway on loopback: the
 * four `/tasks/{id}/pushNotificationConfigs[/{configId}]` routes, ownership (another caller's
 * task is 404), refused webhooks (400, nothing stored, no connection made), push off (the
 * -32003 status), and inline configs on `message:send` and `message:stream`, delivered to a
 * loopback receiver.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { startPushListeners, type PushListeners, type ReceivedPush } from './helpers/push-listeners.js';
import { DEFAULT_YAML, eventually, rpc, startGateway, TOKEN_A, TOKEN_B, type TestGateway } from './helpers/gateway.js';

const PUSH_YAML = `${DEFAULT_YAML}
push:
  enabled: true
  allowPrivate: [127.0.0.1]
  allowHttpLoopback: true
  maxConfigsPerTask: 3
`;

interface RestAnswer {
  status: number;
  body: any;
  text: string;
}

/** One binding request at A2A-Version 1.0; `token` defaults to client a's. */
async function rest(
  base: string,
  path: string,
  options: { method?: string; body?: unknown; token?: string } = {},
): Promise<RestAnswer> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${options.token ?? TOKEN_A}`,
    'a2a-version': '1.0',
  };
  const init: RequestInit = { method: options.method ?? (options.body === undefined ? 'GET' : 'POST'), headers };
  if (options.body !== undefined) {
    headers['content-type'] = 'application/a2a+json';
    init.body = JSON.stringify(options.body);
  }
  const response = await fetch(`${base}${path}`, init);
  const text = await response.text();
  let body: unknown;
  try {
    body = text.length > 0 ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: response.status, body, text };
}

/** The ErrorInfo reason of an HTTP+JSON error body. */
function reasonOf(answer: RestAnswer): unknown {
  return answer.body?.error?.details?.find((detail: any) => String(detail['@type']).endsWith('ErrorInfo'))?.reason;
}

function message(text: string, messageId = `m-${randomUUID()}`): Record<string, unknown> {
  return { messageId, role: 'ROLE_USER', parts: [{ text }] };
}

let gw: TestGateway;
let off: TestGateway;
let listeners: PushListeners;
let trapPort = 0;
let receiverPort = 0;
let received: ReceivedPush[] = [];

before(async () => {
  gw = await startGateway(PUSH_YAML);
  off = await startGateway();
  listeners = await startPushListeners();
  ({ trapPort, receiverPort, received } = listeners);
});
after(async () => {
  await gw.close();
  await off.close();
  await listeners.close();
});

const echo = (gateway = gw): string => `${gateway.url}/a2a/echo`;
const hook = (): string => `http://127.0.0.1:${trapPort}/hook`;
const configs = (taskId: string): string => `/tasks/${encodeURIComponent(taskId)}/pushNotificationConfigs`;

/** A finished task of `token`'s caller at the echo agent. */
async function taskOf(base = echo(), token = TOKEN_A): Promise<string> {
  const sent = await rest(base, '/message:send', { body: { message: message('hi') }, token });
  assert.equal(sent.status, 200, sent.text);
  return sent.body.task.id as string;
}

describe('HTTP+JSON push-config routes', () => {
  it('POST creates, GET {configId} gets, GET lists (paged), DELETE deletes; all 200 and the v1.0 shapes', async () => {
    const taskId = await taskOf();
    const created = await rest(echo(), configs(taskId), {
      body: { url: hook(), token: 'tok-1', authentication: { scheme: 'Bearer', credentials: 'cred' } },
    });
    assert.equal(created.status, 200, created.text);
    const config = created.body;
    assert.equal(config.taskId, taskId);
    assert.equal(typeof config.id, 'string');
    assert.deepEqual(config.authentication, { scheme: 'Bearer', credentials: 'cred' });
    const second = await rest(echo(), configs(taskId), { body: { id: 'mine', url: hook(), taskId: 'ignored' } });
    assert.deepEqual(second.body, { id: 'mine', taskId, url: hook() });

    const got = await rest(echo(), `${configs(taskId)}/${encodeURIComponent(config.id as string)}`);
    assert.equal(got.status, 200, got.text);
    assert.deepEqual(got.body, config);
    const listed = await rest(echo(), configs(taskId));
    assert.deepEqual(listed.body, { configs: [config, second.body], nextPageToken: '' });
    const page = await rest(echo(), `${configs(taskId)}?pageSize=1`);
    assert.deepEqual(page.body, { configs: [config], nextPageToken: '1' });
    const next = await rest(echo(), `${configs(taskId)}?pageSize=1&pageToken=1`);
    assert.deepEqual(next.body, { configs: [second.body], nextPageToken: '' });

    const deleted = await rest(echo(), `${configs(taskId)}/mine`, { method: 'DELETE' });
    assert.equal(deleted.status, 200, deleted.text);
    assert.deepEqual(deleted.body, {});
    const gone = await rest(echo(), `${configs(taskId)}/mine`);
    assert.equal(gone.status, 404);
    assert.equal(reasonOf(gone), 'TASK_NOT_FOUND');
    // JSON-RPC sees what the binding stored: one store, one canonical request.
    const viaRpc = await rpc(echo(), 'ListTaskPushNotificationConfigs', { taskId }, { version: '1.0' });
    assert.deepEqual(viaRpc.body.result, { configs: [config], nextPageToken: '' });
  });

  it('a wrong method is 405 with Allow; a bad query value is 400 naming the field', async () => {
    const taskId = await taskOf();
    const put = await fetch(`${echo()}${configs(taskId)}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${TOKEN_A}`, 'a2a-version': '1.0' },
    });
    assert.equal(put.status, 405);
    assert.equal(put.headers.get('allow'), 'POST, GET');
    await put.text();
    const bad = await rest(echo(), `${configs(taskId)}?pageSize=101`);
    assert.equal(bad.status, 400, bad.text);
    assert.equal(reasonOf(bad), 'INVALID_PARAMS');
  });

  it("another caller's task is 404 on all four routes, and the owner's config survives", async () => {
    const taskId = await taskOf();
    const created = await rest(echo(), configs(taskId), { body: { url: hook() } });
    const id = created.body.id as string;
    for (const [method, path, body] of [
      ['POST', configs(taskId), { url: hook() }],
      ['GET', `${configs(taskId)}/${id}`, undefined],
      ['GET', configs(taskId), undefined],
      ['DELETE', `${configs(taskId)}/${id}`, undefined],
    ] as const) {
      const answer = await rest(echo(), path, { method, body, token: TOKEN_B });
      assert.equal(answer.status, 404, `${method} ${path}: ${answer.text}`);
      assert.equal(reasonOf(answer), 'TASK_NOT_FOUND');
    }
    // Not even a refused input tells a stranger the task exists.
    const stranger = await rest(echo(), configs(taskId), { body: { url: 'https://10.0.0.1/' }, token: TOKEN_B });
    assert.equal(stranger.status, 404);
    const still = await rest(echo(), `${configs(taskId)}/${id}`);
    assert.equal(still.status, 200, still.text);
  });

  it('a refused webhook is 400 naming url, nothing is stored and no connection is made', async () => {
    const taskId = await taskOf();
    const before = listeners.trapConnections();
    for (const url of [
      'http://hooks.example/', // plain http off loopback
      `https://user:pw@127.0.0.1:${trapPort}/`, // credentials in the URL
      `http://localhost:${trapPort}/`, // loopback by name, not allowlisted
      'https://169.254.169.254/latest/meta-data/',
      'https://10.0.0.1/',
    ]) {
      const answer = await rest(echo(), configs(taskId), { body: { url } });
      assert.equal(answer.status, 400, `${url}: ${answer.text}`);
      assert.equal(reasonOf(answer), 'INVALID_PARAMS');
      assert.ok(!answer.text.includes('pw@'), 'no credentials in the answer');
    }
    const crlf = await rest(echo(), configs(taskId), { body: { url: hook(), token: 'a\r\nX-Injected: 1' } });
    assert.equal(crlf.status, 400, crlf.text);
    const listed = await rest(echo(), configs(taskId));
    assert.deepEqual(listed.body, { configs: [], nextPageToken: '' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(listeners.trapConnections(), before);
  });

  it('with push off, every route answers 400 PushNotificationNotSupported (-32003), as JSON-RPC', async () => {
    const taskId = await taskOf(echo(off));
    for (const [method, path, body] of [
      ['POST', configs(taskId), { url: 'https://hooks.example/a2a' }],
      ['GET', `${configs(taskId)}/c-1`, undefined],
      ['GET', configs(taskId), undefined],
      ['DELETE', `${configs(taskId)}/c-1`, undefined],
    ] as const) {
      const answer = await rest(echo(off), path, { method, body });
      assert.equal(answer.status, 400, `${method} ${path}: ${answer.text}`);
      assert.equal(answer.body.error.status, 'FAILED_PRECONDITION');
      assert.equal(reasonOf(answer), 'PUSH_NOTIFICATION_NOT_SUPPORTED');
    }
    const viaRpc = await rpc(echo(off), 'ListTaskPushNotificationConfigs', { taskId }, { version: '1.0' });
    assert.equal(viaRpc.body.error.code, -32003);
  });
});

describe('HTTP+JSON inline push configs', () => {
  it('message:send with returnImmediately: the task is returned and its later events reach the receiver', async () => {
    const tck = `${gw.url}/a2a/tck`;
    const path = `/inline/${randomUUID()}`;
    const sent = await rest(tck, '/message:send', {
      body: {
        // Held working for 300 ms by the conformance agent, then completed.
        message: message('hold', `test-resubscribe-message-id-${randomUUID()}`),
        configuration: {
          returnImmediately: true,
          taskPushNotificationConfig: { url: `http://127.0.0.1:${receiverPort}${path}`, token: 'inline-tok' },
        },
      },
    });
    assert.equal(sent.status, 200, sent.text);
    const taskId = sent.body.task.id as string;
    assert.notEqual(sent.body.task.status.state, 'TASK_STATE_COMPLETED');
    const listed = await rest(tck, configs(taskId));
    assert.equal(listed.body.configs.length, 1);
    assert.equal(listed.body.configs[0].token, 'inline-tok');
    const mine = (): typeof received => received.filter((r) => r.path === path);
    await eventually(
      () => mine().some((r) => r.body.statusUpdate?.status?.state === 'TASK_STATE_COMPLETED'),
      3000,
      'the completed event at the receiver',
    );
    for (const delivery of mine()) {
      assert.equal(delivery.headers['content-type'], 'application/a2a+json');
      assert.equal(delivery.headers['x-a2a-notification-token'], 'inline-tok');
      assert.equal(delivery.body.statusUpdate?.taskId ?? delivery.body.artifactUpdate?.taskId, taskId);
    }
  });

  it('message:stream stores its inline config once the stream names the task', async () => {
    const response = await fetch(`${echo()}/message:stream`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${TOKEN_A}`,
        'a2a-version': '1.0',
        'content-type': 'application/a2a+json',
      },
      body: JSON.stringify({
        message: message('hi'),
        configuration: { taskPushNotificationConfig: { url: hook() } },
      }),
    });
    assert.equal(response.status, 200);
    const first = (await response.text()).split('\n').find((line) => line.startsWith('data: '));
    const taskId = JSON.parse(first?.slice(6) ?? '{}').task?.id as string;
    assert.equal(typeof taskId, 'string', first);
    const listed = await rest(echo(), configs(taskId));
    assert.equal(listed.body.configs.length, 1);
  });

  it('a refused inline webhook refuses the send or stream with 400 before the turn: no task', async () => {
    const count = async (): Promise<number> => (await rest(echo(), '/tasks')).body.totalSize as number;
    const before = await count();
    for (const route of ['/message:send', '/message:stream']) {
      const answer = await rest(echo(), route, {
        body: { message: message('hi'), configuration: { taskPushNotificationConfig: { url: 'https://10.1.2.3/' } } },
      });
      assert.equal(answer.status, 400, `${route}: ${answer.text}`);
      assert.equal(reasonOf(answer), 'INVALID_PARAMS');
    }
    assert.equal(await count(), before, 'no task was started');
  });

  it('with push off, an inline config is refused (400 PushNotificationNotSupported), never silently dropped', async () => {
    const answer = await rest(echo(off), '/message:send', {
      body: {
        message: message('hi'),
        configuration: { taskPushNotificationConfig: { url: 'https://hooks.example/a2a' } },
      },
    });
    assert.equal(answer.status, 400, answer.text);
    assert.equal(reasonOf(answer), 'PUSH_NOTIFICATION_NOT_SUPPORTED');
  });
});
