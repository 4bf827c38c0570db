/**
 * Makes every configured agent's backend before the gateway binds its port: modules are
 * imported, programs found, upstream registry entries checked — so a config that cannot work
 * stops `airlock serve` with one line, never a caller's request.
 *
 * @example
 * ```ts
 * const backends = await prepareBackends(config, { logger });
 * const gateway = createGateway(config, { logger, backends: backends.bySlug });
 * // … gateway.close() closes them
 * ```
 */
import type { AgentBackend, BackendContext, BackendLog } from '../agents/backend.js';
import { loadBackend, type BackendLoadContext } from '../agents/registry.js';
import type { AirlockConfig } from '../config/load.js';
import type { Logger } from './log.js';
import { AirlockError } from '../errors/index.js';

export interface PreparedBackends {
  /** By agent slug, for `createGateway`'s `backends`. */
  readonly bySlug: Readonly<Record<string, AgentBackend>>;
  /** Closes the backends and what they share (the upstream connector). */
  close(): Promise<void>;
}

export interface PrepareBackendsOptions {
  logger: Logger;
  env?: NodeJS.ProcessEnv;
  /** Backends written in code, by slug: used as given, nothing is made for those agents. */
  given?: Readonly<Record<string, AgentBackend>>;
  /**
   * Makes `a2a` backends. Set by `airlock serve` from `upstreams` in the config (see
   * `upstreamFactory` in ./upstreams.ts); tests may pass their own.
   */
  upstream?: BackendLoadContext['upstream'];
}

/**
 * Every agent's backend, made from the config (or taken from `given`). Rejects with the first
 * BackendConfigError, prefixed with the agent's key, after closing what it had already made.
 *
 * @example
 * ```ts
 * await prepareBackends(config, { logger }).catch((error) => console.error(error.message));
 * ```
 */
export async function prepareBackends(
  config: AirlockConfig,
  options: PrepareBackendsOptions,
): Promise<PreparedBackends> {
  const bySlug: Record<string, AgentBackend> = {};
  const made: AgentBackend[] = [];
  const closeMade = async (): Promise<void> => {
    await Promise.allSettled(made.map(async (backend) => backend.close?.()));
  };
  for (const [index, agent] of config.agents.entries()) {
    const given = options.given?.[agent.slug];
    if (given !== undefined) {
      bySlug[agent.slug] = given;
      continue;
    }
    const context: BackendLoadContext = {
      agent: agent.slug,
      log: backendLog(options.logger, agent.slug),
      // With approvals on, a remote agent's question goes to the person, never to the caller.
      ...(config.approvals !== undefined && { askPerson: true }),
      ...(options.env !== undefined && { env: options.env }),
      ...(options.upstream !== undefined && { upstream: options.upstream }),
    };
    try {
      const backend = await loadBackend(agent.backend, context);
      bySlug[agent.slug] = backend;
      made.push(backend);
    } catch (error) {
      await closeMade();
      const message = error instanceof Error ? error.message : String(error);
      throw new BackendSetupError(`agents[${index}].backend (${agent.slug}): ${message}`, { cause: error });
    }
  }
  return { bySlug, close: closeMade };
}

/** A backend could not be made at startup; the message names the agent. */
export class BackendSetupError extends AirlockError {
  readonly code = 'backend_setup_failed';
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
  }
}

/** A backend's log lines, as the gateway's structured JSON lines with the agent's slug. */
export function backendLog(logger: Logger, agent: string): BackendLog {
  return (level, event, fields) => {
    // The gateway's Logger has no debug level: those lines are for a backend's own tests.
    if (level !== 'debug') logger[level]({ event, agent, ...fields });
  };
}

export type { BackendContext };
