/**
 * What a reload would change: the config keys that differ between the running configuration
 * and a newly loaded one, and which of them cannot apply to a running gateway (they need a
 * restart). Pure: no I/O, no clock; the key names it returns never carry a value (a client id
 * or an agent slug names the entry, as in the config file).
 *
 * @example
 * ```ts
 * const diff = diffConfigs(running, loadConfigFile(path), { sharedLimits: false });
 * if (diff.restart.length > 0) refuse(`these keys need a restart: ${diff.restart.join(', ')}`);
 * ```
 */
import { isDeepStrictEqual } from 'node:util';
import type { AirlockConfig } from '../../config/load.js';

/**
 * What the running gateway is besides its config: with limits shared by replicas (Redis or
 * PostgreSQL), the rate, lockout and in-flight caps live in the shared limiter and do not change
 * live.
 *
 * @example
 * ```ts
 * const context: ReloadContext = { sharedLimits: false };
 * ```
 */
export interface ReloadContext {
  sharedLimits: boolean;
}

/**
 * The outcome of comparing two configurations: every changed key (sorted), and those of them
 * that need a restart. Nothing changed when `changed` is empty.
 *
 * @example
 * ```ts
 * const diff: ConfigDiff = { changed: ['clients[b]', 'server.port'], restart: ['server.port'] };
 * ```
 */
export interface ConfigDiff {
  changed: string[];
  restart: string[];
}

/** Limits read per request by a step the reload rebuilds (or a limiter it resizes in place). */
const LIVE_LIMITS = new Set(['maxParts', 'maxInputChars', 'maxMetadataBytes', 'maxMetadataKeys', 'maxMetadataDepth']);
/** Limits this process keeps itself unless replicas share them (`createSharedLimits`). */
const LOCAL_LIMITS = new Set([
  'requestsPerMinute',
  'authFailuresPerMinute',
  'maxConcurrentTasks',
  'maxConcurrentTasksPerPrincipal',
]);

/**
 * Compares the running configuration with a newly loaded one. Keys are named as in the config
 * file (`auth.jwt.issuer`, `content.scrubSecrets`, `clients[b].token`, `agents[echo].backend`);
 * entries of `clients` and `agents` are named by id and slug, so an added or removed entry is
 * one key (`clients[b]`).
 *
 * Live: clients (added, removed, their tokens, agent allow lists and certificates), `auth.jwt` settings
 * (not adding or removing the section; the issuer only without approvals), the limits in
 * `LIVE_LIMITS` and, without shared limits, the rate, lockout and in-flight caps, and each
 * agent's `allowTools` and `tools`. Everything else needs a restart.
 *
 * @example
 * ```ts
 * diffConfigs(running, next, { sharedLimits: false }).restart; // ['server.port']
 * ```
 */
export function diffConfigs(current: AirlockConfig, next: AirlockConfig, context: ReloadContext): ConfigDiff {
  const changed: string[] = [];
  walk(comparable(current), comparable(next), '', changed);
  // A new client with an owner needs the approvals desk's owner map, built at start.
  for (const client of next.clients) {
    const before = current.clients.some((entry) => entry.id === client.id);
    if (!before && client.owner !== undefined) changed.push(`clients[${client.id}].owner`);
  }
  const approvals = current.approvals !== undefined || next.approvals !== undefined;
  const keys = [...new Set(changed)].sort();
  return { changed: keys, restart: keys.filter((key) => !appliesLive(key, context, approvals)) };
}

/** Whether a changed key can apply to the running gateway. */
function appliesLive(key: string, context: ReloadContext, approvals: boolean): boolean {
  const client = /^clients\[[^\]]*\](?:\.(.+))?$/.exec(key);
  if (client !== null) return client[1] === undefined || /^(token|agents|certificate)(\.|$)/.test(client[1]);
  if (key.startsWith('auth.jwt.')) return !(approvals && key.startsWith('auth.jwt.issuer'));
  const limit = /^limits\.([A-Za-z]+)$/.exec(key);
  if (limit !== null) {
    const name = limit[1] as string;
    return LIVE_LIMITS.has(name) || (LOCAL_LIMITS.has(name) && !context.sharedLimits);
  }
  return /^agents\[[^\]]*\]\.(allowTools|tools)(\.|$)/.test(key);
}

/**
 * The configuration as the diff names it: file keys (`auth.jwt`, `content.scrubSecrets`,
 * `clients[].token`), without what does not change behaviour (where a token came from).
 */
function comparable(config: AirlockConfig): Record<string, unknown> {
  const { jwt, scrubSecrets, clients, ...rest } = config;
  // The certificate files' text: the TLS watcher reloads a rotated certificate by itself.
  const { tls } = config.server;
  const server = tls === undefined ? config.server : { ...config.server, tls: { ...tls, cert: '', key: '', ca: '' } };
  return {
    ...rest,
    server,
    auth: { ...(jwt !== undefined && { jwt }) },
    content: { scrubSecrets },
    clients: clients.map((client) => ({
      id: client.id,
      token: client.tokenDigest,
      agents: [...client.agents].sort(),
      ...(client.owner !== undefined && { owner: client.owner }),
      ...(client.certificate !== undefined && { certificate: client.certificate }),
    })),
  };
}

function walk(before: unknown, after: unknown, path: string, out: string[]): void {
  if (isDeepStrictEqual(before, after)) return;
  if (isPlainObject(before) && isPlainObject(after)) {
    for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
      walk(before[key], after[key], path === '' ? key : `${path}.${key}`, out);
    }
    return;
  }
  const keyedBefore = keyed(before);
  const keyedAfter = keyed(after);
  if (keyedBefore !== undefined && keyedAfter !== undefined) {
    for (const key of new Set([...keyedBefore.keys(), ...keyedAfter.keys()])) {
      const entryBefore = keyedBefore.get(key);
      const entryAfter = keyedAfter.get(key);
      const entryPath = `${path}[${key}]`;
      if (entryBefore === undefined || entryAfter === undefined) out.push(entryPath);
      else walk(entryBefore, entryAfter, entryPath, out);
    }
    return;
  }
  out.push(path);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * An array of entries named by `slug`, `id` or `name` (agents, clients, people, skills, tool
 * servers), as a map by
 * name; undefined for any other value, or when a name repeats (then it is compared whole).
 */
function keyed(value: unknown): Map<string, unknown> | undefined {
  if (!Array.isArray(value)) return undefined;
  const byName = new Map<string, unknown>();
  for (const entry of value as unknown[]) {
    if (!isPlainObject(entry)) return undefined;
    const name = ['slug', 'id', 'name'].map((key) => entry[key]).find((value) => typeof value === 'string');
    if (typeof name !== 'string' || byName.has(name)) return undefined;
    byName.set(name, entry);
  }
  return byName;
}
