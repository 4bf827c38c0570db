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
import { readFileSync } from 'node:fs';
import { Compile } from 'typebox/compile';
import Value from 'typebox/value';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { ConfigError } from './errors.js';
import { interpolateEnv } from './interpolate.js';
import { ConfigSchema, type AgentConfig, type RawConfig, ServerSchema, StoreSchema } from './schema.js';
import { hashToken, resolveToken, type ResolvedToken } from './tokens.js';

export interface ClientEntry {
  id: string;
  /** SHA-256 of the token. */
  tokenDigest: Buffer;
  agents: ReadonlySet<string>;
  tokenOrigin: ResolvedToken['origin'];
}

export interface AirlockConfig {
  server: {
    host: string;
    port: number;
    publicUrl?: string;
    basePath: string;
    defaultAgent?: string;
    maxBodyBytes: number;
  };
  store: { type: 'memory'; maxTasks: number; taskTtlMinutes: number };
  agents: AgentConfig[];
  clients: ClientEntry[];
}

const validator = Compile(ConfigSchema);
const MAX_CONFIG_BYTES = 4 * 1024 * 1024;

export function loadConfigFile(path: string, env: NodeJS.ProcessEnv = process.env): AirlockConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : 'cannot be read';
    throw new ConfigError('', `config: ${path}: ${reason}`);
  }
  if (text.length > MAX_CONFIG_BYTES) throw new ConfigError('', `config: ${path}: larger than 4 MiB`);
  return parseConfig(text, env, path);
}

export function parseConfig(text: string, env: NodeJS.ProcessEnv = process.env, source = 'inline'): AirlockConfig {
  let document: unknown;
  try {
    // Duplicate keys are an error (yaml's default); a small alias budget stops alias bombs.
    document = parseYaml(text, { uniqueKeys: true, maxAliasCount: 100, prettyErrors: false });
  } catch (error) {
    if (error instanceof YAMLParseError) {
      const line = lineOf(text, error.pos[0]);
      throw new ConfigError(
        '',
        `config: ${source}${line !== undefined ? ` line ${line}` : ''}: ${error.message.split('\n')[0]}`,
      );
    }
    throw error;
  }
  if (document === null || typeof document !== 'object' || Array.isArray(document)) {
    throw new ConfigError('', `config: ${source}: expected a mapping at the top level`);
  }
  const interpolated = interpolateEnv(document, env) as Record<string, unknown>;
  interpolated.server ??= {};
  interpolated.store ??= {};
  const withDefaults = Value.Default(ConfigSchema, interpolated);
  if (!validator.Check(withDefaults)) throw firstSchemaError(withDefaults);
  const raw = withDefaults;
  const server = raw.server ?? (Value.Default(ServerSchema, {}) as NonNullable<RawConfig['server']>);
  const store = raw.store ?? (Value.Default(StoreSchema, {}) as NonNullable<RawConfig['store']>);
  checkAgents(raw.agents, server.defaultAgent);
  const clients = resolveClients(raw, env);
  return {
    server: {
      host: server.host,
      port: server.port,
      basePath: server.basePath,
      maxBodyBytes: server.maxBodyBytes,
      ...(server.publicUrl !== undefined && { publicUrl: server.publicUrl.replace(/\/+$/, '') }),
      ...(server.defaultAgent !== undefined && { defaultAgent: server.defaultAgent }),
    },
    store: { type: store.type, maxTasks: store.maxTasks, taskTtlMinutes: store.taskTtlMinutes },
    agents: raw.agents,
    clients,
  };
}

function firstSchemaError(value: unknown): ConfigError {
  const errors = [...validator.Errors(value)];
  // Prefer the deepest error: a union's mismatch says less than the field inside it.
  errors.sort((a, b) => b.instancePath.length - a.instancePath.length);
  const error = errors[0];
  if (error === undefined) return new ConfigError('', 'invalid configuration');
  // `additionalProperties: false` reports the extra key itself as failing a `false` schema.
  if (error.keyword === 'boolean') return new ConfigError(pointerToKey(error.instancePath), 'is not a known setting');
  const extra = (error.params as { additionalProperties?: string[] }).additionalProperties;
  if (extra !== undefined && extra.length > 0) {
    return new ConfigError(pointerToKey(`${error.instancePath}/${extra[0]}`), 'is not a known setting');
  }
  return new ConfigError(pointerToKey(error.instancePath), error.message);
}

/** 1-based line number of a character offset. */
function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line += 1;
  return line;
}

/** `/agents/0/slug` → `agents[0].slug`. */
export function pointerToKey(pointer: string): string {
  let out = '';
  for (const segment of pointer.split('/').slice(1)) {
    const key = segment.replace(/~1/g, '/').replace(/~0/g, '~');
    out += /^\d+$/.test(key) ? `[${key}]` : out.length > 0 ? `.${key}` : key;
  }
  return out;
}

function checkAgents(agents: AgentConfig[], defaultAgent: string | undefined): void {
  const seen = new Set<string>();
  agents.forEach((agent, index) => {
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

function resolveClients(raw: RawConfig, env: NodeJS.ProcessEnv): ClientEntry[] {
  const slugs = new Set(raw.agents.map((agent) => agent.slug));
  const ids = new Set<string>();
  const digests = new Map<string, string>();
  return raw.clients.map((client, index) => {
    const key = `clients[${index}]`;
    if (ids.has(client.id)) throw new ConfigError(`${key}.id`, `"${client.id}" is used twice`);
    ids.add(client.id);
    client.agents.forEach((slug, agentIndex) => {
      if (!slugs.has(slug)) throw new ConfigError(`${key}.agents[${agentIndex}]`, `no agent has slug "${slug}"`);
    });
    const token = resolveToken(client.token, env, `${key}.token`);
    const digest = hashToken(token.value);
    const hex = digest.toString('hex');
    const other = digests.get(hex);
    if (other !== undefined) {
      throw new ConfigError(`${key}.token`, `clients "${other}" and "${client.id}" share a token; give each its own`);
    }
    digests.set(hex, client.id);
    return { id: client.id, tokenDigest: digest, agents: new Set(client.agents), tokenOrigin: token.origin };
  });
}
