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
import { createPublicKey } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { Compile } from 'typebox/compile';
import Value from 'typebox/value';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { ConfigError } from './errors.js';
import { interpolateEnv } from './interpolate.js';
import ipaddr from 'ipaddr.js';
import { isOutboundError } from '../net/errors.js';
import { checkOutboundUrl } from '../net/url-policy.js';
import {
  SigningKeyError,
  importKeySet,
  importSigningKey,
  parseKeyDocument,
  type PublicJwk,
  type SigningKey,
} from '../trust/signing/index.js';
import {
  AuditSchema,
  ConfigSchema,
  ContentSchema,
  LimitsSchema,
  ServerSchema,
  type AgentConfig,
  type AuditConfig,
  type JwtConfig,
  type LimitsConfig,
  type RawConfig,
  type ScrubSecretConfig,
  type SigningConfig,
} from './schema.js';
import { hashToken, resolveToken, type ResolvedToken } from './tokens.js';
import { DEFAULT_MAX_TASKS, DEFAULT_TTL_MS } from '../tasks/stores/durable.js';
import type { TaskStoreSpec } from '../tasks/stores/index.js';

export interface ClientEntry {
  id: string;
  /** SHA-256 of the token. */
  tokenDigest: Buffer;
  agents: ReadonlySet<string>;
  tokenOrigin: ResolvedToken['origin'];
  /** The person who decides this client's guarded actions (`approvals.people` id). */
  owner?: string;
}

/** A person who signs in to decide guarded actions (`approvals.people`). */
export interface PersonEntry {
  id: string;
  /** SHA-256 of the person's own token. */
  tokenDigest: Buffer;
}

/** Human approvals as loaded (`approvals`); absent when the section is not in the config. */
export interface ApprovalsSettings {
  ttlMs: number;
  serviceMaxLevel: 'L1' | 'L2';
  maxPending: number;
  console: boolean;
  people: PersonEntry[];
}

export interface AirlockConfig {
  server: {
    host: string;
    port: number;
    publicUrl?: string;
    basePath: string;
    defaultAgent?: string;
    maxBodyBytes: number;
    allowNonLoopback: boolean;
    /** IPs or CIDRs, each checked to parse at load. */
    trustedProxies: string[];
    apiKeyHeader: boolean;
    publicCard: boolean;
    rest: boolean;
    headersTimeoutMs: number;
    bodyTimeoutMs: number;
  };
  /** Retention defaults applied; `DATABASE_URL` and `--data` are weighed at serve time (resolveTaskStoreSpec). */
  store: TaskStoreSpec & { maxTasks: number; taskTtlMinutes: number };
  /** Processes serving this config; above 1 a shared store is required. */
  replicas: number;
  redis?: { url: string };
  limits: LimitsConfig;
  /** JWT bearer verification, when configured; its key material is read at load. */
  jwt?: JwtSettings;
  /**
   * Values never to leave in a reply (a backend's own credentials, say). Client tokens are not
   * listed: Airlock keeps only their digests and no backend ever sees one.
   */
  scrubSecrets: string[];
  audit: AuditConfig;
  /** The outbound registry that `a2a` backends relay to; required when one is configured. */
  upstreams?: { registry: string; pins: string };
  /** Card signing, when configured: its keys are read and checked at load. */
  signing?: SigningSettings;
  /** Human approvals of guarded actions, when configured. */
  approvals?: ApprovalsSettings;
  agents: AgentConfig[];
  clients: ClientEntry[];
}

/**
 * Where JWT verification keys come from: a JSON Web Key Set (from `jwksFile`), a PEM SPKI public
 * key (from `publicKeyFile`), or a JWKS fetched from `jwksUrl` at start and every
 * `refreshSeconds` through the guarded outbound client.
 */
export type JwtKeys =
  | { kind: 'jwks'; jwks: { keys: Record<string, unknown>[] } }
  | { kind: 'pem'; pem: string }
  | { kind: 'url'; url: string; refreshSeconds: number; privateNetwork: boolean };

export interface JwtSettings extends Omit<
  JwtConfig,
  'jwksFile' | 'publicKeyFile' | 'jwksUrl' | 'jwksRefreshSeconds' | 'jwksPrivateNetwork'
> {
  keys: JwtKeys;
}

/**
 * Card signing as loaded: the private keys (each signs every served card, in this order), the
 * JWK Set `/.well-known/jwks.json` serves (public keys only, holding every signing key), and
 * the `jku` put in each signature header, if any.
 *
 * @example
 * ```ts
 * const { keys, jwks, jku } = config.signing!;
 * signCard(wireCard, keys, { ...(jku !== undefined && { jku }) });
 * ```
 */
export interface SigningSettings {
  keys: SigningKey[];
  jwks: { keys: PublicJwk[] };
  jku?: string;
}

/** Default for `auth.jwt.jwksRefreshSeconds`. */
export const DEFAULT_JWKS_REFRESH_SECONDS = 600;

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
  checkUpstreams(raw);
  checkTrustedProxies(server.trustedProxies);
  const clients = resolveClients(raw, env);
  const approvals = resolveApprovals(raw, clients, env);
  const jwt = raw.auth?.jwt === undefined ? undefined : loadJwt(raw.auth.jwt);
  const signing = raw.signing === undefined ? undefined : loadSigning(raw.signing, server.publicUrl);
  return {
    server: {
      host: server.host,
      port: server.port,
      basePath: server.basePath,
      maxBodyBytes: server.maxBodyBytes,
      allowNonLoopback: server.allowNonLoopback,
      trustedProxies: server.trustedProxies,
      apiKeyHeader: server.apiKeyHeader,
      publicCard: server.publicCard,
      rest: server.rest,
      headersTimeoutMs: server.headersTimeoutMs,
      bodyTimeoutMs: server.bodyTimeoutMs,
      ...(server.publicUrl !== undefined && { publicUrl: server.publicUrl.replace(/\/+$/, '') }),
      ...(server.defaultAgent !== undefined && { defaultAgent: server.defaultAgent }),
    },
    store,
    replicas: raw.replicas,
    ...(raw.redis !== undefined && { redis: raw.redis }),
    limits,
    ...(jwt !== undefined && { jwt }),
    scrubSecrets: [...resolveScrubSecrets(content.scrubSecrets, env), ...backendSecrets(raw.agents)],
    audit,
    ...(raw.upstreams !== undefined && { upstreams: raw.upstreams }),
    ...(signing !== undefined && { signing }),
    ...(approvals !== undefined && { approvals }),
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

function loadJwt(config: JwtConfig): JwtSettings {
  const { jwksFile, publicKeyFile, jwksUrl, jwksRefreshSeconds, jwksPrivateNetwork, ...rest } = config;
  const sources = [jwksFile, publicKeyFile, jwksUrl].filter((source) => source !== undefined).length;
  if (sources !== 1) {
    throw new ConfigError('auth.jwt', 'set exactly one of jwksFile or publicKeyFile or jwksUrl');
  }
  if (jwksUrl === undefined) {
    if (jwksRefreshSeconds !== undefined)
      throw new ConfigError('auth.jwt.jwksRefreshSeconds', 'applies only with jwksUrl');
    if (jwksPrivateNetwork !== undefined)
      throw new ConfigError('auth.jwt.jwksPrivateNetwork', 'applies only with jwksUrl');
  } else {
    checkJwksUrl(jwksUrl);
    return {
      ...rest,
      keys: {
        kind: 'url',
        url: jwksUrl,
        refreshSeconds: jwksRefreshSeconds ?? DEFAULT_JWKS_REFRESH_SECONDS,
        privateNetwork: jwksPrivateNetwork ?? false,
      },
    };
  }
  if (jwksFile !== undefined) {
    const key = 'auth.jwt.jwksFile';
    let jwks: unknown;
    try {
      jwks = JSON.parse(readSmallFile(jwksFile, key));
    } catch (error) {
      if (error instanceof ConfigError) throw error;
      throw new ConfigError(key, `${jwksFile} is not JSON`);
    }
    const keys = (jwks as { keys?: unknown } | null)?.keys;
    if (!Array.isArray(keys) || keys.length === 0 || !keys.every((k) => typeof k === 'object' && k !== null)) {
      throw new ConfigError(key, `${jwksFile} is not a JWKS (an object with a non-empty "keys" array)`);
    }
    return { ...rest, keys: { kind: 'jwks', jwks: { keys: keys as Record<string, unknown>[] } } };
  }
  const key = 'auth.jwt.publicKeyFile';
  const pem = readSmallFile(publicKeyFile as string, key);
  if (!pem.includes('-----BEGIN PUBLIC KEY-----')) {
    throw new ConfigError(key, `${publicKeyFile as string} is not a PEM public key (BEGIN PUBLIC KEY)`);
  }
  return { ...rest, keys: { kind: 'pem', pem } };
}

/**
 * The JWKS URL must be https, or plain http to a loopback host written as such, with no
 * credentials: the same URL policy the guarded client applies, checked here so that a bad URL
 * fails at load. Whether the address is reachable (private network, allowlist) is the client's
 * decision at fetch time. Messages name the origin at most, never the path or query.
 */
function checkJwksUrl(url: string): void {
  try {
    checkOutboundUrl(url, { privateNetwork: true, privateAllow: [], proxyConfigured: false });
  } catch (error) {
    if (isOutboundError(error, 'insecure_url', 'url_has_credentials')) {
      throw new ConfigError('auth.jwt.jwksUrl', error.message);
    }
    // address_blocked and the like depend on AIRLOCK_PRIVATE_ALLOW: judged when fetching.
  }
}

/** Private key and JWK Set files are a few kilobytes. */
const MAX_KEY_FILE_BYTES = 1024 * 1024;

/**
 * Reads the signing keys, the served JWK Set and the `jku` (see `SigningSettings`). Every
 * problem is a `ConfigError` naming the key: a private key file others may read, a key that
 * does not import or sign, two keys with one `kid`, a `jwksFile` with private material or
 * without one of the signing keys, `jku: true` without an https `server.publicUrl`.
 */
function loadSigning(config: SigningConfig, publicUrl: string | undefined): SigningSettings {
  const keys = config.keys.map((entry, index) => {
    const key = `signing.keys[${index}].file`;
    const bytes = readKeyFile(entry.file, key, true);
    return asConfigError(key, () => importSigningKey(parseKeyDocument(bytes, entry.file), entry.file));
  });
  const kids = new Set<string>();
  keys.forEach((signer, index) => {
    if (kids.has(signer.kid)) {
      throw new ConfigError(
        `signing.keys[${index}].file`,
        `a second key with the kid "${signer.kid}"; list each key once`,
      );
    }
    kids.add(signer.kid);
  });
  let jwks: { keys: PublicJwk[] };
  if (config.jwksFile === undefined) {
    jwks = { keys: keys.map((signer) => ({ ...signer.publicJwk })) };
  } else {
    const key = 'signing.jwksFile';
    const path = config.jwksFile;
    const served = asConfigError(key, () => importKeySet(parseKeyDocument(readKeyFile(path, key, false), path), path));
    for (const signer of keys) {
      const published = served.get(signer.kid);
      // Verifiers look keys up by kid in this set: a signing key missing from it (or a different
      // key under its kid) would make every card's signature fail for everyone.
      if (published === undefined) {
        throw new ConfigError(key, `${path} lacks the signing key "${signer.kid}"; add its public JWK`);
      }
      if (!published.publicKey.equals(createPublicKey(signer.privateKey))) {
        throw new ConfigError(key, `${path} holds a different key under the signing key's kid "${signer.kid}"`);
      }
      if (!published.algorithms.includes(signer.alg)) {
        throw new ConfigError(key, `${path} limits the key "${signer.kid}" to another algorithm than ${signer.alg}`);
      }
    }
    jwks = served.toJwks();
  }
  const jku = jkuFrom(config.jku, publicUrl);
  return { keys, jwks, ...(jku !== undefined && { jku }) };
}

function jkuFrom(setting: SigningConfig['jku'], publicUrl: string | undefined): string | undefined {
  if (setting === undefined || setting === false) return undefined;
  if (typeof setting === 'string') {
    let url: URL | undefined;
    try {
      url = new URL(setting);
    } catch {
      url = undefined;
    }
    if (url?.protocol !== 'https:' || /\s/.test(setting) || url.username !== '' || url.password !== '') {
      throw new ConfigError('signing.jku', 'must be true, false or an https URL (without credentials)');
    }
    return url.href;
  }
  // Only the operator's public URL can say where the gateway is reached from outside: the
  // listening address is loopback, and a Host header is the caller's word.
  if (publicUrl === undefined) {
    throw new ConfigError(
      'signing.jku',
      'true needs server.publicUrl (the jku names the gateway as others reach it); or give the URL itself',
    );
  }
  if (!publicUrl.startsWith('https://')) {
    throw new ConfigError(
      'signing.jku',
      'true needs an https server.publicUrl: a key set URL over plain http could be swapped in transit',
    );
  }
  return `${publicUrl.replace(/\/+$/, '')}/.well-known/jwks.json`;
}

/**
 * A key file's bytes. With `secret`, the file must be readable by its owner only (as ssh insists
 * for private keys): a signing key others can read is a key others can sign with.
 */
function readKeyFile(path: string, key: string, secret: boolean): Buffer {
  let mode: number;
  let size: number;
  try {
    const stats = statSync(path);
    if (!stats.isFile()) throw new ConfigError(key, `${path} is not a file`);
    mode = stats.mode;
    size = stats.size;
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : 'cannot be read';
    throw new ConfigError(key, `${path}: ${reason}`);
  }
  // Windows has no POSIX modes (Node reports 0666 for any writable file): ACLs guard keys there.
  if (secret && process.platform !== 'win32' && (mode & 0o077) !== 0) {
    const shown = (mode & 0o777).toString(8).padStart(4, '0');
    throw new ConfigError(
      key,
      `${path} is accessible by group or others (mode ${shown}); a private key must be readable by its owner only: chmod 600 ${path}`,
    );
  }
  if (size > MAX_KEY_FILE_BYTES) throw new ConfigError(key, `${path}: larger than 1 MiB`);
  try {
    return readFileSync(path);
  } catch {
    throw new ConfigError(key, `${path}: cannot be read`);
  }
}

/** A `SigningKeyError` (its message names the file and the problem) as a `ConfigError` on `key`. */
function asConfigError<T>(key: string, build: () => T): T {
  try {
    return build();
  } catch (error) {
    if (error instanceof SigningKeyError) throw new ConfigError(key, error.message);
    throw error;
  }
}

function readSmallFile(path: string, key: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : 'cannot be read';
    throw new ConfigError(key, `${path}: ${reason}`);
  }
  if (text.length > 1024 * 1024) throw new ConfigError(key, `${path}: larger than 1 MiB`);
  return text;
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
    return {
      id: client.id,
      tokenDigest: digest,
      agents: new Set(client.agents),
      tokenOrigin: token.origin,
      ...(client.owner !== undefined && { owner: client.owner }),
    };
  });
}

/**
 * The approvals section: people's tokens hashed (each distinct from every client token, so no
 * caller can decide and no person can call), and every client owner a configured person.
 */
function resolveApprovals(
  raw: RawConfig,
  clients: readonly ClientEntry[],
  env: NodeJS.ProcessEnv,
): ApprovalsSettings | undefined {
  const section = raw.approvals;
  if (section === undefined) {
    const owned = raw.clients.findIndex((client) => client.owner !== undefined);
    if (owned !== -1) {
      throw new ConfigError(`clients[${owned}].owner`, 'an owner decides guarded actions: add an approvals section');
    }
    const acting = raw.agents.findIndex((agent) => agent.actions !== undefined && agent.actions.maxLevel >= 'L3');
    if (acting !== -1) {
      throw new ConfigError(
        `agents[${acting}].actions.maxLevel`,
        'acting levels (L3, L4) need a person to approve each action: add an approvals section',
      );
    }
    return undefined;
  }
  const clientDigests = new Set(clients.map((client) => client.tokenDigest.toString('hex')));
  const ids = new Set<string>();
  const digests = new Set<string>();
  const people = section.people.map((person, index) => {
    const key = `approvals.people[${index}]`;
    if (ids.has(person.id)) throw new ConfigError(`${key}.id`, `"${person.id}" is used twice`);
    ids.add(person.id);
    const token = resolveToken(person.token, env, `${key}.token`);
    const digest = hashToken(token.value);
    const hex = digest.toString('hex');
    if (clientDigests.has(hex)) {
      throw new ConfigError(`${key}.token`, `person "${person.id}" uses a client's token; a person needs their own`);
    }
    if (digests.has(hex)) throw new ConfigError(`${key}.token`, `two people share a token; give each their own`);
    digests.add(hex);
    return { id: person.id, tokenDigest: digest };
  });
  raw.clients.forEach((client, index) => {
    if (client.owner !== undefined && !ids.has(client.owner)) {
      throw new ConfigError(`clients[${index}].owner`, `no person in approvals.people has id "${client.owner}"`);
    }
  });
  return {
    ttlMs: Math.round(section.ttlMinutes * 60_000),
    serviceMaxLevel: section.serviceMaxLevel,
    maxPending: section.maxPending,
    console: section.console,
    people,
  };
}
