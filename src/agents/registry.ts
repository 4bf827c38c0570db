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
import type { AgentBackend, BackendContext } from './backend.js';
import { BackendConfigError } from './backend.js';
import { createCommandBackend } from './command/index.js';
import { createConformanceBackend } from './conformance.js';
import { createEchoBackend } from './echo.js';
import { loadModuleBackend } from './module/index.js';
import { createOpenAiBackend } from './openai/index.js';
import { createWriterBackend } from './writer.js';
import type { CommandBackendConfig } from './command/schema.js';
import type { ModuleBackendConfig } from './module/schema.js';
import type { OpenAiBackendConfig } from './openai/schema.js';
import type { UpstreamBackendConfig } from './upstream/schema.js';

/**
 * A backend's config, as validated by the config loader (defaults applied). `type` selects the
 * backend; the other fields are that backend's options (docs/backends/).
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
  | { type: 'echo' }
  | { type: 'writer'; chunkDelayMs?: number }
  | { type: 'conformance'; resubscribeHoldMs?: number }
  | OpenAiBackendConfig
  | CommandBackendConfig
  | ModuleBackendConfig
  | UpstreamBackendConfig;

/** The backend types that need asynchronous setup (see {@link loadBackend}). */
export type DeferredBackendConfig = ModuleBackendConfig | UpstreamBackendConfig;

/**
 * Creates the backend a config describes, for every type that needs no asynchronous setup.
 * `module` and `a2a` backends are made by {@link loadBackend}; here they throw a
 * BackendConfigError saying so. Each call returns a new backend.
 *
 * @example
 * ```ts
 * createBackend({ type: 'echo' }).kind;        // 'echo'
 * createBackend({ type: 'conformance' }).kind; // 'conformance'
 * ```
 */
export function createBackend(config: BackendConfig, context: BackendContext = {}): AgentBackend {
  switch (config.type) {
    case 'echo':
      return createEchoBackend();
    case 'writer':
      return createWriterBackend({ chunkDelayMs: config.chunkDelayMs });
    case 'conformance':
      return createConformanceBackend({ resubscribeHoldMs: config.resubscribeHoldMs });
    case 'openai':
      return createOpenAiBackend(config, context);
    case 'command':
      return createCommandBackend(config, context);
    case 'module':
    case 'a2a':
      throw new BackendConfigError(
        `a ${config.type} backend needs asynchronous setup: create it with loadBackend() (airlock serve does)`,
      );
    default:
      return unknownBackend(config);
  }
}

/** What {@link loadBackend} needs beyond a {@link BackendContext}. */
export interface BackendLoadContext extends BackendContext {
  /** Makes `a2a` backends: required when one is configured. */
  readonly upstream?: (config: UpstreamBackendConfig, context: BackendContext) => AgentBackend;
}

/**
 * Creates the backend a config describes, any type: a `module` backend is imported, an `a2a`
 * backend made by `context.upstream`. Problems are BackendConfigErrors, found at startup.
 *
 * @example
 * ```ts
 * const backend = await loadBackend({ type: 'module', module: 'examples/module/shout.mjs', export: 'default' });
 * ```
 */
export async function loadBackend(config: BackendConfig, context: BackendLoadContext = {}): Promise<AgentBackend> {
  switch (config.type) {
    case 'module':
      return loadModuleBackend(config, context);
    case 'a2a':
      if (context.upstream === undefined) {
        throw new BackendConfigError('an a2a backend needs upstreams.registry (the registry of upstream agents)');
      }
      return context.upstream(config, context);
    default:
      return createBackend(config, context);
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
