/**
 * The stream step: a slot for an SSE stream (SendStreamingMessage / message/stream,
 * SubscribeToTask / tasks/resubscribe), in total and per principal. Without a slot the stream
 * is refused (503 with Retry-After, one line naming the cap, audited as `stream_limit`). The
 * route gives the slot back when the stream ends, however it ends: the client went away, the
 * task reached its end, the reader fell behind, or an error.
 *
 * The caps are this process's own (each replica counts its open streams): a stream holds a
 * socket on the replica that serves it, so a per-process count bounds what matters there.
 *
 * @example
 * ```ts
 * const admitStream = createStreamSlotStep({ limits: config.limits, audit });
 * const slot = admitStream({ ctx, refuseStream: (error) => write(res, failed(error)), release: undefined });
 * if (slot !== REFUSED) try { await pipe(); } finally { slot.release?.(); }
 * ```
 */
import type { LimitsConfig } from '../../config/schema.js';
import type { CallContext } from '../../tasks/call-context.js';
import { CapacityError } from '../../tasks/policy.js';
import type { InboundAudit } from '../inbound-audit.js';
import { InFlightLimiter, type Release } from '../limits/concurrency.js';
import { REFUSED, type Refused } from './compose.js';

/** The Retry-After (seconds) sent with a refused stream: streams last longer than turns. */
export const STREAM_RETRY_AFTER_SECONDS = 5;

/**
 * A stream over its cap: answered as the gateway's capacity refusal (503 + Retry-After), with
 * a message that names the cap and the setting.
 *
 * @example
 * ```ts
 * throw new StreamLimitError('perPrincipal', 16); // 503, Retry-After: 5
 * ```
 */
export class StreamLimitError extends CapacityError {
  constructor(which: 'perPrincipal' | 'global', cap: number) {
    super(STREAM_RETRY_AFTER_SECONDS);
    this.message =
      which === 'perPrincipal'
        ? `Too many open streams for this caller (limits.maxStreamsPerPrincipal = ${cap}); close one and retry`
        : `Too many open streams on this gateway (limits.maxStreams = ${cap}); retry shortly`;
  }
}

/**
 * A stream under admission: who opens it, how the route refuses it, and (once admitted) the
 * slot's release.
 *
 * @example
 * ```ts
 * const candidate: StreamCandidate = { ctx, refuseStream: (error) => write(res, failed(error)), release: undefined };
 * ```
 */
export interface StreamCandidate {
  readonly ctx: CallContext;
  /** Sends the refusal (a {@link StreamLimitError}). */
  readonly refuseStream: (error: Error) => void;
  /** Set by the step: gives the slot back (idempotent). */
  release: Release | undefined;
}

/**
 * The stream step over this process's caps. Answers at once (no microtask).
 *
 * @example
 * ```ts
 * const admitStream = createStreamSlotStep({ limits: { maxStreams: 1000, maxStreamsPerPrincipal: 16 }, audit });
 * ```
 */
export function createStreamSlotStep<T extends StreamCandidate>(options: {
  limits: Pick<LimitsConfig, 'maxStreams' | 'maxStreamsPerPrincipal'>;
  audit: Pick<InboundAudit, 'rateLimited'>;
}): ((candidate: T) => T | Refused) & { readonly open: () => number } {
  const { limits, audit } = options;
  const slots = new InFlightLimiter({ global: limits.maxStreams, perKey: limits.maxStreamsPerPrincipal });
  // `open`: the streams holding a slot now (the metrics' gauge reads it at scrape time).
  const step = (candidate: T): T | Refused => {
    const key = candidate.ctx.principalKey;
    const release = slots.tryAcquire(key);
    if (release === null) {
      const global = slots.inFlight >= limits.maxStreams;
      audit.rateLimited('stream_limit', candidate.ctx.agentSlug, undefined, candidate.ctx.caller);
      candidate.refuseStream(
        global
          ? new StreamLimitError('global', limits.maxStreams)
          : new StreamLimitError('perPrincipal', limits.maxStreamsPerPrincipal),
      );
      return REFUSED;
    }
    candidate.release = release;
    return candidate;
  };
  return Object.assign(step, { open: () => slots.inFlight });
}
