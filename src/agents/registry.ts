/**
 * The one place that turns a backend's config into a backend. Adding a backend type (openai,
 * command, module, an A2A upstream, …) means one new file and one new member of
 * {@link BackendConfig} plus its `case` here; the exhaustiveness check below makes the compiler
 * point at this switch until the case exists.
 *
 * @example
 * ```ts
 * const backend = createBackend({ type: 'writer', chunkDelayMs: 50 });
 * for await (const event of backend.run(turn)) console.log(event);
 * ```
 */
import type { AgentBackend } from './backend.js';
import { createConformanceBackend } from './conformance.js';
import { createEchoBackend } from './echo.js';
import { createWriterBackend } from './writer.js';

/**
 * A backend's config, as validated by the config loader. `type` selects the backend; the other
 * fields are that backend's options.
 *
 * @example
 * ```ts
 * const configs: BackendConfig[] = [
 *   { type: 'echo' },
 *   { type: 'writer', chunkDelayMs: 20 },
 *   { type: 'conformance', resubscribeHoldMs: 4000 },
 * ];
 * ```
 */
export type BackendConfig =
  { type: 'echo' } | { type: 'writer'; chunkDelayMs?: number } | { type: 'conformance'; resubscribeHoldMs?: number };

/**
 * Creates the backend a config describes. Each call returns a new backend.
 *
 * @example
 * ```ts
 * createBackend({ type: 'echo' }).kind;        // 'echo'
 * createBackend({ type: 'conformance' }).kind; // 'conformance'
 * ```
 */
export function createBackend(config: BackendConfig): AgentBackend {
  switch (config.type) {
    case 'echo':
      return createEchoBackend();
    case 'writer':
      return createWriterBackend({ chunkDelayMs: config.chunkDelayMs });
    case 'conformance':
      return createConformanceBackend({ resubscribeHoldMs: config.resubscribeHoldMs });
    default:
      return unknownBackend(config);
  }
}

/**
 * Unreachable when every config type has a case: `config` is then `never` and this compiles.
 * A config that slipped past validation at run time still fails loudly rather than silently.
 */
function unknownBackend(config: never): never {
  const type = (config as { type?: unknown }).type;
  throw new Error(`unknown backend type: ${String(type)}`);
}
