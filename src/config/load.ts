/**
 * Loads, interpolates and validates a configuration file, all in this thread: read and
 * interpolated (./document.ts), checked against the schema (./schema-check.ts), resolved
 * (./resolve.ts). Every problem is reported as a `ConfigError` naming the key, before the server
 * binds a port. `airlock serve` runs the schema step in a worker thread instead (./off-thread.ts).
 *
 * @example
 * ```ts
 * const config = loadConfigFile('examples/demo.yaml', process.env);
 * console.log(config.agents.map((agent) => agent.slug));
 * ```
 */
import type { AirlockConfig } from './airlock-config.js';
import { readConfigDocument, readConfigText } from './document.js';
import { resolveConfig } from './resolve.js';
import { checkConfigDocument } from './schema-check.js';

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
  return parseConfig(readConfigText(path), env, path);
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
  return resolveConfig(checkConfigDocument(readConfigDocument(text, env, source)), env);
}
