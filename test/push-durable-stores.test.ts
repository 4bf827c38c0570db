/**
 * The push records and outbox contract, run on the three stores: memory, SQLite (a temp file)
 * and PostgreSQL (a schema of its own, dropped after). Caps hold under concurrent creates; the
 * outbox fans an event out to the task's configs, hands out only the oldest row of each task,
 * honours claims (two claimants never get one row), reschedules, and drops the task's configs
 * once its final event is done.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { MemoryPushConfigs } from '../src/push/memory.js';
import { MemoryPushOutbox } from '../src/push/memory-outbox.js';
import type { DurablePush } from '../src/tasks/stores/push-outbox.js';
import type { PushConfigRecord } from '../src/tasks/stores/push-records.js';
import { PostgresTaskStore } from '../src/tasks/stores/postgres.js';
import { SqliteTaskStore } from '../src/tasks/stores/sqlite.js';
import { dropSchema, postgresSkip, POSTGRES_URL, uniqueName } from './helpers/backing-services.js';

const pgSkip = await postgresSkip();
const dir = mkdtempSync(join(tmpdir(), 'airlock-push-stores-'));
after(() => rmSync(dir, { recursive: true, force: true }));

interface Opened {
  push: DurablePush;
  close(): Promise<void>;
}

const STORES: { name: string; skip: string | false; open: () => Promise<Opened> }[] = [
  {
    name: 'memory',
    skip: false,
    open: () => {
      const configs = new MemoryPushConfigs();
      return Promise.resolve({
        push: { configs, outbox: new MemoryPushOutbox(configs) },
        close: async () => undefined,
      });
    },
  },
  {
    name: 'sqlite',
    skip: false,
    open: async () => {
      const store = await SqliteTaskStore.open({ path: join(dir, `${uniqueName('s')}.db`) });
      return { push: store.push, close: () => store.close() };
    },
  },
  {
    name: 'postgres',
    skip: pgSkip,
    open: async () => {
      const schema = uniqueName('airlock_push');
      const store = await PostgresTaskStore.open({ url: POSTGRES_URL, schema, poolSize: 4 });
      return {
        push: store.push,
        close: async () => {
          await store.close();
          await dropSchema(schema);
        },
      };
    },
  },
];

const CAPS = { perTask: 2, perPrincipal: 3 };
function record(owner: string, taskId: string, id: string, createdAt = 1): PushConfigRecord {
  return {
    owner,
    dialect: '1.0',
    createdAt,
    agent: 'echo',
    client: 'ci',
    config: { id, taskId, url: `https://hooks.example/${id}`, token: `tok-${id}` },
  };
}

for (const kind of STORES) {
  describe(`push records and outbox: ${kind.name}`, { skip: kind.skip }, () => {
    it('keeps configs per owner, replaces in place, enforces both caps atomically', async () => {
      const opened = await kind.open();
      const { push } = opened;
      try {
        const { configs } = push;
        assert.equal(await configs.put(record('alice', 't1', 'a'), CAPS), 'stored');
        assert.equal(await configs.put({ ...record('alice', 't1', 'a', 99), dialect: '0.3' }, CAPS), 'stored');
        const got = await configs.get('t1', 'alice', 'a');
        assert.equal(got?.dialect, '0.3');
        assert.equal(got?.createdAt, 1, 'a replace keeps the first creation time');
        assert.equal(got?.agent, 'echo');
        assert.equal(await configs.get('t1', 'bob', 'a'), undefined, "another owner's config is never found");
        assert.equal(await configs.put(record('bob', 't1', 'a'), CAPS), 'per-task-cap', 'no takeover of an id');
        // Concurrent creates on one task: exactly one more fits under perTask = 2.
        const outcomes = await Promise.all(
          ['b', 'c', 'd'].map((id) => configs.put(record('alice', 't1', id, 2), CAPS)),
        );
        assert.equal(outcomes.filter((o) => o === 'stored').length, 1);
        assert.equal((await configs.list('t1', 'alice')).length, 2);
        // perPrincipal = 3: alice holds 2; concurrent creates on fresh tasks, one fits.
        const more = await Promise.all(['t2', 't3', 't4'].map((t) => configs.put(record('alice', t, 'x'), CAPS)));
        assert.deepEqual(more.filter((o) => o === 'stored').length, 1);
        assert.ok(more.includes('per-principal-cap'));
        assert.equal(await configs.delete('t1', 'bob', 'a'), false);
        assert.equal(await configs.delete('t1', 'alice', 'a'), true);
        assert.equal((await configs.forTask('t1')).length, 1);
        await configs.dropTask('t1');
        assert.deepEqual(await configs.forTask('t1'), []);
      } finally {
        await opened.close();
      }
    });

    it('fans an event out, hands out only the head of each task, honours claims and retries', async () => {
      const opened = await kind.open();
      const { push } = opened;
      try {
        const { configs, outbox } = push;
        const caps = { perTask: 5, perPrincipal: 10 };
        assert.equal(
          await outbox.enqueue({ taskId: 't1', event: '"e0"', final: false }, 0, 4),
          0,
          'no config: nothing',
        );
        await configs.put(record('alice', 't1', 'a', 1), caps);
        await configs.put(record('alice', 't1', 'b', 2), caps);
        await configs.put(record('alice', 't2', 'c', 3), caps);
        assert.equal(await outbox.enqueue({ taskId: 't1', event: '"e1"', final: false }, 10, 2), 2);
        assert.equal(await outbox.enqueue({ taskId: 't1', event: '"e2"', final: true }, 10, 2), 2);
        assert.equal(await outbox.enqueue({ taskId: 't1', event: '"e3"', final: false }, 10, 2), 'full');
        assert.equal(await outbox.enqueue({ taskId: 't2', event: '"x1"', final: false }, 10, 2), 1);
        assert.equal(await outbox.pending('t1'), 4);

        // Two claimants at once: each head goes to one of them.
        const [first, second] = await Promise.all([outbox.claim('A', 10, 1000, 10), outbox.claim('B', 10, 1000, 10)]);
        const claimed = [...first, ...second];
        assert.deepEqual(claimed.map((row) => row.event).sort(), ['"e1"', '"x1"']);
        const e1 = claimed.find((row) => row.event === '"e1"');
        assert.ok(e1 !== undefined);
        assert.equal(e1.configId, 'a');
        assert.equal(e1.record?.config.token, 'tok-a');
        assert.equal(e1.agent, 'echo');
        assert.equal(e1.client, 'ci');
        assert.equal(e1.attempts, 0);
        const holder = first.includes(e1) ? 'A' : 'B';
        const other = holder === 'A' ? 'B' : 'A';
        assert.deepEqual(await outbox.claim(other, 20, 1000, 10), [], 'claimed heads are not handed out again');

        // A retry gives the row back later; its task waits (order), others go on.
        await outbox.retry(e1.id, other, 50); // not the holder: no effect
        await outbox.retry(e1.id, holder, 50);
        assert.deepEqual(await outbox.claim('C', 40, 1000, 10), []);
        const again = await outbox.claim('C', 50, 1000, 10);
        assert.deepEqual(
          again.map((row) => [row.event, row.attempts]),
          [['"e1"', 1]],
        );
        await outbox.finish(again[0]!.id, 'C');
        const next = await outbox.claim('C', 50, 1000, 10);
        assert.deepEqual(
          next.map((row) => [row.event, row.configId]),
          [['"e1"', 'b']],
        );

        // An expired lease frees the row for another claimant.
        const lapsed = await outbox.claim('D', 50 + 1000, 1000, 10);
        assert.deepEqual(
          lapsed.filter((row) => row.taskId === 't1').map((row) => row.event),
          ['"e1"'],
        );
        await outbox.finish(next[0]!.id, 'C'); // the lapsed holder cannot finish it
        assert.equal(await outbox.pending('t1'), 3);
      } finally {
        await opened.close();
      }
    });

    it('drops the configs after the final event, and enqueues a late final once', async () => {
      const opened = await kind.open();
      const { push } = opened;
      try {
        const { configs, outbox } = push;
        const caps = { perTask: 5, perPrincipal: 10 };
        await configs.put(record('alice', 't1', 'a'), caps);
        assert.equal(await outbox.enqueueFinal('t1', 'a', '"done"', 0), true);
        assert.equal(await outbox.enqueueFinal('t1', 'a', '"done"', 0), false, 'a final already waits');
        assert.equal(await outbox.enqueueFinal('t1', 'zz', '"done"', 0), false, 'no such config');
        const [row] = await outbox.claim('A', 0, 1000, 10);
        assert.ok(row?.final);
        await outbox.finish(row.id, 'A');
        assert.deepEqual(await configs.forTask('t1'), [], 'the final event took the configs with it');
        assert.equal(await outbox.enqueueFinal('t1', 'a', '"done"', 0), false, 'delivered: never again');
        // A row whose config was deleted since comes without its record.
        await configs.put(record('alice', 't2', 'b'), caps);
        await outbox.enqueue({ taskId: 't2', event: '"e"', final: false }, 0, 4);
        await configs.delete('t2', 'alice', 'b');
        const [orphan] = await outbox.claim('A', 0, 1000, 10);
        assert.equal(orphan?.record, undefined);
      } finally {
        await opened.close();
      }
    });
  });
}
