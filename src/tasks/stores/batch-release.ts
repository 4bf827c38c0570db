/**
 * Callers released together by a group commit that runs at the end of a turn (the SQLite store's
 * flush, a `setImmediate`): while the continuations of one such release run, {@link inBatchRelease}
 * is true, until the microtasks they queue have all run. Whoever holds output until the end of
 * the turn, so that a turn's responses leave in one burst (server/respond/committed.ts), reads it:
 * the responses of a release are already one burst, and a `setImmediate` taken from inside one
 * would hold them for a whole further turn of the loop, the next poll phase's requests included.
 *
 * @example
 * ```ts
 * releaseBatch(() => batch.forEach((put) => put.resolve()));
 * // in the puts' continuations, before their microtasks run out:
 * inBatchRelease(); // true
 * ```
 */

let releasing = false;

/**
 * Runs `settle` (resolving a batch's callers) with {@link inBatchRelease} true until the
 * microtasks queued by then, and those they queue, have run: a tick queued from a microtask runs
 * only once the microtask queue is empty.
 *
 * @example
 * ```ts
 * releaseBatch(() => { for (const put of batch) put.resolve(); });
 * ```
 */
export function releaseBatch(settle: () => void): void {
  if (!releasing) {
    releasing = true;
    queueMicrotask(() =>
      process.nextTick(() => {
        releasing = false;
      }),
    );
  }
  settle();
}

/**
 * Whether this code runs among the continuations of a batch release ({@link releaseBatch}).
 *
 * @example
 * ```ts
 * if (inBatchRelease()) queueMicrotask(() => process.nextTick(release)); // once the release's microtasks ran
 * else setImmediate(release); // the end of the turn
 * ```
 */
export function inBatchRelease(): boolean {
  return releasing;
}
