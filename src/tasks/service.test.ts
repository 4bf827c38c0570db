import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isAborted, type AgentBackend, type AgentEvent, type AgentTurn } from '../agents/backend.js';
import { createWriterBackend } from '../agents/writer.js';
import type { Message, SendParams } from '../protocol/model.js';
import { CapacityError } from './policy.js';
import { TaskService } from './service.js';
import type { CallContext } from './call-context.js';
import { MemoryTaskStore } from './stores/memory.js';

function scripted(events: AgentEvent[] | (() => AsyncIterable<AgentEvent>)): AgentBackend {
  return {
    kind: 'scripted',
    run:
      typeof events === 'function'
        ? events
        : async function* () {
            yield* events;
          },
  };
}

function caller(backend: AgentBackend, principalKey = 'client:a::a'): CallContext {
  return { principalKey, agentSlug: 'agent', backend };
}

function send(text: string, extra: Partial<Message> = {}, returnImmediately = false): SendParams {
  return {
    message: { messageId: `m-${text}`, role: 'user', parts: [{ kind: 'text', text }], ...extra },
    configuration: { returnImmediately },
  };
}

describe('TaskService', () => {
  it('refuses a new task when the store is full, and leaves nothing running', async () => {
    const service = new TaskService({ store: new MemoryTaskStore({ maxTasks: 1 }) });
    const ctx = caller(createWriterBackend({ chunkDelayMs: 0 }));
    const first = await service.send(ctx, send('ask me'));
    assert.equal(first.kind === 'task' && first.task.status.state, 'input-required');
    await assert.rejects(service.send(ctx, send('ask me')), (error: unknown) => {
      // A store refusal is a capacity refusal (503 + Retry-After), passed on as it is.
      assert.ok(error instanceof CapacityError);
      assert.equal(error.quota, 'task_store_full');
      assert.match(error.message, /full/);
      return true;
    });
    assert.equal(service.running, 0);
  });

  it('fails the task with a generic reason when the backend throws, and logs the detail', async () => {
    const logged: string[] = [];
    const service = new TaskService({
      store: new MemoryTaskStore(),
      logger: (_level, event, fields) => logged.push(`${event} ${String(fields.error)}`),
    });
    const backend = scripted(async function* () {
      yield { type: 'working' };
      throw new Error('secret internal detail');
    });
    const result = await service.send(caller(backend), send('x'));
    assert.ok(result.kind === 'task');
    assert.equal(result.task.status.state, 'failed');
    assert.doesNotMatch(JSON.stringify(result.task), /secret internal detail/);
    assert.ok(logged.some((line) => line.includes('secret internal detail')));
  });

  it('fails a turn that ends without an outcome', async () => {
    const service = new TaskService({ store: new MemoryTaskStore() });
    const result = await service.send(caller(scripted([{ type: 'text', text: 'half' }])), send('x'));
    assert.ok(result.kind === 'task');
    assert.equal(result.task.status.state, 'failed');
  });

  it('ignores events after the outcome', async () => {
    const service = new TaskService({ store: new MemoryTaskStore() });
    const backend = scripted([
      { type: 'completed', text: 'done' },
      { type: 'failed', reason: 'late' },
    ]);
    const result = await service.send(caller(backend), send('x'));
    assert.ok(result.kind === 'task');
    assert.equal(result.task.status.state, 'completed');
  });

  it('returns a direct message without creating a task', async () => {
    const store = new MemoryTaskStore();
    const service = new TaskService({ store });
    const backend = scripted([{ type: 'message', parts: [{ kind: 'text', text: 'hi' }] }]);
    const result = await service.send(caller(backend), send('x'));
    assert.equal(result.kind, 'message');
    assert.equal(store.size, 0);
  });

  it('keeps two callers apart even when they name the same contextId', async () => {
    const sessions: string[] = [];
    const backend = scripted(async function* (this: void) {
      yield { type: 'completed' };
    });
    const recording: AgentBackend = {
      kind: 'recording',
      run: (turn) => {
        sessions.push(turn.sessionId);
        return backend.run(turn);
      },
    };
    const service = new TaskService({ store: new MemoryTaskStore() });
    await service.send(caller(recording, 'client:a::a'), send('x', { contextId: 'shared' }));
    await service.send(caller(recording, 'client:b::b'), send('y', { contextId: 'shared' }));
    await service.send(caller(recording, 'client:a::a'), send('z', { contextId: 'shared' }));
    assert.notEqual(sessions[0], sessions[1]);
    assert.equal(sessions[0], sessions[2]);
    assert.match(sessions[0]!, /^a2a-[0-9a-f]{64}$/);
  });

  it('close() aborts running turns and fails their tasks', async () => {
    const service = new TaskService({ store: new MemoryTaskStore() });
    let aborted = false;
    const backend = scripted(async function* () {
      yield { type: 'working' };
      await new Promise<void>(() => undefined);
    });
    const ctx = caller({
      kind: 'hang',
      run: (turn) => {
        turn.signal.addEventListener('abort', () => (aborted = true));
        return backend.run(turn);
      },
    });
    const result = await service.send(ctx, send('x', {}, true));
    assert.ok(result.kind === 'task');
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(service.running, 1);
    await service.close();
    assert.equal(aborted, true);
    assert.equal(service.running, 0);
    const after = await service.get(ctx, result.task.id);
    assert.equal(after.status.state, 'failed');
  });

  it('gives a backend that reads its signal a real AbortSignal that aborts on cancel', async () => {
    const service = new TaskService({ store: new MemoryTaskStore() });
    const signals: AbortSignal[] = [];
    const ctx = caller({
      kind: 'hang',
      run: async function* (turn) {
        signals.push(turn.signal);
        yield { type: 'working' };
        await new Promise<void>(() => undefined);
      },
    });
    const result = await service.send(ctx, send('x', {}, true));
    assert.ok(result.kind === 'task');
    await new Promise((resolve) => setImmediate(resolve));
    const signal = signals[0];
    assert.ok(signal instanceof AbortSignal);
    assert.equal(signal.aborted, false);
    const canceled = await service.cancel(ctx, result.task.id);
    assert.equal(canceled.status.state, 'canceled');
    assert.equal(signal.aborted, true);
    assert.match(String(signal.reason), /canceled/);
  });

  it('hands out an already-aborted signal when it is first read after the cancel', async () => {
    const service = new TaskService({ store: new MemoryTaskStore() });
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const seen: { aborted?: boolean; signal?: AbortSignal; flag?: boolean } = {};
    const ctx = caller({
      kind: 'late-reader',
      run: async function* (turn) {
        yield { type: 'working' };
        await gate;
        seen.flag = turn.aborted;
        seen.signal = turn.signal;
        seen.aborted = turn.signal.aborted;
      },
    });
    const result = await service.send(ctx, send('x', {}, true));
    assert.ok(result.kind === 'task');
    await new Promise((resolve) => setImmediate(resolve));
    await service.cancel(ctx, result.task.id);
    release();
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(seen.flag, true);
    assert.ok(seen.signal instanceof AbortSignal);
    assert.equal(seen.aborted, true);
    assert.equal(seen.signal, seen.signal, 'the same signal on every read');
  });

  it('copies sessionId and signal when a backend spreads its turn', async () => {
    const service = new TaskService({ store: new MemoryTaskStore() });
    const copies: { sessionId: string; signal: AbortSignal; taskId: string }[] = [];
    const ctx = caller({
      kind: 'spreader',
      run: async function* (turn) {
        copies.push({ ...turn });
        yield { type: 'completed' };
      },
    });
    await service.send(ctx, send('x'));
    const copy = copies[0]!;
    assert.match(copy.sessionId, /^a2a-[0-9a-f]{64}$/);
    assert.ok(copy.signal instanceof AbortSignal);
    assert.equal(typeof copy.taskId, 'string');
  });

  it('keeps turn.aborted live, and a copy of the turn falls back on its signal', async () => {
    const service = new TaskService({ store: new MemoryTaskStore() });
    const turns: AgentTurn[] = [];
    const copies: AgentTurn[] = [];
    const ctx = caller({
      kind: 'hang',
      run: async function* (turn) {
        turns.push(turn);
        copies.push({ ...turn });
        yield { type: 'working' };
        await new Promise<void>(() => undefined);
      },
    });
    const result = await service.send(ctx, send('x', {}, true));
    assert.ok(result.kind === 'task');
    await new Promise((resolve) => setImmediate(resolve));
    const turn = turns[0]!;
    const copy = copies[0]!;
    assert.equal(turn.aborted, false);
    assert.equal('aborted' in copy, false);
    assert.equal(isAborted(copy), false);
    await service.cancel(ctx, result.task.id);
    assert.equal(turn.aborted, true);
    assert.equal(isAborted(turn), true);
    assert.equal(isAborted(copy), true);
  });

  describe('backends with ready events (runSync)', () => {
    function ready(events: AgentEvent[]): AgentBackend & { turns: number } {
      const backend = {
        kind: 'ready',
        turns: 0,
        run: async function* () {
          yield* events;
        },
        runSync: function* () {
          backend.turns += 1;
          yield* events;
        },
      };
      return backend;
    }

    function counting(store: MemoryTaskStore): { puts: string[] } {
      const seen = { puts: [] as string[] };
      const put = store.put.bind(store);
      store.put = (owner, task) => {
        seen.puts.push(task.status.state);
        return put(owner, task);
      };
      return seen;
    }

    it('runs a blocking send in one step and stores the outcome once, before answering', async () => {
      const store = new MemoryTaskStore();
      const seen = counting(store);
      const service = new TaskService({ store });
      const backend = ready([{ type: 'text', text: 'hi', last: true }, { type: 'completed' }]);
      const ctx = caller(backend);
      const result = await service.send(ctx, send('x'));
      assert.ok(result.kind === 'task');
      assert.equal(backend.turns, 1);
      assert.equal(result.task.status.state, 'completed');
      assert.deepEqual(seen.puts, ['completed']);
      assert.deepEqual(await service.get(ctx, result.task.id), result.task);
      assert.equal(service.running, 0);
    });

    it('stores the task before acknowledging a non-blocking send, then its outcome', async () => {
      const store = new MemoryTaskStore();
      const seen = counting(store);
      const service = new TaskService({ store });
      const ctx = caller(ready([{ type: 'completed', text: 'done' }]));
      const result = await service.send(ctx, send('x', {}, true));
      assert.ok(result.kind === 'task');
      assert.equal(result.task.status.state, 'submitted');
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(seen.puts, ['submitted', 'completed']);
      assert.equal((await service.get(ctx, result.task.id)).status.state, 'completed');
    });

    it('refuses a new task when the store is full, and leaves nothing running', async () => {
      const store = new MemoryTaskStore({ maxTasks: 1 });
      const service = new TaskService({ store });
      const ctx = caller(ready([{ type: 'input-required', question: 'more?' }]));
      const first = await service.send(ctx, send('x'));
      assert.equal(first.kind === 'task' && first.task.status.state, 'input-required');
      await assert.rejects(service.send(ctx, send('y')), (error: unknown) => {
        assert.ok(error instanceof CapacityError);
        assert.equal(error.quota, 'task_store_full');
        assert.match(error.message, /full/);
        return true;
      });
      assert.equal(service.running, 0);
      assert.equal(store.size, 1);
    });

    it('resumes an interrupted task and stores the resumed turn once', async () => {
      const store = new MemoryTaskStore();
      const service = new TaskService({ store });
      const asking = caller(ready([{ type: 'input-required', question: 'which?' }]));
      const first = await service.send(asking, send('x'));
      assert.ok(first.kind === 'task');
      const seen = counting(store);
      const answering = caller(ready([{ type: 'completed', text: 'thanks' }]));
      const second = await service.send(answering, send('y', { taskId: first.task.id }));
      assert.ok(second.kind === 'task');
      assert.equal(second.task.status.state, 'completed');
      assert.equal(second.task.history.length, 4);
      assert.deepEqual(seen.puts, ['completed']);
      assert.equal(service.running, 0);
    });

    it('returns a direct message without creating a task', async () => {
      const store = new MemoryTaskStore();
      const service = new TaskService({ store });
      const result = await service.send(
        caller(ready([{ type: 'message', parts: [{ kind: 'text', text: 'hi' }] }])),
        send('x'),
      );
      assert.equal(result.kind, 'message');
      assert.equal(store.size, 0);
      assert.equal(service.running, 0);
    });

    it('fails the task when the backend throws, and logs the detail', async () => {
      const logged: string[] = [];
      const service = new TaskService({
        store: new MemoryTaskStore(),
        logger: (_level, event, fields) => logged.push(`${event} ${String(fields.error)}`),
      });
      const backend: AgentBackend = {
        kind: 'throws',
        run: async function* () {
          yield { type: 'completed' };
        },
        runSync: function* () {
          yield { type: 'working' };
          throw new Error('secret internal detail');
        },
      };
      const result = await service.send(caller(backend), send('x'));
      assert.ok(result.kind === 'task');
      assert.equal(result.task.status.state, 'failed');
      assert.doesNotMatch(JSON.stringify(result.task), /secret internal detail/);
      assert.ok(logged.some((line) => line.includes('secret internal detail')));
    });

    it('streams the same events as an asynchronous backend', async () => {
      const events: AgentEvent[] = [
        { type: 'working' },
        { type: 'text', text: 'a', last: true },
        { type: 'completed' },
      ];
      const kinds = async (backend: AgentBackend): Promise<string[]> => {
        const service = new TaskService({ store: new MemoryTaskStore() });
        const out: string[] = [];
        for await (const event of await service.stream(caller(backend), send('x'))) {
          out.push(event.kind === 'status-update' ? `${event.kind}:${event.status.state}:${event.final}` : event.kind);
        }
        return out;
      };
      assert.deepEqual(await kinds(ready(events)), await kinds(scripted(events)));
    });
  });
});
