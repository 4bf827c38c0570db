/**
 * The agents a gateway publishes: each configured agent with the backend that answers it (one
 * given in code, or one the gateway makes and therefore closes).
 *
 * @example
 * ```ts
 * const published = publishAgents(config, logger, options.backends);
 * const agent = published.agents.get('echo');
 * await published.close();
 * ```
 */
import type { AgentBackend } from '../agents/backend.js';
import { createBackend } from '../agents/registry.js';
import type { AirlockConfig } from '../config/load.js';
import type { AgentConfig } from '../config/schema.js';
import { backendLog } from './backends.js';
import type { Logger } from './log.js';

/**
 * One published agent.
 *
 * @example
 * ```ts
 * const ctx = { principalKey, agentSlug: agent.config.slug, backend: agent.backend, caller: principal };
 * ```
 */
export interface PublishedAgent {
  config: AgentConfig;
  backend: AgentBackend;
  /** Logs a dispatch failure for this agent (built once, not per request). */
  onRpcError: (error: unknown) => void;
}

/**
 * Every configured agent by slug, and how to close the backends the gateway made itself.
 *
 * @example
 * ```ts
 * const { agents, close } = publishAgents(config, logger);
 * ```
 */
export function publishAgents(
  config: AirlockConfig,
  logger: Logger,
  given: Readonly<Record<string, AgentBackend>> | undefined,
): { agents: ReadonlyMap<string, PublishedAgent>; close(): Promise<void> } {
  const agents = new Map<string, PublishedAgent>();
  /** Backends this gateway made itself (not given in options): it closes them. */
  const ownBackends: AgentBackend[] = [];
  const ownBackend = (slug: string, backendConfig: AgentConfig['backend']): AgentBackend => {
    const backend = createBackend(backendConfig, {
      agent: slug,
      log: backendLog(logger, slug),
      ...(config.approvals !== undefined && { askPerson: true }),
    });
    ownBackends.push(backend);
    return backend;
  };
  for (const agent of config.agents) {
    const onRpcError = (error: unknown): void =>
      logger.error({
        event: 'rpc_failed',
        agent: agent.slug,
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      });
    agents.set(agent.slug, {
      config: agent,
      backend: given?.[agent.slug] ?? ownBackend(agent.slug, agent.backend),
      onRpcError,
    });
  }
  return {
    agents,
    close: async () => {
      await Promise.allSettled(ownBackends.map(async (backend) => backend.close?.()));
    },
  };
}
