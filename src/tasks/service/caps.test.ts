import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AgentBackend, AgentEvent } from '../../agents/backend.js';
import type { Message, SendParams } from '../../protocol/model.js';
import type { TaskLifecycleEvent } from '../policy.js';
import { TaskService } from '../service.js';
import { MemoryTaskStore } from '../stores/memory.js';
import { cappedHistory, partsBytes, storedOutputBytes, taskCaps } from './caps.js';

const ctxOf = (backend: AgentBackend) => ({ principalKey: 'client:a::a', agentSlug: 'agent', backend });

function send(text: string, extra: Partial<Message> = {}): SendParams {
  return {
    message: { messageId: `m-${text}`, role: 'user', parts: [{ kind: 'text', text }], ...extra },
    configuration: { returnImmediately: false },
  };
}

/** A synchronous backend (runSync) that yields `events`, or an async one that yields forever. */
function syncBackend(events: () => AgentEvent[]): AgentBackend {
  return {
    kind: 'test',
    // eslint-disable-next-line require-yield
    async *run() {
      throw new Error('runSync is used');
    },
    runSync: () => events(),
  };
}

describe('task caps: helpers', () => {
  it('fills in the defaults, keeps the newest history, measures parts in UTF-8 bytes', () => {
    assert.deepEqual(taskCaps(undefined), { maxHistoryMessages: 100, maxTaskOutputBytes: 1024 * 1024 });
    assert.deepEqual(taskCaps({ maxHistoryMessages: 3 }).maxHistoryMessages, 3);
    const history = [1, 2, 3, 4].map((n) => ({ messageId: String(n), role: 'user' as const, parts: [] }));
    assert.deepEqual(
      cappedHistory(history, 2).map((m) => m.messageId),
      ['3', '4'],
    );
    assert.equal(cappedHistory(history, 4), history);
    assert.equal(
      partsBytes([
        { kind: 'text', text: 'hé' },
        { kind: 'data', data: { a: 1 } },
      ]),
      3 + 7,
    );
    assert.equal(
      storedOutputBytes({
        id: 't',
        contextId: 'c',
        status: { state: 'working', timestamp: '' },
        artifacts: [{ artifactId: 'a', parts: [{ kind: 'text', text: 'abcd' }] }],
        history: [
          { messageId: 'u', role: 'user', parts: [{ kind: 'text', text: 'not counted' }] },
          { messageId: 'g', role: 'agent', parts: [{ kind: 'text', text: 'xy' }] },
        ],
      }),
      6,
    );
  });
});

describe('task caps: the task service enforces them', () => {
  it('a streamed reply that passes maxTaskOutputBytes fails the turn, saying so; what was kept stays under the cap', async () => {
    const seen: TaskLifecycleEvent[] = [];
    const service = new TaskService({
      store: new MemoryTaskStore(),
      limits: { maxTaskOutputBytes: 2048 },
      observe: (event) => void seen.push(event),
    });
    const chunks: AgentEvent[] = Array.from({ length: 100 }, () => ({ type: 'text', text: 'z'.repeat(100) }));
    const result = await service.send(ctxOf(syncBackend(() => [...chunks, { type: 'completed' }])), send('go'));
    assert.ok(result.kind === 'task');
    assert.equal(result.task.status.state, 'failed');
    const status = result.task.status.message?.parts[0];
    assert.ok(status?.kind === 'text');
    assert.match(status.text, /limit of 2048 bytes \(limits\.maxTaskOutputBytes\)/);
    const reply = result.task.artifacts[0]?.parts[0];
    assert.ok(reply?.kind === 'text');
    assert.equal(reply.text.length, 2000);
    assert.equal(seen.at(-1)?.reason, 'output_too_large');
  });

  it('a final reply over the cap fails the turn too', async () => {
    const service = new TaskService({ store: new MemoryTaskStore(), limits: { maxTaskOutputBytes: 1024 } });
    const result = await service.send(
      ctxOf(syncBackend(() => [{ type: 'completed', text: 'w'.repeat(5000) }])),
      send('go'),
    );
    assert.ok(result.kind === 'task');
    assert.equal(result.task.status.state, 'failed');
    assert.ok(!JSON.stringify(result.task).includes('wwww'));
  });

  it('the cap counts every turn of a task: a resumed task starts from what it keeps', async () => {
    const service = new TaskService({ store: new MemoryTaskStore(), limits: { maxTaskOutputBytes: 1500 } });
    const ctx = ctxOf(
      syncBackend(() => [
        { type: 'artifact', artifact: { parts: [{ kind: 'text', text: 'a'.repeat(600) }] } },
        { type: 'input-required', question: '?' },
      ]),
    );
    const first = await service.send(ctx, send('one'));
    assert.ok(first.kind === 'task');
    assert.equal(first.task.status.state, 'input-required');
    const second = await service.send(ctx, send('two', { taskId: first.task.id }));
    assert.ok(second.kind === 'task');
    assert.equal(second.task.status.state, 'input-required');
    const third = await service.send(ctx, send('three', { taskId: first.task.id }));
    assert.ok(third.kind === 'task');
    assert.equal(third.task.status.state, 'failed');
    assert.equal(third.task.artifacts.length, 2);
  });

  it('a multi-turn task keeps its newest maxHistoryMessages messages', async () => {
    const service = new TaskService({ store: new MemoryTaskStore(), limits: { maxHistoryMessages: 4 } });
    const ctx = ctxOf(syncBackend(() => [{ type: 'input-required', question: 'more?' }]));
    const first = await service.send(ctx, send('t0'));
    assert.ok(first.kind === 'task');
    for (let i = 1; i <= 5; i++) await service.send(ctx, send(`t${i}`, { taskId: first.task.id }));
    const task = await service.get(ctx, first.task.id);
    assert.equal(task.history.length, 4);
    assert.deepEqual(
      task.history.map((m) => (m.parts[0]?.kind === 'text' ? m.parts[0].text : '')),
      ['t4', 'more?', 't5', 'more?'],
    );
  });

  it('a backend streaming working updates forever stops at the cap, history trimmed meanwhile', async () => {
    const service = new TaskService({
      store: new MemoryTaskStore(),
      limits: { maxTaskOutputBytes: 4096, maxHistoryMessages: 3 },
    });
    let stopped = false;
    const backend: AgentBackend = {
      kind: 'test',
      async *run(turn) {
        try {
          for (;;) {
            await new Promise((resolve) => setImmediate(resolve));
            if (turn.signal.aborted) return;
            yield { type: 'working', text: 's'.repeat(500) };
          }
        } finally {
          stopped = true;
        }
      },
    };
    const result = await service.send(ctxOf(backend), send('go'));
    assert.ok(result.kind === 'task');
    assert.equal(result.task.status.state, 'failed');
    assert.ok(result.task.history.length <= 3);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(stopped, true);
  });
});
