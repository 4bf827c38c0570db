/**
 * Two task services in one process, each with its own shared bus, over one PostgreSQL task
 * store: what a replica sees of a task whose turn runs on another one. (test/replicas.test.ts
 * does the same with two gateway processes.)
 *
 * @example
 * ```sh
 * node --import tsx --test src/tasks/buses/replicas.test.ts
 * ```
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dropSchema, postgresSkip, POSTGRES_URL, uniqueName, waitFor } from '../../../test/helpers/backing-services.js';
import { pause, type AgentBackend, type AgentEvent, type AgentTurn } from '../../agents/backend.js';
import { A2AError } from '../../protocol/errors.js';
import type { Message, StreamEvent, Task } from '../../protocol/model.js';
import { newId } from '../ids.js';
import type { TaskLifecycleEvent } from '../policy.js';
import { TaskService } from '../service.js';
import type { CallContext } from '../call-context.js';
import { PostgresTaskStore } from '../stores/postgres.js';
import { createPostgresTaskEventBus, type PostgresTaskEventBus } from './postgres.js';

const skip = await postgresSkip();

/** Streams `chunks` text chunks `delayMs` apart; counts turns aborted through their signal. */
function slowBackend(chunks: number, delayMs: number): AgentBackend & { aborted: number; chunksSent: number } {
  const backend = {
    kind: 'slow',
    aborted: 0,
    chunksSent: 0,
    async *run(turn: AgentTurn): AsyncIterable<AgentEvent> {
      for (let i = 0; i < chunks; i++) {
        if (!(await pause(delayMs, turn.signal))) {
          backend.aborted++;
          return;
        }
        backend.chunksSent++;
        yield { type: 'text', text: `chunk ${i} ` };
      }
      yield { type: 'completed' };
    },
  };
  return backend;
}

function message(text: string): Message {
  return { messageId: newId(), role: 'user', parts: [{ kind: 'text', text }] };
}

async function collect(events: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const out: StreamEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

describe('task services on two replicas (shared PostgreSQL bus and store)', { skip }, () => {
  const schema = uniqueName('airlock_test');
  let storeA: PostgresTaskStore;
  let storeB: PostgresTaskStore;
  let busA: PostgresTaskEventBus;
  let busB: PostgresTaskEventBus;
  let a: TaskService;
  let b: TaskService;
  const auditA: TaskLifecycleEvent[] = [];
  const auditB: TaskLifecycleEvent[] = [];
  const backend = slowBackend(20, 50);
  const ctx: CallContext = { principalKey: 'client:a::', agentSlug: 'writer', backend };

  before(async () => {
    storeA = await PostgresTaskStore.open({ url: POSTGRES_URL, schema });
    storeB = await PostgresTaskStore.open({ url: POSTGRES_URL, schema });
    busA = createPostgresTaskEventBus({ url: POSTGRES_URL, schema });
    busB = createPostgresTaskEventBus({ url: POSTGRES_URL, schema });
    await waitFor(() => busA.connected && busB.connected, 10_000, 'both buses');
    a = new TaskService({ store: storeA, bus: busA, observe: (event) => auditA.push(event) });
    b = new TaskService({
      store: storeB,
      bus: busB,
      observe: (event) => auditB.push(event),
      remoteTaskPollMs: 200,
      remoteCancelWaitMs: 1_000,
    });
  });

  after(async () => {
    await a.close();
    await b.close();
    await busA.close();
    await busB.close();
    await storeA.close();
    await storeB.close();
    await dropSchema(schema);
  });

  it('streams a task running on A to a subscriber on B, to the end', async () => {
    const sent = await a.send(ctx, { message: message('go'), configuration: { returnImmediately: true } });
    assert.equal(sent.kind, 'task');
    const taskId = (sent as { task: Task }).task.id;
    const events = await collect(await b.subscribe(ctx, taskId));
    assert.equal(events[0]?.kind, 'task');
    const chunks = events.filter((event) => event.kind === 'artifact-update');
    assert.ok(chunks.length >= 15, `${chunks.length} chunks streamed from A`);
    const last = events[events.length - 1];
    assert.ok(last?.kind === 'status-update' && last.final && last.status.state === 'completed');
    const stored = await b.get(ctx, taskId);
    assert.equal(stored.status.state, 'completed');
  });

  it('cancels on B a task running on A: A aborts its backend and commits canceled', async () => {
    const abortedBefore = backend.aborted;
    const sent = await a.send(ctx, { message: message('go'), configuration: { returnImmediately: true } });
    const taskId = (sent as { task: Task }).task.id;
    await waitFor(() => backend.chunksSent > 0, 5_000, 'the turn to start');
    const subscription = collect(await b.subscribe(ctx, taskId));
    const started = Date.now();
    const canceled = await b.cancel(ctx, taskId);
    assert.ok(Date.now() - started < 1_000, 'answered by A, not by the timeout');
    assert.equal(canceled.status.state, 'canceled');
    await waitFor(() => backend.aborted === abortedBefore + 1, 2_000, 'the backend on A to see its signal');
    assert.equal(a.running, 0);
    assert.equal((await b.get(ctx, taskId)).status.state, 'canceled', 'stored before B answered');
    const events = await subscription;
    const last = events[events.length - 1];
    assert.ok(last?.kind === 'status-update' && last.status.state === 'canceled');
    // Audited once, by the replica that ran it.
    assert.ok(auditA.some((event) => event.taskId === taskId && event.type === 'canceled'));
    assert.ok(!auditB.some((event) => event.taskId === taskId));
    await assert.rejects(
      b.cancel(ctx, taskId),
      (error: unknown) => error instanceof A2AError && error.rpcCode === -32002,
    );
  });

  it('stores canceled itself when nobody runs the task any more (its replica died)', async () => {
    const orphan: Task = {
      id: newId(),
      contextId: newId(),
      status: { state: 'working', timestamp: new Date().toISOString() },
      artifacts: [],
      history: [],
    };
    await storeA.put('client:a::@writer', orphan);
    const started = Date.now();
    const canceled = await b.cancel(ctx, orphan.id);
    const waited = Date.now() - started;
    assert.equal(canceled.status.state, 'canceled');
    assert.ok(waited >= 900 && waited < 3_000, `waited ${waited} ms for an answer`);
    assert.equal((await a.get(ctx, orphan.id)).status.state, 'canceled');
  });

  it('ends a subscription from the store when the final event never comes over the bus', async () => {
    const stuck: Task = {
      id: newId(),
      contextId: newId(),
      status: { state: 'working', timestamp: new Date().toISOString() },
      artifacts: [],
      history: [],
    };
    await storeA.put('client:a::@writer', stuck);
    const subscription = collect(await b.subscribe(ctx, stuck.id));
    // Written behind the bus's back: no event is published.
    await storeA.put('client:a::@writer', {
      ...stuck,
      status: { state: 'failed', timestamp: new Date().toISOString() },
    });
    const events = await subscription;
    const last = events[events.length - 1];
    assert.ok(last?.kind === 'status-update' && last.final && last.status.state === 'failed');
  });

  it('keeps tasks apart by owner across replicas', async () => {
    const sent = await a.send(ctx, { message: message('go'), configuration: { returnImmediately: true } });
    const taskId = (sent as { task: Task }).task.id;
    const other: CallContext = { ...ctx, principalKey: 'client:b::' };
    await assert.rejects(
      b.subscribe(other, taskId),
      (error: unknown) => error instanceof A2AError && error.rpcCode === -32001,
    );
    await assert.rejects(
      b.cancel(other, taskId),
      (error: unknown) => error instanceof A2AError && error.rpcCode === -32001,
    );
    await a.cancel(ctx, taskId);
  });
});
