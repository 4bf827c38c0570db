/**
 * The outbound registry: the only place a remote agent's address can come from. A caller (a
 * person, a model, a tool) names an entry; it never supplies a URL. The file is deployment
 * config (`--registry FILE` or `AIRLOCK_REGISTRY`), checked completely at startup so that a
 * missing secret or a bad network setting stops the process before any call, with the
 * offending entry and key named; every problem of the file is reported at once, one line each.
 *
 * @example
 * ```ts
 * const registry = loadRegistryFile(registryPath(options.registry, process.env)!, process.env);
 * const entry = registry.get('travel'); // throws RegistryError listing the known names
 * ```
 *
 * ```yaml
 * agents:
 *   - name: travel
 *     card_url: https://travel.example.com/.well-known/agent-card.json
 *     description: Books trains and hotels.
 *     effect: acting
 *     auth: { bearer_env: AIRLOCK_SECRET_TRAVEL }
 *     card_keys: { jwks_file: travel-jwks.json }   # its card must be signed with one of these
 * ```
 */
import { dirname, resolve } from 'node:path';
import Value from 'typebox/value';
import { parseYamlDocument, readSourceFile, SourceFileError, YamlSyntaxError } from '../config/yaml.js';
import { buildEntry, type RegistryEntry } from './registry/entry.js';
import { REGISTRY_NAME_PATTERN, RegistryError } from './registry/error.js';
import { readNetwork, type NetworkSettings } from './registry/network.js';
import { readRegistryDocument, RegistrySchema } from './registry/schema.js';

export type { EntryCardKeys } from './registry/card-keys.js';
export type { EntryTimeouts, RegistryEntry } from './registry/entry.js';
export { REGISTRY_NAME_PATTERN, RegistryError } from './registry/error.js';
export { RegistryEgressProxy, type NetworkSettings } from './registry/network.js';
export { BearerSecret, SECRET_ENV_PREFIX } from './registry/secrets.js';

/** Files larger than this are refused: a registry is a short list. */
const MAX_REGISTRY_BYTES = 1024 * 1024;

/**
 * The validated registry. Entries are frozen; lookups by name only.
 *
 * @example
 * ```ts
 * for (const entry of registry.entries()) console.log(entry.name, entry.effect);
 * ```
 */
export class Registry {
  readonly network: NetworkSettings;
  readonly #entries: ReadonlyMap<string, RegistryEntry>;

  constructor(entries: readonly RegistryEntry[], network: NetworkSettings) {
    this.#entries = new Map(entries.map((entry) => [entry.name, entry]));
    this.network = network;
  }

  /** Registry names in file order. */
  names(): string[] {
    return [...this.#entries.keys()];
  }

  entries(): RegistryEntry[] {
    return [...this.#entries.values()];
  }

  /** The entry, or undefined: for callers that answer an unknown name themselves. */
  find(name: string): RegistryEntry | undefined {
    return typeof name === 'string' ? this.#entries.get(name) : undefined;
  }

  /**
   * The entry, or a `RegistryError` listing the known names. The asked-for name is echoed only
   * when it has the shape of a registry name, so a caller cannot inject text into the message.
   */
  get(name: string): RegistryEntry {
    const entry = this.find(name);
    if (entry !== undefined) return entry;
    const shown = typeof name === 'string' && REGISTRY_NAME_PATTERN.test(name) ? `"${name}"` : 'that name';
    const known = this.names();
    throw new RegistryError(
      '',
      '',
      `no agent ${shown} in the registry; known: ${known.length > 0 ? known.join(', ') : '(none)'}`,
    );
  }

  toJSON(): { agents: RegistryEntry[] } {
    return { agents: this.entries() };
  }
}

/**
 * Which registry file to load: the `--registry` option wins over `AIRLOCK_REGISTRY`.
 *
 * @example
 * ```ts
 * registryPath(undefined, { AIRLOCK_REGISTRY: 'registry.yaml' }); // 'registry.yaml'
 * ```
 */
export function registryPath(option: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (option !== undefined && option.length > 0) return option;
  const fromEnv = env.AIRLOCK_REGISTRY;
  return fromEnv !== undefined && fromEnv.length > 0 ? fromEnv : undefined;
}

/**
 * Reads and validates a registry file.
 *
 * @example
 * ```ts
 * const registry = loadRegistryFile('examples/registry.yaml', process.env);
 * ```
 * @throws RegistryError
 */
export function loadRegistryFile(path: string, env: NodeJS.ProcessEnv = process.env): Registry {
  // Files the registry names (card_keys.jwks_file) are relative to the registry's directory.
  const baseDir = dirname(resolve(path));
  let text: string;
  try {
    text = readSourceFile(path, MAX_REGISTRY_BYTES, '1 MiB');
  } catch (error) {
    if (error instanceof SourceFileError) throw new RegistryError('', '', error.message);
    throw error;
  }
  return parseRegistry(text, env, path, baseDir);
}

/**
 * Parses and validates registry YAML against the environment: schema and defaults, unique
 * names, URLs (https, or http to loopback; no credentials), secrets present, the private
 * network and egress proxy settings, and card signature keys (read from `baseDir`, default the
 * working directory).
 *
 * @example
 * ```ts
 * const registry = parseRegistry('agents: []\n', process.env);
 * registry.names(); // []
 * ```
 * @throws RegistryError
 */
export function parseRegistry(
  text: string,
  env: NodeJS.ProcessEnv = process.env,
  source = 'inline',
  baseDir = process.cwd(),
): Registry {
  let document: unknown;
  try {
    // The config loader's YAML reading: duplicate keys refused, aliases capped.
    document = parseYamlDocument(text);
  } catch (error) {
    if (error instanceof YamlSyntaxError) throw new RegistryError('', '', `${source}: ${error.reason}`);
    throw error;
  }
  if (document === null || typeof document !== 'object' || Array.isArray(document)) {
    throw new RegistryError('', '', `${source}: expected a mapping with an "agents" list at the top level`);
  }
  // Every problem of the file is reported in one run: the schema's, then each entry's checks.
  const { agents, problems } = readRegistryDocument(Value.Default(RegistrySchema, document));
  let network: NetworkSettings | undefined;
  try {
    network = readNetwork(env);
  } catch (error) {
    if (!(error instanceof RegistryError)) throw error;
    problems.push(error);
  }
  const seen = new Set<string>();
  const entries: RegistryEntry[] = [];
  agents.forEach((rawEntry, index) => {
    if (rawEntry === undefined) return; // its schema problems are reported already
    const label = `agents[${index}] "${rawEntry.name}"`;
    if (seen.has(rawEntry.name)) problems.push(new RegistryError(label, 'name', 'is used by an earlier entry'));
    seen.add(rawEntry.name);
    try {
      entries.push(buildEntry(rawEntry, label, env, network, baseDir));
    } catch (error) {
      if (!(error instanceof RegistryError)) throw error;
      problems.push(error);
    }
  });
  if (problems.length > 0 || network === undefined) throw RegistryError.all(problems);
  return new Registry(entries, network);
}
