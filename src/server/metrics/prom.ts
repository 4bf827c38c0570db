/**
 * prom-client, loaded on first use: a gateway without a `metrics` section never pays its import
 * (~0.1 s of every start). `require` keeps the load synchronous, so `openMetrics` and the hot-path
 * counters stay synchronous; prom-client is CommonJS, and an ESM `import` elsewhere shares the
 * same module instance.
 *
 * @example
 * ```ts
 * const registry = new (promClient().Registry)();
 * ```
 */
import { createRequire } from 'node:module';
import type * as PromClient from 'prom-client';

let loaded: typeof PromClient | undefined;

/**
 * The prom-client module, required the first time it is asked for.
 *
 * @example
 * ```ts
 * promClient().collectDefaultMetrics({ register: registry });
 * ```
 */
export function promClient(): typeof PromClient {
  loaded ??= createRequire(import.meta.url)('prom-client') as typeof PromClient;
  return loaded;
}
