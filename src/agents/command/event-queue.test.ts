import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { AgentEvent } from '../backend.js';
import { TurnEventQueue } from './event-queue.js';

async function drainAll(queue: TurnEventQueue): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  for await (const event of queue.drain()) events.push(event);
  return events;
}

describe('TurnEventQueue', () => {
  it('joins waiting text and marks the last chunk', async () => {
    const queue = new TurnEventQueue();
    queue.text('Hel');
    queue.text('');
    queue.text('lo');
    queue.push({ type: 'working', text: 'w' });
    queue.text('!');
    queue.endText();
    queue.push({ type: 'completed' });
    queue.close();
    assert.deepEqual(await drainAll(queue), [
      { type: 'text', text: 'Hello' },
      { type: 'working', text: 'w' },
      { type: 'text', text: '!', last: true },
      { type: 'completed' },
    ]);
  });

  it('marks the newest waiting text even when other events follow it', async () => {
    const queue = new TurnEventQueue();
    queue.text('a');
    queue.push({ type: 'working' });
    queue.endText();
    queue.close();
    assert.deepEqual(await drainAll(queue), [{ type: 'text', text: 'a', last: true }, { type: 'working' }]);
  });

  it('adds an empty last chunk when the last text was already taken, none when there was no text', async () => {
    const queue = new TurnEventQueue();
    const reader = queue.drain();
    queue.text('early');
    assert.deepEqual((await reader.next()).value, { type: 'text', text: 'early' });
    queue.endText();
    queue.push({ type: 'completed' });
    queue.close();
    const rest: AgentEvent[] = [];
    for await (const event of reader) rest.push(event);
    assert.deepEqual(rest, [{ type: 'text', text: '', last: true }, { type: 'completed' }]);

    const silent = new TurnEventQueue();
    silent.endText();
    silent.push({ type: 'completed' });
    silent.close();
    assert.deepEqual(await drainAll(silent), [{ type: 'completed' }]);
  });

  it('wakes a waiting reader, and ignores pushes after close', async () => {
    const queue = new TurnEventQueue();
    const pending = drainAll(queue);
    await new Promise((resolve) => setTimeout(resolve, 5));
    queue.push({ type: 'working' });
    queue.close();
    queue.push({ type: 'completed' });
    assert.deepEqual(await pending, [{ type: 'working' }]);
  });
});
