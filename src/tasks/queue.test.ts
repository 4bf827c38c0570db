import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EventQueue, EventQueueOverflowError } from './queue.js';

describe('EventQueue', () => {
  it('hands over pushed items in order, then ends', async () => {
    const queue = new EventQueue<number>();
    queue.push(1);
    queue.push(2);
    queue.end();
    const seen: number[] = [];
    for await (const n of queue) seen.push(n);
    assert.deepEqual(seen, [1, 2]);
  });

  it('drops a reader past its bound: lets go of what it held, tells the owner once, the next pull throws', async () => {
    let dropped = 0;
    const queue = new EventQueue<number>({ maxItems: 3, onOverflow: () => dropped++ });
    for (let i = 0; i < 10; i++) queue.push(i);
    assert.equal(dropped, 1);
    assert.equal(queue.size, 0);
    assert.equal(queue.overflowed, true);
    const iterator = queue[Symbol.asyncIterator]();
    await assert.rejects(iterator.next(), EventQueueOverflowError);
  });

  it('a reader that keeps up is never dropped, however many items pass', async () => {
    const queue = new EventQueue<number>({ maxItems: 2 });
    const iterator = queue[Symbol.asyncIterator]();
    for (let i = 0; i < 1000; i++) {
      queue.push(i);
      assert.equal((await iterator.next()).value, i);
    }
    assert.equal(queue.overflowed, false);
  });

  it('wakes a waiting reader with the error', async () => {
    const queue = new EventQueue<number>({ maxItems: 1 });
    const iterator = queue[Symbol.asyncIterator]();
    queue.push(0);
    assert.equal((await iterator.next()).value, 0);
    const pending = iterator.next();
    queue.push(1);
    queue.push(2); // over the bound while the reader waits for item 1's pull
    const outcome = await pending.then(
      (value) => value,
      (error: unknown) => error,
    );
    // Either item 1 arrived before the overflow, or the error did; the next pull is the error.
    if (!(outcome instanceof EventQueueOverflowError)) await assert.rejects(iterator.next(), EventQueueOverflowError);
  });
});
