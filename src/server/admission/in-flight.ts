/**
 * The last admission step of a turn: a concurrency slot (in total, and per principal), then
 * the turn's grant: the framed prompt, the agent's tools and the reply scrubber. Without a
 * slot the turn is refused (503 with Retry-After, audited as `concurrency_limit`). The task
 * service gives the slot back when the turn ends, or at once if it cannot start.
 *
 * @example
 * ```ts
 * const slot = createInFlightStep({ config, audit });
 * const admitTurn = compose(createTurnContentStep({ config, audit }), slot);
 * ```
 */
import { buildInboundPrompt, createReplyScrubber } from '../../agents/inbound/index.js';
import type { AirlockConfig } from '../../config/load.js';
import type { CallContext } from '../../tasks/call-context.js';
import { CapacityError, type TurnGrant, type TurnPrompt } from '../../tasks/policy.js';
import type { InboundAudit } from '../inbound-audit.js';
import {
  CONCURRENCY_RETRY_AFTER_SECONDS,
  InFlightLimiter,
  type InFlightCap,
  type Release,
} from '../limits/concurrency.js';
import { andThen, REFUSED, type Step } from './compose.js';
import type { TurnCandidate } from './turn.js';

/**
 * What a turn is granted, and the slots it is granted from: shared by the in-flight step and by
 * the turns the gateway starts itself (a task resumed after the person decided).
 *
 * @example
 * ```ts
 * const grants = createTurnGrants({ config, tools });
 * const release = await grants.inFlight.tryAcquire(ctx.principalKey);
 * if (release !== null) await service.resumeDecided(ctx, taskId, grants.grant(ctx, '', release));
 * ```
 */
export interface TurnGrants {
  readonly inFlight: InFlightCap;
  /** The grant of a turn of `ctx` whose caller's text is `text`, holding the slot `release` gives back. */
  grant(ctx: CallContext, text: string, release: Release): TurnGrant;
}

/**
 * The grants of one gateway: this process's caps, or `inFlight` (caps shared by replicas); the
 * agents' toolbox builders; the configured reply scrubbing.
 *
 * @example
 * ```ts
 * const grants = createTurnGrants({ config, inFlight: sharedLimits.inFlight });
 * ```
 */
export function createTurnGrants(options: {
  config: Pick<AirlockConfig, 'limits' | 'scrubSecrets'>;
  /** Caps shared by replicas (`createSharedLimits`); by default this process's own. */
  inFlight?: InFlightCap;
  /** Agent slug → the toolbox builder of its turns (agents with tools only). */
  tools?: ReadonlyMap<string, NonNullable<TurnGrant['tools']>>;
}): TurnGrants {
  const limits = options.config.limits;
  const inFlight: InFlightCap =
    options.inFlight ??
    new InFlightLimiter({ global: limits.maxConcurrentTasks, perKey: limits.maxConcurrentTasksPerPrincipal });
  const scrubber = createReplyScrubber(options.config.scrubSecrets);
  const toolsBySlug = options.tools;
  return {
    inFlight,
    grant(ctx, text, release) {
      const tools = toolsBySlug?.get(ctx.agentSlug);
      return {
        inputChars: text.length,
        release,
        prompt: (): TurnPrompt => {
          const built = buildInboundPrompt(text);
          return { system: built.system, user: built.user };
        },
        ...(tools !== undefined && { tools }),
        ...(scrubber.active && { scrubber }),
      };
    },
  };
}

/**
 * The in-flight step over `grants` (or grants of its own, over this process's caps or `inFlight`).
 *
 * @example
 * ```ts
 * const slot = createInFlightStep({ config, audit, inFlight: sharedLimits.inFlight });
 * ```
 */
export function createInFlightStep<T extends TurnCandidate>(options: {
  config: Pick<AirlockConfig, 'limits' | 'agents' | 'scrubSecrets'>;
  audit: Pick<InboundAudit, 'rateLimited'>;
  /** Caps shared by replicas (`createSharedLimits`); by default this process's own. */
  inFlight?: InFlightCap;
  /** Agent slug → the toolbox builder of its turns (agents with tools only). */
  tools?: ReadonlyMap<string, NonNullable<TurnGrant['tools']>>;
  /** The gateway's grants (then `inFlight` and `tools` are theirs). */
  grants?: TurnGrants;
}): Step<T, T> {
  const { audit } = options;
  const grants = options.grants ?? createTurnGrants(options);
  const inFlight = grants.inFlight;

  return (turn) => {
    if (turn.message === undefined) return turn;
    // Caps shared by replicas answer asynchronously; local ones at once.
    return andThen(inFlight.tryAcquire(turn.ctx.principalKey), (release) => {
      if (release === null) {
        audit.rateLimited('concurrency_limit', turn.ctx.agentSlug, undefined, turn.ctx.caller);
        turn.refuseTurn(new CapacityError(CONCURRENCY_RETRY_AFTER_SECONDS));
        return REFUSED;
      }
      turn.grant = grants.grant(turn.ctx, turn.text, release);
      return turn;
    });
  };
}
