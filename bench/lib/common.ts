/**
 * What the benchmark sections share: flags, the machine line, result files, clean shutdown,
 * interleaved rounds, an in-process closed-loop driver and RSS sampling of a child process.
 *
 * @example
 * ```ts
 * const flags = parseCommonFlags(process.argv.slice(2), { duration: 3 });
 * installShutdown(async () => stopAllChildren());
 * const stats = await closedLoop(() => call(), { concurrency: 16, duration: flags.duration });
 * const path = writeResult('stream', { ... });
 * ```
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { killAllChildrenNow, REPO_ROOT, stopAllChildren } from './children.js';
import { percentile } from './load.js';

/** The bench's PostgreSQL database: DATABASE_URL, or the local `test` database. */
export const BENCH_DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/**
 * The config lines of a PostgreSQL store in its own `schema` of the bench's database (`url` for
 * another one), so that a run reads no other run's tasks.
 */
export function postgresStoreLines(schema: string, url: string = BENCH_DATABASE_URL): string[] {
  return ['store:', '  type: postgres', `  url: '${url}'`, `  schema: ${schema}`];
}

/**
 * Drops a run's PostgreSQL schemas, never throwing: nothing is left to drop when the database was
 * never reached (or went away), and a bench ending on an error must still stop its servers.
 */
export async function dropBenchSchemas(schemas: readonly string[]): Promise<void> {
  if (schemas.length === 0) return;
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: BENCH_DATABASE_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } catch {
    // Nothing of the run's to drop.
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The echo agent and the bench's token client, as config lines (the token from BENCH_TOKEN). */
export const ECHO_AGENT_AND_CLIENT: readonly string[] = [
  'agents:',
  '  - slug: echo',
  '    name: Echo',
  '    description: Replies with the text it was sent.',
  '    skills:',
  '      - { id: echo, name: Echo, description: Repeats the text back. }',
  '    backend: { type: echo }',
  'clients:',
  '  - id: bench',
  "    token: '${BENCH_TOKEN}'",
  '    agents: [echo]',
];

/** The flags every section accepts (all.ts forwards them); each section picks its own defaults. */
export interface CommonFlags {
  duration: number;
  rounds: number;
  connections: number;
  warmup: number;
  json: boolean;
  postgres: boolean;
}

/**
 * A section's own `--name value` flags (`names`, e.g. `['--store']`) taken out of `argv`, the
 * last of each kept; the rest are left for {@link parseCommonFlags}.
 *
 * @example
 * ```ts
 * const { values, rest } = takeValueFlags(process.argv.slice(2), ['--store'], USAGE);
 * values['--store']; // 'sqlite', or undefined when not given
 * ```
 */
export function takeValueFlags(
  argv: readonly string[],
  names: readonly string[],
  usage: string,
): { values: Partial<Record<string, string>>; rest: string[] } {
  const values: Partial<Record<string, string>> = {};
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    if (!names.includes(flag)) {
      rest.push(flag);
      continue;
    }
    const value = argv[++i];
    if (value === undefined) throw new Error(`${flag} needs a value\n${usage}`);
    values[flag] = value;
  }
  return { values, rest };
}

export function parseCommonFlags(
  argv: string[],
  defaults: { duration: number; rounds: number; connections: number; warmup: number },
  usage: string,
): CommonFlags {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string', default: String(defaults.duration) },
      rounds: { type: 'string', default: String(defaults.rounds) },
      connections: { type: 'string', default: String(defaults.connections) },
      warmup: { type: 'string', default: String(defaults.warmup) },
      json: { type: 'boolean', default: false },
      'no-postgres': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  return {
    duration: positive('--duration', values.duration),
    rounds: positiveInteger('--rounds', values.rounds),
    connections: positiveInteger('--connections', values.connections),
    warmup: nonNegative('--warmup', values.warmup),
    json: values.json,
    postgres: !values['no-postgres'],
  };
}

function positive(flag: string, text: string): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${flag} must be a positive number, got ${text}`);
  return value;
}

function nonNegative(flag: string, text: string): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${flag} must be a number ≥ 0, got ${text}`);
  return value;
}

/**
 * A flag's value as a positive integer, or an error naming the flag.
 *
 * @example
 * ```ts
 * positiveInteger('--top', '25'); // 25
 * ```
 */
export function positiveInteger(flag: string, text: string): number {
  const value = positive(flag, text);
  if (!Number.isInteger(value)) throw new Error(`${flag} must be an integer, got ${text}`);
  return value;
}

export interface Machine {
  node: string;
  platform: string;
  cpuModel: string;
  cpuCount: number;
}

export function machine(): Machine {
  const list = cpus();
  return {
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    cpuModel: list[0]?.model.trim() ?? 'unknown',
    cpuCount: list.length,
  };
}

export function printMachine(): void {
  const host = machine();
  const load = loadavg().map((value) => value.toFixed(2));
  console.log(
    `node ${host.node}  ${host.platform}  CPU: ${host.cpuModel} × ${host.cpuCount}  load avg ${load.join(' ')}`,
  );
}

export function isoBasic(date: Date): string {
  return date
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
}

export const RESULTS_DIR = join(REPO_ROOT, 'bench', 'results');

/** Writes `bench/results/<name>-<time>.json` (the folder stays tracked through .gitkeep). */
export function writeResult(name: string, startedAt: Date, document: Record<string, unknown>): string {
  mkdirSync(RESULTS_DIR, { recursive: true });
  if (!existsSync(join(RESULTS_DIR, '.gitkeep'))) writeFileSync(join(RESULTS_DIR, '.gitkeep'), '');
  const path = join(RESULTS_DIR, `${name}-${isoBasic(startedAt)}.json`);
  writeFileSync(
    path,
    `${JSON.stringify({ startedAt: startedAt.toISOString(), machine: machine(), ...document }, null, 2)}\n`,
  );
  return path;
}

/**
 * One headline figure of a section, for all.ts's summary table. `airlock` is the measured value;
 * `raw` and `sdk` the same figure for the peers when there is one. `higherIsBetter` tells how to
 * read the ratios (Airlock / raw, Airlock / SDK), which are always computed the same way.
 */
export interface Headline {
  figure: string;
  unit: string;
  higherIsBetter: boolean;
  airlock: number;
  raw?: number;
  sdk?: number;
  note?: string;
}

/**
 * Stops every child (and runs `cleanup`) on SIGINT/SIGTERM and kills them on exit. Returns the
 * shutdown function for the normal and the error path.
 */
export function installShutdown(cleanup: () => Promise<void> = async () => undefined): () => Promise<void> {
  let done: Promise<void> | undefined;
  const shutdown = (): Promise<void> =>
    (done ??= (async () => {
      await stopAllChildren();
      await cleanup().catch(() => undefined);
    })());
  process.on('exit', killAllChildrenNow);
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    process.once(signal, () => {
      console.error(`\n${signal}: stopping the servers`);
      shutdown().finally(() => process.exit(code));
    });
  }
  return shutdown;
}

/** Runs `main`, stops everything however it ends, exits with its code. */
export function runMain(main: () => Promise<number>, shutdown: () => Promise<void>): void {
  main().then(
    async (code) => {
      await shutdown();
      process.exit(code);
    },
    async (error: unknown) => {
      console.error(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      await shutdown();
      process.exit(1);
    },
  );
}

/** Round r runs the items starting at index r mod n: every item takes every position equally often. */
export function roundOrder<T>(items: readonly T[], round: number): T[] {
  return items.map((_, index) => items[(index + round) % items.length]!);
}

export interface LoopStats {
  /** Completed operations per second over the whole run. */
  opsPerSec: number;
  /** Milliseconds. */
  p50: number;
  p99: number;
  ops: number;
  errors: number;
  /** The first error's message, when there was one. */
  firstError?: string;
}

/**
 * A closed loop in this process: `concurrency` workers, each calling `operation` again as soon
 * as the previous call settles, for `duration` seconds. Latency is each call's own time.
 */
export async function closedLoop(
  operation: () => Promise<unknown>,
  options: { concurrency: number; duration: number },
): Promise<LoopStats> {
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const started = performance.now();
  const deadline = started + options.duration * 1000;
  const worker = async (): Promise<void> => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      try {
        await operation();
        latencies.push(performance.now() - t0);
      } catch (error) {
        errors++;
        firstError ??= error instanceof Error ? error.message : String(error);
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    opsPerSec: latencies.length / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    ops: latencies.length,
    errors,
    ...(firstError !== undefined && { firstError }),
  };
}

/** The resident set size of a process in bytes, from /proc/<pid>/status (Linux). */
export function rssOf(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? Number.NaN : Number(match[1]) * 1024;
  } catch {
    return Number.NaN;
  }
}

export function formatMb(bytes: number): string {
  return Number.isFinite(bytes) ? (bytes / (1024 * 1024)).toFixed(1) : 'n/a';
}

export function formatNumber(value: number, digits = 1): string {
  return Number.isFinite(value) ? value.toFixed(digits) : 'n/a';
}
