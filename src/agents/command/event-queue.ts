/**
 * The hand-off between a running program (callbacks, as its output arrives) and the backend's
 * async generator (pulled by the task service at its own pace). Queued reply text is joined, so a
 * chatty program that outruns its reader makes few large events rather than many small ones, and
 * the end of the reply can be marked on the last queued chunk instead of an extra empty one.
 *
 * @example
 * ```ts
 * const queue = new TurnEventQueue();
 * queue.text('Hel');
 * queue.text('lo');               // joins the waiting 'Hel'
 * queue.endText();                // marks it last
 * queue.push({ type: 'completed' });
 * queue.close();
 * for await (const event of queue.drain()) console.log(event);
 * // { type: 'text', text: 'Hello', last: true }
 * // { type: 'completed' }
 * ```
 */
import type { AgentEvent } from '../backend.js';

type TextEvent = Extract<AgentEvent, { type: 'text' }>;

/**
 * A single-reader queue of one turn's events.
 *
 * @example
 * ```ts
 * const queue = new TurnEventQueue();
 * child.on('data', (text) => queue.text(text));
 * child.on('close', () => { queue.endText(); queue.push({ type: 'completed' }); queue.close(); });
 * yield* queue.drain();
 * ```
 */
export class TurnEventQueue {
  readonly #events: AgentEvent[] = [];
  #closed = false;
  #wake: (() => void) | undefined;
  /** True once reply text was queued (taken or not). */
  #hadText = false;

  /** Queues a chunk of reply text, joined to the newest queued event when that is text too. */
  text(text: string): void {
    if (text.length === 0) return;
    this.#hadText = true;
    const tail = this.#events.at(-1);
    if (tail?.type === 'text') this.#events[this.#events.length - 1] = { type: 'text', text: tail.text + text };
    else this.push({ type: 'text', text });
  }

  push(event: AgentEvent): void {
    if (this.#closed) return;
    this.#events.push(event);
    this.#signal();
  }

  /**
   * The reply text is over: the newest queued text chunk gets `last: true`; when the last chunk
   * was already taken, an empty chunk with `last: true` is queued. Nothing when there was no text.
   */
  endText(): void {
    if (!this.#hadText || this.#closed) return;
    for (let index = this.#events.length - 1; index >= 0; index--) {
      const event = this.#events[index];
      if (event?.type === 'text') {
        this.#events[index] = { ...event, last: true } satisfies TextEvent;
        return;
      }
    }
    this.push({ type: 'text', text: '', last: true });
  }

  /** No more events: `drain` ends once the queued ones are taken. */
  close(): void {
    this.#closed = true;
    this.#signal();
  }

  /** Yields the events as they come, until the queue is closed and empty. Only one reader. */
  async *drain(): AsyncGenerator<AgentEvent> {
    for (;;) {
      const event = this.#events.shift();
      if (event !== undefined) {
        yield event;
        continue;
      }
      if (this.#closed) return;
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
    }
  }

  #signal(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}
