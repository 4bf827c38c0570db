import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AgentBackend, AgentEvent } from '../agents/backend.js';
import { createWriterBackend } from '../agents/writer.js';
import { A2AError } from '../protocol/errors.js';
import type { Message, SendParams } from '../protocol/model.js';
import { TaskService, type CallContext } from './service.js';
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
      assert.ok(error instanceof A2AError);
      assert.equal(error.code, 'INTERNAL');
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
});
