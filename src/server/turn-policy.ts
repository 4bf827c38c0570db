/**
 * The inbound turn policy: what every message must pass before an agent sees it, and what the
 * agent is given. In order: message limits (parts, characters), content rules (text only, no
 * tool-shaped input), suspicious-pattern counting (audited, not refused), a concurrency slot
 * (global and per principal); then the framed prompt, the agent's tools and the reply scrubber.
 *
 * @example
 * ```ts
 * const policy = createInboundTurnPolicy({ config, audit });
 * const service = new TaskService({ store, policy });
 * ```
 */
import { textOf } from '../agents/backend.js';
import {
  buildInboundPrompt,
  createReplyScrubber,
  inspectInboundContent,
  toolsForInboundTurn,
} from '../agents/inbound/index.js';
import type { AirlockConfig } from '../config/load.js';
import { countSuspiciousPatterns } from '../content/index.js';
import { CapacityError, type TurnGrant, type TurnPolicy, type TurnPrompt } from '../tasks/policy.js';
import type { InboundAudit } from './inbound-audit.js';
import {
  CONCURRENCY_RETRY_AFTER_SECONDS,
  checkMessageLimits,
  InFlightLimiter,
  type InFlightCap,
  type Release,
} from './limits/index.js';
import type { CallContext } from '../tasks/call-context.js';

/** No tool registry exists yet: agents with `allowTools` get the allow-listed tools that do. */
const AVAILABLE_TOOLS: readonly { name: string; outboundA2A?: boolean }[] = [];

export function createInboundTurnPolicy(options: {
  config: Pick<AirlockConfig, 'limits' | 'agents' | 'scrubSecrets'>;
  audit: InboundAudit;
  /** Caps shared by replicas (`createSharedLimits`); by default this process's own. */
  inFlight?: InFlightCap;
}): TurnPolicy {
  const { config, audit } = options;
  const limits = config.limits;
  const inFlight: InFlightCap =
    options.inFlight ??
    new InFlightLimiter({
      global: limits.maxConcurrentTasks,
      perKey: limits.maxConcurrentTasksPerPrincipal,
    });
  const scrubber = createReplyScrubber(config.scrubSecrets);
  const toolsBySlug = new Map(config.agents.map((agent) => [agent.slug, toolsForInboundTurn(agent, AVAILABLE_TOOLS)]));
  const messageLimits = { maxParts: limits.maxParts, maxInputChars: limits.maxInputChars };

  return {
    admit(ctx, message): TurnGrant | Promise<TurnGrant> {
      const tooBig = checkMessageLimits(message, messageLimits);
      if (tooBig !== undefined) {
        audit.rejected(ctx, tooBig.reason);
        throw tooBig;
      }
      const violation = inspectInboundContent(message);
      if (violation !== undefined) {
        audit.rejected(ctx, 'unsupported_content');
        throw violation.error;
      }
      const text = textOf(message);
      // Counted only to be recorded: with no audit sink the scan would be thrown away.
      if (audit.enabled) {
        const suspicious = countSuspiciousPatterns(text);
        if (suspicious.total > 0) audit.suspicious(ctx, suspicious.byCategory, text.length);
      }
      const slot = inFlight.tryAcquire(ctx.principalKey);
      // Caps shared by replicas answer asynchronously; local ones at once.
      return slot instanceof Promise ? slot.then((release) => grant(ctx, text, release)) : grant(ctx, text, slot);
    },
  };

  /** The turn's grant once a concurrency slot was asked for; refused (503) without one. */
  function grant(ctx: CallContext, text: string, release: Release | null): TurnGrant {
    if (release === null) {
      audit.rateLimited('concurrency_limit', ctx.agentSlug, undefined, ctx.caller);
      throw new CapacityError(CONCURRENCY_RETRY_AFTER_SECONDS);
    }
    const tools = toolsBySlug.get(ctx.agentSlug);
    return {
      inputChars: text.length,
      release,
      prompt: (): TurnPrompt => {
        const built = buildInboundPrompt(text);
        return { system: built.system, user: built.user };
      },
      ...(tools !== undefined && tools.length > 0 && { tools }),
      ...(scrubber.active && { scrubber }),
    };
  }
}
