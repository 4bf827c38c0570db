/**
 * Responses that wait for the audit trail's commit point. With group commit (audit/commit.ts)
 * the rows of a request are written at the end of the event-loop turn; a response's `write` and
 * `end` are held until then, so no caller hears back before its rows are in the audit file (a
 * crash loses no row of an acknowledged task). The class goes to `createServer` as its
 * `ServerResponse`: every route, refusal and stream of the listener is covered, and a response
 * whose rows are already out (nothing pending) is written at once, at the cost of one call.
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

type Call = (...args: unknown[]) => unknown;

// Called with `apply(this, …)` below: the overloads take the caller's arguments as they came.
// eslint-disable-next-line @typescript-eslint/unbound-method
const superWrite = ServerResponse.prototype.write as unknown as Call;
// eslint-disable-next-line @typescript-eslint/unbound-method
const superEnd = ServerResponse.prototype.end as unknown as Call;

/**
 * A `ServerResponse` class whose output waits for `committed()` (undefined: nothing to wait for).
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

    override write(...args: unknown[]): boolean {
      if (!this.#mustWait()) return superWrite.apply(this, args) as boolean;
      this.#held?.push(() => superWrite.apply(this, args));
      // Held output is bounded by one turn's worth: no back-pressure to report.
      return true;
    }

    override end(...args: unknown[]): this {
      if (!this.#mustWait()) return superEnd.apply(this, args) as this;
      this.#held?.push(() => superEnd.apply(this, args));
      return this;
    }

    /** True when this call must wait: rows are pending, or earlier output of this response waits. */
    #mustWait(): boolean {
      if (this.#held !== undefined) return true;
      const commit = committed();
      if (commit === undefined) return false;
      this.#held = [];
      // Everything held was called before the batch was written (the write is synchronous, at
      // the end of the turn), so its rows are in that batch: release it all once it is written.
      commit.then(
        () => {
          const held = this.#held ?? [];
          this.#held = undefined;
          for (const call of held) call();
        },
        (error: unknown) => {
          const held = this.#held ?? [];
          this.#held = undefined;
          onFailure(error);
          for (const call of held) call();
        },
      );
      return true;
    }
  }
  // The class is generic over its request in @types/node; ours serves IncomingMessage only.
  return CommittedResponse as unknown as typeof ServerResponse;
}
