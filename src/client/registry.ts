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
import { buildRegistry, readRegistryText, readRegistryYaml, type Registry } from './registry/build.js';
import { checkRegistryDocument } from './registry/schema.js';

export type { EntryCardKeys } from './registry/card-keys.js';
export type { EntryTimeouts, RegistryEntry } from './registry/entry.js';
export { Registry, registryPath } from './registry/build.js';
export { REGISTRY_NAME_PATTERN, RegistryError } from './registry/error.js';
export { RegistryEgressProxy, type NetworkSettings } from './registry/network.js';
export { BearerSecret, SECRET_ENV_PREFIX } from './registry/secrets.js';

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
  return parseRegistry(readRegistryText(path), env, path, dirname(resolve(path)));
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
  // Every problem of the file is reported in one run: the schema's, then each entry's checks.
  return buildRegistry(checkRegistryDocument(readRegistryYaml(text, source)), env, baseDir);
}
