import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StreamEvent } from '../../protocol/model.js';
import { LocalTaskEventBus } from '../events.js';
import { EventQueueOverflowError } from '../queue.js';
import { followTask } from './follow.js';

function chunk(taskId: string, n: number): StreamEvent {
  return {
    kind: 'artifact-update',
    taskId,
    contextId: 'c',
    artifact: { artifactId: 'a', parts: [{ kind: 'text', text: `chunk ${n}` }] },
    append: true,
  };
}

describe('followTask', () => {
  it('drops a caller that lets more than its bound wait: it stops listening, its next pull throws', async () => {
    const bus = new LocalTaskEventBus();
    const stream = followTask(bus, {} as never, 't1', 'terminal', undefined, 8);
    assert.equal(bus.size, 1);
    for (let n = 0; n < 100; n++) bus.publish('t1', chunk('t1', n));
    // Dropped at the ninth event: unsubscribed, so the rest cost it nothing.
    assert.equal(bus.size, 0);
    const iterator = stream.events[Symbol.asyncIterator]();
    await assert.rejects(iterator.next(), EventQueueOverflowError);
  });

  it('a caller that keeps up gets every event', async () => {
    const bus = new LocalTaskEventBus();
    const stream = followTask(bus, {} as never, 't2', 'terminal', undefined, 2);
    const iterator = stream.events[Symbol.asyncIterator]();
    for (let n = 0; n < 50; n++) {
      bus.publish('t2', chunk('t2', n));
      const next = await iterator.next();
      assert.equal(next.done, false);
    }
    assert.equal(bus.size, 1);
    await iterator.return?.();
    assert.equal(bus.size, 0);
  });
});
