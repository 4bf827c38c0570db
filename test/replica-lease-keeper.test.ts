/**
 * Turn leases in the task service (`tasks/service/leases.ts`), in one process on a real
 * PostgreSQL store (own schema, dropped after), several services standing for replicas: a dead
 * replica's running task is failed once, saying why, reported and published; a parked task and a
 * finished one are left alone; a slow turn whose replica renews outlives many lease periods
 * while another replica sweeps; a replica that finds its lease claimed stops its turn; sweepers
 * racing fail each task once.
 *
 * @example
 * ```sh
 * node --import tsx --test test/replica-lease-keeper.test.ts
 * ```
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parseConfig } from '../src/config/load.js';
import { pause, type AgentBackend, type AgentEvent, type AgentTurn } from '../src/agents/backend.js';
import type { StreamEvent, Task, TaskState } from '../src/protocol/model.js';
import type { CallContext } from '../src/tasks/call-context.js';
import { LocalTaskEventBus } from '../src/tasks/events.js';
import { REPLICA_LOST_TEXT, TaskService, type TurnLeaseOptions } from '../src/tasks/service.js';
import { CREATED } from '../src/tasks/store.js';
import { PostgresTaskStore } from '../src/tasks/stores/postgres.js';
import { dropSchema, postgresSkip, POSTGRES_URL, uniqueName, waitFor } from './helpers/backing-services.js';

const pgSkip = await postgresSkip();
const OWNER = 'client:a::a@agent';
const TTL_MS = 300;

/** Waits `ms` (or until aborted), then completes. */
function slowBackend(ms: number): AgentBackend {
  return {
    kind: 'slow',
    async *run(turn: AgentTurn): AsyncIterable<AgentEvent> {
      yield { type: 'working', text: 'started' };
      if (!(await pause(ms, turn.signal))) return;
      yield { type: 'completed', text: 'done' };
    },
  };
}

function ctxOf(backend: AgentBackend): CallContext {
  return { principalKey: 'client:a::a', agentSlug: 'agent', backend };
}

function taskIn(state: TaskState, id: string): Task {
  return {
    id,
    contextId: `ctx-${id}`,
    status: { state, timestamp: new Date().toISOString() },
    history: [],
    artifacts: [],
  };
}

describe('turn leases in the task service (PostgreSQL)', { skip: pgSkip }, () => {
  const schema = uniqueName('airlock_test');
  let store: PostgresTaskStore;
  const bus = new LocalTaskEventBus();
  const services: TaskService[] = [];
  const lapsed: string[] = [];
  const logged: string[] = [];

  /** A replica: a service on the shared store and bus, sweeping often. */
  function replica(overrides: Partial<TurnLeaseOptions> = {}): TaskService {
    const service = new TaskService({
      store,
      bus,
      logger: (_level, event, fields) =>
        logged.push(`${event} ${typeof fields.taskId === 'string' ? fields.taskId : ''}`),
      leases: {
        leases: store.leases,
        ttlMs: TTL_MS,
        sweepMs: 60_000, // swept by hand unless a test asks for the timer
        onLapsed: (owner, task) => lapsed.push(`${owner} ${task.id} ${task.status.state}`),
        ...overrides,
      },
    });
    services.push(service);
    return service;
  }

  before(async () => {
    store = await PostgresTaskStore.open({ url: POSTGRES_URL, schema, poolSize: 8 });
  });
  after(async () => {
    for (const service of services) await service.close();
    await store?.close();
    await dropSchema(schema);
  });

  it('fails a dead replica’s running task once, saying why, reported and published', async () => {
    const sweeper = replica();
    await store.put(OWNER, taskIn('working', 'dead-1'), CREATED);
    await store.leases.take('dead-1', OWNER, 'r-dead', 50);
    const events: StreamEvent[] = [];
    const stop = bus.subscribe('dead-1', (event) => events.push(event));
    await new Promise((resolve) => setTimeout(resolve, 120));
    lapsed.length = 0;
    assert.deepEqual(await sweeper.leases!.sweep(), ['dead-1']);
    stop();
    const stored = await store.get(OWNER, 'dead-1');
    assert.equal(stored?.status.state, 'failed');
    assert.equal(
      stored?.status.message?.parts[0]?.kind === 'text' && stored.status.message.parts[0].text,
      REPLICA_LOST_TEXT,
    );
    assert.deepEqual(lapsed, [`${OWNER} dead-1 failed`]);
    assert.equal(events.length, 1);
    assert.equal(events[0]?.kind === 'status-update' && events[0].final && events[0].status.state, 'failed');
    // Settled: its lease is gone, a second sweep finds nothing.
    await waitFor(
      async () => (await store.leases.sweepLapsed('r-probe', 1, 10, new Date(Date.now() + 60_000))).length === 0,
      2_000,
    );
    assert.deepEqual(lapsed, [`${OWNER} dead-1 failed`]);
  });

  it('leaves a parked task and a finished one alone (their stale leases are just dropped)', async () => {
    const sweeper = replica();
    await store.put(OWNER, taskIn('input-required', 'parked-1'), CREATED);
    await store.put(OWNER, taskIn('completed', 'done-1'), CREATED);
    await store.leases.take('parked-1', OWNER, 'r-dead', 50);
    await store.leases.take('done-1', OWNER, 'r-dead', 50);
    await store.leases.take('gone-1', OWNER, 'r-dead', 50); // no such task
    await new Promise((resolve) => setTimeout(resolve, 120));
    lapsed.length = 0;
    assert.deepEqual(await sweeper.leases!.sweep(), []);
    assert.equal((await store.get(OWNER, 'parked-1'))?.status.state, 'input-required');
    assert.equal((await store.get(OWNER, 'done-1'))?.status.state, 'completed');
    assert.deepEqual(lapsed, []);
  });

  it('a slow turn whose replica renews outlives many lease periods while another replica sweeps', async () => {
    const running = replica();
    // Sweeps every ~50 ms: it would claim the turn's lease the moment renewals stopped.
    const sweeper = replica({ sweepMs: 50 });
    lapsed.length = 0;
    const started = Date.now();
    const result = await running.send(ctxOf(slowBackend(5 * TTL_MS)), {
      message: { messageId: 'm-slow', role: 'user', parts: [{ kind: 'text', text: 'slow' }] },
      configuration: { returnImmediately: false },
    });
    assert.ok(Date.now() - started >= 5 * TTL_MS);
    assert.equal(result.kind === 'task' && result.task.status.state, 'completed');
    assert.deepEqual(lapsed, []);
    assert.equal(running.leases!.held, 0, 'released at the end of the turn');
    // It stops sweeping now: the next tests sweep by hand.
    await sweeper.close();
  });

  it('a replica that finds its lease claimed (it stood still) stops the turn', async () => {
    const stalled = replica({ renewMs: 50 });
    const result = await stalled.send(ctxOf(slowBackend(60_000)), {
      message: { messageId: 'm-stall', role: 'user', parts: [{ kind: 'text', text: 'stall' }] },
      configuration: { returnImmediately: true },
    });
    assert.ok(result.kind === 'task');
    const id = result.task.id;
    await waitFor(() => stalled.leases!.held === 1, 2_000);
    // Another replica claims it as if the lease had lapsed (judged a minute ahead).
    await waitFor(async () => {
      const claimed = await store.leases.sweepLapsed('r-other', 60_000, 100, new Date(Date.now() + 60_000));
      return claimed.some((lease) => lease.taskId === id);
    }, 2_000);
    await waitFor(async () => (await store.get(OWNER, id))?.status.state === 'failed', 3_000);
    assert.equal(stalled.running, 0);
    assert.ok(logged.includes(`turn_lease_lost ${id}`));
  });

  it('sweepers racing fail each lapsed task exactly once', async () => {
    const sweepers = [replica(), replica(), replica()];
    const ids = Array.from({ length: 30 }, (_, index) => `race-${index}`);
    for (const id of ids) {
      await store.put(OWNER, taskIn('working', id), CREATED);
      await store.leases.take(id, OWNER, 'r-dead', 50);
    }
    await new Promise((resolve) => setTimeout(resolve, 120));
    lapsed.length = 0;
    const failed = (await Promise.all(sweepers.map((sweeper) => sweeper.leases!.sweep()))).flat().sort();
    assert.deepEqual(failed, [...ids].sort());
    assert.equal(lapsed.length, ids.length, 'one report per task');
  });
});

describe('store.leaseSeconds in the config', () => {
  const agents =
    'agents: [{ slug: e, name: E, description: E, skills: [{ id: e, name: E, description: E }], backend: { type: echo } }]';
  const load = (store: string) => parseConfig(`store: ${store}\n${agents}\n`, {});

  it('is off by default (30 s applies only with replicas) and taken on a postgres store', () => {
    assert.equal(load('{ type: postgres, url: "postgres://db/airlock" }').store.leaseSeconds, undefined);
    assert.equal(load('{ type: postgres, url: "postgres://db/airlock", leaseSeconds: 5 }').store.leaseSeconds, 5);
  });

  it('refuses a bad value, or one on a store replicas cannot share, naming the key', () => {
    assert.throws(() => load('{ type: postgres, url: "postgres://db/airlock", leaseSeconds: 0 }'), /leaseSeconds/);
    assert.throws(() => load('{ type: postgres, url: "postgres://db/airlock", leaseSeconds: 1.5 }'), /leaseSeconds/);
    assert.throws(() => load('{ type: memory, leaseSeconds: 5 }'), /leaseSeconds/);
  });
});
