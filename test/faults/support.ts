/**
 * Shared by the fault suites (test/faults/*.test.ts): a real gateway on loopback built the way
 * `airlock serve` builds it (`prepareBackends`, then `createGateway`) but with a logger that keeps
 * every line, so a test can check what reached the log and what did not reach the caller; and
 * small process helpers (is a pid still alive, wait for a pid file).
 */
import { readFileSync } from 'node:fs';
import type { AgentBackend } from '../../src/agents/backend.js';
import type { AuditSink } from '../../src/audit/index.js';
import { parseConfig, type AirlockConfig } from '../../src/config/load.js';
import { prepareBackends } from '../../src/server/backends.js';
import { createGateway, type Gateway } from '../../src/server/http.js';
import type { Logger } from '../../src/server/log.js';
import { createUpstreams } from '../../src/server/upstreams.js';
import type { TaskStore } from '../../src/tasks/store.js';
import { eventually, TOKEN_A, TOKEN_B, TOKEN_C } from '../helpers/gateway.js';

/** One log line as the gateway wrote it, with its level. */
export type LogLine = Record<string, unknown> & { level: 'info' | 'warn' | 'error' };

export interface CapturingLogger extends Logger {
  readonly lines: LogLine[];
  /** The lines whose `event` is `name`. */
  events(name: string): LogLine[];
  /** Everything logged, as one string (to look for a value anywhere). */
  text(): string;
}

export function capturingLogger(): CapturingLogger {
  const lines: LogLine[] = [];
  return {
    lines,
    info: (fields) => void lines.push({ ...fields, level: 'info' }),
    warn: (fields) => void lines.push({ ...fields, level: 'warn' }),
    error: (fields) => void lines.push({ ...fields, level: 'error' }),
    events: (name) => lines.filter((line) => line.event === name),
    text: () => JSON.stringify(lines),
  };
}

export interface FaultGateway {
  url: string;
  gateway: Gateway;
  config: AirlockConfig;
  logger: CapturingLogger;
  /** The JSON-RPC endpoint of one agent. */
  agent(slug: string): string;
  close(): Promise<void>;
}

/**
 * Parses `yaml` (with the three test tokens and `env`), makes every backend as `airlock serve`
 * does (`given` ones used as they are; `a2a` ones through `createUpstreams` when the config has
 * `upstreams`, with `env` as the connector's environment), and listens on a loopback port.
 */
export async function startFaultGateway(
  yaml: string,
  options: {
    env?: Record<string, string>;
    given?: Readonly<Record<string, AgentBackend>>;
    store?: TaskStore;
    auditSink?: AuditSink;
  } = {},
): Promise<FaultGateway> {
  const config = parseConfig(yaml, { TOKEN_A, TOKEN_B, TOKEN_C, ...options.env });
  const logger = capturingLogger();
  // As `airlock serve` does: the upstream connector when the config names a registry.
  const upstreams =
    config.upstreams === undefined
      ? undefined
      : await createUpstreams(config.upstreams, { logger, env: options.env ?? {} });
  const backends = await prepareBackends(config, {
    logger,
    ...(options.given !== undefined && { given: options.given }),
    ...(upstreams !== undefined && { upstream: upstreams.backendFor }),
  });
  const gateway = createGateway(config, {
    logger,
    backends: backends.bySlug,
    ...(options.store !== undefined && { store: options.store }),
    ...(options.auditSink !== undefined && { auditSink: options.auditSink }),
  });
  const url = await gateway.listen();
  return {
    url,
    gateway,
    config,
    logger,
    agent: (slug) => `${url}/a2a/${slug}`,
    close: async () => {
      await gateway.close();
      await backends.close();
      await upstreams?.close();
    },
  };
}

/** One agent entry of a gateway config, in YAML, with `backend` written inline. */
export function agentYaml(slug: string, backend: string): string {
  return `
  - slug: ${slug}
    name: ${slug}
    description: An agent that misbehaves on purpose.
    skills: [{ id: ${slug}, name: ${slug}, description: Misbehaves, tags: [test] }]
    backend: ${backend}`;
}

/** A gateway config with these agents, all callable by client `a`. */
export function gatewayYaml(agents: Record<string, string>, extra = ''): string {
  const slugs = Object.keys(agents);
  return `
server: { host: 127.0.0.1, port: 0, defaultAgent: ${slugs[0]} }
agents:${slugs.map((slug) => agentYaml(slug, agents[slug]!)).join('')}
clients:
  - { id: a, token: "\${TOKEN_A}", agents: [${slugs.join(', ')}] }
${extra}`;
}

/** True while `pid` runs; a zombie (where init does not reap orphans) counts as gone. */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).charAt(0) !== 'Z';
  } catch {
    return true;
  }
}

/** The pid a program wrote to `path`, once the file holds one. */
export async function pidFrom(path: string, timeoutMs = 5_000): Promise<number> {
  let pid = 0;
  await eventually(
    () => {
      try {
        pid = Number(readFileSync(path, 'utf8').trim());
      } catch {
        return false;
      }
      return Number.isInteger(pid) && pid > 0;
    },
    timeoutMs,
    `a pid in ${path}`,
  );
  return pid;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A bound for one `it`: generous against a loaded CI machine, small enough to catch a hang. */
export const BOUNDED = { timeout: 15_000 };
