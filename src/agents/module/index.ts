/**
 * The `module` backend: an operator's own JavaScript or TypeScript module that exports an
 * {@link AgentBackend} (or a function that makes one). It plugs into the same interface as every
 * other backend, so every inbound guard applies unchanged; its events are checked as they come,
 * so a module that yields something malformed fails its task instead of confusing the service.
 *
 * @example
 * ```yaml
 * backend:
 *   type: module
 *   module: examples/module/shout.mjs   # relative to the working directory
 *   export: default                     # an AgentBackend, or (options, context) => AgentBackend
 *   options: { suffix: '!' }
 * ```
 *
 * Tools: a module gets the same tool API as the `openai` backend, on the turn. `turn.tools` (absent
 * when the agent has none) lists what it may use (`offers`: model-safe name, description, input
 * schema, level) and is the only way to use them: `turn.tools.call(name, args, turn.signal)` goes
 * through the same policy (allow list, pins, the autonomy ladder, budgets, scrubbing, audit) and
 * answers `result` (text framed as untrusted), `refused` (a reason), `over_budget` (end the turn
 * with `failed`) or `park` (an acting tool waits for the person: end the turn with
 * `propose-action` and a `continuation`, plain JSON of at most 256 KiB, which comes back on
 * `turn.approvedAction` / `turn.deniedAction` when the person decided). On approval,
 * `turn.tools.runApproved(turn.approvedAction, turn.signal)` runs exactly the approved arguments,
 * once. Every event is checked (`./events.ts`), the continuation included.
 *
 * @example
 * ```ts
 * export default {
 *   kind: 'notes',
 *   async *run(turn: AgentTurn): AsyncGenerator<AgentEvent> {
 *     const tools = turn.tools;
 *     if (tools === undefined) {
 *       yield { type: 'failed', reason: 'this agent has no tools' };
 *     } else if (turn.approvedAction !== undefined) {
 *       // The person approved: run exactly that call, once. The continuation came back too.
 *       const done = await tools.runApproved(turn.approvedAction, turn.signal);
 *       yield { type: 'completed', text: done.kind === 'result' ? 'written' : 'not written' };
 *     } else if (turn.deniedAction !== undefined) {
 *       yield { type: 'completed', text: 'left as it was' };
 *     } else {
 *       const read = await tools.call('notes_read', { path: 'todo.md' }, turn.signal);
 *       if (read.kind === 'over_budget') {
 *         yield { type: 'failed', reason: read.reason };
 *         return;
 *       }
 *       const write = await tools.call('notes_write', { path: 'todo.md', text: '…' }, turn.signal);
 *       if (write.kind === 'park') {
 *         yield { type: 'propose-action', action: write.action, continuation: { step: 'write' } };
 *         return;
 *       }
 *       yield { type: 'completed', text: write.kind === 'result' ? 'written' : 'not written' };
 *     }
 *   },
 * } satisfies AgentBackend;
 * ```
 */
import { existsSync, statSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AgentBackend, AgentEvent, AgentTurn, BackendContext } from '../backend.js';
import { BackendConfigError } from '../backend.js';
import type { ModuleBackendConfig } from './schema.js';
import { checkAgentEvent } from './events.js';

const TYPESCRIPT_EXTENSIONS = new Set(['.ts', '.mts', '.cts']);

/**
 * What a module may export under the configured name: a backend, or a factory given the
 * config's `options` and the backend context (it may be async).
 *
 * @example
 * ```ts
 * export default function create(options: { suffix?: string }): AgentBackend {
 *   return { kind: 'shout', async *run(turn) { yield { type: 'completed', text: `${textOf(turn.message)}${options.suffix ?? ''}` }; } };
 * }
 * ```
 */
export type ModuleBackendExport =
  | AgentBackend
  | ((options: Readonly<Record<string, unknown>>, context: BackendContext) => AgentBackend | Promise<AgentBackend>);

/**
 * Imports the module a config names and returns its backend, wrapped so that every event it
 * yields is checked. Every problem (no such file, import failure, no such export, not a backend)
 * is a BackendConfigError naming the module, raised at startup.
 *
 * @example
 * ```ts
 * const backend = await loadModuleBackend({ type: 'module', module: 'examples/module/shout.mjs', export: 'default' });
 * ```
 */
export async function loadModuleBackend(
  config: ModuleBackendConfig,
  context: BackendContext = {},
): Promise<AgentBackend> {
  const path = resolve(config.module);
  if (!existsSync(path) || !statSync(path).isFile()) {
    throw new BackendConfigError(`module backend: ${config.module}: no such file`);
  }
  const namespace = await importModule(path, config.module);
  const exported = namespace[config.export];
  if (exported === undefined) {
    throw new BackendConfigError(`module backend: ${config.module} has no export named "${config.export}"`);
  }
  let candidate: unknown = exported;
  if (typeof exported === 'function') {
    try {
      candidate = await (exported as (options: unknown, context: BackendContext) => unknown)(
        config.options ?? {},
        context,
      );
    } catch (error) {
      throw new BackendConfigError(`module backend: ${config.module}: its factory failed: ${describe(error)}`);
    }
  }
  return checkedBackend(asBackend(candidate, config.module));
}

async function importModule(path: string, name: string): Promise<Record<string, unknown>> {
  const url = pathToFileURL(path).href;
  try {
    if (!TYPESCRIPT_EXTENSIONS.has(extname(path))) return (await import(url)) as Record<string, unknown>;
    // TypeScript needs a loader; tsx is the one this project uses. A production install without
    // it should point at the compiled .js instead.
    let tsImport: (specifier: string, parent: string) => Promise<unknown>;
    try {
      ({ tsImport } = (await import('tsx/esm/api')) as {
        tsImport: (specifier: string, parent: string) => Promise<unknown>;
      });
    } catch {
      throw new BackendConfigError(
        `module backend: ${name} is TypeScript, and tsx is not installed (npm install tsx, or compile it to .js)`,
      );
    }
    return (await tsImport(url, import.meta.url)) as Record<string, unknown>;
  } catch (error) {
    if (error instanceof BackendConfigError) throw error;
    throw new BackendConfigError(`module backend: ${name} could not be imported: ${describe(error)}`);
  }
}

function asBackend(candidate: unknown, name: string): AgentBackend {
  const backend = candidate as Partial<AgentBackend> | null;
  if (backend === null || typeof backend !== 'object' || typeof backend.run !== 'function') {
    throw new BackendConfigError(`module backend: ${name} does not export an AgentBackend (an object with run(turn))`);
  }
  if (backend.runSync !== undefined && typeof backend.runSync !== 'function') {
    throw new BackendConfigError(`module backend: ${name}: runSync is not a function`);
  }
  if (backend.close !== undefined && typeof backend.close !== 'function') {
    throw new BackendConfigError(`module backend: ${name}: close is not a function`);
  }
  return backend as AgentBackend;
}

/** The module's backend, with every event checked before the task service sees it. */
function checkedBackend(inner: AgentBackend): AgentBackend {
  const kind = typeof inner.kind === 'string' && inner.kind.length > 0 ? inner.kind : 'module';
  return {
    kind,
    run: (turn: AgentTurn) => checkedEvents(inner.run(turn)),
    ...(inner.close !== undefined && { close: () => (inner.close as () => Promise<void>).call(inner) }),
  };
}

async function* checkedEvents(events: AsyncIterable<AgentEvent>): AsyncGenerator<AgentEvent> {
  for await (const event of events) {
    const problem = checkAgentEvent(event);
    if (problem !== undefined) {
      yield { type: 'failed', reason: `the agent's module yielded an invalid event (${problem})` };
      return;
    }
    yield event;
  }
}

function describe(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]!.slice(0, 300);
}
