/**
 * The publish time in bus frames, against real servers: a message from another replica reports
 * its lag (publish → receipt) once, the bus's own echoes never, a frame of an older version
 * (no publish time) is delivered and not measured, and a publish time ahead of this clock (skew)
 * is reported as 0.
 *
 * @example
 * ```sh
 * node --import tsx --test src/tasks/buses/lag.test.ts
 * ```
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
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
import { createPostgresTaskEventBus, postgresEventChannel } from './postgres.js';
import { createRedisTaskEventBus } from './redis.js';
import type { SharedTaskEventBus } from './shared.js';

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

/** A frame as another replica writes it: the header (with `sentAt` unless undefined), then the body. */
function rawFrame(origin: string, taskId: string, text: string, sentAt?: number): string {
  const header: unknown[] = ['a1', origin, 1, 0, 1, 'e', taskId];
  if (sentAt !== undefined) header.push(sentAt);
  return `${JSON.stringify(header)}\n${JSON.stringify(chunk(taskId, text))}`;
}

function lagSuite(
  kind: 'postgres' | 'redis',
  skip: string | false,
  open: (channel: string) => SharedTaskEventBus,
  inject: (channel: string, frame: string) => Promise<void>,
): void {
  describe(`event bus lag (${kind})`, { skip }, () => {
    const channel = kind === 'postgres' ? postgresEventChannel(uniqueName('lag')) : uniqueName('airlock:lag');
    let a: SharedTaskEventBus;
    let b: SharedTaskEventBus;
    const lagsA: number[] = [];
    const lagsB: number[] = [];

    before(async () => {
      a = open(channel);
      b = open(channel);
      a.onReceiptLag((seconds) => lagsA.push(seconds));
      b.onReceiptLag((seconds) => lagsB.push(seconds));
      await waitFor(() => a.connected && b.connected, 10_000, 'both buses');
    });

    after(async () => {
      await Promise.all([a?.close(), b?.close()]);
    });

    it('reports each message from the other replica once, in seconds; never its own echo', async () => {
      const got: string[] = [];
      const taskId = uniqueName('task');
      const stop = b.subscribe(taskId, () => got.push('event'));
      for (let i = 0; i < 5; i++) a.publish(taskId, chunk(taskId, `piece ${i}`));
      a.requestCancel(taskId);
      await a.flushed();
      await waitFor(() => lagsB.length >= 6, 5_000, 'six lag reports');
      stop();
      assert.equal(got.length, 5);
      assert.equal(lagsB.length, 6, 'five events and a cancel');
      for (const seconds of lagsB) assert.ok(seconds >= 0 && seconds < 5, `lag ${seconds} s`);
      assert.equal(lagsA.length, 0, 'a heard only its own echoes');
      assert.equal(a.kind, kind);
    });

    it('delivers an older frame without a publish time, unmeasured; clamps a future one to 0', async () => {
      lagsB.length = 0;
      const taskId = uniqueName('task');
      const got: string[] = [];
      const stop = b.subscribe(taskId, (event) => {
        if (event.kind === 'artifact-update' && event.artifact.parts[0]?.kind === 'text') {
          got.push(event.artifact.parts[0].text);
        }
      });
      await inject(channel, rawFrame('0ld0rig1n0000001', taskId, 'old'));
      await inject(channel, rawFrame('5kewed0rig1n0001', taskId, 'ahead', Date.now() + 60_000));
      await waitFor(() => got.length >= 2, 5_000, 'both frames delivered');
      stop();
      assert.deepEqual(got, ['old', 'ahead']);
      assert.deepEqual(lagsB, [0], 'one report (the skewed frame, clamped); none for the old frame');
      assert.equal(b.stats.malformed, 0);
    });

    it('stops reporting once the listener is removed', async () => {
      const seen: number[] = [];
      const stop = b.onReceiptLag((seconds) => seen.push(seconds));
      stop();
      a.requestCancel(uniqueName('task'));
      await a.flushed();
      await waitFor(() => b.stats.received >= 9, 5_000, 'the cancel received');
      assert.deepEqual(seen, []);
    });
  });
}

lagSuite(
  'postgres',
  pgSkip,
  (channel) => createPostgresTaskEventBus({ url: POSTGRES_URL, channel }),
  (channel, frame) =>
    withPostgres(async (client) => {
      await client.query('SELECT pg_notify($1, $2)', [channel, frame]);
    }),
);

lagSuite(
  'redis',
  rdSkip,
  (channel) => createRedisTaskEventBus({ url: REDIS_URL, channel }),
  (channel, frame) =>
    withRedis(async (client) => {
      await client.publish(channel, frame);
    }),
);
