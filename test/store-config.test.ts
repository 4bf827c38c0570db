/**
 * Choosing the task store: the config's `store` section, `--data`, `DATABASE_URL`, and the
 * refusal of an unshared store when several replicas serve one config.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chooseTaskStore, StoreChoiceError, banner } from '../src/cli/serve.js';
import { ConfigError } from '../src/config/errors.js';
import { parseConfig } from '../src/config/load.js';
import { createGateway } from '../src/server/http.js';
import { silentLogger } from '../src/server/log.js';
import { LocalTaskEventBus } from '../src/tasks/events.js';
import { MemoryTaskStore } from '../src/tasks/stores/memory.js';
import { describeTaskStoreSpec } from '../src/tasks/stores/index.js';
import type { Task } from '../src/protocol/model.js';

const AGENTS = `
agents:
  - slug: echo
    name: Echo
    description: Echoes.
    skills: [{ id: echo, name: Echo, description: Echoes }]
    backend: { type: echo }
`;

function config(head: string) {
  return parseConfig(`${head}\n${AGENTS}`, {});
}

describe('store config', () => {
  it('defaults to memory with 10 000 tasks and 60 minutes, and one replica', () => {
    const parsed = config('');
    assert.deepEqual(parsed.store, { type: 'memory', maxTasks: 10_000, taskTtlMinutes: 60 });
    assert.equal(parsed.replicas, 1);
    // A section without a type is memory too.
    assert.equal(config('store: { maxTasks: 5 }').store.type, 'memory');
  });

  it('reads sqlite and postgres stores with their retention', () => {
    assert.deepEqual(config('store: { type: sqlite, path: /var/lib/airlock/tasks.db, maxTasks: 50000 }').store, {
      type: 'sqlite',
      path: '/var/lib/airlock/tasks.db',
      maxTasks: 50_000,
      taskTtlMinutes: 60,
    });
    const pg = config('store: { type: postgres, url: "postgres://airlock@db/airlock", schema: gateway, poolSize: 20 }');
    assert.equal(pg.store.type, 'postgres');
    assert.equal(describeTaskStoreSpec(pg.store), 'postgres://airlock@db/airlock (schema gateway)');
  });

  it('refuses a store with unknown keys, a bad URL or a bad schema name', () => {
    assert.throws(() => config('store: { type: sqlite }'), ConfigError);
    assert.throws(() => config('store: { type: memory, path: x }'), ConfigError);
    assert.throws(() => config('store: { type: postgres, url: "mysql://db/x" }'), ConfigError);
    assert.throws(() => config('store: { type: postgres, url: "postgres://db/x", schema: "Drop;" }'), ConfigError);
    assert.throws(() => config('store: { type: redis }'), ConfigError);
  });

  it('takes vacuumAfterRows for postgres only, 0 or more', () => {
    const pg = config('store: { type: postgres, url: "postgres://db/x", vacuumAfterRows: 0 }');
    assert.equal(pg.store.type === 'postgres' && pg.store.vacuumAfterRows, 0);
    assert.throws(() => config('store: { type: postgres, url: "postgres://db/x", vacuumAfterRows: -1 }'), ConfigError);
    assert.throws(() => config('store: { type: sqlite, path: x.db, vacuumAfterRows: 100 }'), ConfigError);
  });
});

describe('chooseTaskStore', () => {
  it('takes --data over everything, then a configured database, then DATABASE_URL, else memory', () => {
    const memory = config('');
    assert.equal(chooseTaskStore(memory, { env: {} }).type, 'memory');
    assert.deepEqual(chooseTaskStore(memory, { env: { DATABASE_URL: 'postgres://u:secret@db/airlock' } }), {
      type: 'postgres',
      url: 'postgres://u:secret@db/airlock',
      maxTasks: 10_000,
      taskTtlMinutes: 60,
    });
    const data = chooseTaskStore(memory, { data: '/srv/airlock', env: { DATABASE_URL: 'postgres://db/x' } });
    assert.equal(data.type, 'sqlite');
    assert.equal(data.type === 'sqlite' && data.path, '/srv/airlock/airlock.db');
  });

  it('refuses the memory store (and SQLite) when several replicas serve the config', () => {
    assert.throws(
      () => chooseTaskStore(config('replicas: 3'), { env: {} }),
      (error: unknown) =>
        error instanceof StoreChoiceError &&
        /^replicas: 3 needs a store every replica shares, and the memory store is not: set DATABASE_URL/.test(
          error.message,
        ),
    );
    assert.throws(
      () => chooseTaskStore(config(''), { env: { AIRLOCK_MULTI_REPLICA: '1' }, data: '/srv/airlock' }),
      /AIRLOCK_MULTI_REPLICA=1 needs a store every replica shares, and the sqlite store is not/,
    );
    assert.equal(
      chooseTaskStore(config('replicas: 3'), { env: { DATABASE_URL: 'postgres://db/airlock' } }).type,
      'postgres',
    );
  });

  it('never prints a database password in the banner', () => {
    const parsed = config('');
    const text = banner(
      parsed,
      'http://127.0.0.1:1',
      describeTaskStoreSpec({ type: 'postgres', url: 'postgres://app:hunter2@db:5432/airlock' }),
    );
    assert.match(text, /tasks kept in postgres:\/\/app@db:5432\/airlock/);
    assert.ok(!text.includes('hunter2'));
  });

  it('a gateway refuses to start on a database store it was not given open', () => {
    assert.throws(
      () => createGateway(config('store: { type: sqlite, path: x.db }'), { logger: silentLogger }),
      /store sqlite: open it with openTaskStore\(\)/,
    );
  });

  it('settles a dead process’s running tasks at startup, but never when replicas share the store', async () => {
    const calls: string[] = [];
    const storeWith = () => {
      const store = new MemoryTaskStore({ maxTasks: 10, taskTtlMs: 60_000 }) as MemoryTaskStore & {
        failRunning: (settle: (task: Task, owner: string) => Task) => Promise<number>;
      };
      store.failRunning = async () => {
        calls.push('failRunning');
        return 0;
      };
      return store;
    };
    const alone = createGateway(config(''), { logger: silentLogger, store: storeWith() });
    await alone.recoverInterrupted();
    await alone.close();
    assert.deepEqual(calls, ['failRunning']);
    // A bus that can ask other replicas to cancel is a shared one.
    const bus = Object.assign(new LocalTaskEventBus(), { requestCancel: () => undefined });
    const shared = createGateway(config(''), { logger: silentLogger, store: storeWith(), bus });
    assert.equal(await shared.recoverInterrupted(), 0);
    await shared.close();
    assert.deepEqual(calls, ['failRunning'], 'not called with a shared bus');
  });
});
