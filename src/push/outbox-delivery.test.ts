/**
 * OutboxDelivery over the memory outbox, with a real loopback receiver: retries with backoff
 * then gives up once (`a2a.push.failed`), refuses a config the policy no longer allows without
 * connecting, keeps a task's order behind a retrying row, counts a full queue, and the tap
 * leaves a shared bus's optional methods as they are.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { AuditEvent } from '../audit/events.js';
import { createGuardedClient } from '../net/client.js';
import type { StreamEvent } from '../protocol/model.js';
import { LocalTaskEventBus, type TaskEventBus } from '../tasks/events.js';
import { DEFAULT_PUSH_SETTINGS, type PushSettings } from './config.js';
import { MemoryPushConfigs } from './memory.js';
import { MemoryPushOutbox } from './memory-outbox.js';
import { createPushTap, OutboxDelivery } from './outbox-delivery.js';

let server: Server;
let port = 0;
const seen: { path: string; body: { n?: number } }[] = [];
/** Status answered per path (default 204). */
const statuses = new Map<string, number[]>();

before(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      seen.push({ path, body: JSON.parse(Buffer.concat(chunks).toString()) as { n?: number } });
      res.writeHead(statuses.get(path)?.shift() ?? 204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});
after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const SETTINGS: PushSettings = {
  ...DEFAULT_PUSH_SETTINGS,
  enabled: true,
  allowPrivate: ['127.0.0.1'],
  allowHttpLoopback: true,
  retryBaseMs: 5,
  maxAttempts: 3,
  maxQueuedEvents: 2,
  totalTimeoutMs: 400,
  connectTimeoutMs: 300,
  readTimeoutMs: 300,
};

function event(taskId: string, n: number): StreamEvent {
  return {
    kind: 'artifact-update',
    taskId,
    contextId: 'ctx',
    artifact: { artifactId: `a${n}`, parts: [{ kind: 'text', text: String(n) }] },
  } as unknown as StreamEvent;
}

async function harness(settings: PushSettings = SETTINGS) {
  const configs = new MemoryPushConfigs();
  const outbox = new MemoryPushOutbox(configs);
  const rows: AuditEvent[] = [];
  const client = createGuardedClient({ privateAllow: settings.allowPrivate });
  const delivery = new OutboxDelivery({ settings, outbox, client, audit: (row) => rows.push(row), pollMs: 5 });
  const tap = createPushTap(new LocalTaskEventBus());
  tap.attach((taskId, e) => delivery.publish(taskId, e));
  delivery.start();
  const add = async (taskId: string, path: string, url = `http://127.0.0.1:${port}${path}`): Promise<void> => {
    const config = { id: path, taskId, url };
    await configs.put(
      { owner: 'o', dialect: '1.0', createdAt: Date.now(), agent: 'echo', config },
      { perTask: 5, perPrincipal: 50 },
    );
  };
  const close = async (): Promise<void> => {
    await delivery.close();
    await client.close();
  };
  return { outbox, rows, tap, add, close };
}

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('OutboxDelivery', () => {
  it('retries a 503 with backoff, then fails it once; the task order waits behind it', async () => {
    const h = await harness();
    try {
      statuses.set('/down', [503, 503, 503]);
      await h.add('t-retry', '/down');
      h.tap.bus.publish('t-retry', event('t-retry', 1));
      h.tap.bus.publish('t-retry', event('t-retry', 2));
      await until(async () => (await h.outbox.pending('t-retry')) === 0, 'both rows done');
      const bodies = seen.filter((s) => s.path === '/down').map((s) => JSON.stringify(s.body));
      assert.equal(bodies.length, 4, 'three attempts for the first event, then the second');
      assert.equal(new Set(bodies.slice(0, 3)).size, 1, 'the second event waited for the first');
      const failed = h.rows.filter((row) => row.type === 'a2a.push.failed');
      assert.equal(failed.length, 1);
      assert.equal((failed[0] as { reason: string }).reason, 'http_status');
      assert.equal(h.rows.filter((row) => row.type === 'a2a.push.delivered').length, 1);
    } finally {
      await h.close();
    }
  });

  it('refuses a config the policy no longer allows, without a request', async () => {
    const h = await harness({ ...SETTINGS, allowHttpLoopback: false });
    try {
      const before = seen.length;
      await h.add('t-refused', '/refused');
      h.tap.bus.publish('t-refused', event('t-refused', 1));
      await until(() => h.rows.length > 0, 'an audit row');
      assert.equal(h.rows[0]?.type, 'a2a.push.refused');
      assert.equal(seen.length, before, 'no request was made');
      assert.equal(await h.outbox.pending('t-refused'), 0);
    } finally {
      await h.close();
    }
  });

  it('bounds the events waiting per task (queue_full), and does nothing for a task without configs', async () => {
    const h = await harness();
    try {
      statuses.set('/slow', [503, 503, 503]);
      await h.add('t-full', '/slow');
      for (let n = 1; n <= 4; n++) h.tap.bus.publish('t-full', event('t-full', n));
      h.tap.bus.publish('t-none', event('t-none', 1));
      await until(() => h.rows.some((row) => row.type === 'a2a.push.failed' && row.reason === 'queue_full'), 'full');
      assert.ok((await h.outbox.pending('t-full')) <= 2);
      assert.equal(await h.outbox.pending('t-none'), 0);
    } finally {
      await h.close();
    }
  });

  it('the tap keeps a local bus local and a shared bus shared', () => {
    const local = createPushTap(new LocalTaskEventBus()).bus;
    assert.equal('requestCancel' in local, false, 'a local bus must not look shared');
    const requested: string[] = [];
    const shared: TaskEventBus = {
      publish: () => undefined,
      subscribe: () => () => undefined,
      requestCancel: (taskId) => requested.push(taskId),
    };
    createPushTap(shared).bus.requestCancel?.('t-1');
    assert.deepEqual(requested, ['t-1']);
  });
});
