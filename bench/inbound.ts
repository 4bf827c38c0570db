/**
 * Inbound throughput: how fast Airlock answers `message/send`, next to the fastest possible
 * node:http server and to the official @a2a-js/sdk, measured in one run on one machine.
 *
 * What runs:
 * - **Airlock**: `airlock serve` with the echo agent and bearer-token auth on (a temporary config).
 * - **raw node:http** (bench/peers/raw-http.ts): reads each body, sends a fixed reply of the same
 *   size as Airlock's. The ceiling: any real server does at least this much.
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
 * How to read it: req/s is autocannon's mean of per-second counts; p50/p99 are response latencies in
 * ms at that load (closed loop: C connections, pipelining 1, so latency ≈ C / throughput). The table
 * shows the median over rounds and every round's req/s, so the spread is visible. Ratios are taken
 * from the medians; "Airlock / raw" is the share of the node:http ceiling that Airlock keeps (target
 * ≥ 0.60×). Any non-2xx answer, socket error or timeout is printed per run, and the run ends with a
 * warning and exit code 1: such numbers are not comparable.
 *
 * Usage: npm run bench:inbound -- [--duration S] [--rounds N] [--connections C] [--warmup S] [--json]
 * `--json` also writes bench/results/inbound-<ISO time>.json.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BENCH_DATABASE_URL, ECHO_AGENT_AND_CLIENT, parseCommonFlags } from './lib/common.js';
import { killAllChildrenNow, REPO_ROOT, startChild, stopAllChildren, type ChildServer } from './lib/children.js';
import { runLoad, verifyReply, type LoadOptions, type RunStats, type Target } from './lib/load.js';
import { formatInt, formatMs, formatRatio, median, renderTable } from './lib/report.js';

const AIRLOCK_TARGET = 0.6;
/** With every guard on (audit file, scrubbing, trusted-proxy parsing, API-key header, REST): the proof suites ask ≥ 0.60×. */
const GUARDED_TARGET = 0.6;
/** The durable stores (issue targets): every acknowledged task written before the reply. */
const SQLITE_TARGET = 0.4;
const POSTGRES_TARGET = 0.25;
/** The bench's own PostgreSQL schema, dropped at the end (DATABASE_URL or the local test database). */
const PAUSE_BETWEEN_RUNS_MS = 250;
const MESSAGE_SEND = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'message/send',
  params: {
    message: { kind: 'message', role: 'user', messageId: 'm-1', parts: [{ kind: 'text', text: 'hello' }] },
  },
});

type ServerKey = 'airlock' | 'guarded' | 'sqlite' | 'postgres' | 'raw' | 'sdk';

interface Settings {
  duration: number;
  rounds: number;
  connections: number;
  pipelining: number;
  warmup: number;
  json: boolean;
  /** Run the PostgreSQL row (off with --no-postgres, e.g. where no database runs). */
  postgres: boolean;
}

interface BenchServer {
  key: ServerKey;
  label: string;
  child: ChildServer;
  target: Target;
}

interface RunRecord {
  round: number;
  position: number;
  server: ServerKey;
  stats: RunStats;
}

interface ServerSummary {
  server: ServerKey;
  label: string;
  reqPerSec: number;
  p50: number;
  p99: number;
  roundsReqPerSec: number[];
  non2xx: number;
  errors: number;
  timeouts: number;
}

interface Ratios {
  airlockToRaw: number;
  guardedToRaw: number;
  sqliteToRaw: number;
  postgresToRaw: number;
  sdkToRaw: number;
  airlockToSdk: number;
}

// ---------------------------------------------------------------- settings and header

function parseSettings(argv: string[]): Settings {
  const flags = parseCommonFlags(
    argv,
    { duration: 5, rounds: 3, connections: 50, warmup: 3 },
    'usage: npm run bench:inbound -- [--duration S=5] [--rounds N=3] [--connections C=50] [--warmup S=3] [--json] [--no-postgres]',
  );
  return { ...flags, pipelining: 1 };
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
  console.log('');
}

// ---------------------------------------------------------------- servers

/**
 * The bench config. Every request passes the gate, auth, the rate limit (set high enough never
 * to refuse), body and depth limits, message limits, content rules, suspicious-pattern counting
 * and the in-flight caps in both variants; `guarded` adds what is off by default: the audit file
 * (two synchronous rows per task), reply scrubbing, X-Forwarded-For parsing for a trusted proxy,
 * the X-API-Key header and the REST routes.
 */
function airlockConfig(guarded: boolean, workDir: string, store: string[] = []): string {
  return [
    ...store,
    'server:',
    '  host: 127.0.0.1',
    '  port: 0',
    ...(guarded ? ['  trustedProxies: [127.0.0.1]', '  apiKeyHeader: true', '  rest: true'] : []),
    'limits:',
    '  requestsPerMinute: 100000000',
    ...(guarded
      ? [
          'content:',
          "  scrubSecrets: ['bench-secret-never-to-leave-0123456789']",
          'audit:',
          `  file: '${join(workDir, 'audit.jsonl')}'`,
        ]
      : []),
    ...ECHO_AGENT_AND_CLIENT,
    '',
  ].join('\n');
}

function requestHeaders(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
}

async function startAirlock(token: string, workDir: string, guarded: boolean): Promise<BenchServer> {
  const configPath = join(workDir, guarded ? 'airlock-guarded.yaml' : 'airlock.yaml');
  writeFileSync(configPath, airlockConfig(guarded, workDir), { mode: 0o600 });
  const child = await startChild({
    name: guarded ? 'guarded' : 'airlock',
    // The built gateway, as `npm start` runs it (`npm run bench` builds first).
    script: 'dist/cli/main.js',
    args: ['serve', '--config', configPath, '--log-level', 'silent'],
    env: { BENCH_TOKEN: token },
  });
  const headers = guarded ? { ...requestHeaders(token), 'x-forwarded-for': '127.0.0.1' } : requestHeaders(token);
  const target = { url: `${child.baseUrl}/a2a/echo`, headers, body: MESSAGE_SEND };
  return guarded
    ? { key: 'guarded', label: 'Airlock (every guard)', child, target }
    : { key: 'airlock', label: 'Airlock (echo, auth)', child, target };
}

async function startRaw(token: string): Promise<BenchServer> {
  const child = await startChild({ name: 'raw', script: 'bench/peers/raw-http.ts' });
  const target = { url: `${child.baseUrl}/`, headers: requestHeaders(token), body: MESSAGE_SEND };
  return { key: 'raw', label: 'raw node:http', child, target };
}

async function startSdk(token: string): Promise<BenchServer> {
  const child = await startChild({ name: 'sdk', script: 'bench/peers/sdk-echo.ts', env: { BENCH_TOKEN: token } });
  const target = { url: `${child.baseUrl}/a2a/jsonrpc`, headers: requestHeaders(token), body: MESSAGE_SEND };
  return { key: 'sdk', label: '@a2a-js/sdk (express)', child, target };
}

/**
 * Airlock as the plain row (echo, auth), on a durable store: SQLite (`--data`, synchronous=FULL:
 * each acknowledged task is on disk before the reply) or PostgreSQL (a schema of its own).
 */
async function startDurable(token: string, workDir: string, kind: 'sqlite' | 'postgres'): Promise<BenchServer> {
  const configPath = join(workDir, `airlock-${kind}.yaml`);
  const store =
    kind === 'postgres'
      ? ['store:', '  type: postgres', `  url: '${BENCH_DATABASE_URL}'`, `  schema: ${benchSchema}`]
      : [];
  writeFileSync(configPath, airlockConfig(false, workDir, store), { mode: 0o600 });
  const args = ['serve', '--config', configPath, '--log-level', 'silent'];
  if (kind === 'sqlite') args.push('--data', join(workDir, 'sqlite'));
  const child = await startChild({ name: kind, script: 'dist/cli/main.js', args, env: { BENCH_TOKEN: token } });
  const target = { url: `${child.baseUrl}/a2a/echo`, headers: requestHeaders(token), body: MESSAGE_SEND };
  const label = kind === 'sqlite' ? 'Airlock (SQLite)' : 'Airlock (PostgreSQL)';
  return { key: kind, label, child, target };
}

/** The PostgreSQL schema of this run, dropped when it ends. */
const benchSchema = `airlock_bench_${randomBytes(4).toString('hex')}`;

async function dropBenchSchema(): Promise<void> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: BENCH_DATABASE_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${benchSchema} CASCADE`);
  } catch {
    // Nothing to drop when PostgreSQL was never reached.
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Started one after the other so that start-up work never overlaps; each reply is checked. */
async function startServers(token: string, workDir: string, settings: Settings): Promise<BenchServer[]> {
  const servers = [
    await startAirlock(token, workDir, false),
    await startAirlock(token, workDir, true),
    await startDurable(token, workDir, 'sqlite'),
    ...(settings.postgres ? [await startDurable(token, workDir, 'postgres')] : []),
    await startRaw(token),
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

async function measure(server: BenchServer, options: LoadOptions): Promise<RunStats> {
  server.child.assertAlive();
  const stats = await runLoad(server.target, options);
  server.child.assertAlive();
  await sleep(PAUSE_BETWEEN_RUNS_MS);
  return stats;
}

function describeRun(stats: RunStats): string {
  return (
    `${formatInt(stats.reqPerSec).padStart(7)} req/s  p50 ${formatMs(stats.p50).padStart(6)} ms  ` +
    `p99 ${formatMs(stats.p99).padStart(6)} ms  non-2xx ${stats.non2xx}  errors ${stats.errors}  timeouts ${stats.timeouts}`
  );
}

async function warmUp(servers: readonly BenchServer[], settings: Settings): Promise<number> {
  if (settings.warmup === 0) return 0;
  let failures = 0;
  for (const server of servers) {
    const stats = await measure(server, loadOptions(settings, settings.warmup));
    failures += stats.non2xx + stats.errors + stats.timeouts;
    console.log(`warm-up   ${server.key.padEnd(8)} ${describeRun(stats)}`);
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
      const stats = await measure(server, loadOptions(settings, settings.duration));
      records.push({ round: round + 1, position: position + 1, server: server.key, stats });
      console.log(`round ${round + 1}/${settings.rounds} ${server.key.padEnd(8)} ${describeRun(stats)}`);
    }
  }
  console.log('');
  return records;
}

// ---------------------------------------------------------------- results

function summarise(servers: readonly BenchServer[], records: readonly RunRecord[]): ServerSummary[] {
  return servers.map((server) => {
    const runs = records.filter((record) => record.server === server.key).map((record) => record.stats);
    const sum = (pick: (stats: RunStats) => number): number => runs.reduce((total, stats) => total + pick(stats), 0);
    return {
      server: server.key,
      label: server.label,
      reqPerSec: median(runs.map((stats) => stats.reqPerSec)),
      p50: median(runs.map((stats) => stats.p50)),
      p99: median(runs.map((stats) => stats.p99)),
      roundsReqPerSec: runs.map((stats) => stats.reqPerSec),
      non2xx: sum((stats) => stats.non2xx),
      errors: sum((stats) => stats.errors),
      timeouts: sum((stats) => stats.timeouts),
    };
  });
}

function ratios(summaries: readonly ServerSummary[]): Ratios {
  const reqPerSec = (key: ServerKey): number =>
    summaries.find((summary) => summary.server === key)?.reqPerSec ?? Number.NaN;
  return {
    airlockToRaw: reqPerSec('airlock') / reqPerSec('raw'),
    guardedToRaw: reqPerSec('guarded') / reqPerSec('raw'),
    sqliteToRaw: reqPerSec('sqlite') / reqPerSec('raw'),
    postgresToRaw: reqPerSec('postgres') / reqPerSec('raw'),
    sdkToRaw: reqPerSec('sdk') / reqPerSec('raw'),
    airlockToSdk: reqPerSec('airlock') / reqPerSec('sdk'),
  };
}

function printSummary(summaries: readonly ServerSummary[], result: Ratios, rounds: number): void {
  const raw = summaries.find((summary) => summary.server === 'raw')?.reqPerSec ?? Number.NaN;
  const rows = summaries.map((summary) => [
    summary.label,
    formatInt(summary.reqPerSec),
    formatRatio(summary.reqPerSec / raw),
    formatMs(summary.p50),
    formatMs(summary.p99),
    summary.roundsReqPerSec.map(formatInt).join(' / '),
    String(summary.non2xx),
    String(summary.errors + summary.timeouts),
  ]);
  console.log(`Median of ${rounds} round(s):`);
  console.log(
    renderTable(['server', 'req/s', 'vs raw', 'p50 ms', 'p99 ms', 'req/s per round', 'non-2xx', 'errors'], rows),
  );
  console.log('');
  const verdict = result.airlockToRaw >= AIRLOCK_TARGET ? 'meets' : 'BELOW';
  console.log(
    `Airlock / raw  ${formatRatio(result.airlockToRaw)}  (${verdict} the target of ≥ ${AIRLOCK_TARGET.toFixed(2)}×)`,
  );
  const guardedVerdict = result.guardedToRaw >= GUARDED_TARGET ? 'meets' : 'BELOW';
  console.log(
    `Airlock, every guard / raw  ${formatRatio(result.guardedToRaw)}  (${guardedVerdict} the target of ≥ ${GUARDED_TARGET.toFixed(2)}×)`,
  );
  for (const [label, ratio, target] of [
    ['SQLite', result.sqliteToRaw, SQLITE_TARGET],
    ['PostgreSQL', result.postgresToRaw, POSTGRES_TARGET],
  ] as const) {
    if (Number.isNaN(ratio)) continue;
    const storeVerdict = ratio >= target ? 'meets' : 'BELOW';
    console.log(
      `Airlock, ${label} / raw  ${formatRatio(ratio)}  (${storeVerdict} the target of ≥ ${target.toFixed(2)}×)`,
    );
  }
  console.log(`SDK / raw      ${formatRatio(result.sdkToRaw)}`);
  console.log(`Airlock / SDK  ${formatRatio(result.airlockToSdk)}`);
}

/** Prints a warning and returns false when any request failed. */
function reportFailures(summaries: readonly ServerSummary[], warmupFailures: number): boolean {
  const failed = summaries.filter((summary) => summary.non2xx + summary.errors + summary.timeouts > 0);
  if (failed.length === 0 && warmupFailures === 0) return true;
  console.log('');
  for (const summary of failed) {
    console.log(
      `WARNING: ${summary.label}: ${summary.non2xx} non-2xx, ${summary.errors} errors, ${summary.timeouts} timeouts ` +
        'in measured runs; its numbers are not comparable',
    );
  }
  if (warmupFailures > 0) console.log(`WARNING: ${warmupFailures} failed requests during warm-up`);
  return false;
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
    target: {
      airlockToRaw: AIRLOCK_TARGET,
      guardedToRaw: GUARDED_TARGET,
      sqliteToRaw: SQLITE_TARGET,
      postgresToRaw: POSTGRES_TARGET,
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

function removeWorkDir(): void {
  if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true });
  workDir = undefined;
}

async function shutdown(): Promise<void> {
  await stopAllChildren();
  removeWorkDir();
  await dropBenchSchema();
}

function onSignal(signal: NodeJS.Signals, exitCode: number): void {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping the servers`);
    shutdown().finally(() => process.exit(exitCode));
  });
}

async function main(): Promise<number> {
  const settings = parseSettings(process.argv.slice(2));
  const startedAt = new Date();
  process.on('exit', killAllChildrenNow);
  onSignal('SIGINT', 130);
  onSignal('SIGTERM', 143);
  printHeader(settings);

  const token = randomBytes(32).toString('base64url');
  workDir = mkdtempSync(join(tmpdir(), 'airlock-bench-'));
  try {
    const servers = await startServers(token, workDir, settings);
    const warmupFailures = await warmUp(servers, settings);
    const records = await measureRounds(servers, settings);
    const summaries = summarise(servers, records);
    const result = ratios(summaries);
    printSummary(summaries, result, settings.rounds);
    const clean = reportFailures(summaries, warmupFailures);
    if (settings.json) console.log(`\nwrote ${writeJson(startedAt, settings, records, summaries, result)}`);
    return clean ? 0 : 1;
  } finally {
    await shutdown();
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
