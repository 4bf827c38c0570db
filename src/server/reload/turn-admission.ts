/**
 * The turn steps a config reload rebuilds: message limits and content rules, metadata caps,
 * and the in-flight slot with the grant (tools by agent, the reply scrubber). A reload swaps
 * the composed steps and the grants for new turns; a running turn keeps the grant it was
 * admitted with. The in-flight cap is one limiter for the gateway's life, resized in place, so
 * the slots running turns hold still count.
 *
 * @example
 * ```ts
 * const turns = createLiveTurnAdmission({ config, audit, hub: options.tools });
 * const admitTurn = compose(drainStep, turns.admit);
 * turns.prepare(next)(); // on reload: build, then swap
 * ```
 */
import type { AirlockConfig } from '../../config/load.js';
import type { TurnGrant } from '../../tasks/policy.js';
import type { ToolHub } from '../../tools/index.js';
import { compose, type Step } from '../admission/compose.js';
import { createExtensionStep } from '../admission/extensions.js';
import { createInFlightStep, createTurnGrants, type TurnGrants } from '../admission/in-flight.js';
import { createMetadataStep } from '../admission/metadata.js';
import type { TurnCandidate } from '../admission/turn.js';
import { createTurnContentStep } from '../admission/turn-content.js';
import type { InboundAudit } from '../inbound-audit.js';
import { InFlightLimiter, type InFlightCap } from '../limits/concurrency.js';
import { toolboxBuilders } from '../tools.js';

/**
 * The turn admission of one gateway, reconfigurable.
 *
 * @example
 * ```ts
 * decided.resume = createDecidedResume({ service, grants: turns.grants, backendOf, logger });
 * ```
 */
export interface LiveTurnAdmission {
  /** The steps after the drain step, as the config of the moment says. */
  readonly admit: Step<TurnCandidate, TurnCandidate>;
  /** The grants of the moment (for decided actions resumed outside a request). */
  readonly grants: TurnGrants;
  /**
   * Builds the steps from `next` (throws when it cannot) and answers the function that swaps
   * them in, so a reload builds every part before it swaps any.
   */
  prepare(next: AirlockConfig): () => void;
}

/**
 * Builds the turn steps from `config`.
 *
 * @example
 * ```ts
 * const turns = createLiveTurnAdmission({ config, audit, hub, sharedInFlight: sharedLimits?.inFlight });
 * ```
 */
export function createLiveTurnAdmission(options: {
  config: AirlockConfig;
  audit: InboundAudit;
  /** The connected tool servers; without them no agent gets a tool. */
  hub: ToolHub | undefined;
  /** In-flight caps shared by replicas (not resized by a reload: their limits need a restart). */
  sharedInFlight?: InFlightCap | undefined;
}): LiveTurnAdmission {
  const { audit, hub, sharedInFlight } = options;
  const local =
    sharedInFlight === undefined
      ? new InFlightLimiter({
          global: options.config.limits.maxConcurrentTasks,
          perKey: options.config.limits.maxConcurrentTasksPerPrincipal,
        })
      : undefined;
  const inFlight: InFlightCap = sharedInFlight ?? (local as InFlightLimiter);
  const build = (config: AirlockConfig): { grants: TurnGrants; admit: Step<TurnCandidate, TurnCandidate> } => {
    // Each tool-using agent's toolbox, built per turn from the hub (src/tools/, wired in ../tools.ts).
    const tools: ReadonlyMap<string, NonNullable<TurnGrant['tools']>> | undefined = toolboxBuilders(config, {
      hub,
      audit,
    });
    const grants = createTurnGrants({ config, inFlight, ...(tools !== undefined && { tools }) });
    return {
      grants,
      admit: compose(
        // First: a request the agent cannot serve without an extension costs nothing further.
        createExtensionStep<TurnCandidate>({ config, audit }),
        createTurnContentStep<TurnCandidate>({ config, audit }),
        // What a caller makes us keep besides the text (metadata, extensions, …): both routes.
        createMetadataStep<TurnCandidate>({ config, audit }),
        createInFlightStep<TurnCandidate>({ config, audit, grants }),
      ),
    };
  };
  let current = build(options.config);
  return {
    admit: (turn) => current.admit(turn),
    grants: { inFlight, grant: (ctx, text, release) => current.grants.grant(ctx, text, release) },
    prepare(next) {
      const built = build(next);
      return () => {
        local?.resize({ global: next.limits.maxConcurrentTasks, perKey: next.limits.maxConcurrentTasksPerPrincipal });
        current = built;
      };
    },
  };
}
