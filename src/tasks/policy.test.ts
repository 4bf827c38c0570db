import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AgentBackend, AgentEvent, AgentTurn } from '../agents/backend.js';
import type { TurnToolbox } from '../agents/tools.js';
import { createWriterBackend } from '../agents/writer.js';
import { A2AError } from '../protocol/errors.js';
import type { Message, SendParams, StreamEvent } from '../protocol/model.js';
import {
  CapacityError,
  type ParkingGate,
  type ReplyScrubber,
  type TaskLifecycleEvent,
  type TurnGrant,
} from './policy.js';
import { TaskService } from './service.js';
import type { CallContext } from './call-context.js';
import type { TaskStore } from './store.js';
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

/** Grants as an admission chain hands them out, each counting its own releases. */
function grants(extra: Partial<TurnGrant> = {}): {
  grant: () => TurnGrant;
  given: () => number;
  released: () => number[];
} {
  const counts: number[] = [];
  return {
    grant: () => {
      const index = counts.length;
      counts.push(0);
      return { inputChars: 1, ...extra, release: () => (counts[index] = (counts[index] ?? 0) + 1) };
    },
    given: () => counts.length,
    released: () => counts,
  };
}

/** A synchronous backend (`runSync`), as the echo agent is: the service's blocking fast path. */
function syncScript(events: AgentEvent[]): AgentBackend {
  return {
    kind: 'sync-script',
    async *run() {
      yield* events;
    },
    runSync: () => events,
  };
}

/** A store that takes nothing (full, or down). */
function refusingStore(): TaskStore {
  const inner = new MemoryTaskStore();
  return {
    put: () => Promise.reject(new Error('store down')),
    get: (owner, id) => inner.get(owner, id),
    list: (owner, query) => inner.list(owner, query),
    close: () => inner.close(),
  };
}

/** A gate whose every parked task stays parked: a message on it is answered as it is. */
function reparkingGate(): ParkingGate {
  return {
    propose: () => ({ kind: 'park', parts: [{ kind: 'text', text: 'waiting for a person' }] }),
    ask: () => ({ kind: 'park', parts: [{ kind: 'text', text: 'waiting for a person' }] }),
    resume: async () => ({ kind: 'repark' }),
    withdraw: () => undefined,
  };
}

async function collect(events: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const out: StreamEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

describe('TaskService with what admission granted', () => {
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

  it('is never reached by a refusal of the caller’s admission: the refusal passes through, nothing starts', async () => {
    const service = new TaskService({ store: new MemoryTaskStore() });
    const ctx = caller(script([{ type: 'completed' }]));
    let reached = 0;
    // The caller's admission chain: it refuses before it calls the service (as the server's does).
    const admit = (message: Message): TurnGrant => {
      if (message.parts.length > 1) throw new A2AError('INVALID_PARAMS', 'too many parts');
      throw new CapacityError(2);
    };
    const admitted = async <T>(params: SendParams, call: (grant: TurnGrant) => Promise<T>): Promise<T> => {
      const grant = admit(params.message);
      reached += 1;
      return call(grant);
    };
    const one = send('x');
    await assert.rejects(
      admitted(one, (grant) => service.send(ctx, one, grant)),
      (error: unknown) => error instanceof CapacityError,
    );
    const two: SendParams = {
      message: {
        messageId: 'm',
        role: 'user',
        parts: [
          { kind: 'text', text: 'a' },
          { kind: 'text', text: 'b' },
        ],
      },
      configuration: { returnImmediately: false },
    };
    await assert.rejects(
      admitted(two, (grant) => service.stream(ctx, two, grant)),
      (error: unknown) => error instanceof A2AError && error.code === 'INVALID_PARAMS',
    );
    assert.equal(reached, 0);
    assert.equal(service.running, 0);
    assert.equal((await service.list(ctx, { pageSize: 10, includeArtifacts: false })).totalSize, 0);
  });

  it('gives the grant back exactly once when the turn ends, is canceled, or cannot start', async () => {
    const counter = grants();
    const service = new TaskService({ store: new MemoryTaskStore() });
    await service.send(caller(script([{ type: 'completed', text: 'ok' }])), send('done'), counter.grant());
    const gate = gated();
    const running = await service.send(caller(gate.backend), send('held', {}, true), counter.grant());
    assert.ok(running.kind === 'task');
    await service.cancel(caller(gate.backend), running.task.id);
    gate.open();
    await assert.rejects(service.send(caller(gate.backend), send('x', { taskId: 'missing-task' }), counter.grant()));
    await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(counter.given(), 3);
    assert.deepEqual(counter.released(), [1, 1, 1]);
  });

  it('gives the grant back exactly once on every path where the turn does not start', async () => {
    const counter = grants();
    const service = new TaskService({ store: new MemoryTaskStore() });
    const refused = async (call: Promise<unknown>, code?: string): Promise<void> => {
      await assert.rejects(
        call,
        (error: unknown) => code === undefined || (error instanceof A2AError && error.code === code),
      );
    };
    // Task not found, by send and by stream.
    const missing = send('x', { taskId: 'missing-task' });
    await refused(service.send(caller(script([])), missing, counter.grant()), 'TASK_NOT_FOUND');
    await refused(service.stream(caller(script([])), missing, counter.grant()), 'TASK_NOT_FOUND');
    // A terminal task takes no more messages (runSync fast path and async path).
    const done = await service.send(caller(syncScript([{ type: 'completed' }])), send('one'), counter.grant());
    assert.ok(done.kind === 'task');
    const again = send('two', { taskId: done.task.id });
    await refused(
      service.send(caller(syncScript([{ type: 'completed' }])), again, counter.grant()),
      'UNSUPPORTED_OPERATION',
    );
    await refused(
      service.stream(caller(script([{ type: 'completed' }])), again, counter.grant()),
      'UNSUPPORTED_OPERATION',
    );
    // The context is busy; the task itself is still running; the contextId is too long.
    const held = gated();
    const running = await service.send(
      caller(held.backend),
      send('held', { contextId: 'busy' }, true),
      counter.grant(),
    );
    assert.ok(running.kind === 'task');
    await refused(
      service.send(caller(held.backend), send('y', { contextId: 'busy' }), counter.grant()),
      'UNSUPPORTED_OPERATION',
    );
    await refused(
      service.stream(caller(held.backend), send('y', { contextId: 'busy' }), counter.grant()),
      'UNSUPPORTED_OPERATION',
    );
    await refused(
      service.send(caller(held.backend), send('z', { taskId: running.task.id }), counter.grant()),
      'UNSUPPORTED_OPERATION',
    );
    await refused(
      service.send(caller(held.backend), send('w', { contextId: 'c'.repeat(300) }), counter.grant()),
      'INVALID_PARAMS',
    );
    // A backend that throws before its first event.
    const throwing: AgentBackend = {
      kind: 'throwing',
      run: () => {
        throw new Error('no turn for you');
      },
    };
    await refused(service.send(caller(throwing), send('t'), counter.grant()));
    held.open();
    await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(service.running, 0);
    // Every grant given back once: the held turn's when it ended, every other at its refusal.
    assert.deepEqual(counter.released(), new Array<number>(counter.given()).fill(1));
  });

  it('gives the grant back exactly once when the store refuses the task, or the audit refuses it', async () => {
    const counter = grants();
    const refusing = new TaskService({ store: refusingStore() });
    await assert.rejects(refusing.send(caller(script([{ type: 'completed' }])), send('a'), counter.grant()));
    await assert.rejects(refusing.send(caller(syncScript([{ type: 'completed' }])), send('b'), counter.grant()));
    await assert.rejects(refusing.stream(caller(script([{ type: 'completed' }])), send('c'), counter.grant()));
    await assert.rejects(refusing.send(caller(script([{ type: 'completed' }])), send('d', {}, true), counter.grant()));
    const unaudited = new TaskService({
      store: new MemoryTaskStore(),
      observe: () => {
        throw new Error('audit down');
      },
    });
    await assert.rejects(
      unaudited.send(caller(script([{ type: 'completed' }])), send('e'), counter.grant()),
      /audit down/,
    );
    await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(refusing.running + unaudited.running, 0);
    assert.deepEqual(counter.released(), [1, 1, 1, 1, 1]);
  });

  it('gives the grant back exactly once when a message on a task parked on the person runs nothing', async () => {
    const counter = grants();
    const service = new TaskService({ store: new MemoryTaskStore(), gate: reparkingGate() });
    const remote = {
      question: 'which sea?',
      agent: 'far',
      taskId: 't-far',
      contextId: 'c-far',
      state: 'input-required',
    } as const;
    const ctx = caller(script([{ type: 'ask-person', remote }]));
    const parked = await service.send(ctx, send('ask'), counter.grant());
    assert.ok(parked.kind === 'task');
    assert.equal(parked.task.status.state, 'input-required');
    const answered = await service.send(ctx, send('the sea', { taskId: parked.task.id }), counter.grant());
    assert.ok(answered.kind === 'task');
    assert.equal(answered.task.status.state, 'input-required');
    const streamed = await collect(
      await service.stream(ctx, send('still?', { taskId: parked.task.id }), counter.grant()),
    );
    assert.equal(streamed.length, 1);
    assert.deepEqual(counter.released(), [1, 1, 1]);
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
    const service = new TaskService({ store: new MemoryTaskStore() });
    const toolTurns: string[] = [];
    const toolbox: TurnToolbox = {
      offers: [],
      call: async () => ({ kind: 'refused', reason: 'none' }),
      runApproved: async () => ({ kind: 'refused', reason: 'none' }),
    };
    const grant: TurnGrant = {
      inputChars: 5,
      release: () => undefined,
      prompt: () => {
        built += 1;
        return { system: 'untrusted caller', user: '<<<framed>>>' };
      },
      tools: (toolTurn) => {
        toolTurns.push(toolTurn.taskId);
        return toolbox;
      },
    };
    await service.send(caller(backend), send('hello'), grant);
    const turn = seen[0] as AgentTurn & { prompt?: { system: string; user: string } };
    assert.equal(built, 0, 'not built until read');
    assert.deepEqual(turn.prompt, { system: 'untrusted caller', user: '<<<framed>>>' });
    assert.equal(turn.prompt?.user, '<<<framed>>>');
    assert.equal(built, 1, 'built once');
    assert.equal(turn.tools, toolbox);
    assert.deepEqual(toolTurns, [turn.taskId], 'built once, for this task');

    const plain = new TaskService({ store: new MemoryTaskStore() });
    await plain.send(caller(backend), send('hello'));
    const bare = seen[1] as AgentTurn & { prompt?: unknown };
    assert.equal(bare.prompt, undefined);
    assert.equal(bare.tools, undefined);
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
    const service = new TaskService({ store: new MemoryTaskStore() });
    const grant: TurnGrant = { inputChars: 1, release: () => undefined, scrubber };
    const events = await collect(await service.stream(caller(backend), send('hi'), grant));
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
    const service = new TaskService({ store: new MemoryTaskStore() });
    const result = await service.send(
      caller(script([{ type: 'text', text: 'short' }, { type: 'completed' }])),
      send('x'),
      { inputChars: 1, release: () => undefined, scrubber },
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

  it('records what the grant counted as the caller’s input, and the message’s text without a grant', async () => {
    const events: TaskLifecycleEvent[] = [];
    const service = new TaskService({ store: new MemoryTaskStore(), observe: (event) => events.push(event) });
    const ctx = caller(syncScript([{ type: 'completed', text: 'ok' }]));
    await service.send(ctx, send('hello'), { inputChars: 42, release: () => undefined });
    await service.send(ctx, send('hello'));
    await collect(
      await service.stream(caller(script([{ type: 'completed' }])), send('hi'), grants({ inputChars: 7 }).grant()),
    );
    assert.deepEqual(
      events.map((event) => [event.type, event.inputChars]),
      [
        ['submitted', 42],
        ['completed', 42],
        ['submitted', 'hello'.length],
        ['completed', 'hello'.length],
        ['submitted', 7],
        ['completed', 7],
      ],
    );
  });
});
