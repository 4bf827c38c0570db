/**
 * Durable push delivery (issue "The whole protocol": "with SQLite/PostgreSQL an outbox so a
 * restart loses no acknowledged notification; across replicas, one delivery per event"), with
 * real gateways on loopback, real stores and a real webhook receiver:
 * - SQLite: the receiver is down, the task's events wait in the outbox; the gateway stops; a new
 *   gateway on the same file, with the receiver up, delivers each event once, in order;
 * - a blocking send with an inline config whose turn ended before the config was stored: the
 *   final state still reaches the webhook, once;
 * - two replicas on one PostgreSQL schema with a shared bus (both see every event): the
 *   receiver gets each event once, whichever replica delivers it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { MemoryAuditSink } from '../src/audit/memory.js';
import { chooseTaskStore } from '../src/cli/serve.js';
import { parseConfig } from '../src/config/load.js';
import { createGateway, type Gateway } from '../src/server/http.js';
import { silentLogger } from '../src/server/log.js';
import { createPostgresTaskEventBus } from '../src/tasks/buses/index.js';
import type { TaskEventBus } from '../src/tasks/events.js';
import type { TaskStore } from '../src/tasks/store.js';
import { PostgresTaskStore } from '../src/tasks/stores/postgres.js';
import { SqliteTaskStore } from '../src/tasks/stores/sqlite.js';
import { dropSchema, postgresSkip, POSTGRES_URL, uniqueName, waitFor } from './helpers/backing-services.js';
import { DEFAULT_YAML, rpc, rpcStream, TOKEN_A, TOKEN_B, TOKEN_C, v03Message, v10Message } from './helpers/gateway.js';

const BOUNDED = { timeout: 20_000 };
const V10 = { version: '1.0' };
const pushYaml = (retryBaseMs: number, extra = ''): string => `${DEFAULT_YAML}${extra}
push:
  enabled: true
  allowPrivate: [127.0.0.1]
  allowHttpLoopback: true
  maxAttempts: 10
  retryBaseMs: ${retryBaseMs}
  connectTimeoutMs: 200
  totalTimeoutMs: 1000
`;

const dir = mkdtempSync(join(tmpdir(), 'airlock-push-durable-'));
const cleanups: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

interface Receiver {
  readonly bodies: { path: string; body: unknown }[];
  close(): Promise<void>;
}

/** A webhook receiver on `port` (0: any), answering 204 to each POST. */
async function startReceiver(port = 0): Promise<Receiver & { port: number }> {
  const bodies: { path: string; body: unknown }[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      bodies.push({ path: req.url ?? '', body: JSON.parse(Buffer.concat(chunks).toString()) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    bodies,
    port: (server.address() as { port: number }).port,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A loopback port nothing listens on (yet). */
async function freePort(): Promise<number> {
  const probe = await startReceiver();
  await probe.close();
  return probe.port;
}

async function serve(
  yaml: string,
  store: TaskStore,
  sink: MemoryAuditSink,
  bus?: TaskEventBus,
): Promise<{ gateway: Gateway; url: string }> {
  const gateway = createGateway(parseConfig(yaml, { TOKEN_A, TOKEN_B, TOKEN_C }), {
    logger: silentLogger,
    store,
    auditSink: sink,
    ...(bus !== undefined && { bus }),
  });
  const url = await gateway.listen();
  return { gateway, url };
}

/** A TCK task waiting for input, so that a config can be set before its next, eventful turn. */
async function heldTask(url: string): Promise<{ id: string; contextId: string }> {
  const first = await rpc(`${url}/a2a/tck`, 'SendMessage', { message: v10Message('hold') }, V10);
  const task = first.body.result?.task;
  assert.equal(task?.status?.state, 'TASK_STATE_INPUT_REQUIRED', JSON.stringify(first.body));
  return task as { id: string; contextId: string };
}

/** The next turn of a held task: a status, an artifact and the final status. */
async function finish(url: string, task: { id: string; contextId: string }): Promise<void> {
  const message = v10Message('done', {
    taskId: task.id,
    contextId: task.contextId,
    messageId: `tck-artifact-data-${Date.now()}`,
  });
  const done = await rpc(`${url}/a2a/tck`, 'SendMessage', { message }, V10);
  assert.equal(done.body.result?.task?.status?.state, 'TASK_STATE_COMPLETED', JSON.stringify(done.body));
}

async function setConfig(url: string, taskId: string, hook: string): Promise<void> {
  const set = await rpc(`${url}/a2a/tck`, 'CreateTaskPushNotificationConfig', { taskId, url: hook, token: 'tok' }, V10);
  assert.ok(set.body.result, JSON.stringify(set.body));
}

describe('durable push on SQLite', () => {
  it(
    'events wait in the outbox while the receiver is down and survive a restart: each delivered once, in order',
    BOUNDED,
    async () => {
      const path = join(dir, 'restart.db');
      const port = await freePort();
      const hook = `http://127.0.0.1:${port}/hook`;
      // A long first backoff: the rows are still waiting when the first gateway stops.
      const yaml = pushYaml(1500);
      const firstSink = new MemoryAuditSink();
      const firstStore = await SqliteTaskStore.open({ path });
      const first = await serve(yaml, firstStore, firstSink);
      cleanups.push(() => first.gateway.close());
      const task = await heldTask(first.url);
      await setConfig(first.url, task.id, hook);
      const subscribed = rpcStream(`${first.url}/a2a/tck`, 'SubscribeToTask', { id: task.id }, V10);
      await new Promise((resolve) => setTimeout(resolve, 50));
      await finish(first.url, task);
      const expected = (await subscribed).events.map((frame) => frame.result).slice(1); // after the snapshot
      assert.ok(expected.length >= 2, JSON.stringify(expected)); // an artifact and the final status at least
      await waitFor(async () => (await firstStore.push.outbox.pending(task.id)) === expected.length, 5_000, 'outbox');
      await first.gateway.close();
      assert.equal(firstSink.events.filter((row) => row.type.startsWith('a2a.push.')).length, 0, 'nothing ended yet');

      const receiver = await startReceiver(port);
      cleanups.push(() => receiver.close());
      const secondSink = new MemoryAuditSink();
      const secondStore = await SqliteTaskStore.open({ path });
      assert.equal(await secondStore.push.outbox.pending(task.id), expected.length, 'the rows outlived the process');
      const second = await serve(yaml, secondStore, secondSink);
      cleanups.push(() => second.gateway.close());
      await waitFor(() => receiver.bodies.length >= expected.length, 10_000, 'deliveries');
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.deepEqual(
        receiver.bodies.map((delivery) => delivery.body),
        expected,
        'each event once, in the order a subscriber saw them',
      );
      const delivered = secondSink.events.filter((row) => row.type === 'a2a.push.delivered');
      assert.equal(delivered.length, expected.length);
      assert.ok(!JSON.stringify(secondSink.events).includes('tok"'), 'no token in audit rows');
      assert.equal(await secondStore.push.outbox.pending(task.id), 0);
      // The final event took the task's configs with it.
      const listed = await rpc(`${second.url}/a2a/tck`, 'ListTaskPushNotificationConfigs', { taskId: task.id }, V10);
      assert.deepEqual(listed.body.result?.configs, []);
    },
  );

  it(
    "a blocking send's inline config stored after its turn ended still gets the final state, once",
    BOUNDED,
    async () => {
      const receiver = await startReceiver();
      cleanups.push(() => receiver.close());
      const store = await SqliteTaskStore.open({ path: join(dir, 'inline.db') });
      const gw = await serve(pushYaml(50), store, new MemoryAuditSink());
      cleanups.push(() => gw.gateway.close());
      for (const dialect of ['1.0', '0.3'] as const) {
        const hook = `http://127.0.0.1:${receiver.port}/inline-${dialect}`;
        const sent =
          dialect === '1.0'
            ? await rpc(
                `${gw.url}/a2a/echo`,
                'SendMessage',
                { message: v10Message('hi'), configuration: { taskPushNotificationConfig: { url: hook } } },
                V10,
              )
            : await rpc(`${gw.url}/a2a/echo`, 'message/send', {
                message: v03Message('hi'),
                configuration: { pushNotificationConfig: { url: hook } },
              });
        assert.ok(sent.body.result, JSON.stringify(sent.body));
        await waitFor(() => receiver.bodies.some((delivery) => delivery.path === `/inline-${dialect}`), 5_000, dialect);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
      const v10 = receiver.bodies.filter((delivery) => delivery.path === '/inline-1.0');
      const v03 = receiver.bodies.filter((delivery) => delivery.path === '/inline-0.3');
      assert.equal(v10.length, 1, JSON.stringify(v10));
      assert.equal(v03.length, 1, JSON.stringify(v03));
      assert.equal((v10[0]?.body as { task: { status: { state: string } } }).task.status.state, 'TASK_STATE_COMPLETED');
      assert.equal((v03[0]?.body as { kind: string; status: { state: string } }).status.state, 'completed');
    },
  );
});

const pgSkip = await postgresSkip();

describe('durable push on PostgreSQL with two replicas', { skip: pgSkip }, () => {
  it('an event published on one replica is delivered once, whichever replica claims it', BOUNDED, async () => {
    const schema = uniqueName('airlock_push');
    cleanups.push(() => dropSchema(schema));
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const yaml = pushYaml(50, 'replicas: 2\n');
    const replicas: { gateway: Gateway; url: string }[] = [];
    const sinks = [new MemoryAuditSink(), new MemoryAuditSink()];
    for (const sink of sinks) {
      const store = await PostgresTaskStore.open({ url: POSTGRES_URL, schema, poolSize: 4 });
      const bus = createPostgresTaskEventBus({ url: POSTGRES_URL, schema, logger: silentLogger });
      const replica = await serve(yaml, store, sink, bus);
      cleanups.push(() => replica.gateway.close());
      replicas.push(replica);
    }
    const [a, b] = [replicas[0]!, replicas[1]!];
    const tasks = [await heldTask(a.url), await heldTask(a.url), await heldTask(a.url)];
    for (const task of tasks) {
      // Set on B, run on A; B also follows the task on the shared bus.
      await setConfig(b.url, task.id, `http://127.0.0.1:${receiver.port}/r/${task.id}`);
    }
    const followed = tasks.map((task) => rpcStream(`${b.url}/a2a/tck`, 'SubscribeToTask', { id: task.id }, V10));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await Promise.all(tasks.map((task) => finish(a.url, task)));
    const expected = (await Promise.all(followed)).map((stream) => stream.events.map((frame) => frame.result).slice(1));
    const total = expected.reduce((sum, events) => sum + events.length, 0);
    await waitFor(() => receiver.bodies.length >= total, 10_000, 'deliveries');
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(receiver.bodies.length, total, 'each event once');
    tasks.forEach((task, i) => {
      const mine = receiver.bodies.filter((delivery) => delivery.path === `/r/${task.id}`).map((d) => d.body);
      assert.deepEqual(mine, expected[i], 'in order');
    });
    const delivered = sinks.map((sink) => sink.events.filter((row) => row.type === 'a2a.push.delivered').length);
    assert.equal(delivered[0]! + delivered[1]!, total, `delivered by A and B: ${delivered.join(' + ')}`);
  });

  it('several replicas still need a shared store: memory and SQLite are refused by the store choice', () => {
    const config = parseConfig(pushYaml(50, 'replicas: 2\n'), { TOKEN_A, TOKEN_B, TOKEN_C });
    assert.throws(() => chooseTaskStore(config, { env: {} }), /replicas/);
    assert.throws(() => chooseTaskStore(config, { data: join(dir, 'x'), env: {} }), /replicas/);
  });
});
