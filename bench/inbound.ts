/**
 * Inbound throughput: how fast Airlock answers `message/send`, next to the fastest possible
 * node:http server and to the official @a2a-js/sdk, measured in one run on one machine.
 *
 * What runs:
 * - **Airlock**: `airlock serve` with the echo agent and bearer-token auth on (a temporary config).
 * - **raw node:http** (bench/peers/raw-http.ts): reads each body, sends a fixed reply of the same
 *   size as Airlock's. The ceiling: any real server does at least this much.
 * - **the floor** (bench/peers/floor-http.ts): node:http doing by hand, in one function, only the
 *   work the every-guard row cannot skip (parse, token hash, a task kept under a cap, two chained
 *   audit rows in one write per turn, the reply held to the end of the turn). What Airlock costs
 *   beyond it is the price of its structure; where the floor itself misses a target, the target
 *   is below what the work costs on this runtime. **floor, SQLite**: the same with the tasks in a
 *   SQLite table with the store's guarantees (bench/peers/floor-sqlite.ts), no audit, as the SQLite row.
 * - **Airlock (SQLite)** and **Airlock (PostgreSQL)**: the same, with tasks in the durable stores
 *   (`--data DIR`; a PostgreSQL schema of its own in DATABASE_URL or the local `test` database,
 *   dropped at the end; `--no-postgres` leaves that row out).
 * - **@a2a-js/sdk** (bench/peers/sdk-echo.ts): the SDK's echo agent on express, v0.3 via legacyCompat,
 *   with the same bearer check.
 *
 * Each server is its own child process; autocannon runs here, so load generator and server never
 * share an event loop. Every request is the same v0.3 `message/send` ("hello") with a bearer token,
 * no A2A-Version header. Each reply is checked once (HTTP 200, a completed task) before loading.
 *
 * How it runs: one warm-up per server, then R rounds; each round runs every server once, in an order
 * that rotates from round to round, so a noisy neighbour or thermal drift spreads over all three.
 *
 * Cores: once the servers are up, this process (autocannon) is pinned to the last core and every
 * server, all its threads, to core 0 (`taskset`, bench/lib/cpu.ts), so a server's CPU time is its
 * own. Each run reads the server's CPU (user + system, /proc/<pid>/stat) before and after. Airlock's
 * servers are started on core 0 from the first instruction, as on a one-core host, so `serve --gc
 * auto` runs them as it would there (a second process with `--single-threaded-gc`; its pid from the
 * pid file); `--gc MODE` passes another mode to `airlock serve`.
 *
 * How to read it: "CPU µs/req" is the server's CPU time over the requests it answered in the run;
 * "raw/it CPU" is the raw node:http row's CPU per request over this row's (1.00× = as cheap as a
 * bare exchange; 0.50× = twice its cost). req/s is autocannon's mean of per-second counts; p50/p99
 * are response latencies in ms at that load (closed loop: C connections, pipelining 1, so latency
 * ≈ C / throughput). RSS is the largest resident set after a run. The table shows medians over
 * rounds and every round's req/s (the last round over the first says whether throughput holds as
 * the store fills to its cap). Any non-2xx answer, socket error or timeout is printed per run, and
 * the run ends with a warning and exit code 1: such numbers are not comparable.
 *
 * Usage: npm run bench:inbound -- [--duration S] [--rounds N] [--connections C] [--warmup S] [--json]
 *        [--rate R] [--writes] [--text hello|ascii-4k|latin-4k|cyrillic-4k|chinese-4k]
 * `--rate R`: only raw, the every-guard row and the floor, at a fixed offered rate
 *   (bench/lib/inbound-modes.ts).
 * `--writes`: only the SQLite and PostgreSQL rows, with statements, fsyncs and WAL per task.
 * `--json` also writes bench/results/inbound-<ISO time>.json.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BENCH_DATABASE_URL, dropBenchSchemas, parseCommonFlags, postgresStoreLines } from './lib/common.js';
import { killAllChildrenNow, REPO_ROOT, startChild, stopAllChildren, type ChildServer } from './lib/children.js';
import { runLoad, verifyReply, type LoadOptions, type Target } from './lib/load.js';
import { formatInt, formatMs } from './lib/report.js';
import {
  FLAT_TARGET,
  GUARDED_CPU_TARGET,
  GUARDED_REQ_TARGET,
  POSTGRES_CPU_TARGET,
  printSummary,
  ratios,
  reportFailures,
  SDK_MULTIPLE_TARGET,
  SQLITE_CPU_TARGET,
  summarise,
  type Measured,
  type Ratios,
  type RunRecord,
  type ServerKey,
  type ServerSummary,
} from './lib/inbound-summary.js';
import { cpuMicros, pinGenerator, pinServer, type CorePlan } from './lib/cpu.js';
import { runDurableWrites, runFixedRate, type ModeServer } from './lib/inbound-modes.js';
import { rssOf } from './lib/common.js';
import { messageText, parseTextKind, TEXT_KINDS, type TextKind } from './lib/texts.js';
import { airlockConfig, guardedHeaders, messageSend, requestHeaders } from './lib/inbound-config.js';
import { readServePid, serveFiles } from '../src/server/reload/pid-file.js';
import { parseCollectorMode, type CollectorMode } from '../src/cli/collector.js';

/** A pause after each run, so that its connections are closed before the next server's load. */
const PAUSE_BETWEEN_RUNS_MS = 250;
let messageSendBody = messageSend('hello');

interface Settings {
  duration: number;
  rounds: number;
  connections: number;
  pipelining: number;
  warmup: number;
  json: boolean;
  /** Run the PostgreSQL row (off with --no-postgres, e.g. where no database runs). */
  postgres: boolean;
  /** `--rate R`: the fixed-rate mode at R req/s. */
  rate?: number;
  /** `--writes`: the durable-writes mode. */
  writes: boolean;
  /** `--node-flags "…"`: node options for Airlock's servers (not the peers), e.g. `--single-threaded-gc`. */
  nodeFlags: string[];
  /** `--gc MODE`: Airlock's `serve --gc` (default auto: single-threaded on the one core it starts on). */
  gc: CollectorMode;
  /** `--text KIND`: the message text (bench/lib/texts.ts); 'hello' by default. */
  text: TextKind;
}

interface BenchServer {
  key: ServerKey;
  label: string;
  child: ChildServer;
  target: Target;
}

// ---------------------------------------------------------------- settings and header

function parseSettings(argv: string[]): Settings {
  // The mode flags are this section's own: taken out before the common parse.
  const rest = [...argv];
  const rateAt = rest.indexOf('--rate');
  const rate = rateAt === -1 ? undefined : Number(rest.splice(rateAt, 2)[1]);
  if (rate !== undefined && !(rate > 0)) throw new Error('--rate must be a positive number of requests per second');
  const writesAt = rest.indexOf('--writes');
  if (writesAt !== -1) rest.splice(writesAt, 1);
  const nodeFlagsAt = rest.indexOf('--node-flags');
  const nodeFlags = nodeFlagsAt === -1 ? [] : (rest.splice(nodeFlagsAt, 2)[1] ?? '').split(/\s+/).filter(Boolean);
  if ((nodeFlagsAt !== -1 && nodeFlags.length === 0) || nodeFlags.some((flag) => !flag.startsWith('--'))) {
    throw new Error(
      '--node-flags takes node options in one argument, each starting with --, e.g. --node-flags --single-threaded-gc',
    );
  }
  const textAt = rest.indexOf('--text');
  const text = textAt === -1 ? 'hello' : parseTextKind(rest.splice(textAt, 2)[1] ?? '');
  if (text === undefined) throw new Error(`--text must be one of ${TEXT_KINDS.join(', ')}`);
  const gcAt = rest.indexOf('--gc');
  const gc = gcAt === -1 ? 'auto' : parseCollectorMode(rest.splice(gcAt, 2)[1] ?? '');
  if (gc === undefined) throw new Error('--gc must be auto, single-threaded or concurrent (airlock serve --gc)');
  const flags = parseCommonFlags(
    rest,
    { duration: 5, rounds: 3, connections: 50, warmup: 3 },
    'usage: npm run bench:inbound -- [--duration S=5] [--rounds N=3] [--connections C=50] [--warmup S=3] [--json] [--no-postgres] [--node-flags "--opt ..."] [--gc MODE] [--text KIND]',
  );
  return {
    ...flags,
    pipelining: 1,
    ...(rate === undefined ? {} : { rate }),
    writes: writesAt !== -1,
    nodeFlags,
    gc,
    text,
  };
}

function machine(): { node: string; platform: string; cpuModel: string; cpuCount: number } {
  const list = cpus();
  return {
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    cpuModel: list[0]?.model.trim() ?? 'unknown',
    cpuCount: list.length,
  };
}

function printHeader(settings: Settings): void {
  const host = machine();
  const load = loadavg().map((value) => value.toFixed(2));
  console.log('Airlock inbound benchmark: v0.3 message/send, Airlock vs raw node:http vs @a2a-js/sdk');
  console.log(
    `node ${host.node}  ${host.platform}  CPU: ${host.cpuModel} × ${host.cpuCount}  load avg ${load.join(' ')}`,
  );
  console.log(
    `${settings.connections} connections, pipelining ${settings.pipelining}, ${settings.warmup} s warm-up per server, ` +
      `${settings.rounds} interleaved rounds × ${settings.duration} s per server; servers in child processes`,
  );
  if (settings.nodeFlags.length > 0) console.log(`Airlock's servers run with node ${settings.nodeFlags.join(' ')}`);
  if (settings.text !== 'hello') {
    console.log(
      `message text: ${settings.text} (${messageText(settings.text).length} characters): raw node:http and the floor answer a fixed reply and scan nothing, so compare the CPU µs/req column; the targets are stated for 'hello'`,
    );
  }
  console.log(`Airlock's servers start on the servers' core, as on a one-core host, with serve --gc ${settings.gc}`);
  console.log('');
}

// ---------------------------------------------------------------- servers

/** `--node-flags`, for every Airlock server this run starts (set once, from the settings). */
let airlockNodeFlags: readonly string[] = [];
/** `--gc`, likewise. */
let airlockGc: CollectorMode = 'auto';

/**
 * Airlock starts on the servers' core, as a one-core deployment does, so what it does there by
 * default is what is measured (it serves from a second process with `--single-threaded-gc`,
 * src/cli/collector.ts); its CPU and RSS are read from the process that wrote the pid file.
 */
function onServerCore(configPath: string): { startOnCore: number; servingPid: () => number | undefined } {
  return { startOnCore: 0, servingPid: () => readServePid(serveFiles(configPath)) };
}

async function startAirlock(token: string, workDir: string, guarded: boolean): Promise<BenchServer> {
  const configPath = join(workDir, guarded ? 'airlock-guarded.yaml' : 'airlock.yaml');
  writeFileSync(configPath, airlockConfig(guarded, workDir), { mode: 0o600 });
  const child = await startChild({
    name: guarded ? 'guarded' : 'airlock',
    // The built gateway, as `npm start` runs it (`npm run bench` builds first).
    script: 'dist/cli/main.js',
    args: ['serve', '--config', configPath, '--log-level', 'silent', '--gc', airlockGc],
    env: { BENCH_TOKEN: token },
    nodeFlags: airlockNodeFlags,
    ...onServerCore(configPath),
  });
  const headers = guarded ? guardedHeaders(token) : requestHeaders(token);
  const target = { url: `${child.baseUrl}/a2a/echo`, headers, body: messageSendBody };
  return guarded
    ? { key: 'guarded', label: 'Airlock (every guard)', child, target }
    : { key: 'airlock', label: 'Airlock (echo, auth)', child, target };
}

async function startRaw(token: string): Promise<BenchServer> {
  const child = await startChild({ name: 'raw', script: 'bench/peers/raw-http.ts' });
  const target = { url: `${child.baseUrl}/`, headers: requestHeaders(token), body: messageSendBody };
  return { key: 'raw', label: 'raw node:http', child, target };
}

/**
 * The floor: the every-guard row's work by hand (audit rows, tasks in a Map), or with `sqlite` the
 * SQLite row's (no audit; a table with a per-principal share and an age index, `synchronous=FULL`).
 */
async function startFloor(
  token: string,
  workDir: string,
  store?: 'sqlite',
  nodeFlags: readonly string[] = [],
): Promise<BenchServer> {
  const env: Record<string, string> =
    store === 'sqlite'
      ? { FLOOR_AUDIT: '0', FLOOR_STORE: 'sqlite', FLOOR_DATA: join(workDir, 'floor-sqlite') }
      : { FLOOR_AUDIT_FILE: join(workDir, 'floor-audit.jsonl') };
  const child = await startChild({
    name: store === 'sqlite' ? 'floor-sqlite' : 'floor',
    script: 'bench/peers/floor-http.ts',
    env: { BENCH_TOKEN: token, ...env },
    nodeFlags,
  });
  const target = { url: `${child.baseUrl}/`, headers: requestHeaders(token), body: messageSendBody };
  return store === 'sqlite'
    ? { key: 'floor-sqlite', label: 'floor, SQLite (by hand)', child, target }
    : { key: 'floor', label: 'floor (the work by hand)', child, target };
}

async function startSdk(token: string): Promise<BenchServer> {
  const child = await startChild({ name: 'sdk', script: 'bench/peers/sdk-echo.ts', env: { BENCH_TOKEN: token } });
  const target = { url: `${child.baseUrl}/a2a/jsonrpc`, headers: requestHeaders(token), body: messageSendBody };
  return { key: 'sdk', label: '@a2a-js/sdk (express)', child, target };
}

/**
 * Airlock as the plain row (echo, auth), on a durable store: SQLite (`--data`, synchronous=FULL:
 * each acknowledged task is on disk before the reply) or PostgreSQL (a schema of its own).
 */
async function startDurable(
  token: string,
  workDir: string,
  kind: 'sqlite' | 'postgres',
  extra: { env?: Record<string, string>; url?: string } = {},
): Promise<BenchServer> {
  const configPath = join(workDir, `airlock-${kind}.yaml`);
  const store = kind === 'postgres' ? postgresStoreLines(benchSchema, extra.url) : [];
  writeFileSync(configPath, airlockConfig(false, workDir, store), { mode: 0o600 });
  const args = ['serve', '--config', configPath, '--log-level', 'silent', '--gc', airlockGc];
  if (kind === 'sqlite') args.push('--data', join(workDir, 'sqlite'));
  const child = await startChild({
    name: kind,
    script: 'dist/cli/main.js',
    args,
    env: { BENCH_TOKEN: token, ...extra.env },
    nodeFlags: airlockNodeFlags,
    ...onServerCore(configPath),
  });
  const target = { url: `${child.baseUrl}/a2a/echo`, headers: requestHeaders(token), body: messageSendBody };
  const label = kind === 'sqlite' ? 'Airlock (SQLite)' : 'Airlock (PostgreSQL)';
  return { key: kind, label, child, target };
}

/** The PostgreSQL schema of this run, dropped when it ends. */
const benchSchema = `airlock_bench_${randomBytes(4).toString('hex')}`;

/** Started one after the other so that start-up work never overlaps; each reply is checked. */
async function startServers(token: string, workDir: string, settings: Settings): Promise<BenchServer[]> {
  const servers = [
    await startAirlock(token, workDir, false),
    await startAirlock(token, workDir, true),
    await startDurable(token, workDir, 'sqlite'),
    ...(settings.postgres ? [await startDurable(token, workDir, 'postgres')] : []),
    await startRaw(token),
    await startFloor(token, workDir),
    await startFloor(token, workDir, 'sqlite'),
    await startSdk(token),
  ];
  for (const server of servers) {
    await verifyReply(server.label, server.target);
    console.log(`${server.label.padEnd(22)} pid ${server.child.pid}  ${server.target.url}  reply ok`);
  }
  console.log('');
  return servers;
}

// ---------------------------------------------------------------- measuring

function loadOptions(settings: Settings, duration: number): LoadOptions {
  return { connections: settings.connections, pipelining: settings.pipelining, duration };
}

async function measure(
  server: BenchServer,
  options: LoadOptions,
  neighbours: readonly BenchServer[],
): Promise<Measured> {
  server.child.assertAlive();
  const neighboursCpu = (): number => neighbours.reduce((sum, other) => sum + (cpuMicros(other.child.pid) ?? 0), 0);
  const neighboursBefore = neighboursCpu();
  const before = cpuMicros(server.child.pid);
  const stats = await runLoad(server.target, options);
  const after = cpuMicros(server.child.pid);
  const neighboursCpuMs = (neighboursCpu() - neighboursBefore) / 1000;
  server.child.assertAlive();
  const rss = rssOf(server.child.pid);
  const cpuPerRequest =
    before === undefined || after === undefined || stats.requests === 0
      ? Number.NaN
      : (after - before) / stats.requests;
  await sleep(PAUSE_BETWEEN_RUNS_MS);
  return { stats, cpuPerRequest, rss, neighboursCpuMs };
}

function describeRun({ stats, cpuPerRequest, neighboursCpuMs }: Measured): string {
  return (
    `${formatInt(stats.reqPerSec).padStart(7)} req/s  cpu ${formatInt(cpuPerRequest).padStart(5)} µs/req  p50 ${formatMs(stats.p50).padStart(6)} ms  ` +
    `p99 ${formatMs(stats.p99).padStart(6)} ms  non-2xx ${stats.non2xx}  errors ${stats.errors}  timeouts ${stats.timeouts}  ` +
    `others ${formatInt(neighboursCpuMs)} ms`
  );
}

function othersThan(servers: readonly BenchServer[], server: BenchServer): BenchServer[] {
  return servers.filter((other) => other !== server);
}

async function warmUp(servers: readonly BenchServer[], settings: Settings): Promise<number> {
  if (settings.warmup === 0) return 0;
  let failures = 0;
  for (const server of servers) {
    const run = await measure(server, loadOptions(settings, settings.warmup), othersThan(servers, server));
    failures += run.stats.non2xx + run.stats.errors + run.stats.timeouts;
    console.log(`warm-up   ${server.key.padEnd(8)} ${describeRun(run)}`);
  }
  console.log('');
  return failures;
}

/** Round r runs the servers starting at index r mod n: every server takes every position equally often. */
function roundOrder<T>(items: readonly T[], round: number): T[] {
  return items.map((_, index) => items[(index + round) % items.length]!);
}

async function measureRounds(servers: readonly BenchServer[], settings: Settings): Promise<RunRecord[]> {
  const records: RunRecord[] = [];
  for (let round = 0; round < settings.rounds; round++) {
    const order = roundOrder(servers, round);
    for (const [position, server] of order.entries()) {
      const run = await measure(server, loadOptions(settings, settings.duration), othersThan(servers, server));
      records.push({ round: round + 1, position: position + 1, server: server.key, ...run });
      console.log(`round ${round + 1}/${settings.rounds} ${server.key.padEnd(8)} ${describeRun(run)}`);
    }
  }
  console.log('');
  return records;
}

function isoBasic(date: Date): string {
  return date
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
}

function writeJson(
  startedAt: Date,
  settings: Settings,
  records: readonly RunRecord[],
  summaries: readonly ServerSummary[],
  result: Ratios,
): string {
  const dir = join(REPO_ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  if (!existsSync(join(dir, '.gitkeep'))) writeFileSync(join(dir, '.gitkeep'), '');
  const path = join(dir, `inbound-${isoBasic(startedAt)}.json`);
  const document = {
    benchmark: 'inbound message/send',
    startedAt: startedAt.toISOString(),
    machine: machine(),
    settings,
    cores,
    target: {
      guardedCpu: GUARDED_CPU_TARGET,
      sqliteCpu: SQLITE_CPU_TARGET,
      postgresCpu: POSTGRES_CPU_TARGET,
      guardedToRaw: GUARDED_REQ_TARGET,
      lastToFirst: FLAT_TARGET,
      guardedToSdk: SDK_MULTIPLE_TARGET,
    },
    summary: summaries,
    ratios: result,
    runs: records,
  };
  writeFileSync(path, `${JSON.stringify(document, null, 2)}\n`);
  return path;
}

// ---------------------------------------------------------------- main

let workDir: string | undefined;
let cores: CorePlan | undefined;

function removeWorkDir(): void {
  if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true });
  workDir = undefined;
}

async function shutdown(): Promise<void> {
  await stopAllChildren();
  removeWorkDir();
  await dropBenchSchemas([benchSchema]);
}

function onSignal(signal: NodeJS.Signals, exitCode: number): void {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping the servers`);
    shutdown().finally(() => process.exit(exitCode));
  });
}

async function main(): Promise<number> {
  const settings = parseSettings(process.argv.slice(2));
  airlockNodeFlags = settings.nodeFlags;
  airlockGc = settings.gc;
  messageSendBody = messageSend(messageText(settings.text));
  const startedAt = new Date();
  process.on('exit', killAllChildrenNow);
  onSignal('SIGINT', 130);
  onSignal('SIGTERM', 143);
  printHeader(settings);

  const token = randomBytes(32).toString('base64url');
  workDir = mkdtempSync(join(tmpdir(), 'airlock-bench-'));
  try {
    if (settings.rate !== undefined) return await fixedRateMode(token, workDir, settings, settings.rate);
    if (settings.writes) return await writesMode(token, workDir, settings);
    const servers = await startServers(token, workDir, settings);
    // The servers on one core, autocannon (this process) on another: each server's CPU per
    // request is its own, not shared with the load generator's.
    cores = pinGenerator();
    for (const server of servers) pinServer(server.child.pid, cores);
    console.log(
      cores.pinned
        ? `pinned: servers on core ${cores.server}, load generator on core ${cores.generator}\n`
        : 'not pinned (one core or no taskset): servers and load generator share the cores\n',
    );
    const warmupFailures = await warmUp(servers, settings);
    const records = await measureRounds(servers, settings);
    const summaries = summarise(servers, records);
    const result = ratios(summaries, records);
    printSummary(summaries, result, settings.rounds);
    const clean = reportFailures(summaries, warmupFailures);
    if (settings.json) console.log(`\nwrote ${writeJson(startedAt, settings, records, summaries, result)}`);
    return clean ? 0 : 1;
  } finally {
    await shutdown();
  }
}

// ---------------------------------------------------------------- modes

function toMode(server: BenchServer): ModeServer {
  return { key: server.key, label: server.label, pid: server.child.pid!, target: server.target };
}

async function pinAll(servers: readonly BenchServer[]): Promise<void> {
  for (const server of servers) {
    await verifyReply(server.label, server.target);
    console.log(`${server.label.padEnd(22)} pid ${server.child.pid}  reply ok`);
  }
  cores = pinGenerator();
  for (const server of servers) pinServer(server.child.pid, cores);
  console.log(
    cores.pinned ? `pinned: servers on core ${cores.server}, load on core ${cores.generator}\n` : 'not pinned\n',
  );
}

async function fixedRateMode(token: string, dir: string, settings: Settings, rate: number): Promise<number> {
  // The floor too: what the work alone adds to raw's tail at this rate (its tasks and rows are as
  // many as Airlock's, and so are its young-generation collections), with the collector Airlock's
  // `serve --gc auto` picks on the servers' one core, so that the two tails are the same kind.
  const floor = await startFloor(token, dir, undefined, ['--single-threaded-gc']);
  const servers = [await startRaw(token), await startAirlock(token, dir, true), floor];
  await pinAll(servers);
  const { failures } = await runFixedRate(servers.map(toMode), { ...settings, rate });
  if (failures > 0) console.log(`\nWARNING: ${failures} failed requests: figures not comparable`);
  return failures === 0 ? 0 : 1;
}

/** A database of its own, so that pg_stat_database counts only this gateway's work. */
const benchDatabase = `airlock_bench_${randomBytes(4).toString('hex')}`;
let benchDatabaseCreated = false;

async function writesMode(token: string, dir: string, settings: Settings): Promise<number> {
  const statementsFile = (key: string): string => join(dir, `statements-${key}.json`);
  const preload = join(REPO_ROOT, 'bench', 'peers', 'count-statements.cjs');
  const env = (key: string): Record<string, string> => ({
    NODE_OPTIONS: `--require ${preload}`,
    AIRLOCK_BENCH_STATEMENTS_FILE: statementsFile(key),
  });
  const servers = [await startDurable(token, dir, 'sqlite', { env: env('sqlite') })];
  const { default: pg } = await import('pg');
  const admin = new pg.Client({ connectionString: BENCH_DATABASE_URL });
  let pgOption: { client: typeof admin; database: string } | undefined;
  if (settings.postgres) {
    await admin.connect();
    await admin.query(`CREATE DATABASE ${benchDatabase}`);
    benchDatabaseCreated = true;
    const url = new URL(BENCH_DATABASE_URL);
    url.pathname = `/${benchDatabase}`;
    servers.push(await startDurable(token, dir, 'postgres', { env: env('postgres'), url: url.toString() }));
    pgOption = { client: admin, database: benchDatabase };
  }
  await pinAll(servers);
  try {
    const failures = await runDurableWrites(servers.map(toMode), {
      ...settings,
      statementsFile,
      workDir: dir,
      ...(pgOption ? { pg: pgOption } : {}),
    });
    if (failures > 0) console.log(`\nWARNING: ${failures} failed requests: figures not comparable`);
    return failures === 0 ? 0 : 1;
  } finally {
    await stopAllChildren();
    if (benchDatabaseCreated)
      await admin.query(`DROP DATABASE IF EXISTS ${benchDatabase} WITH (FORCE)`).catch(() => undefined);
    await admin.end().catch(() => undefined);
  }
}

main().then(
  (code) => process.exit(code),
  async (error: unknown) => {
    console.error(`bench failed: ${error instanceof Error ? error.message : String(error)}`);
    await shutdown();
    process.exit(1);
  },
);
