import assert from 'node:assert/strict';
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server as HttpServer,
  type ServerResponse,
} from 'node:http';
import { createServer as createNetServer, type Server as NetServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { AuditEvent } from '../audit/events.js';
import { createGuardedClient } from '../net/client.js';
import type { StreamEvent, TaskState } from '../protocol/model.js';
import { LocalTaskEventBus } from '../tasks/events.js';
import type { PushConfigRecord } from '../tasks/stores/push-records.js';
import { DEFAULT_PUSH_SETTINGS, type PushSettings } from './config.js';
import { PushDelivery } from './deliver.js';
import { MemoryPushConfigs } from './memory.js';

type PushRow = Extract<AuditEvent, { type: 'a2a.push.delivered' | 'a2a.push.failed' | 'a2a.push.refused' }>;

interface Seen {
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
}

let receiver: HttpServer;
let port = 0;
let seen: Seen[] = [];
/** What the receiver does for a path; default 200. */
const behaviours = new Map<string, (res: ServerResponse, count: number) => void>();
const counts = new Map<string, number>();
let trap: NetServer;
let trapPort = 0;
let trapConnections = 0;

before(async () => {
  receiver = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      const count = (counts.get(path) ?? 0) + 1;
      counts.set(path, count);
      seen.push({ path, headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      const behaviour = behaviours.get(path);
      if (behaviour !== undefined) behaviour(res, count);
      else res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  port = (receiver.address() as { port: number }).port;
  trap = createNetServer((socket) => {
    trapConnections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => trap.listen(0, '127.0.0.1', resolve));
  trapPort = (trap.address() as { port: number }).port;
});
after(async () => {
  receiver.closeAllConnections();
  await new Promise((resolve) => receiver.close(resolve));
  await new Promise((resolve) => trap.close(resolve));
});

const SETTINGS: PushSettings = {
  ...DEFAULT_PUSH_SETTINGS,
  enabled: true,
  allowPrivate: ['127.0.0.1'],
  allowHttpLoopback: true,
  retryBaseMs: 5,
  maxAttempts: 3,
  totalTimeoutMs: 400,
  readTimeoutMs: 300,
  connectTimeoutMs: 300,
  maxResponseBytes: 1024,
};

/** Test DNS: names that resolve to forbidden addresses (and one to the trap's loopback). */
const DNS: Record<string, string> = {
  'rebind.test': '127.0.0.1',
  'metadata.test': '169.254.169.254',
  'corp.test': '10.0.0.5',
  'linklocal.test': '169.254.10.10',
  'mapped.test': '::ffff:127.0.0.1',
};

function harness(settings: PushSettings = SETTINGS) {
  const bus = new LocalTaskEventBus();
  const records = new MemoryPushConfigs();
  const rows: PushRow[] = [];
  const client = createGuardedClient({
    privateAllow: settings.allowPrivate,
    resolve: (hostname) => {
      const address = DNS[hostname];
      if (address === undefined) return Promise.reject(new Error(`no such host ${hostname}`));
      return Promise.resolve([{ address, family: address.includes(':') ? 6 : 4 }]);
    },
  });
  const delivery = new PushDelivery({ settings, records, bus, client, audit: (row) => rows.push(row as PushRow) });
  let n = 0;
  const add = async (
    taskId: string,
    url: string,
    extra: Partial<PushConfigRecord['config']> = {},
    dialect: '1.0' | '0.3' = '1.0',
  ) => {
    // Stored as-is: what a config that passed validation earlier (or a changed DNS answer) looks like now.
    await records.put(
      { owner: 'client:a::a', dialect, createdAt: n, config: { id: `c-${++n}`, taskId, url, ...extra } },
      { perTask: 100, perPrincipal: 100 },
    );
    delivery.watch({ taskId, agent: 'echo', client: 'a' });
  };
  return {
    bus,
    records,
    rows,
    delivery,
    add,
    close: async () => {
      await delivery.close();
      await client.close();
    },
  };
}

function status(taskId: string, state: TaskState): StreamEvent {
  return {
    kind: 'status-update',
    taskId,
    contextId: 'ctx',
    status: { state, timestamp: '2026-01-01T00:00:00.000Z' },
    final: state === 'completed',
  };
}

async function until(check: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) assert.fail('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('push delivery', () => {
  it('posts each event once and in order, in the config dialect, with token and authentication', async () => {
    seen = [];
    const h = harness();
    await h.add('t-order', `http://127.0.0.1:${port}/v10`, {
      token: 'tok',
      authentication: { scheme: 'Bearer', credentials: 'cred' },
    });
    await h.add('t-order', `http://127.0.0.1:${port}/v03`, {}, '0.3');
    h.bus.publish('t-order', status('t-order', 'working'));
    h.bus.publish('t-order', {
      kind: 'artifact-update',
      taskId: 't-order',
      contextId: 'ctx',
      artifact: { artifactId: 'a', parts: [{ kind: 'text', text: 'one' }] },
    });
    h.bus.publish('t-order', status('t-order', 'completed'));
    await until(() => seen.length === 6);
    const v10 = seen.filter((s) => s.path === '/v10');
    assert.deepEqual(
      v10.map((s) => Object.keys(s.body)[0]),
      ['statusUpdate', 'artifactUpdate', 'statusUpdate'],
    );
    assert.equal(v10[2]?.body.statusUpdate.status.state, 'TASK_STATE_COMPLETED');
    assert.equal(v10[0]?.headers['content-type'], 'application/a2a+json');
    assert.equal(v10[0]?.headers.authorization, 'Bearer cred');
    assert.equal(v10[0]?.headers['x-a2a-notification-token'], 'tok');
    const v03 = seen.filter((s) => s.path === '/v03');
    assert.deepEqual(
      v03.map((s) => s.body.kind),
      ['status-update', 'artifact-update', 'status-update'],
    );
    assert.equal(v03[0]?.headers['content-type'], 'application/json');
    assert.equal(v03[0]?.headers.authorization, undefined);
    // Terminal: the task is no longer watched and its configs are gone.
    await until(() => h.delivery.watching === 0);
    assert.deepEqual(await h.records.forTask('t-order'), []);
    const delivered = h.rows.filter((row) => row.type === 'a2a.push.delivered');
    assert.equal(delivered.length, 6);
    assert.equal(delivered[0]?.type === 'a2a.push.delivered' && delivered[0].host, `127.0.0.1:${port}`);
    const text = JSON.stringify(h.rows);
    assert.ok(!text.includes('tok') && !text.includes('cred') && !text.includes('/v10'), text);
    await h.close();
  });

  it('refuses names resolving to forbidden addresses at connect, and connects to none of them', async () => {
    const h = harness();
    const before = trapConnections;
    for (const host of Object.keys(DNS)) await h.add(`t-${host}`, `https://${host}:${trapPort}/hook`);
    for (const host of Object.keys(DNS)) h.bus.publish(`t-${host}`, status(`t-${host}`, 'working'));
    await until(() => h.rows.length === Object.keys(DNS).length);
    for (const row of h.rows) {
      assert.equal(row.type, 'a2a.push.refused', JSON.stringify(row));
      assert.equal(row.type === 'a2a.push.refused' && row.reason, 'address_blocked');
    }
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(trapConnections, before);
    await h.close();
  });

  it('re-validates each config before delivery: a forbidden URL is refused without a connection', async () => {
    const h = harness();
    const before = trapConnections;
    await h.add('t-bad', `http://localhost:${trapPort}/hook`); // loopback by name: not allowlisted
    await h.add('t-bad', `http://u:p@127.0.0.1:${trapPort}/hook`);
    h.bus.publish('t-bad', status('t-bad', 'working'));
    await until(() => h.rows.length === 2);
    assert.deepEqual(
      h.rows.map((row) => row.type === 'a2a.push.refused' && row.reason),
      ['invalid_config', 'invalid_config'],
    );
    assert.ok(!JSON.stringify(h.rows).includes('u:p'));
    assert.equal(trapConnections, before);
    await h.close();
  });

  it('never follows a redirect', async () => {
    const h = harness();
    const before = trapConnections;
    behaviours.set('/redirect', (res) => res.writeHead(302, { location: `http://127.0.0.1:${trapPort}/` }).end());
    await h.add('t-redirect', `http://127.0.0.1:${port}/redirect`);
    h.bus.publish('t-redirect', status('t-redirect', 'working'));
    await until(() => h.rows.length === 1);
    assert.equal(h.rows[0]?.type === 'a2a.push.refused' && h.rows[0].reason, 'redirect_refused');
    assert.equal(trapConnections, before);
    await h.close();
  });

  it('caps the answer it reads, and times out a slow receiver without blocking the task', async () => {
    const h = harness();
    behaviours.set('/huge', (res) => res.writeHead(200).end('x'.repeat(100_000)));
    behaviours.set('/slow', () => undefined); // never answers
    await h.add('t-huge', `http://127.0.0.1:${port}/huge`);
    await h.add('t-slow', `http://127.0.0.1:${port}/slow`);
    const started = performance.now();
    h.bus.publish('t-huge', status('t-huge', 'working'));
    h.bus.publish('t-slow', status('t-slow', 'working'));
    assert.ok(performance.now() - started < 50, 'publishing never waits for a receiver');
    await until(() => h.rows.length === 2, 5000);
    const reasons = Object.fromEntries(h.rows.map((row) => [row.taskId, row.type === 'a2a.push.failed' && row.reason]));
    assert.deepEqual(reasons, { 't-huge': 'response_too_large', 't-slow': 'request_timeout' });
    assert.equal(counts.get('/huge'), 1, 'a huge answer is not retried');
    assert.equal(counts.get('/slow'), SETTINGS.maxAttempts, 'a timeout is retried up to maxAttempts');
    await h.close();
  });

  it('retries a 503 with backoff and delivers once; gives up on a 404', async () => {
    const h = harness();
    behaviours.set('/flaky', (res, count) => res.writeHead(count < 3 ? 503 : 200).end());
    behaviours.set('/gone', (res) => res.writeHead(404).end());
    await h.add('t-flaky', `http://127.0.0.1:${port}/flaky`);
    await h.add('t-gone', `http://127.0.0.1:${port}/gone`);
    h.bus.publish('t-flaky', status('t-flaky', 'working'));
    h.bus.publish('t-gone', status('t-gone', 'working'));
    await until(() => h.rows.length === 2);
    const byTask = Object.fromEntries(h.rows.map((row) => [row.taskId, row.type]));
    assert.deepEqual(byTask, { 't-flaky': 'a2a.push.delivered', 't-gone': 'a2a.push.failed' });
    assert.equal(counts.get('/flaky'), 3);
    assert.equal(counts.get('/gone'), 1);
    await h.close();
  });

  it('bounds the per-task queue', async () => {
    const h = harness({ ...SETTINGS, maxQueuedEvents: 2, maxAttempts: 1 });
    behaviours.set('/stuck', () => undefined);
    await h.add('t-queue', `http://127.0.0.1:${port}/stuck`);
    for (let i = 0; i < 6; i++) h.bus.publish('t-queue', status('t-queue', 'working'));
    const full = h.rows.filter((row) => row.type === 'a2a.push.failed' && row.reason === 'queue_full');
    // The first event is taken at once; two wait; the other three are dropped.
    assert.equal(full.length, 3);
    await h.close();
  });
});
