/**
 * A push-to-pull adapter: events pushed by the bus, pulled by a `for await` loop.
 *
 * @example
 * ```ts
 * const queue = new EventQueue<number>();
 * queue.push(1); queue.end();
 * for await (const n of queue) console.log(n); // 1
 * ```
 */
export class EventQueue<T> implements AsyncIterable<T> {
  #items: T[] = [];
  #head = 0;
  #ended = false;
  #waiter: (() => void) | undefined;

  push(item: T): void {
    if (this.#ended) return;
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

  #wake(): void {
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
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
