/**
 * Loading a configuration with its schema check in a worker thread of its own. TypeBox (683
 * modules) then never enters the serving isolate, where it would stay for the process's life (a
 * quarter of the heap, 14 MB of RSS; docs/PERFORMANCE-LOG.md) though it runs only at start and on
 * reload. The file is read, parsed and interpolated here; the interpolated
 * document goes to the worker by structured clone and comes back checked, with defaults; the key
 * material is read here (./resolve.ts). Errors are the same `ConfigError`s as `parseConfig`'s.
 *
 * @example
 * ```ts
 * const config = await loadConfigFileOffThread('airlock.yaml', process.env);
 * ```
 */
import { Worker } from 'node:worker_threads';
import type { AirlockConfig } from './airlock-config.js';
import { readConfigDocument, readConfigText } from './document.js';
import { ConfigError } from './errors.js';
import { resolveConfig } from './resolve.js';
import type { SchemaCheckOutcome } from './schema-check.js';

/**
 * `loadConfigFile`'s work with the schema check in a worker thread: the same config, or
 * the same `ConfigError`, without loading TypeBox in this thread.
 *
 * @example
 * ```ts
 * const config = await loadConfigFileOffThread('examples/demo.yaml');
 * ```
 * @throws ConfigError naming the key
 */
export async function loadConfigFileOffThread(
  path: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<AirlockConfig> {
  const document = readConfigDocument(readConfigText(path), env, path);
  const outcome = await runInWorker<SchemaCheckOutcome>(
    sibling(import.meta.url, 'check-worker'),
    document,
    (reason) => new ConfigError('', `config: ${reason}`),
  );
  if (!outcome.ok) throw new ConfigError(outcome.key, outcome.problem);
  return resolveConfig(outcome.config, env);
}

/** How long a check may take before its worker is stopped (the demo config's takes about 0.2 s). */
const CHECK_TIMEOUT_MS = 30_000;

/**
 * Runs a worker entry once: `input` as its `workerData`, its one message the answer. The worker
 * ends by itself (it holds nothing open); one that fails, exits without answering, or has not
 * answered within `timeoutMs` (it is then stopped) rejects with `failure(reason)`.
 *
 * @example
 * ```ts
 * const checked = await runInWorker<CheckedRegistry>(sibling(import.meta.url, 'check-worker'), document, (reason) => new RegistryError('', '', reason));
 * ```
 */
export function runInWorker<Answer>(
  entry: URL,
  input: unknown,
  failure: (reason: string) => Error,
  timeoutMs = CHECK_TIMEOUT_MS,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const worker = startWorker(entry, input);
    const settle = (outcome: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      outcome();
    };
    const timer = setTimeout(() => {
      settle(() => reject(failure(`the check's worker thread did not answer within ${timeoutMs / 1000} s`)));
      void worker.terminate();
    }, timeoutMs);
    worker.once('message', (answer: Answer) => settle(() => resolve(answer)));
    worker.once('error', (error) =>
      settle(() => reject(failure(`the check's worker thread failed: ${error.message}`))),
    );
    worker.once('exit', (code) =>
      settle(() => reject(failure(`the check's worker thread ended without an answer (exit ${code})`))),
    );
  });
}

/**
 * A worker on `entry`. Sources run through tsx (the tests) need its loader in the worker too,
 * and on Node 20 a worker inherits neither `--import` nor the hooks: the entry is then imported
 * after tsx registers itself there. Built code (`.js`) starts the entry directly.
 */
function startWorker(entry: URL, workerData: unknown): Worker {
  if (!entry.pathname.endsWith('.ts')) return new Worker(entry, { workerData });
  const tsx = import.meta.resolve('tsx/esm/api');
  const boot = `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(entry.href)}); })`;
  return new Worker(boot, { eval: true, workerData });
}

/**
 * The URL of a module beside `moduleUrl`, with its extension: `.ts` when the sources run
 * through a TypeScript loader (tests), `.js` once built.
 *
 * @example
 * ```ts
 * new Worker(sibling(import.meta.url, 'check-worker'));
 * ```
 */
export function sibling(moduleUrl: string, name: string): URL {
  return new URL(`./${name}${moduleUrl.endsWith('.ts') ? '.ts' : '.js'}`, moduleUrl);
}
