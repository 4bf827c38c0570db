/**
 * How `airlock reload` finds the running `airlock serve` of a config, and hears back: serve
 * writes its pid beside the config (`<config dir>/.airlock/<config file>.pid`, mode 0600, in a
 * 0700 directory) and removes it on exit; after each reload it writes the outcome (the changed
 * key names or the refusal line, never a value) to `<…>.reload.json`. Only the user who runs
 * serve can read the pid file or signal the process.
 *
 * @example
 * ```ts
 * const files = serveFiles('airlock.yaml'); // { pid: '/srv/.airlock/airlock.yaml.pid', outcome: '…reload.json' }
 * await writeServePid(files, 'airlock.yaml');
 * ```
 */
import { readFileSync, unlinkSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { writeStateFile } from '../../state/file.js';
import type { ReloadOutcome } from './reloader.js';

/**
 * The files of one served config.
 *
 * @example
 * ```ts
 * serveFiles('/srv/airlock.yaml').pid; // '/srv/.airlock/airlock.yaml.pid'
 * ```
 */
export interface ServeFiles {
  pid: string;
  outcome: string;
}

/**
 * A reload's outcome as serve records it for `airlock reload`, with when it happened (ms).
 *
 * @example
 * ```ts
 * const recorded: RecordedOutcome = { at: Date.now(), outcome: { outcome: 'applied', changed: [] } };
 * ```
 */
export interface RecordedOutcome {
  at: number;
  outcome: ReloadOutcome;
}

/**
 * Where serve of `configPath` keeps its pid and its last reload outcome.
 *
 * @example
 * ```ts
 * const { pid, outcome } = serveFiles('airlock.yaml');
 * ```
 */
export function serveFiles(configPath: string): ServeFiles {
  const config = resolve(configPath);
  const base = join(dirname(config), '.airlock', basename(config));
  return { pid: `${base}.pid`, outcome: `${base}.reload.json` };
}

/**
 * Records this process as the one serving `configPath` (atomically, mode 0600).
 *
 * @example
 * ```ts
 * await writeServePid(serveFiles(path), path);
 * ```
 */
export async function writeServePid(files: ServeFiles, configPath: string): Promise<void> {
  await writeStateFile(files.pid, `${JSON.stringify({ pid: process.pid, config: resolve(configPath) })}\n`);
}

/**
 * Removes the pid file if it is still this process's (another serve may have taken it over).
 * Synchronous: it runs in the exit path.
 *
 * @example
 * ```ts
 * removeServePid(serveFiles(path));
 * ```
 */
export function removeServePid(files: ServeFiles): void {
  if (readServePid(files) !== process.pid) return;
  try {
    unlinkSync(files.pid);
  } catch {
    // Already gone: nothing to undo.
  }
}

/**
 * The pid the file names; undefined when there is no file or it is not one of ours.
 *
 * @example
 * ```ts
 * const pid = readServePid(serveFiles('airlock.yaml'));
 * ```
 */
export function readServePid(files: ServeFiles): number | undefined {
  const value = readJson(files.pid) as { pid?: unknown } | undefined;
  const pid = value?.pid;
  return typeof pid === 'number' && Number.isSafeInteger(pid) && pid > 1 ? pid : undefined;
}

/**
 * Records a reload's outcome for `airlock reload` (key names and the refusal line only).
 *
 * @example
 * ```ts
 * await writeReloadOutcome(files, outcome);
 * ```
 */
export async function writeReloadOutcome(files: ServeFiles, outcome: ReloadOutcome): Promise<void> {
  await writeStateFile(files.outcome, `${JSON.stringify({ at: Date.now(), outcome } satisfies RecordedOutcome)}\n`);
}

/**
 * The last recorded reload outcome; undefined when there is none (or it does not parse).
 *
 * @example
 * ```ts
 * readReloadOutcome(files)?.outcome.outcome; // 'applied'
 * ```
 */
export function readReloadOutcome(files: ServeFiles): RecordedOutcome | undefined {
  const value = readJson(files.outcome) as Partial<RecordedOutcome> | undefined;
  if (value === undefined || typeof value.at !== 'number' || typeof value.outcome !== 'object') return undefined;
  return value as RecordedOutcome;
}

function readJson(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  if (text.length > 64 * 1024) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
