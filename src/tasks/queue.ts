/**
 * A push-to-pull adapter: events pushed by the bus, pulled by a `for await` loop. The queue is
 * bounded: a reader that lets more than `maxItems` events wait is dropped. The queue lets go of
 * what it holds, calls `onOverflow` (the owner unsubscribes) and the reader's next pull throws
 * {@link EventQueueOverflowError}. What pushes is never slowed down or failed by a slow reader.
 *
 * @example
 * ```ts
 * const queue = new EventQueue<number>();
 * queue.push(1); queue.end();
 * for await (const n of queue) console.log(n); // 1
 * ```
 */
import { AirlockError } from '../errors/index.js';

/** Events one reader may let wait before it is dropped (the default bound of {@link EventQueue}). */
export const DEFAULT_EVENT_QUEUE_MAX_ITEMS = 1024;

/**
 * A reader fell too far behind its queue and was dropped; the task itself goes on.
 *
 * @example
 * ```ts
 * try { for await (const event of queue) send(event); } catch (error) { if (error instanceof EventQueueOverflowError) tooSlow(); }
 * ```
 */
export class EventQueueOverflowError extends AirlockError {
  readonly code = 'EVENT_QUEUE_OVERFLOW';

  constructor(maxItems: number) {
    super(`The reader fell more than ${maxItems} events behind and was dropped`);
  }
}

/**
 * Bounds of an {@link EventQueue}.
 *
 * @example
 * ```ts
 * const options: EventQueueOptions = { maxItems: 256, onOverflow: () => stop() };
 * ```
 */
export interface EventQueueOptions {
  /** Events waiting at most; one more drops the reader. Default {@link DEFAULT_EVENT_QUEUE_MAX_ITEMS}. */
  maxItems?: number;
  /** Called once when the reader is dropped (to unsubscribe it). */
  onOverflow?: () => void;
}

export class EventQueue<T> implements AsyncIterable<T> {
  #items: T[] = [];
  #head = 0;
  #ended = false;
  #failed: EventQueueOverflowError | undefined;
  #waiter: (() => void) | undefined;
  readonly #maxItems: number;
  readonly #onOverflow: (() => void) | undefined;

  constructor(options: EventQueueOptions = {}) {
    const maxItems = options.maxItems ?? DEFAULT_EVENT_QUEUE_MAX_ITEMS;
    if (!Number.isInteger(maxItems) || maxItems < 1) throw new RangeError('maxItems must be an integer ≥ 1');
    this.#maxItems = maxItems;
    this.#onOverflow = options.onOverflow;
  }

  push(item: T): void {
    if (this.#ended) return;
    if (this.#items.length - this.#head >= this.#maxItems) {
      this.#overflow();
      return;
    }
    this.#items.push(item);
    this.#wake();
  }

  end(): void {
    this.#ended = true;
    this.#wake();
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** Events waiting to be pulled. */
  get size(): number {
    return this.#items.length - this.#head;
  }

  /** True once the reader was dropped for falling behind. */
  get overflowed(): boolean {
    return this.#failed !== undefined;
  }

  #overflow(): void {
    this.#failed = new EventQueueOverflowError(this.#maxItems);
    this.#items = [];
    this.#head = 0;
    this.#ended = true;
    try {
      this.#onOverflow?.();
    } finally {
      this.#wake();
    }
  }

  #wake(): void {
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      if (this.#failed !== undefined) throw this.#failed;
      if (this.#head < this.#items.length) {
        const item = this.#items[this.#head] as T;
        this.#head += 1;
        // Drop consumed items now and then so a long stream does not keep them all.
        if (this.#head > 64 && this.#head * 2 > this.#items.length) {
          this.#items = this.#items.slice(this.#head);
          this.#head = 0;
        }
        yield item;
        continue;
      }
      if (this.#ended) return;
      await new Promise<void>((resolve) => {
        this.#waiter = resolve;
      });
    }
  }
}
