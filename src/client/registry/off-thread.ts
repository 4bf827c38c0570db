/**
 * Loading a registry file with its schema check in a worker thread of its own, as the gateway
 * loads its config (src/config/off-thread.ts): TypeBox never enters the serving isolate. The
 * same `Registry`, or the same `RegistryError`, as `loadRegistryFile`.
 *
 * @example
 * ```ts
 * const registry = await loadRegistryFileOffThread('upstreams.yaml', process.env);
 * ```
 */
import { dirname, resolve } from 'node:path';
import { runInWorker, sibling } from '../../config/off-thread.js';
import { buildRegistry, readRegistryText, readRegistryYaml, type Registry } from './build.js';
import { RegistryError } from './error.js';
import type { CheckedRegistry } from './schema.js';

/**
 * Reads, checks (in a worker thread) and builds a registry file.
 *
 * @example
 * ```ts
 * const registry = await loadRegistryFileOffThread('upstreams.yaml');
 * registry.names(); // ['upstream']
 * ```
 * @throws RegistryError listing every problem of the file
 */
export async function loadRegistryFileOffThread(path: string, env: NodeJS.ProcessEnv = process.env): Promise<Registry> {
  const document = readRegistryYaml(readRegistryText(path), path);
  const checked = await runInWorker<CheckedRegistry>(
    sibling(import.meta.url, 'check-worker'),
    document,
    (reason) => new RegistryError('', '', reason),
  );
  // Files the registry names (card_keys.jwks_file) are relative to the registry's directory.
  return buildRegistry(checked, env, dirname(resolve(path)));
}
