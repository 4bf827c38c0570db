/**
 * The gateway's tool wiring: each tool-using agent's toolbox builder (the `TurnGrant.tools` of
 * its turns), over the tool hub `airlock serve` started, with the ladder of `approvals/` as the
 * decision and the inbound audit trail for the rows. Wiring only: the policy is in `src/tools/`.
 *
 * @example
 * ```ts
 * const tools = toolboxBuilders(config, { hub, audit });
 * createInFlightStep({ config, audit, ...(tools !== undefined && { tools }) });
 * ```
 */
import { decideProposal } from '../approvals/ladder.js';
import type { AirlockConfig } from '../config/load.js';
import { createReplyScrubber } from '../agents/inbound/index.js';
import type { TurnGrant } from '../tasks/policy.js';
import { createGuardedClient, parseEnvSettings } from '../net/index.js';
import { createToolboxBuilders, ToolHub, type ToolDecision } from '../tools/index.js';
import type { InboundAudit } from './inbound-audit.js';
import type { Logger } from './log.js';

/**
 * The ladder as the toolbox asks it: L1/L2 run, L3/L4 park for the person (refused when
 * approvals are off, or above the agent's `actions.maxLevel`), and a service principal is
 * refused anything above its cap, never parked.
 *
 * @example
 * ```ts
 * toolDecision(config)('L4', 'service', 'helper'); // 'refuse'
 * ```
 */
export function toolDecision(config: Pick<AirlockConfig, 'agents' | 'approvals'>): ToolDecision {
  const maxLevels = new Map(config.agents.map((agent) => [agent.slug, agent.actions?.maxLevel ?? 'L2']));
  return (level, principalKind, agentSlug) => {
    const decision = decideProposal({
      level,
      // A read-only tool is never capped by the agent's action level; an acting one is.
      agentMaxLevel: level === 'L1' || level === 'L2' ? 'L4' : (maxLevels.get(agentSlug ?? '') ?? 'L2'),
      principalKind,
      ...(config.approvals !== undefined && { serviceMaxLevel: config.approvals.serviceMaxLevel }),
    });
    if (decision.kind === 'allow') return 'run';
    if (decision.kind === 'needs_approval') return config.approvals === undefined ? 'refuse' : 'park';
    return 'refuse';
  };
}

/**
 * The toolbox builder of every agent that may use tools, or undefined when there is no hub or
 * no such agent.
 *
 * @example
 * ```ts
 * const tools = toolboxBuilders(config, { hub, audit });
 * ```
 */
export function toolboxBuilders(
  config: Pick<AirlockConfig, 'agents' | 'approvals' | 'tools' | 'scrubSecrets'>,
  options: { hub: ToolHub | undefined; audit: InboundAudit },
): ReadonlyMap<string, NonNullable<TurnGrant['tools']>> | undefined {
  const { hub, audit } = options;
  if (hub === undefined || config.tools === undefined) return undefined;
  const builders = createToolboxBuilders(config.agents, {
    hub,
    tools: config.tools,
    decide: toolDecision(config),
    scrubber: createReplyScrubber(config.scrubSecrets),
    ...(audit.enabled && { audit: (event) => audit.record(event, false) }),
  });
  return builders.size === 0 ? undefined : builders;
}

/**
 * Connects the configured tool servers (`tools.servers`), lists their tools and checks their
 * pins, at boot: a required server that fails rejects with one line naming it; an optional
 * one is logged, its tools answer `refused`, and it is reconnected on a later turn. Undefined
 * when no tool server is configured.
 *
 * @example
 * ```ts
 * const tools = await startToolServers(config, logger, process.env);
 * ```
 */
export async function startToolServers(
  config: AirlockConfig,
  logger: Logger,
  env: NodeJS.ProcessEnv,
): Promise<ToolHub | undefined> {
  if (config.tools === undefined || config.tools.servers.length === 0) return undefined;
  const guarded = createGuardedClient(parseEnvSettings(env));
  const hub = new ToolHub(config.tools, {
    guarded,
    ownsGuarded: true,
    env,
    log: (level, event, fields) => logger[level]({ event, ...fields }),
  });
  try {
    await hub.start();
  } catch (error) {
    await hub.close();
    throw error;
  }
  return hub;
}
