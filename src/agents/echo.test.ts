import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Part } from '../protocol/model.js';
import { collect, fakeTurn } from '../../test/helpers/agent-turn.js';
import type { AgentEvent, AgentTurn } from './backend.js';
import { createEchoBackend } from './echo.js';
import { createBackend, type BackendConfig } from './registry.js';

// ---------------------------------------------------------------------------------------------
// A fake turn, as the executor bridge would build it, and a collector for a whole turn.

function newTurn(parts: Part[], init: { signal?: AbortSignal; resumed?: boolean } = {}): AgentTurn {
  return fakeTurn({ messageId: 'm-echo-1', parts, ...init });
}

// ---------------------------------------------------------------------------------------------

describe('echo backend', () => {
  it('is of kind echo', () => {
    assert.equal(createEchoBackend().kind, 'echo');
  });

  it('replies with the caller text as one last chunk, then completes', async () => {
    const events = await collect(createEchoBackend(), newTurn([{ kind: 'text', text: 'hello there' }]));
    assert.deepEqual(events, [{ type: 'text', text: 'hello there', last: true }, { type: 'completed' }]);
  });

  it('joins several text parts with newlines and ignores other parts', async () => {
    const turn = newTurn([
      { kind: 'text', text: 'one' },
      { kind: 'data', data: { ignored: true } },
      { kind: 'text', text: 'two' },
    ]);
    const events = await collect(createEchoBackend(), turn);
    assert.deepEqual(events, [{ type: 'text', text: 'one\ntwo', last: true }, { type: 'completed' }]);
  });

  it('completes with "(no text)" when the message has no text parts', async () => {
    const turn = newTurn([{ kind: 'url', url: 'https://example.com/a.png', mediaType: 'image/png' }]);
    assert.deepEqual(await collect(createEchoBackend(), turn), [{ type: 'completed', text: '(no text)' }]);
  });

  it('treats an empty text part as no text', async () => {
    const turn = newTurn([{ kind: 'text', text: '' }]);
    assert.deepEqual(await collect(createEchoBackend(), turn), [{ type: 'completed', text: '(no text)' }]);
  });

  it('yields nothing when the turn is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const turn = newTurn([{ kind: 'text', text: 'hi' }], { signal: controller.signal });
    assert.deepEqual(await collect(createEchoBackend(), turn), []);
  });

  it('yields no outcome when aborted after the chunk', async () => {
    const controller = new AbortController();
    const turn = newTurn([{ kind: 'text', text: 'hi' }], { signal: controller.signal });
    const events: AgentEvent[] = [];
    for await (const event of createEchoBackend().run(turn)) {
      events.push(event);
      controller.abort();
    }
    assert.deepEqual(events, [{ type: 'text', text: 'hi', last: true }]);
  });

  it('offers the same events synchronously (runSync)', async () => {
    const backend = createEchoBackend();
    for (const parts of [[{ kind: 'text' as const, text: 'hello' }], []]) {
      const sync = [...(backend.runSync?.(newTurn(parts)) ?? [])];
      assert.deepEqual(sync, await collect(backend, newTurn(parts)));
    }
  });

  it('polls turn.aborted when the turn has it, without reading the signal', () => {
    let signalReads = 0;
    let aborted = false;
    const base = newTurn([{ kind: 'text', text: 'hi' }]);
    const turn: AgentTurn = {
      ...base,
      get aborted() {
        return aborted;
      },
      get signal() {
        signalReads += 1;
        return base.signal;
      },
    };
    const events: AgentEvent[] = [];
    for (const event of createEchoBackend().runSync?.(turn) ?? []) {
      events.push(event);
      aborted = true;
    }
    assert.deepEqual(events, [{ type: 'text', text: 'hi', last: true }]);
    assert.equal(signalReads, 0);
  });

  it('serves many turns independently (shared events are never mutated)', async () => {
    const backend = createEchoBackend();
    const first = await collect(backend, newTurn([]));
    const second = await collect(backend, newTurn([{ kind: 'text', text: 'x' }]));
    const third = await collect(backend, newTurn([]));
    assert.deepEqual(first, third);
    assert.deepEqual(second, [{ type: 'text', text: 'x', last: true }, { type: 'completed' }]);
  });
});

describe('backend registry', () => {
  it('maps each config type to its backend kind', () => {
    assert.equal(createBackend({ type: 'echo' }).kind, 'echo');
    assert.equal(createBackend({ type: 'writer' }).kind, 'writer');
    assert.equal(createBackend({ type: 'writer', chunkDelayMs: 5 }).kind, 'writer');
    assert.equal(createBackend({ type: 'conformance' }).kind, 'conformance');
    assert.equal(createBackend({ type: 'conformance', resubscribeHoldMs: 10 }).kind, 'conformance');
  });

  it('builds a working echo backend from config', async () => {
    const events = await collect(createBackend({ type: 'echo' }), newTurn([{ kind: 'text', text: 'cfg' }]));
    assert.deepEqual(events, [{ type: 'text', text: 'cfg', last: true }, { type: 'completed' }]);
  });

  it('throws on a type that slipped past config validation', () => {
    const bogus = JSON.parse('{"type":"telepathy"}') as BackendConfig;
    assert.throws(() => createBackend(bogus), /unknown backend type: telepathy/);
  });
});
