/**
 * Responses that leave together at the end of the event-loop turn, and never before the audit
 * trail's commit point. A response's `write` and `end` are held until `committed()` settles:
 *
 * - with group commit (audit/commit.ts), the batch holding the request's audit rows, written at
 *   the end of the turn, so no caller hears back before its rows are in the audit file (a crash
 *   loses no row of an acknowledged task);
 * - otherwise {@link endOfTurn}: the responses of one turn go out one after the other once the
 *   turn's requests are handled, rather than each between the next requests' work. On loopback a
 *   write scattered between other work costs the sender about three times a write in a burst
 *   (the kernel wakes the receiving process inside the sender's system call, and a receiver that
 *   went back to sleep between two responses is woken again each time): `npm run bench:inbound`,
 *   echo and auth without an audit file, 111 → 66 µs of server CPU per request. The latency
 *   added is the rest of the turn, which the next response would have waited for anyway.
 *
 * The class goes to `createServer` as its `ServerResponse`: every route, refusal and stream of
 * the listener is covered.
 *
 * A batch that cannot be written is the gateway's audit failure as before group commit: the
 * task whose submitted row is lost never runs (the task service waits for that row and answers
 * -32603), a refusal is still sent, and a lost outcome row goes to the log: the held output is
 * released and `onFailure` is told.
 *
 * @example
 * ```ts
 * const ServerResponse = committedResponses(() => sink.committed?.(), (error) => logger.error({ event: 'audit_commit_failed' }));
 * createServer({ ServerResponse }, handler);
 * ```
 */
import { ServerResponse } from 'node:http';
import { inBatchRelease } from '../../tasks/stores/batch-release.js';

type Call = (...args: unknown[]) => unknown;

// Called with `apply(this, …)` below: the overloads take the caller's arguments as they came.
// eslint-disable-next-line @typescript-eslint/unbound-method
const superWrite = ServerResponse.prototype.write as unknown as Call;
// eslint-disable-next-line @typescript-eslint/unbound-method
const superEnd = ServerResponse.prototype.end as unknown as Call;
const superHeadersSent = getterOf('headersSent');
const superWritableEnded = getterOf('writableEnded');

/** Node's own getter of a ServerResponse accessor (defined on OutgoingMessage or Writable). */
function getterOf(name: 'headersSent' | 'writableEnded'): Call {
  let proto: object | null = ServerResponse.prototype;
  while (proto !== null) {
    const descriptor: PropertyDescriptor | undefined = Object.getOwnPropertyDescriptor(proto, name);
    // Called with `call(this)` below, on a response.
    // eslint-disable-next-line @typescript-eslint/unbound-method
    if (descriptor?.get !== undefined) return descriptor.get as Call;
    proto = Object.getPrototypeOf(proto) as object | null;
  }
  throw new Error(`node:http ServerResponse has no ${name} getter`);
}

/** The promise of the current turn's end; made by the first response of the turn. */
let turnEnding: Promise<void> | undefined;
/** The promise of the current batch release's end (see {@link endOfTurn}). */
let releaseEnding: Promise<void> | undefined;

/**
 * A promise that settles at the end of this event-loop turn (`setImmediate`: after the poll
 * phase has handled every socket that was ready), one per turn however many wait on it. Among
 * the callers a group commit releases at the end of a turn (`inBatchRelease`: the SQLite
 * store's), it settles once their continuations have run instead: they are the turn's last work,
 * and a `setImmediate` from there would wait for the next turn, its poll phase included.
 *
 * @example
 * ```ts
 * await endOfTurn(); // the poll phase has handled every ready socket
 * ```
 */
export function endOfTurn(): Promise<void> {
  if (inBatchRelease()) {
    // A tick queued from a microtask runs once the microtask queue is empty: every response of
    // the release has been written (and held) by then.
    releaseEnding ??= new Promise((resolve) => {
      queueMicrotask(() =>
        process.nextTick(() => {
          releaseEnding = undefined;
          resolve();
        }),
      );
    });
    return releaseEnding;
  }
  turnEnding ??= new Promise((resolve) => {
    setImmediate(() => {
      turnEnding = undefined;
      resolve();
    });
  });
  return turnEnding;
}

/**
 * A `ServerResponse` class whose output waits for `committed()` (undefined: no rows pending), and
 * whose first output waits at least for the end of the turn ({@link endOfTurn}). Once a response
 * has been released, its later output (a stream's events) waits only for pending rows.
 *
 * Held output counts against the response's high-water mark like buffered output: past it,
 * `write` answers false and `drain` follows the release, so a stream's back-pressure still works
 * while it waits.
 *
 * @example
 * ```ts
 * http.createServer({ ServerResponse: committedResponses(() => sink.committed?.(), log) }, handler);
 * ```
 */
export function committedResponses(
  committed: () => Promise<void> | undefined,
  onFailure: (error: unknown) => void,
): typeof ServerResponse {
  class CommittedResponse extends ServerResponse {
    /** Output held until the pending commit, in call order; undefined when nothing is held. */
    #held: (() => void)[] | undefined;
    /** Bytes of the held writes, against the high-water mark. */
    #heldBytes = 0;
    /** A held write answered false: `drain` is owed once the output is released. */
    #owesDrain = false;
    /** The first output has been released: later output waits for pending rows only. */
    #released = false;
    /** Output, or the end, was called and is held: what `headersSent` and `writableEnded` say. */
    #wroteHeld = false;
    #endedHeld = false;

    override write(...args: unknown[]): boolean {
      if (!this.#mustWait()) return superWrite.apply(this, args) as boolean;
      this.#held?.push(() => superWrite.apply(this, args));
      this.#wroteHeld = true;
      this.#heldBytes += byteLengthOf(args[0]);
      if (this.#heldBytes < this.writableHighWaterMark) return true;
      this.#owesDrain = true;
      return false;
    }

    override end(...args: unknown[]): this {
      if (!this.#mustWait()) return superEnd.apply(this, args) as this;
      this.#held?.push(() => superEnd.apply(this, args));
      this.#wroteHeld = true;
      this.#endedHeld = true;
      return this;
    }

    /** True when this call must wait: rows are pending, the turn's first output, or earlier output of this response waits. */
    #mustWait(): boolean {
      if (this.#held !== undefined) return true;
      const commit = committed() ?? (this.#released ? undefined : endOfTurn());
      if (commit === undefined) return false;
      this.#held = [];
      // Everything held was called before the batch was written (the write is synchronous, at
      // the end of the turn), so its rows are in that batch: release it all once it is written.
      commit.then(
        () => this.#release(),
        (error: unknown) => {
          onFailure(error);
          this.#release();
        },
      );
      return true;
    }

    // What a handler asks before answering (`if (!res.headersSent) sendJson(res, 500, …)`) must
    // count held output as sent, or a second answer would follow the held one (write after end).
    // @types/node declares these accessors as properties, so they are defined, not overridden.
    static {
      Object.defineProperty(this.prototype, 'headersSent', {
        get(this: CommittedResponse): boolean {
          return this.#wroteHeld || (superHeadersSent.call(this) as boolean);
        },
      });
      Object.defineProperty(this.prototype, 'writableEnded', {
        get(this: CommittedResponse): boolean {
          return this.#endedHeld || (superWritableEnded.call(this) as boolean);
        },
      });
    }

    #release(): void {
      const held = this.#held ?? [];
      this.#held = undefined;
      this.#heldBytes = 0;
      this.#released = true;
      for (const call of held) call();
      if (this.#owesDrain) {
        this.#owesDrain = false;
        // Still over the mark in the socket: node:http emits `drain` itself when it empties.
        if (!this.writableNeedDrain && !this.destroyed) this.emit('drain');
      }
    }
  }
  // The class is generic over its request in @types/node; ours serves IncomingMessage only.
  return CommittedResponse as unknown as typeof ServerResponse;
}

/** A chunk's size in bytes (a string's in UTF-8); 0 for anything else (a callback). */
function byteLengthOf(chunk: unknown): number {
  if (typeof chunk === 'string') return Buffer.byteLength(chunk);
  return chunk instanceof Uint8Array ? chunk.byteLength : 0;
}
