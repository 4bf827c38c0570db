import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AgentBackend, AgentEvent, AgentTurn } from '../agents/backend.js';
import { createWriterBackend } from '../agents/writer.js';
import { A2AError } from '../protocol/errors.js';
import type { Message, SendParams, StreamEvent } from '../protocol/model.js';
import { CapacityError, type ReplyScrubber, type TaskLifecycleEvent, type TurnPolicy } from './policy.js';
import { TaskService } from './service.js';
import type { CallContext } from './call-context.js';
import { MemoryTaskStore } from './stores/memory.js';

function caller(backend: AgentBackend, principalKey = 'client:a::a'): CallContext {
  return { principalKey, agentSlug: 'agent', backend, caller: { clientId: 'a', kind: 'client' } };
}

function send(text: string, extra: Partial<Message> = {}, returnImmediately = false): SendParams {
  return {
    message: { messageId: `m-${text}`, role: 'user', parts: [{ kind: 'text', text }], ...extra },
    configuration: { returnImmediately },
  };
}

/** A backend that waits until released, so a turn can be held running. */
function gated(): { backend: AgentBackend; open: () => void; turns: AgentTurn[] } {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const turns: AgentTurn[] = [];
  return {
    turns,
    open: () => open(),
    backend: {
      kind: 'gated',
      async *run(turn) {
        turns.push(turn);
        yield { type: 'working' };
        await gate;
        yield { type: 'completed', text: 'done' };
      },
    },
  };
}

function script(events: AgentEvent[]): AgentBackend {
  return {
    kind: 'script',
    async *run() {
      yield* events;
    },
  };
}

/** A naive scrubber (the real one lives in agents/inbound): replaces every SECRET, streaming included. */
const SECRET = 'sk-live-0123456789abcdef';
const scrubber: ReplyScrubber = {
  scrub: (text) => text.split(SECRET).join('[secret]'),
  stream() {
    let held = '';
    return {
      push(chunk) {
        const text = (held + chunk).split(SECRET).join('[secret]');
        const keep = Math.min(text.length, SECRET.length - 1);
        held = text.slice(text.length - keep);
        return text.slice(0, text.length - keep);
      },
      flush() {
        const rest = held;
        held = '';
        return rest;
      },
    };
  },
};

async function collect(events: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const out: StreamEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

describe('TaskService with a turn policy', () => {
  it('refuses a second running task in the same context with -32004, and frees the context after', async () => {
    const service = new TaskService({ store: new MemoryTaskStore() });
    const held = gated();
    const ctx = caller(held.backend);
    const first = await service.send(ctx, send('one', { contextId: 'ctx-1' }, true));
    assert.ok(first.kind === 'task');
    await assert.rejects(service.send(ctx, send('two', { contextId: 'ctx-1' }, true)), (error: unknown) => {
      assert.ok(error instanceof A2AError);
      assert.equal(error.code, 'UNSUPPORTED_OPERATION');
      assert.match(error.message, /contextId/);
      return true;
    });
    // Another caller's same contextId is another conversation: not busy.
    const other = await service.send(caller(held.backend, 'client:b::b'), send('three', { contextId: 'ctx-1' }, true));
    assert.ok(other.kind === 'task');
    held.open();
    await new Promise((resolve) => setTimeout(resolve, 10));
    const again = await service.send(ctx, send('four', { contextId: 'ctx-1' }));
    assert.ok(again.kind === 'task');
    assert.equal(again.task.status.state, 'completed');
  });

  it('passes admission refusals through and starts nothing', async () => {
    const policy: TurnPolicy = {
      admit(_ctx, message) {
        if (message.parts.length > 1) throw new A2AError('INVALID_PARAMS', 'too many parts');
        throw new CapacityError(2);
      },
    };
    const service = new TaskService({ store: new MemoryTaskStore(), policy });
    const ctx = caller(script([{ type: 'completed' }]));
    await assert.rejects(service.send(ctx, send('x')), (error: unknown) => error instanceof CapacityError);
    await assert.rejects(
      service.stream(ctx, {
        message: {
          messageId: 'm',
          role: 'user',
          parts: [
            { kind: 'text', text: 'a' },
            { kind: 'text', text: 'b' },
          ],
        },
        configuration: { returnImmediately: false },
      }),
      (error: unknown) => error instanceof A2AError && error.code === 'INVALID_PARAMS',
    );
    assert.equal(service.running, 0);
  });

  it('gives the grant back exactly once when the turn ends, is canceled, or cannot start', async () => {
    let held = 0;
    let released = 0;
    const policy: TurnPolicy = {
      admit: () => {
        held += 1;
        return { inputChars: 1, release: () => (released += 1) };
      },
    };
    const service = new TaskService({ store: new MemoryTaskStore(), policy });
    await service.send(caller(script([{ type: 'completed', text: 'ok' }])), send('done'));
    const gate = gated();
    const running = await service.send(caller(gate.backend), send('held', {}, true));
    assert.ok(running.kind === 'task');
    await service.cancel(caller(gate.backend), running.task.id);
    gate.open();
    await assert.rejects(service.send(caller(gate.backend), send('x', { taskId: 'missing-task' })));
    await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(held, 3);
    assert.equal(released, 3);
  });

  it('hands the backend a lazily built prompt and the granted tools (none by default)', async () => {
    let built = 0;
    const seen: AgentTurn[] = [];
    const backend: AgentBackend = {
      kind: 'probe',
      async *run(turn) {
        seen.push(turn);
        yield { type: 'completed' };
      },
    };
    const service = new TaskService({
      store: new MemoryTaskStore(),
      policy: {
        admit: () => ({
          inputChars: 5,
          release: () => undefined,
          prompt: () => {
            built += 1;
            return { system: 'untrusted caller', user: '<<<framed>>>' };
          },
          tools: ['search'],
        }),
      },
    });
    await service.send(caller(backend), send('hello'));
    const turn = seen[0] as AgentTurn & { prompt?: { system: string; user: string }; tools?: readonly string[] };
    assert.equal(built, 0, 'not built until read');
    assert.deepEqual(turn.prompt, { system: 'untrusted caller', user: '<<<framed>>>' });
    assert.equal(turn.prompt?.user, '<<<framed>>>');
    assert.equal(built, 1, 'built once');
    assert.deepEqual(turn.tools, ['search']);

    const plain = new TaskService({ store: new MemoryTaskStore() });
    await plain.send(caller(backend), send('hello'));
    const bare = seen[1] as AgentTurn & { prompt?: unknown; tools?: readonly string[] };
    assert.equal(bare.prompt, undefined);
    assert.deepEqual(bare.tools, []);
  });

  it('scrubs secrets from streamed chunks, even split across two, and from every outcome text', async () => {
    const half = SECRET.length / 2;
    const backend = script([
      { type: 'text', text: `key is ${SECRET.slice(0, half)}` },
      { type: 'text', text: `${SECRET.slice(half)} and more` },
      { type: 'text', text: ` and ${SECRET}`, last: true },
      { type: 'artifact', artifact: { parts: [{ kind: 'text', text: `file ${SECRET}` }] } },
      { type: 'completed', text: `bye ${SECRET}` },
    ]);
    const service = new TaskService({
      store: new MemoryTaskStore(),
      policy: { admit: () => ({ inputChars: 1, release: () => undefined, scrubber }) },
    });
    const events = await collect(await service.stream(caller(backend), send('hi')));
    const wire = JSON.stringify(events);
    assert.ok(!wire.includes(SECRET), wire);
    const streamed = events
      .filter((event) => event.kind === 'artifact-update' && event.artifact.name === 'reply')
      .map((event) =>
        event.kind === 'artifact-update' && event.artifact.parts[0]?.kind === 'text'
          ? event.artifact.parts[0].text
          : '',
      )
      .join('');
    assert.equal(streamed, 'key is [secret] and more and [secret]');
    const task = events.find((event) => event.kind === 'task');
    assert.ok(task !== undefined);
  });

  it('flushes held-back reply text before the final status when no chunk was marked last', async () => {
    const service = new TaskService({
      store: new MemoryTaskStore(),
      policy: { admit: () => ({ inputChars: 1, release: () => undefined, scrubber }) },
    });
    const result = await service.send(
      caller(script([{ type: 'text', text: 'short' }, { type: 'completed' }])),
      send('x'),
    );
    assert.ok(result.kind === 'task');
    assert.deepEqual(result.task.artifacts[0]?.parts, [{ kind: 'text', text: 'short' }]);
  });

  it('reports one submitted and one outcome event per task, with counts and no content', async () => {
    const events: TaskLifecycleEvent[] = [];
    const service = new TaskService({ store: new MemoryTaskStore(), observe: (event) => events.push(event) });
    const writer = caller(createWriterBackend({ chunkDelayMs: 0 }));
    const asked = await service.send(writer, send('ask me'));
    assert.ok(asked.kind === 'task');
    await service.send(writer, send('the sea', { taskId: asked.task.id }));
    await service.send(caller(script([{ type: 'failed', reason: 'boom' }])), send('x'));
    const gate = gated();
    const running = await service.send(caller(gate.backend), send('held', {}, true));
    assert.ok(running.kind === 'task');
    await service.cancel(caller(gate.backend), running.task.id);
    await service.send(caller(script([{ type: 'message', parts: [{ kind: 'text', text: 'direct' }] }])), send('d'));
    assert.deepEqual(
      events.map((event) => [event.type, event.reason]),
      [
        ['submitted', undefined],
        ['input-required', undefined],
        ['submitted', undefined],
        ['completed', undefined],
        ['submitted', undefined],
        ['failed', 'agent_failed'],
        ['submitted', undefined],
        ['canceled', 'canceled_by_client'],
        ['submitted', undefined],
        ['completed', undefined],
      ],
    );
    assert.equal(events[0]?.inputChars, 'ask me'.length);
    assert.ok((events[3]?.outputChars ?? 0) > 0);
    assert.equal(events[9]?.outputChars, 'direct'.length);
    for (const event of events) assert.deepEqual(event.ctx.caller, { clientId: 'a', kind: 'client' });
  });
});
