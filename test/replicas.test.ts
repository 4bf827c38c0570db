/**
 * Several replicas: two gateway processes (test/fixtures/replica.ts) share one PostgreSQL schema,
 * a task event bus and limits, once over PostgreSQL alone and once with Redis for the bus and the
 * limits. What one replica starts, the other sees, streams and cancels; rate limits count across
 * both; owners stay apart. Then faults: the task store's database going away mid-service
 * (through a TCP proxy the test cuts) answers a clear, retryable error and recovers by itself.
 *
 * @example
 * ```sh
 * node --import tsx --test test/replicas.test.ts
 * ```
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { PostgresTaskStore } from '../src/tasks/stores/postgres.js';
import { STORE_UNAVAILABLE_MESSAGE } from '../src/server/rpc.js';
import {
  dropSchema,
  postgresSkip,
  POSTGRES_URL,
  redisSkip,
  REDIS_URL,
  startTcpProxy,
  uniqueName,
  waitFor,
  withRedis,
} from './helpers/backing-services.js';
import { rpc, rpcStream, TOKEN_A, TOKEN_B, TOKEN_C, v10Message, withServer, DEFAULT_YAML } from './helpers/gateway.js';
import { parseConfig } from '../src/config/load.js';
import { createGateway, type Gateway } from '../src/server/http.js';
import { silentLogger } from '../src/server/log.js';

const pgSkip = await postgresSkip();
const rdSkip = await redisSkip();
const FIXTURE = fileURLToPath(new URL('./fixtures/replica.ts', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const RATE = 40;

/** A gateway process and what it printed. */
interface Replica {
  name: string;
  url: string;
  /** Its JSON stdout lines. */
  lines: Record<string, unknown>[];
  stderr: string[];
  stop(): Promise<void>;
}

async function startReplica(name: string, env: Record<string, string>): Promise<Replica> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', FIXTURE], {
    cwd: REPO_ROOT,
    env: { ...process.env, REPLICA_NAME: name, DATABASE_URL: POSTGRES_URL, REDIS_URL, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Record<string, unknown>[] = [];
  const stderr: string[] = [];
  createInterface({ input: child.stderr! }).on('line', (line) => stderr.push(line));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`replica ${name} did not start: ${stderr.join('\n')}`)), 30_000);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      let parsed: Record<string, unknown>;
      try {
        parsed = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return;
      }
      lines.push(parsed);
      if (parsed.event === 'listening') {
        clearTimeout(timer);
        resolve(String(parsed.url));
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`replica ${name} exited (${code}): ${stderr.join('\n')}`));
    });
  });
  return {
    name,
    url,
    lines,
    stderr,
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

const v1 = { version: '1.0' } as const;

function replicaSuite(variant: 'postgres' | 'redis', skip: string | false): void {
  describe(
    `two gateway processes, bus and limits over ${variant === 'redis' ? 'Redis' : 'PostgreSQL'}`,
    { skip },
    () => {
      const schema = uniqueName('airlock_test');
      const prefix = uniqueName('airlock_test');
      let a: Replica;
      let b: Replica;
      const agent = (replica: Replica, slug = 'slow'): string => `${replica.url}/a2a/${slug}`;

      before(async () => {
        // Migrated once, before either replica opens it (they would also migrate under a lock).
        await PostgresTaskStore.migrate({ url: POSTGRES_URL, schema });
        const env = {
          REPLICA_SCHEMA: schema,
          REPLICA_BUS: variant,
          REPLICA_LIMITS: variant,
          REPLICA_PREFIX: prefix,
          REPLICA_RATE: String(RATE),
        };
        [a, b] = await Promise.all([startReplica('A', env), startReplica('B', env)]);
      });

      after(async () => {
        await Promise.allSettled([a?.stop(), b?.stop()]);
        await dropSchema(schema);
        if (variant === 'redis') {
          await withRedis(async (client) => {
            const keys = await client.keys(`${prefix}:*`);
            if (keys.length > 0) await client.del(keys);
          });
        }
      });

      it('GetTask and ListTasks on B see a task sent on A', async () => {
        const sent = await rpc(agent(a, 'echo'), 'SendMessage', { message: v10Message('hello replicas') }, v1);
        const task = sent.body.result.task;
        assert.equal(task.status.state, 'TASK_STATE_COMPLETED');
        const got = await rpc(agent(b, 'echo'), 'GetTask', { id: task.id }, v1);
        assert.equal(got.body.result.id, task.id);
        assert.equal(got.body.result.status.state, 'TASK_STATE_COMPLETED');
        const listed = await rpc(agent(b, 'echo'), 'ListTasks', { contextId: task.contextId }, v1);
        assert.deepEqual(
          listed.body.result.tasks.map((t: { id: string }) => t.id),
          [task.id],
        );
      });

      it('SubscribeToTask on B streams a task running on A to its end', async () => {
        const sent = await rpc(
          agent(a),
          'SendMessage',
          { message: v10Message('stream me'), configuration: { returnImmediately: true } },
          v1,
        );
        const id = sent.body.result.task.id;
        const { events } = await rpcStream(agent(b), 'SubscribeToTask', { id }, v1);
        assert.equal(events[0].result.task.id, id);
        const chunks = events
          .filter((event) => event.result.artifactUpdate !== undefined)
          .map((event) => event.result.artifactUpdate.artifact.parts[0].text as string);
        assert.ok(chunks.length >= 8, `${chunks.length} chunks`);
        assert.ok(
          chunks.every((text) => text.includes('from A')),
          'chunks come from the replica running it',
        );
        assert.ok(chunks[chunks.length - 1]?.startsWith('chunk 9 '));
        const last = events[events.length - 1].result.statusUpdate;
        assert.equal(last.status.state, 'TASK_STATE_COMPLETED');
        // The stream ended only once B's store reads agree.
        const got = await rpc(agent(b), 'GetTask', { id }, v1);
        assert.equal(got.body.result.status.state, 'TASK_STATE_COMPLETED');
      });

      it('CancelTask on B aborts the backend running on A, and no chunk follows', async () => {
        const sent = await rpc(
          agent(a),
          'SendMessage',
          { message: v10Message('cancel me'), configuration: { returnImmediately: true } },
          v1,
        );
        const id = sent.body.result.task.id;
        await waitFor(
          () => a.lines.some((line) => line.event === 'chunk' && line.taskId === id),
          5_000,
          'a first chunk',
        );
        const subscribed = rpcStream(agent(b), 'SubscribeToTask', { id }, v1);
        await new Promise((resolve) => setTimeout(resolve, 100));
        const started = Date.now();
        const canceled = await rpc(agent(b), 'CancelTask', { id }, v1);
        assert.equal(canceled.body.result.status.state, 'TASK_STATE_CANCELED');
        assert.ok(Date.now() - started < 1_500, 'A answered; B did not wait for the timeout');
        await waitFor(
          () => a.lines.some((line) => line.event === 'aborted' && line.taskId === id),
          2_000,
          'A to abort',
        );
        const chunksAtAbort = a.lines.filter((line) => line.event === 'chunk' && line.taskId === id).length;
        assert.ok(chunksAtAbort < 10);
        await new Promise((resolve) => setTimeout(resolve, 500));
        assert.equal(
          a.lines.filter((line) => line.event === 'chunk' && line.taskId === id).length,
          chunksAtAbort,
          'no chunk after the abort',
        );
        for (const replica of [a, b]) {
          const got = await rpc(agent(replica), 'GetTask', { id }, v1);
          assert.equal(got.body.result.status.state, 'TASK_STATE_CANCELED', `GetTask on ${replica.name}`);
        }
        const { events } = await subscribed;
        assert.equal(events[events.length - 1].result.statusUpdate.status.state, 'TASK_STATE_CANCELED');
        const again = await rpc(agent(a), 'CancelTask', { id }, v1);
        assert.equal(again.body.error.code, -32002);
      });

      it('keeps client B out of client A’s task on either replica', async () => {
        const sent = await rpc(
          agent(a),
          'SendMessage',
          { message: v10Message('mine'), configuration: { returnImmediately: true } },
          v1,
        );
        const task = sent.body.result.task;
        for (const replica of [a, b]) {
          const got = await rpc(agent(replica), 'GetTask', { id: task.id }, { ...v1, token: TOKEN_B });
          assert.equal(got.body.error.code, -32001, `GetTask on ${replica.name}`);
          const listed = await rpc(
            agent(replica),
            'ListTasks',
            { contextId: task.contextId },
            { ...v1, token: TOKEN_B },
          );
          assert.deepEqual(listed.body.result.tasks, [], `ListTasks on ${replica.name}`);
          const subscribed = await rpc(agent(replica), 'SubscribeToTask', { id: task.id }, { ...v1, token: TOKEN_B });
          assert.equal(subscribed.body.error.code, -32001, `SubscribeToTask on ${replica.name}`);
          const canceled = await rpc(agent(replica), 'CancelTask', { id: task.id }, { ...v1, token: TOKEN_B });
          assert.equal(canceled.body.error.code, -32001, `CancelTask on ${replica.name}`);
        }
        const mine = await rpc(agent(b), 'CancelTask', { id: task.id }, v1);
        assert.equal(mine.body.result.status.state, 'TASK_STATE_CANCELED');
      });

      it(`shares the rate limit: ${RATE} requests over A and B together, then 429 on either`, async () => {
        for (let i = 0; i < RATE; i++) {
          const replica = i % 2 === 0 ? a : b;
          const listed = await rpc(agent(replica, 'echo'), 'ListTasks', {}, { ...v1, token: TOKEN_C });
          assert.equal(listed.status, 200, `request ${i + 1} on ${replica.name}`);
        }
        for (const replica of [a, b]) {
          const refused = await rpc(agent(replica, 'echo'), 'ListTasks', {}, { ...v1, token: TOKEN_C });
          assert.equal(refused.status, 429, `on ${replica.name}`);
          const retryAfter = Number(refused.headers.get('retry-after'));
          assert.ok(retryAfter >= 1 && retryAfter <= 60, `retry-after ${retryAfter}`);
        }
        // Another client keeps its own budget.
        assert.equal((await rpc(agent(a, 'echo'), 'ListTasks', {}, { ...v1, token: TOKEN_B })).status, 200);
      });

      // Last: it locks this test's address (127.0.0.1) out of both replicas for the rest of the minute.
      it('shares the auth-failure lockout: 10 failures over A and B, then 429 on either, good token or not', async () => {
        for (let i = 0; i < 10; i++) {
          const replica = i % 2 === 0 ? a : b;
          const failed = await rpc(agent(replica, 'echo'), 'ListTasks', {}, { ...v1, token: `wrong-token-${i}` });
          assert.equal(failed.status, 401, `failure ${i + 1} on ${replica.name}`);
        }
        for (const replica of [a, b]) {
          const locked = await rpc(agent(replica, 'echo'), 'ListTasks', {}, v1);
          assert.equal(locked.status, 429, `on ${replica.name}`);
          assert.ok(Number(locked.headers.get('retry-after')) >= 1);
        }
      });
    },
  );
}

replicaSuite('postgres', pgSkip);
replicaSuite('redis', pgSkip || rdSkip);

describe('the task store going away', { skip: pgSkip }, () => {
  const schema = uniqueName('airlock_test');
  let proxy: Awaited<ReturnType<typeof startTcpProxy>>;
  let store: PostgresTaskStore;
  let gateway: Gateway;
  let base: string;

  before(async () => {
    proxy = await startTcpProxy(Number(new URL(POSTGRES_URL).port || 5432));
    store = await PostgresTaskStore.open({
      url: proxy.url(POSTGRES_URL),
      schema,
      connectTimeoutMs: 1_000,
      statementTimeoutMs: 1_000,
    });
    const config = parseConfig(
      withServer('{ host: 127.0.0.1, port: 0, defaultAgent: echo, rest: true }', DEFAULT_YAML),
      {
        TOKEN_A,
        TOKEN_B,
        TOKEN_C,
      },
    );
    gateway = createGateway(config, { logger: silentLogger, store });
    base = `${await gateway.listen()}/a2a`;
  });

  after(async () => {
    await gateway.close();
    await proxy.close();
    await dropSchema(schema);
  });

  it('answers -32603 with a stable message and REST 503 + Retry-After, then recovers by itself', async () => {
    const before = await rpc(`${base}/echo`, 'SendMessage', { message: v10Message('up') }, v1);
    assert.equal(before.body.result.task.status.state, 'TASK_STATE_COMPLETED');
    const id = before.body.result.task.id;

    await proxy.cut();
    let started = Date.now();
    const sent = await rpc(`${base}/echo`, 'SendMessage', { message: v10Message('down') }, v1);
    assert.ok(Date.now() - started < 5_000, `answered in ${Date.now() - started} ms`);
    assert.equal(sent.status, 200);
    assert.equal(sent.body.error.code, -32603);
    assert.equal(sent.body.error.message, STORE_UNAVAILABLE_MESSAGE);

    started = Date.now();
    const got = await rpc(`${base}/echo`, 'GetTask', { id }, v1);
    assert.ok(Date.now() - started < 5_000);
    assert.equal(got.body.error.code, -32603);
    assert.equal(got.body.error.message, STORE_UNAVAILABLE_MESSAGE);

    const streamed = await rpc(`${base}/writer`, 'SendMessage', { message: v10Message('down') }, v1);
    assert.equal(streamed.body.error.message, STORE_UNAVAILABLE_MESSAGE, 'an asynchronous backend too');

    const ask = await fetch(`${base}/echo/ask`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN_A}` },
      body: JSON.stringify({ message: 'down' }),
    });
    assert.equal(ask.status, 503);
    assert.equal(ask.headers.get('retry-after'), '1');
    assert.equal(((await ask.json()) as { error: { message: string } }).error.message, STORE_UNAVAILABLE_MESSAGE);

    await proxy.restore();
    await waitFor(
      async () => {
        const again = await rpc(`${base}/echo`, 'GetTask', { id }, v1);
        return again.body.result?.status.state === 'TASK_STATE_COMPLETED';
      },
      10_000,
      'the store to answer again',
    );
    const after = await rpc(`${base}/echo`, 'SendMessage', { message: v10Message('up again') }, v1);
    assert.equal(after.body.result.task.status.state, 'TASK_STATE_COMPLETED');
  });
});
