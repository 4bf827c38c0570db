/**
 * Loads, interpolates and validates a configuration file. Every problem is reported as a
 * `ConfigError` naming the key, before the server binds a port.
 *
 * @example
 * ```ts
 * const config = loadConfigFile('examples/demo.yaml', process.env);
 * console.log(config.agents.map((agent) => agent.slug));
 * ```
 */
import { Compile } from 'typebox/compile';
import Value from 'typebox/value';
import ipaddr from 'ipaddr.js';
import { DEFAULT_MAX_TASKS, DEFAULT_TTL_MS } from '../tasks/stores/durable.js';
import type { TaskStoreSpec } from '../tasks/stores/index.js';
import { resolveApprovals, resolveClients } from './access.js';
import { DEFAULT_PUSH_SETTINGS, pushConfigProblem } from '../push/config.js';
import { telemetryConfigProblem } from '../telemetry/config.js';
import type { AirlockConfig } from './airlock-config.js';
import { checkBind, checkInsecureNetwork } from './bind.js';
import { firstSchemaProblem, pointerToKey } from './check.js';
import { extensionsConfigProblem } from './extensions.js';
import { ConfigError } from './errors.js';
import { interpolateEnv } from './interpolate.js';
import { loadJwt } from './jwt.js';
import {
  AuditSchema,
  ConfigSchema,
  ContentSchema,
  LimitsSchema,
  ServerSchema,
  type AgentConfig,
  type AuditConfig,
  type LimitsConfig,
  type RawConfig,
  type ScrubSecretConfig,
} from './schema.js';
import { loadSigning } from './signing.js';
import { resolveMetrics } from './metrics.js';
import { hashToken, resolveToken } from './tokens.js';
import { loadTls, withClientCertificates } from './tls.js';
import { rawTokenProblem, toolsConfigProblem, type ToolsConfig } from '../tools/config.js';
import { parseYamlDocument, readSourceFile, SourceFileError, YamlSyntaxError } from './yaml.js';

export type {
  AirlockConfig,
  ApprovalsSettings,
  ClientCertificate,
  ClientEntry,
  JwtKeys,
  JwtSettings,
  JwtPersonRule,
  PersonEntry,
  SigningSettings,
  TlsSettings,
} from './airlock-config.js';
export { DEFAULT_JWKS_REFRESH_SECONDS, DEFAULT_LEASE_SECONDS } from './airlock-config.js';
export { pointerToKey } from './check.js';
export { checkBind, checkInsecureNetwork, isLoopbackBind } from './bind.js';
export { normalizeSubject, readTlsMaterial, type TlsMaterial } from './tls.js';

const validator = Compile(ConfigSchema);
const MAX_CONFIG_BYTES = 4 * 1024 * 1024;

/**
 * Reads and loads a configuration file (see {@link parseConfig}).
 *
 * @example
 * ```ts
 * const config = loadConfigFile('examples/demo.yaml', process.env);
 * ```
 * @throws ConfigError
 */
export function loadConfigFile(path: string, env: NodeJS.ProcessEnv = process.env): AirlockConfig {
  let text: string;
  try {
    text = readSourceFile(path, MAX_CONFIG_BYTES, '4 MiB');
  } catch (error) {
    if (error instanceof SourceFileError) throw new ConfigError('', `config: ${error.message}`);
    throw error;
  }
  return parseConfig(text, env, path);
}

/**
 * Parses, interpolates (`${VAR}`) and validates configuration YAML, then checks what a schema
 * cannot (unique slugs and ids, references between sections) and reads the key material.
 *
 * @example
 * ```ts
 * const config = parseConfig('agents: []\nclients: []\n', process.env);
 * ```
 * @throws ConfigError naming the key
 */
export function parseConfig(text: string, env: NodeJS.ProcessEnv = process.env, source = 'inline'): AirlockConfig {
  let document: unknown;
  try {
    document = parseYamlDocument(text);
  } catch (error) {
    if (error instanceof YamlSyntaxError)
      throw new ConfigError('', `config: ${source} line ${error.line}: ${error.reason}`);
    throw error;
  }
  if (document === null || typeof document !== 'object' || Array.isArray(document)) {
    throw new ConfigError('', `config: ${source}: expected a mapping at the top level`);
  }
  // A tool server's token must name an AIRLOCK_SECRET_ variable: judged before interpolation.
  const tokenProblem = rawTokenProblem(document as Record<string, unknown>);
  if (tokenProblem !== undefined) throw new ConfigError(tokenProblem.key, tokenProblem.problem);
  const interpolated = interpolateEnv(document, env) as Record<string, unknown>;
  interpolated.server ??= {};
  interpolated.store ??= {};
  // `type` may be left out: memory. (Defaults are not applied through a union.)
  const storeSection = interpolated.store as Record<string, unknown> | null;
  if (storeSection !== null && typeof storeSection === 'object' && storeSection.type === undefined) {
    storeSection.type = 'memory';
  }
  const withDefaults = Value.Default(ConfigSchema, interpolated);
  if (!validator.Check(withDefaults)) throw firstSchemaError(withDefaults);
  const raw = withDefaults;
  const server = raw.server ?? (Value.Default(ServerSchema, {}) as NonNullable<RawConfig['server']>);
  const store = withRetentionDefaults(raw.store ?? { type: 'memory' });
  const limits = raw.limits ?? (Value.Default(LimitsSchema, {}) as LimitsConfig);
  const content = raw.content ?? (Value.Default(ContentSchema, {}) as NonNullable<RawConfig['content']>);
  const audit = raw.audit ?? (Value.Default(AuditSchema, {}) as AuditConfig);
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

function firstSchemaError(value: unknown): ConfigError {
  const problem = firstSchemaProblem(validator, value, { schema: ConfigSchema });
  if (problem === undefined) return new ConfigError('', 'invalid configuration');
  return new ConfigError(pointerToKey(problem.pointer), problem.problem);
}
