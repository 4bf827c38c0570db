import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';

import { fakeTurn } from '../../test/helpers/agent-turn.js';
import type { AgentBackend, AgentEvent, AgentTurn } from './backend.js';
import { createBackend } from './registry.js';
import { createWriterBackend } from './writer.js';

// ---------------------------------------------------------------------------------------------
// A fake turn, as the executor bridge would build it, and collectors for a whole turn.

function newTurn(text: string, init: { signal?: AbortSignal; resumed?: boolean } = {}): AgentTurn {
  return fakeTurn({ messageId: 'm-writer-1', text, ...init });
}

interface Timed {
  event: AgentEvent;
  at: number;
}

async function collectTimed(backend: AgentBackend, turn: AgentTurn): Promise<Timed[]> {
  const out: Timed[] = [];
  for await (const event of backend.run(turn)) out.push({ event, at: performance.now() });
  return out;
}

async function collect(backend: AgentBackend, turn: AgentTurn): Promise<AgentEvent[]> {
  return (await collectTimed(backend, turn)).map((timed) => timed.event);
}

type TextEvent = Extract<AgentEvent, { type: 'text' }>;

function textEvents(events: AgentEvent[]): TextEvent[] {
  return events.filter((event): event is TextEvent => event.type === 'text');
}

/** Checks the shape of a full written reply and returns its text. */
function assertWrittenReply(events: AgentEvent[]): string {
  assert.equal(events[0]?.type, 'working');
  assert.deepEqual(events.at(-1), { type: 'completed' });
  const chunks = textEvents(events);
  assert.ok(chunks.length >= 5, `expected at least 5 chunks, got ${chunks.length}`);
  assert.equal(events.length, chunks.length + 2, 'only working, text chunks and completed');
  chunks.forEach((chunk, index) => {
    assert.equal(chunk.last === true, index === chunks.length - 1, `last flag on chunk ${index}`);
    assert.ok(chunk.text.length > 0);
  });
  return chunks.map((chunk) => chunk.text).join('');
}

// ---------------------------------------------------------------------------------------------

describe('writer backend', () => {
  it('is of kind writer', () => {
    assert.equal(createWriterBackend().kind, 'writer');
  });

  it('streams at least five chunks about the caller text, then completes', async () => {
    const events = await collect(createWriterBackend({ chunkDelayMs: 0 }), newTurn('lighthouses'));
    const reply = assertWrittenReply(events);
    assert.match(reply, /lighthouses/);
  });

  it('spaces chunks chunkDelayMs apart', async () => {
    const chunkDelayMs = 30;
    const timed = await collectTimed(createWriterBackend({ chunkDelayMs }), newTurn('tides'));
    const chunkTimes = timed.filter((t) => t.event.type === 'text').map((t) => t.at);
    assert.ok(chunkTimes.length >= 5);
    for (let i = 1; i < chunkTimes.length; i++) {
      const gap = (chunkTimes[i] ?? 0) - (chunkTimes[i - 1] ?? 0);
      // Timers never fire early by more than clock granularity; late is fine on a busy machine.
      assert.ok(gap >= chunkDelayMs - 2, `gap ${i} was ${gap.toFixed(1)} ms`);
    }
    const total = (chunkTimes.at(-1) ?? 0) - (chunkTimes[0] ?? 0);
    assert.ok(total < chunkDelayMs * (chunkTimes.length - 1) + 400, `total ${total.toFixed(1)} ms`);
  });

  it('defaults to 20 ms between chunks', async () => {
    const timed = await collectTimed(createWriterBackend(), newTurn('defaults'));
    const chunkTimes = timed.filter((t) => t.event.type === 'text').map((t) => t.at);
    const total = (chunkTimes.at(-1) ?? 0) - (chunkTimes[0] ?? 0);
    assert.ok(total >= 20 * (chunkTimes.length - 1) - 4, `total ${total.toFixed(1)} ms`);
  });

  it('asks what to write about when told exactly "ask me" (trimmed)', async () => {
    const backend = createWriterBackend({ chunkDelayMs: 0 });
    const expected: AgentEvent[] = [{ type: 'input-required', question: 'What should I write about?' }];
    assert.deepEqual(await collect(backend, newTurn('ask me')), expected);
    assert.deepEqual(await collect(backend, newTurn('  ask me\n')), expected);
  });

  it('does not ask for other casings or longer texts', async () => {
    const backend = createWriterBackend({ chunkDelayMs: 0 });
    assertWrittenReply(await collect(backend, newTurn('Ask me')));
    assertWrittenReply(await collect(backend, newTurn('ask me anything')));
  });

  it('writes about the answer when the task is resumed', async () => {
    const backend = createWriterBackend({ chunkDelayMs: 0 });
    const asked = await collect(backend, newTurn('ask me'));
    assert.equal(asked[0]?.type, 'input-required');
    const reply = assertWrittenReply(await collect(backend, newTurn('the northern lights', { resumed: true })));
    assert.match(reply, /the northern lights/);
  });

  it('writes (rather than asking again) when the answer itself is "ask me"', async () => {
    const reply = assertWrittenReply(
      await collect(createWriterBackend({ chunkDelayMs: 0 }), newTurn('ask me', { resumed: true })),
    );
    assert.match(reply, /ask me/);
  });

  it('keeps the reply short whatever the subject length', async () => {
    const reply = assertWrittenReply(
      await collect(createWriterBackend({ chunkDelayMs: 0 }), newTurn('x'.repeat(10_000))),
    );
    assert.ok(reply.length < 600, `reply was ${reply.length} chars`);
  });

  it('writes about something when the message has no text', async () => {
    assertWrittenReply(await collect(createWriterBackend({ chunkDelayMs: 0 }), newTurn('   ')));
  });

  it('ends within ~50 ms of an abort mid-stream, without an outcome', async () => {
    const controller = new AbortController();
    const backend = createWriterBackend({ chunkDelayMs: 1000 });
    const iterator = backend.run(newTurn('slow things', { signal: controller.signal }))[Symbol.asyncIterator]();
    const seen: AgentEvent[] = [];
    for (;;) {
      const next = await iterator.next();
      assert.equal(next.done, false);
      seen.push(next.value);
      if (next.value.type === 'text') break; // first chunk out; the writer now pauses 1 s
    }
    const pending = iterator.next();
    await delay(20);
    const abortedAt = performance.now();
    controller.abort();
    const result = await pending;
    const elapsed = performance.now() - abortedAt;
    assert.equal(result.done, true);
    assert.ok(elapsed < 50, `ended ${elapsed.toFixed(1)} ms after abort`);
    assert.deepEqual(
      seen.map((event) => event.type),
      ['working', 'text'],
    );
  });

  it('yields nothing when the turn is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    assert.deepEqual(await collect(createWriterBackend(), newTurn('late', { signal: controller.signal })), []);
  });

  it('is built from config with its chunk delay', async () => {
    const timed = await collectTimed(createBackend({ type: 'writer', chunkDelayMs: 25 }), newTurn('config'));
    const chunkTimes = timed.filter((t) => t.event.type === 'text').map((t) => t.at);
    const total = (chunkTimes.at(-1) ?? 0) - (chunkTimes[0] ?? 0);
    assert.ok(total >= 25 * (chunkTimes.length - 1) - 4, `total ${total.toFixed(1)} ms`);
  });
});
