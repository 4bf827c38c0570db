/**
 * The shared task event buses against real servers. Two buses in one process act as two
 * replicas: what one publishes, the other's listeners receive; each sees its own events only
 * once (synchronously, never the echo). Each suite uses a channel no other run uses.
 *
 * @example
 * ```sh
 * node --import tsx --test src/tasks/buses/buses.test.ts
 * ```
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  percentile,
  startTcpProxy,
  type TcpProxy,
  postgresSkip,
  POSTGRES_URL,
  redisSkip,
  REDIS_URL,
  uniqueName,
  waitFor,
  withPostgres,
  withRedis,
} from '../../../test/helpers/backing-services.js';
import type { StreamEvent } from '../../protocol/model.js';
import { createPostgresTaskEventBus, type PostgresTaskEventBus } from './postgres.js';
import { createRedisTaskEventBus, type RedisTaskEventBus } from './redis.js';
import type { BusLogger, SharedTaskEventBus } from './shared.js';

const pgSkip = await postgresSkip();
const rdSkip = await redisSkip();

function chunk(taskId: string, text: string): StreamEvent {
  return {
    kind: 'artifact-update',
    taskId,
    contextId: 'ctx',
    artifact: { artifactId: 'reply', parts: [{ kind: 'text', text }] },
    append: true,
    lastChunk: false,
  };
}

function textOf(event: StreamEvent): string {
  if (event.kind !== 'artifact-update') return '';
  const part = event.artifact.parts[0];
  return part !== undefined && part.kind === 'text' ? part.text : '';
}

/** A logger that keeps what it was told. */
function recordingLogger(): BusLogger & { lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const keep = (fields: Record<string, unknown>): void => {
    lines.push(fields);
  };
  return { lines, info: keep, warn: keep, error: keep };
}

interface BusPair {
  a: SharedTaskEventBus;
  /** Connected through a TCP proxy the tests can cut. */
  b: SharedTaskEventBus;
  logB: ReturnType<typeof recordingLogger>;
}

/** The behaviour both buses share, run against each. */
function sharedBusSuite(
  name: string,
  skip: string | false,
  server: { url: string; port: number },
  makePair: (options: { maxEventBytes: number; urlForB: string }) => BusPair,
  killConnectionsOfB: (pair: BusPair) => Promise<void>,
): void {
  describe(`${name} task event bus`, { skip }, () => {
    let pair: BusPair;
    let proxy: TcpProxy;
    before(async () => {
      proxy = await startTcpProxy(server.port);
      pair = makePair({ maxEventBytes: 256 * 1024, urlForB: proxy.url(server.url) });
      await waitFor(() => pair.a.connected && pair.b.connected, 10_000, 'both buses to connect');
    });
    after(async () => {
      await pair.a.close();
      await pair.b.close();
      await proxy.close();
    });

    it('delivers locally at once and to the other replica soon, each exactly once', async () => {
      const { a, b } = pair;
      const onA: string[] = [];
      const onB: string[] = [];
      const stopA = a.subscribe('task-1', (event) => onA.push(textOf(event)));
      const stopB = b.subscribe('task-1', (event) => onB.push(textOf(event)));
      a.publish('task-1', chunk('task-1', 'from a'));
      assert.deepEqual(onA, ['from a'], 'the local listener was told synchronously');
      b.publish('task-1', chunk('task-1', 'from b'));
      assert.deepEqual(onB, ['from b']);
      await waitFor(() => onA.length === 2 && onB.length === 2, 5_000, 'both events on both replicas');
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.deepEqual(onA, ['from a', 'from b']);
      assert.deepEqual(onB, ['from b', 'from a'], 'no echo of its own event');
      stopA();
      stopB();
    });

    it('keeps one replica’s events in publish order', async () => {
      const { a, b } = pair;
      const seen: number[] = [];
      const stop = b.subscribe('task-order', (event) => seen.push(Number(textOf(event))));
      for (let i = 0; i < 500; i++) a.publish('task-order', chunk('task-order', String(i)));
      await waitFor(() => seen.length === 500, 10_000, '500 events');
      assert.deepEqual(
        seen,
        Array.from({ length: 500 }, (_, i) => i),
      );
      stop();
    });

    it('carries an event far over the NOTIFY payload limit intact, and keeps oversized ones local', async () => {
      const { a, b } = pair;
      const big = 'é€😀 '.repeat(12_000); // ~132 kB of UTF-8 in characters of every width
      const seen: string[] = [];
      const stop = b.subscribe('task-big', (event) => seen.push(textOf(event)));
      a.publish('task-big', chunk('task-big', big));
      a.publish('task-big', chunk('task-big', 'after'));
      await waitFor(() => seen.length === 2, 5_000, 'the big event');
      assert.equal(seen[0], big);
      assert.equal(seen[1], 'after');

      const dropped = a.stats.dropped;
      const local: string[] = [];
      const stopLocal = a.subscribe('task-huge', (event) => local.push(textOf(event)));
      a.publish('task-huge', chunk('task-huge', 'x'.repeat(300 * 1024)));
      assert.equal(local.length, 1, 'still delivered locally');
      assert.equal(a.stats.dropped, dropped + 1);
      stopLocal();
      stop();
    });

    it('passes cancel requests to every replica, the asking one included', async () => {
      const { a, b } = pair;
      const onA: string[] = [];
      const onB: string[] = [];
      const stopA = a.onCancelRequest((taskId) => onA.push(taskId));
      const stopB = b.onCancelRequest((taskId) => onB.push(taskId));
      a.requestCancel('task-cancel');
      assert.deepEqual(onA, ['task-cancel']);
      await waitFor(() => onB.length === 1, 5_000, 'the cancel request on b');
      assert.deepEqual(onB, ['task-cancel']);
      stopA();
      stopB();
    });

    it('reconnects by itself after its connections are killed', async () => {
      const { a, b, logB } = pair;
      const onA: string[] = [];
      const onB: string[] = [];
      const stopA = a.subscribe('task-kill', (event) => onA.push(textOf(event)));
      const stopB = b.subscribe('task-kill', (event) => onB.push(textOf(event)));
      const outagesBefore = logB.lines.filter((line) => line.event === 'task_event_bus_disconnected').length;
      await killConnectionsOfB(pair);
      // Sent on the dying connection or queued: either way it arrives, once.
      b.publish('task-kill', chunk('task-kill', 'around the kill'));
      assert.deepEqual(onB, ['around the kill']);
      await waitFor(
        () => logB.lines.filter((line) => line.event === 'task_event_bus_disconnected').length > outagesBefore,
        5_000,
        'the outage to be noticed',
      );
      await waitFor(() => b.connected, 10_000, 'b to reconnect');
      await waitFor(() => onA.includes('around the kill'), 5_000, 'the event on a');
      await waitFor(
        async () => {
          a.publish('task-kill', chunk('task-kill', 'after'));
          await new Promise((resolve) => setTimeout(resolve, 50));
          return onB.includes('after');
        },
        5_000,
        'b to listen again',
      );
      assert.equal(onA.filter((text) => text === 'around the kill').length, 1);
      stopA();
      stopB();
    });

    it('queues while the server is unreachable, logs the outage once, and sends on its return', async () => {
      const { a, b, logB } = pair;
      const onA: string[] = [];
      const onB: string[] = [];
      const stopA = a.subscribe('task-rc', (event) => onA.push(textOf(event)));
      const stopB = b.subscribe('task-rc', (event) => onB.push(textOf(event)));
      const lines = logB.lines.length;
      await proxy.cut();
      await waitFor(() => !b.connected, 5_000, 'b to notice');
      b.publish('task-rc', chunk('task-rc', 'while down 1'));
      b.publish('task-rc', chunk('task-rc', 'while down 2'));
      assert.deepEqual(onB, ['while down 1', 'while down 2'], 'local delivery goes on');
      // Several reconnect attempts fail meanwhile: still one line.
      await new Promise((resolve) => setTimeout(resolve, 700));
      assert.deepEqual(
        logB.lines.slice(lines).map((line) => line.event),
        ['task_event_bus_disconnected'],
      );
      assert.deepEqual(onA, []);
      await proxy.restore();
      await waitFor(() => b.connected, 10_000, 'b to reconnect');
      await waitFor(() => onA.length === 2, 5_000, 'the queued events on a');
      assert.deepEqual(onA, ['while down 1', 'while down 2'], 'in order');
      assert.deepEqual(
        logB.lines.slice(lines).map((line) => line.event),
        ['task_event_bus_disconnected', 'task_event_bus_reconnected'],
      );
      stopA();
      stopB();
    });

    it('fans out with low latency (1000 events, a → b)', async (t) => {
      // A pair of its own, both connected directly (the proxy would add its own delay).
      const { a, b } = makePair({ maxEventBytes: 256 * 1024, urlForB: server.url });
      await waitFor(() => a.connected && b.connected, 10_000, 'both buses to connect');
      const latencies: number[] = [];
      const stop = b.subscribe('task-latency', (event) => {
        latencies.push(performance.now() - Number(textOf(event)));
      });
      for (let i = 0; i < 1_000; i++) {
        a.publish('task-latency', chunk('task-latency', String(performance.now())));
        // Paced like a streaming reply (a chunk every ~1 ms), not one burst.
        if (i % 10 === 9) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await waitFor(() => latencies.length === 1_000, 10_000, '1000 events');
      const p50 = percentile(latencies, 50);
      const p99 = percentile(latencies, 99);
      t.diagnostic(
        `${name} fan-out latency: p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms, max ${Math.max(...latencies).toFixed(2)} ms`,
      );
      assert.ok(p99 < 500, `p99 ${p99} ms`);
      stop();
      await a.close();
      await b.close();
    });
  });
}

sharedBusSuite(
  'PostgreSQL',
  pgSkip,
  { url: POSTGRES_URL, port: Number(new URL(POSTGRES_URL).port || 5432) },
  ({ maxEventBytes, urlForB }) => {
    const schema = uniqueName('bus_test');
    const logB = recordingLogger();
    const common = { schema, reconnectMaxDelayMs: 200, connectTimeoutMs: 1_000, maxEventBytes };
    return {
      a: createPostgresTaskEventBus({ url: POSTGRES_URL, ...common }),
      b: createPostgresTaskEventBus({ url: urlForB, logger: logB, ...common }),
      logB,
    };
  },
  async (pair) => {
    const pid = (pair.b as PostgresTaskEventBus).backendPid;
    assert.ok(pid !== undefined);
    await withPostgres((client) => client.query('SELECT pg_terminate_backend($1)', [pid]));
  },
);

sharedBusSuite(
  'Redis',
  rdSkip,
  { url: REDIS_URL, port: Number(new URL(REDIS_URL).port || 6379) },
  ({ maxEventBytes, urlForB }) => {
    const channel = uniqueName('airlock:test:events');
    const logB = recordingLogger();
    const common = { channel, reconnectMaxDelayMs: 200, connectTimeoutMs: 1_000, maxEventBytes };
    return {
      a: createRedisTaskEventBus({ url: REDIS_URL, ...common }),
      b: createRedisTaskEventBus({ url: urlForB, logger: logB, ...common }),
      logB,
    };
  },
  async (pair) => {
    // Both of b's connections at once (one MULTI), so that the outage is one outage.
    const names = new Set((pair.b as RedisTaskEventBus).clientNames);
    await withRedis(async (client) => {
      const ids = (await client.clientList()).filter((entry) => names.has(entry.name)).map((entry) => Number(entry.id));
      assert.equal(ids.length, 2);
      const multi = client.multi();
      for (const id of ids) multi.clientKill({ filter: 'ID', id });
      await multi.exec();
    });
  },
);

describe('PostgreSQL task event bus, isolation', { skip: pgSkip }, () => {
  it('does not hear a bus of another schema', async () => {
    const a = createPostgresTaskEventBus({ url: POSTGRES_URL, schema: uniqueName('bus_test') });
    const b = createPostgresTaskEventBus({ url: POSTGRES_URL, schema: uniqueName('bus_test') });
    try {
      await waitFor(() => a.connected && b.connected, 10_000, 'both buses to connect');
      assert.notEqual(a.channel, b.channel);
      const seen: StreamEvent[] = [];
      b.subscribe('t', (event) => seen.push(event));
      a.publish('t', chunk('t', 'hello'));
      await a.flushed();
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal(seen.length, 0);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('keeps delivering locally while the database cannot be reached, and closes promptly', async () => {
    const logger = recordingLogger();
    const bus = createPostgresTaskEventBus({
      url: 'postgres://postgres@127.0.0.1:1/none',
      connectTimeoutMs: 500,
      reconnectMaxDelayMs: 50,
      logger,
    });
    const seen: string[] = [];
    bus.subscribe('t', (event) => seen.push(textOf(event)));
    bus.publish('t', chunk('t', 'local'));
    assert.deepEqual(seen, ['local']);
    await waitFor(() => logger.lines.length > 0, 5_000, 'the outage line');
    // Many reconnect attempts later: still the one line.
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.deepEqual(
      logger.lines.map((line) => line.event),
      ['task_event_bus_disconnected'],
    );
    const started = Date.now();
    await bus.close();
    assert.ok(Date.now() - started < 3_000);
  });
});
