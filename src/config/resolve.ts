/**
 * The last step of loading a configuration, after the schema check: what a schema cannot say
 * (unique slugs and ids, references between sections, addresses, origins), the key material
 * read (TLS, JWT, signing keys, client tokens kept as digests) and the config assembled. No
 * TypeBox here: the serving process runs this step on what the check (in its own thread) gave.
 *
 * @example
 * ```ts
 * const config = resolveConfig(checkConfigDocument(document), process.env);
 * ```
 */
import ipaddr from 'ipaddr.js';
import { DEFAULT_MAX_TASKS, DEFAULT_TTL_MS } from '../tasks/stores/durable.js';
import type { TaskStoreSpec } from '../tasks/stores/index.js';
import { resolveApprovals, resolveClients } from './access.js';
import { DEFAULT_PUSH_SETTINGS, pushConfigProblem } from '../push/config.js';
import { telemetryConfigProblem } from '../telemetry/config.js';
import type { AirlockConfig } from './airlock-config.js';
import { checkBind, checkInsecureNetwork } from './bind.js';
import { extensionsConfigProblem } from './extensions.js';
import { ConfigError } from './errors.js';
import { loadJwt } from './jwt.js';
import type { AgentConfig, RawConfig, ScrubSecretConfig } from './schema.js';
import type { CheckedConfig } from './schema-check.js';
import { loadSigning } from './signing.js';
import { resolveMetrics } from './metrics.js';
import { hashToken, resolveToken } from './tokens.js';
import { loadTls, withClientCertificates } from './tls.js';
import { toolsConfigProblem, type ToolsConfig } from '../tools/config.js';

/**
 * Checks what the schema cannot, reads the key material and assembles the config.
 *
 * @example
 * ```ts
 * const config = resolveConfig(checked, process.env);
 * config.clients[0]?.tokenDigest; // SHA-256 of the token
 * ```
 * @throws ConfigError naming the key
 */
export function resolveConfig(raw: CheckedConfig, env: NodeJS.ProcessEnv = process.env): AirlockConfig {
  const { server, limits, content, audit } = raw;
  const store = withRetentionDefaults(raw.store);
  checkAgents(raw.agents, server.defaultAgent);
  const extensionsProblem = extensionsConfigProblem(raw.agents);
  if (extensionsProblem !== undefined) throw new ConfigError(extensionsProblem.key, extensionsProblem.problem);
  const toolsProblem = toolsConfigProblem(raw.tools, raw.agents);
  if (toolsProblem !== undefined) throw new ConfigError(toolsProblem.key, toolsProblem.problem);
  checkUpstreams(raw);
  checkTrustedProxies(server.trustedProxies);
  checkBind(server);
  checkInsecureNetwork(server);
  const tls = server.tls === undefined ? undefined : loadTls(server.tls);
  const clients = withClientCertificates(resolveClients(raw, env), raw, tls);
  const approvals = resolveApprovals(raw, clients, env);
  const jwt = raw.auth?.jwt === undefined ? undefined : loadJwt(raw.auth.jwt);
  const signing = raw.signing === undefined ? undefined : loadSigning(raw.signing, server.publicUrl);
  const push = raw.push ?? DEFAULT_PUSH_SETTINGS;
  const pushProblem = pushConfigProblem(push, server.allowNonLoopback);
  if (pushProblem !== undefined) throw new ConfigError(pushProblem.key, pushProblem.problem);
  const telemetryProblem = telemetryConfigProblem(raw.telemetry, env);
  if (telemetryProblem !== undefined) throw new ConfigError(telemetryProblem.key, telemetryProblem.problem);
  const metrics = resolveMetrics(raw.metrics, server.port, (source, key) =>
    hashToken(resolveToken({ ...source, generate: false }, env, key).value),
  );
  return {
    server: {
      host: server.host,
      port: server.port,
      basePath: server.basePath,
      maxBodyBytes: server.maxBodyBytes,
      allowNonLoopback: server.allowNonLoopback,
      allowInsecureNetwork: server.allowInsecureNetwork,
      ...(tls !== undefined && { tls }),
      trustedProxies: server.trustedProxies,
      allowedOrigins: server.allowedOrigins.map(normalizeOrigin),
      apiKeyHeader: server.apiKeyHeader,
      publicCard: server.publicCard,
      rest: server.rest,
      httpJson: server.httpJson,
      headersTimeoutMs: server.headersTimeoutMs,
      bodyTimeoutMs: server.bodyTimeoutMs,
      drainSeconds: server.drainSeconds,
      ...(server.publicUrl !== undefined && { publicUrl: server.publicUrl.replace(/\/+$/, '') }),
      ...(server.defaultAgent !== undefined && { defaultAgent: server.defaultAgent }),
      ...(server.instanceId !== undefined && { instanceId: server.instanceId }),
    },
    store,
    replicas: raw.replicas,
    ...(raw.redis !== undefined && { redis: raw.redis }),
    limits,
    ...(jwt !== undefined && { jwt }),
    scrubSecrets: [
      ...resolveScrubSecrets(content.scrubSecrets, env),
      ...backendSecrets(raw.agents),
      ...toolSecrets(raw.tools),
    ],
    audit,
    ...(raw.upstreams !== undefined && { upstreams: raw.upstreams }),
    ...(signing !== undefined && { signing }),
    ...(approvals !== undefined && { approvals }),
    ...(raw.tools !== undefined && { tools: raw.tools }),
    push,
    ...(metrics !== undefined && { metrics }),
    ...(raw.telemetry !== undefined && { telemetry: raw.telemetry }),
    agents: raw.agents,
    clients,
  };
}

/** Default retention of every store (the database stores' own defaults): 10 000 tasks, 60 minutes idle. */
const DEFAULT_TASK_TTL_MINUTES = DEFAULT_TTL_MS / 60_000;

function withRetentionDefaults(store: TaskStoreSpec): AirlockConfig['store'] {
  return {
    ...store,
    maxTasks: store.maxTasks ?? DEFAULT_MAX_TASKS,
    taskTtlMinutes: store.taskTtlMinutes ?? DEFAULT_TASK_TTL_MINUTES,
  };
}

/** An `a2a` backend names an entry of the upstream registry, so the registry must be configured. */
function checkUpstreams(raw: RawConfig): void {
  if (raw.upstreams !== undefined) return;
  const index = raw.agents.findIndex((agent) => agent.backend.type === 'a2a');
  if (index >= 0) {
    throw new ConfigError(
      `agents[${index}].backend`,
      'an a2a backend needs upstreams.registry (the registry file that lists the upstream agent)',
    );
  }
}

/**
 * Credentials the config gives backends (an OpenAI-compatible API key): never to leave in a
 * reply, whatever the model repeats. Values shorter than the scrubber's minimum are skipped.
 */
function backendSecrets(agents: readonly AgentConfig[]): string[] {
  const secrets: string[] = [];
  for (const agent of agents) {
    if (agent.backend.type === 'openai' && agent.backend.apiKey !== undefined && agent.backend.apiKey.length >= 8) {
      secrets.push(agent.backend.apiKey);
    }
  }
  return secrets;
}

/** Tool servers' bearer tokens (already interpolated): never to leave in a reply or a tool result. */
function toolSecrets(tools: ToolsConfig | undefined): string[] {
  const secrets: string[] = [];
  for (const [index, server] of (tools?.servers ?? []).entries()) {
    const token = server.http?.token;
    if (token === undefined) continue;
    if (!/^[\x21-\x7e]{8,8192}$/.test(token)) {
      throw new ConfigError(
        `tools.servers[${index}].http.token`,
        'the secret must be at least 8 printable ASCII characters without spaces (so an echo of it can be scrubbed)',
      );
    }
    secrets.push(token);
  }
  return secrets;
}

/**
 * An allowed origin as a browser serializes `Origin`: lower-case scheme and host, no default
 * port, no trailing slash (`http://LocalHost:80` → `http://localhost`). Anything with a path,
 * query or credentials was refused by the schema already.
 */
function normalizeOrigin(entry: string, index: number): string {
  try {
    return new URL(entry).origin;
  } catch {
    throw new ConfigError(`server.allowedOrigins[${index}]`, `"${entry}" is not an origin (scheme://host[:port])`);
  }
}

function checkTrustedProxies(entries: readonly string[]): void {
  entries.forEach((entry, index) => {
    const valid = entry.includes('/') ? ipaddr.isValidCIDR(entry) : ipaddr.isValid(entry);
    if (!valid)
      throw new ConfigError(`server.trustedProxies[${index}]`, `"${entry}" is not an IP address or CIDR range`);
  });
}

function resolveScrubSecrets(entries: readonly ScrubSecretConfig[], env: NodeJS.ProcessEnv): string[] {
  return entries.map((entry, index) => {
    if (typeof entry === 'string') return entry;
    const value = env[entry.env];
    if (value === undefined || value.length === 0) {
      throw new ConfigError(`content.scrubSecrets[${index}]`, `environment variable ${entry.env} is not set`);
    }
    if (value.length < 8) {
      throw new ConfigError(
        `content.scrubSecrets[${index}]`,
        `the value of ${entry.env} is shorter than 8 characters; such a value would match ordinary words`,
      );
    }
    return value;
  });
}

function checkAgents(agents: AgentConfig[], defaultAgent: string | undefined): void {
  const seen = new Set<string>();
  agents.forEach((agent, index) => {
    if (agent.allowTools && (agent.tools?.allow.length ?? 0) === 0) {
      throw new ConfigError(`agents[${index}].tools.allow`, 'allowTools needs a list of the tools this agent may use');
    }
    if (seen.has(agent.slug)) throw new ConfigError(`agents[${index}].slug`, `"${agent.slug}" is used twice`);
    seen.add(agent.slug);
    const skillIds = new Set<string>();
    agent.skills.forEach((skill, skillIndex) => {
      if (skillIds.has(skill.id)) {
        throw new ConfigError(`agents[${index}].skills[${skillIndex}].id`, `"${skill.id}" is used twice`);
      }
      skillIds.add(skill.id);
    });
  });
  if (defaultAgent !== undefined && !seen.has(defaultAgent)) {
    throw new ConfigError('server.defaultAgent', `no agent has slug "${defaultAgent}"`);
  }
}
