/**
 * Push-notification configs over JSON-RPC, against a real gateway on loopback: the four methods
 * in both dialects, ownership (another caller's task is -32001), refused webhooks (with a trap
 * listener proving that no connection is made), inline configs on SendMessage, the card's
 * `pushNotifications`, and the official `@a2a-js/sdk` client's push calls in both dialects.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startPushListeners, type PushListeners, type ReceivedPush } from './helpers/push-listeners.js';
import {
  Client,
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from '@a2a-js/sdk/client';
import { LegacyJsonRpcTransport } from '@a2a-js/sdk/compat/v0_3/client';
import { MemoryAuditSink } from '../src/audit/memory.js';
import {
  DEFAULT_YAML,
  eventually,
  rpc,
  rpcStream,
  startGateway,
  TOKEN_A,
  TOKEN_B,
  v03Message,
  v10Message,
  type TestGateway,
} from './helpers/gateway.js';

const PUSH_YAML = `${DEFAULT_YAML}
push:
  enabled: true
  allowPrivate: [127.0.0.1]
  allowHttpLoopback: true
  maxConfigsPerTask: 3
`;

let gw: TestGateway;
let off: TestGateway;
let listeners: PushListeners;
let trapPort = 0;
let receiverPort = 0;
let received: ReceivedPush[] = [];
const sink = new MemoryAuditSink();

before(async () => {
  gw = await startGateway(PUSH_YAML, { auditSink: sink });
  listeners = await startPushListeners();
  ({ trapPort, receiverPort, received } = listeners);
  off = await startGateway();
});
after(async () => {
  await gw.close();
  await off.close();
  await listeners.close();
});

const echo = (): string => `${gw.url}/a2a/echo`;
const hook = (): string => `http://127.0.0.1:${trapPort}/hook`;

async function taskOf(url: string, dialect: '1.0' | '0.3', token = TOKEN_A): Promise<string> {
  const { body } =
    dialect === '1.0'
      ? await rpc(url, 'SendMessage', { message: v10Message('hi') }, { version: '1.0', token })
      : await rpc(url, 'message/send', { message: v03Message('hi') }, { token });
  const id: unknown = dialect === '1.0' ? body.result?.task?.id : body.result?.id;
  assert.equal(typeof id, 'string', JSON.stringify(body));
  return id as string;
}

describe('push delivery through the gateway', () => {
  it('a loopback receiver sees each event of the task once, in the order a subscriber sees them', async () => {
    const tck = `${gw.url}/a2a/tck`;
    const v10 = { version: '1.0' };
    // A non-TCK message leaves the task waiting for input: the config is set before the next turn.
    const first = await rpc(tck, 'SendMessage', { message: v10Message('hold') }, v10);
    const task = first.body.result.task;
    assert.equal(task.status.state, 'TASK_STATE_INPUT_REQUIRED');
    const url = `http://127.0.0.1:${receiverPort}/hook/${task.id as string}`;
    const set = await rpc(tck, 'CreateTaskPushNotificationConfig', { taskId: task.id, url, token: 'secret-tok' }, v10);
    assert.ok(set.body.result, JSON.stringify(set.body));
    const subscribed = rpcStream(tck, 'SubscribeToTask', { id: task.id }, v10);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const message = v10Message('done', {
      taskId: task.id,
      contextId: task.contextId,
      messageId: `tck-artifact-data-${Date.now()}`,
    });
    const done = await rpc(tck, 'SendMessage', { message }, v10);
    assert.equal(done.body.result.task.status.state, 'TASK_STATE_COMPLETED');
    const stream = (await subscribed).events.map((frame) => frame.result).slice(1); // after the snapshot
    await eventually(() => received.filter((r) => r.path.endsWith(task.id as string)).length >= stream.length);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const mine = received.filter((r) => r.path.endsWith(task.id as string));
    assert.ok(stream.length >= 2, JSON.stringify(stream)); // a status and an artifact at least
    assert.deepEqual(
      mine.map((r) => r.body),
      stream,
    );
    assert.equal(mine[0]?.headers['x-a2a-notification-token'], 'secret-tok');
    const rows = sink.events.filter((row) => row.type === 'a2a.push.delivered' && row.taskId === task.id);
    assert.equal(rows.length, mine.length);
    assert.ok(!JSON.stringify(sink.events).includes('secret-tok'));
  });
});

describe('push configs over JSON-RPC', () => {
  it('the card says pushNotifications only when push is enabled', async () => {
    for (const [gateway, expected] of [
      [gw, true],
      [off, false],
    ] as const) {
      for (const version of ['1.0', '0.3']) {
        const response = await fetch(`${gateway.url}/a2a/echo/.well-known/agent-card.json`, {
          headers: { 'a2a-version': version },
        });
        const card = (await response.json()) as { capabilities: { pushNotifications: boolean } };
        assert.equal(card.capabilities.pushNotifications, expected, `${version}`);
      }
    }
  });

  it('v1.0: Create, Get, List, Delete', async () => {
    const taskId = await taskOf(echo(), '1.0');
    const opts = { version: '1.0' };
    const created = await rpc(
      echo(),
      'CreateTaskPushNotificationConfig',
      { taskId, url: hook(), token: 'tok-1', authentication: { scheme: 'Bearer', credentials: 'cred' } },
      opts,
    );
    const config = created.body.result;
    assert.equal(config.taskId, taskId);
    assert.equal(typeof config.id, 'string');
    assert.deepEqual(config.authentication, { scheme: 'Bearer', credentials: 'cred' });
    const got = await rpc(echo(), 'GetTaskPushNotificationConfig', { taskId, id: config.id }, opts);
    assert.deepEqual(got.body.result, config);
    const listed = await rpc(echo(), 'ListTaskPushNotificationConfigs', { taskId }, opts);
    assert.deepEqual(listed.body.result, { configs: [config], nextPageToken: '' });
    const deleted = await rpc(echo(), 'DeleteTaskPushNotificationConfig', { taskId, id: config.id }, opts);
    assert.deepEqual(deleted.body.result, {});
    const gone = await rpc(echo(), 'GetTaskPushNotificationConfig', { taskId, id: config.id }, opts);
    assert.equal(gone.body.error.code, -32001);
  });

  it('v0.3: set, get, list, delete', async () => {
    const taskId = await taskOf(echo(), '0.3');
    const set = await rpc(echo(), 'tasks/pushNotificationConfig/set', {
      taskId,
      pushNotificationConfig: { id: 'mine', url: hook(), authentication: { schemes: ['Bearer'] } },
    });
    const wire = {
      taskId,
      pushNotificationConfig: { id: 'mine', url: hook(), authentication: { schemes: ['Bearer'] } },
    };
    assert.deepEqual(set.body.result, wire);
    assert.deepEqual((await rpc(echo(), 'tasks/pushNotificationConfig/get', { id: taskId })).body.result, wire);
    assert.deepEqual((await rpc(echo(), 'tasks/pushNotificationConfig/list', { id: taskId })).body.result, [wire]);
    const deleted = await rpc(echo(), 'tasks/pushNotificationConfig/delete', {
      id: taskId,
      pushNotificationConfigId: 'mine',
    });
    assert.equal(deleted.body.result, null);
    assert.deepEqual((await rpc(echo(), 'tasks/pushNotificationConfig/list', { id: taskId })).body.result, []);
  });

  it("another caller's task answers -32001 on all four methods, in both dialects", async () => {
    const taskId = await taskOf(echo(), '1.0');
    const created = await rpc(echo(), 'CreateTaskPushNotificationConfig', { taskId, url: hook() }, { version: '1.0' });
    const id = created.body.result.id as string;
    const calls: [string, unknown, string | undefined][] = [
      ['CreateTaskPushNotificationConfig', { taskId, url: hook() }, '1.0'],
      ['GetTaskPushNotificationConfig', { taskId, id }, '1.0'],
      ['ListTaskPushNotificationConfigs', { taskId }, '1.0'],
      ['DeleteTaskPushNotificationConfig', { taskId, id }, '1.0'],
      ['tasks/pushNotificationConfig/set', { taskId, pushNotificationConfig: { url: hook() } }, undefined],
      ['tasks/pushNotificationConfig/get', { id: taskId, pushNotificationConfigId: id }, undefined],
      ['tasks/pushNotificationConfig/list', { id: taskId }, undefined],
      ['tasks/pushNotificationConfig/delete', { id: taskId, pushNotificationConfigId: id }, undefined],
    ];
    for (const [method, params, version] of calls) {
      const { body } = await rpc(echo(), method, params, { token: TOKEN_B, ...(version !== undefined && { version }) });
      assert.equal(body.error?.code, -32001, method);
    }
    // The owner's config survived the stranger's delete.
    const still = await rpc(echo(), 'GetTaskPushNotificationConfig', { taskId, id }, { version: '1.0' });
    assert.equal(still.body.result.id, id);
  });

  it('refuses forbidden webhooks with -32602, and connects to none of them', async () => {
    const taskId = await taskOf(echo(), '1.0');
    const before = listeners.trapConnections();
    for (const url of [
      `http://localhost:${trapPort}/`, // loopback by name, not allowlisted
      `http://[::1]:${trapPort}/`,
      `https://user:pw@127.0.0.1:${trapPort}/`, // credentials
      `ftp://127.0.0.1:${trapPort}/`,
      'http://hooks.example/', // plain http off loopback
      'https://169.254.169.254/latest/meta-data/',
      'https://10.0.0.1/',
      `https://127.0.0.1:${trapPort}/${'a'.repeat(2100)}`, // over maxUrlLength
    ]) {
      const { body } = await rpc(echo(), 'CreateTaskPushNotificationConfig', { taskId, url }, { version: '1.0' });
      assert.equal(body.error?.code, -32602, url.slice(0, 60));
      assert.ok(!JSON.stringify(body).includes('pw@'), 'no credentials in the answer');
    }
    const crlf = await rpc(
      echo(),
      'CreateTaskPushNotificationConfig',
      { taskId, url: hook(), token: 'a\r\nX-Injected: 1' },
      { version: '1.0' },
    );
    assert.equal(crlf.body.error?.code, -32602);
    const listed = await rpc(echo(), 'ListTaskPushNotificationConfigs', { taskId }, { version: '1.0' });
    assert.deepEqual(listed.body.result.configs, []);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(listeners.trapConnections(), before);
  });

  it('caps configs per task', async () => {
    const taskId = await taskOf(echo(), '1.0');
    for (let i = 0; i < 3; i++) {
      const { body } = await rpc(
        echo(),
        'CreateTaskPushNotificationConfig',
        { taskId, url: hook() },
        { version: '1.0' },
      );
      assert.ok(body.result, JSON.stringify(body));
    }
    const { body } = await rpc(echo(), 'CreateTaskPushNotificationConfig', { taskId, url: hook() }, { version: '1.0' });
    assert.equal(body.error?.code, -32602);
  });

  it('stores an inline config of SendMessage and message/send; refuses a forbidden one before the turn', async () => {
    const v10 = await rpc(
      echo(),
      'SendMessage',
      { message: v10Message('hi'), configuration: { taskPushNotificationConfig: { url: hook(), token: 't' } } },
      { version: '1.0' },
    );
    const taskId = v10.body.result.task.id as string;
    const listed = await rpc(echo(), 'ListTaskPushNotificationConfigs', { taskId }, { version: '1.0' });
    assert.equal(listed.body.result.configs.length, 1);
    assert.equal(listed.body.result.configs[0].token, 't');

    const v03 = await rpc(echo(), 'message/send', {
      message: v03Message('hi'),
      configuration: { pushNotificationConfig: { url: hook() } },
    });
    const v03List = await rpc(echo(), 'tasks/pushNotificationConfig/list', { id: v03.body.result.id });
    assert.equal(v03List.body.result.length, 1);

    const countBefore = (await rpc(echo(), 'ListTasks', {}, { version: '1.0' })).body.result.totalSize as number;
    const refused = await rpc(
      echo(),
      'SendMessage',
      { message: v10Message('hi'), configuration: { taskPushNotificationConfig: { url: 'https://10.1.2.3/' } } },
      { version: '1.0' },
    );
    assert.equal(refused.body.error?.code, -32602);
    const countAfter = (await rpc(echo(), 'ListTasks', {}, { version: '1.0' })).body.result.totalSize as number;
    assert.equal(countAfter, countBefore, 'no task was started');
  });

  it('stores an inline config of SendStreamingMessage once the stream names the task', async () => {
    const { events } = await rpcStream(
      echo(),
      'SendStreamingMessage',
      { message: v10Message('hi'), configuration: { taskPushNotificationConfig: { url: hook() } } },
      { version: '1.0' },
    );
    const taskId = events[0]?.result?.task?.id as string;
    assert.equal(typeof taskId, 'string', JSON.stringify(events[0]));
    const listed = await rpc(echo(), 'ListTaskPushNotificationConfigs', { taskId }, { version: '1.0' });
    assert.equal(listed.body.result.configs.length, 1);
    // Refused before the turn: a JSON-RPC error, not a stream.
    const refused = await rpc(
      echo(),
      'SendStreamingMessage',
      { message: v10Message('hi'), configuration: { taskPushNotificationConfig: { url: 'https://192.168.0.1/' } } },
      { version: '1.0' },
    );
    assert.equal(refused.body.error?.code, -32602);
  });

  it('with push off, the methods answer -32003 and an inline config is refused (-32003), as on HTTP+JSON', async () => {
    const url = `${off.url}/a2a/echo`;
    const taskId = await taskOf(url, '1.0');
    const { body } = await rpc(url, 'ListTaskPushNotificationConfigs', { taskId }, { version: '1.0' });
    assert.equal(body.error?.code, -32003);
    const countBefore = (await rpc(url, 'ListTasks', {}, { version: '1.0' })).body.result.totalSize as number;
    const inline = { url: 'https://hooks.example/a2a' };
    const refusals = [
      await rpc(
        url,
        'SendMessage',
        { message: v10Message('hi'), configuration: { taskPushNotificationConfig: inline } },
        { version: '1.0' },
      ),
      await rpc(url, 'message/send', { message: v03Message('hi'), configuration: { pushNotificationConfig: inline } }),
      await rpc(
        url,
        'SendStreamingMessage',
        { message: v10Message('hi'), configuration: { taskPushNotificationConfig: inline } },
        { version: '1.0' },
      ),
    ];
    for (const refused of refusals) assert.equal(refused.body.error?.code, -32003, JSON.stringify(refused.body));
    const countAfter = (await rpc(url, 'ListTasks', {}, { version: '1.0' })).body.result.totalSize as number;
    assert.equal(countAfter, countBefore, 'no task was started');
  });
});

/** A fetch that adds the bearer token. */
function withToken(token: string): typeof fetch {
  return (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${token}`);
    return fetch(input, { ...init, headers });
  };
}

async function sdkClient(dialect: '1.0' | '0.3'): Promise<Client> {
  const fetchImpl = withToken(TOKEN_A);
  const base = `${gw.url}/a2a/echo/`;
  if (dialect === '1.0') {
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ fetchImpl })],
        cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
      }),
    );
    return factory.createFromUrl(base);
  }
  const card = await new DefaultAgentCardResolver({ fetchImpl, legacyCompat: { enabled: true } }).resolve(base);
  const legacy = card.supportedInterfaces.find((e) => e.protocolBinding === 'JSONRPC' && e.protocolVersion === '0.3');
  assert.ok(legacy);
  return new Client(new LegacyJsonRpcTransport({ endpoint: legacy.url, fetchImpl }), card);
}

describe('the official @a2a-js/sdk client', () => {
  for (const dialect of ['1.0', '0.3'] as const) {
    it(`creates, gets, lists and deletes push configs (${dialect})`, async () => {
      const taskId = await taskOf(echo(), dialect);
      const client = await sdkClient(dialect);
      const created = await client.createTaskPushNotificationConfig({
        tenant: '',
        id: 'sdk-1',
        taskId,
        url: hook(),
        token: 'sdk-token',
        authentication: { scheme: 'Bearer', credentials: 'c' },
      });
      assert.equal(created.id, 'sdk-1');
      assert.equal(created.taskId, taskId);
      assert.equal(created.url, hook());
      const got = await client.getTaskPushNotificationConfig({ tenant: '', taskId, id: 'sdk-1' });
      assert.equal(got.token, 'sdk-token');
      assert.equal(got.authentication?.scheme, 'Bearer');
      const listed = await client.listTaskPushNotificationConfig({ tenant: '', taskId, pageSize: 0, pageToken: '' });
      assert.deepEqual(
        listed.configs.map((c) => c.id),
        ['sdk-1'],
      );
      await client.deleteTaskPushNotificationConfig({ tenant: '', taskId, id: 'sdk-1' });
      const after = await client.listTaskPushNotificationConfig({ tenant: '', taskId, pageSize: 0, pageToken: '' });
      assert.equal(after.configs.length, 0);
    });
  }
});
