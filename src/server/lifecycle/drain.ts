/**
 * Draining: what a gateway does between SIGTERM and exit. New turns are refused at once (503
 * with Retry-After: a load balancer or the caller goes elsewhere), `/readyz` turns not-ready,
 * and the turns already running get `drainSeconds` to finish; then the listener closes and the
 * service fails what is left (their streams end with that final status). Reads (GetTask,
 * ListTasks), cancels and subscriptions are still served while it drains.
 *
 * @example
 * ```ts
 * const drain = new Drain();
 * const step = createDrainStep({ drain, audit }); // first in the turn admission
 * await drain.run({ running: () => service.running, seconds: 25, stopAccepting: () => server.close() });
 * ```
 */
import { CapacityError } from '../../tasks/policy.js';
import { REFUSED, type Step } from '../admission/compose.js';
import type { TurnCandidate } from '../admission/turn.js';
import type { InboundAudit } from '../inbound-audit.js';

/** What a refused caller is told to wait: long enough for a restart or a rolling update. */
export const DRAINING_RETRY_AFTER_SECONDS = 5;

/** How often the drain looks whether the running turns have finished. */
const POLL_MS = 50;

/**
 * Whether this gateway drains, and the wait for its running turns.
 *
 * @example
 * ```ts
 * if (drain.draining) return notReady();
 * ```
 */
export class Drain {
  #draining = false;

  /** True from the moment a drain starts. */
  get draining(): boolean {
    return this.#draining;
  }

  /**
   * Starts draining (idempotent), and resolves once no turn runs or `seconds` have passed, with
   * how many were still running then; only then does it stop accepting connections. Until
   * then the listener stays open on purpose: probes must read `/readyz` 503 (a refused
   * connection looks like a crash), and callers must still be able to poll and cancel their
   * running tasks; every new turn is refused.
   */
  async run(options: {
    readonly running: () => number;
    readonly seconds: number;
    readonly stopAccepting: () => void;
    readonly now?: () => number;
  }): Promise<number> {
    this.#draining = true;
    const now = options.now ?? Date.now;
    const deadline = now() + options.seconds * 1000;
    while (options.running() > 0 && now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    options.stopAccepting();
    return options.running();
  }
}

/**
 * The admission step that refuses new turns while the gateway drains (503, Retry-After,
 * audited `draining`). Requests without a message (reads, cancels) pass.
 *
 * @example
 * ```ts
 * const admitTurn = compose(createDrainStep({ drain, audit }), createTurnContentStep({ config, audit }));
 * ```
 */
export function createDrainStep<T extends TurnCandidate>(options: {
  readonly drain: Drain;
  readonly audit: Pick<InboundAudit, 'rateLimited'>;
}): Step<T, T> {
  const { drain, audit } = options;
  return (turn) => {
    if (!drain.draining || turn.message === undefined) return turn;
    audit.rateLimited('draining', turn.ctx.agentSlug, undefined, turn.ctx.caller);
    turn.refuseTurn(
      new CapacityError(
        DRAINING_RETRY_AFTER_SECONDS,
        'The gateway is shutting down and takes no new tasks; retry shortly (another replica, or this one after its restart).',
      ),
    );
    return REFUSED;
  };
}
