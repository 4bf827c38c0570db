/**
 * The registry built from a checked document: each entry's own checks (URLs, secrets, network,
 * card keys), unique names, and the `Registry` that lookups go through. No TypeBox here: the
 * schema step (./schema.ts) runs in process for `parseRegistry`, or in a worker thread of its own
 * when the gateway serves (./off-thread.ts), and hands over plain data.
 *
 * @example
 * ```ts
 * const registry = buildRegistry(checkRegistryDocument(readRegistryYaml(text, 'registry.yaml')), process.env);
 * ```
 */
import { parseYamlDocument, readSourceFile, SourceFileError, YamlSyntaxError } from '../../config/yaml.js';
import { buildEntry, type RegistryEntry } from './entry.js';
import { REGISTRY_NAME_PATTERN, RegistryError } from './error.js';
import { readNetwork, type NetworkSettings } from './network.js';
import type { CheckedRegistry } from './schema.js';

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
 * A registry file's text, at most 1 MiB.
 *
 * @example
 * ```ts
 * const text = readRegistryText('registry.yaml');
 * ```
 * @throws RegistryError when the file cannot be read or is too large
 */
export function readRegistryText(path: string): string {
  try {
    return readSourceFile(path, MAX_REGISTRY_BYTES, '1 MiB');
  } catch (error) {
    if (error instanceof SourceFileError) throw new RegistryError('', '', error.message);
    throw error;
  }
}

/**
 * Registry YAML as a mapping (the config loader's YAML reading: duplicate keys refused, aliases
 * capped).
 *
 * @example
 * ```ts
 * readRegistryYaml('agents: []\n'); // { agents: [] }
 * ```
 * @throws RegistryError naming the line, or when the top level is not a mapping
 */
export function readRegistryYaml(text: string, source = 'inline'): Record<string, unknown> {
  let document: unknown;
  try {
    document = parseYamlDocument(text);
  } catch (error) {
    if (error instanceof YamlSyntaxError) throw new RegistryError('', '', `${source}: ${error.reason}`);
    throw error;
  }
  if (document === null || typeof document !== 'object' || Array.isArray(document)) {
    throw new RegistryError('', '', `${source}: expected a mapping with an "agents" list at the top level`);
  }
  return document as Record<string, unknown>;
}

/**
 * Builds the registry from its checked document against the environment: every entry's own
 * checks, unique names, the private network and egress proxy settings, card signature keys
 * (read from `baseDir`). Every problem of the file (the schema's first) is reported in one error.
 *
 * @example
 * ```ts
 * const registry = buildRegistry(checked, process.env, '/etc/airlock');
 * ```
 * @throws RegistryError listing every problem
 */
export function buildRegistry(
  checked: CheckedRegistry,
  env: NodeJS.ProcessEnv = process.env,
  baseDir = process.cwd(),
): Registry {
  const problems = checked.problems.map((found) => new RegistryError(found.entry, found.key, found.problem));
  let network: NetworkSettings | undefined;
  try {
    network = readNetwork(env);
  } catch (error) {
    if (!(error instanceof RegistryError)) throw error;
    problems.push(error);
  }
  const seen = new Set<string>();
  const entries: RegistryEntry[] = [];
  checked.agents.forEach((rawEntry, index) => {
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
