/**
 * Where a request's CPU goes, Airlock beside the guarded floor: both servers started with V8's
 * sampling profiler (`--cpu-prof`), warmed up, then loaded in `--rounds` rounds of `--duration`
 * seconds, the two in alternating order so that the machine's drift falls on both alike (servers
 * on one core, the load on the other, as `bench:pair`), and stopped; then the samples taken during
 * their loads are split per request: the server's own JavaScript (Airlock's by folder), node's, V8's
 * built-ins and native code, the collector. The every-guard row: the gate, auth, every limit and
 * content rule, the audit file; the guarded floor (bench/peers/floor-http.ts with
 * FLOOR_GUARDS=1) does the same work and checks in one function. With `--store sqlite|postgres`
 * the durable row instead, as `bench:pair --store` runs it: Airlock with echo and auth and its
 * tasks in the store (no audit file), beside the guarded floor with its tasks in the store's
 * table; the database's own processes are not profiled. The profiler's own cost is in
 * every figure (about 1.5–2× the unprofiled CPU at the default interval, printed beside it), so
 * read the split and the difference, not the totals.
 *
 * Usage: node --import tsx bench/profile.ts [--rounds N=4] [--duration S=3] [--warmup S=3] [--connections C=50]
 *   [--interval US=100] [--top N=25] [--store sqlite|postgres] [--json]
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT, startChild, type ChildServer } from './lib/children.js';
import {
  dropBenchSchemas,
  installShutdown,
  parseCommonFlags,
  positiveInteger,
  postgresStoreLines,
  printMachine,
  roundOrder,
  runMain,
  takeValueFlags,
  writeResult,
  type CommonFlags,
} from './lib/common.js';
import { cpuPerRequest, describePlan, pinGenerator, pinServer } from './lib/cpu.js';
import {
  largestDifferences,
  PROFILE_PARTS,
  splitProfile,
  type CpuProfile,
  type ProfileSplit,
  type ProfileWindow,
} from './lib/cpu-profile.js';
import {
  airlockConfig,
  floorStoreEnv,
  guardedHeaders,
  messageSend,
  requestHeaders,
  startPinnedAirlock,
} from './lib/inbound-config.js';
import { runLoad, verifyReply, type Target } from './lib/load.js';
import { renderTable } from './lib/report.js';

const USAGE =
  'usage: node --import tsx bench/profile.ts [--rounds N=4] [--duration S=3] [--warmup S=3] [--connections C=50] [--interval US=100] [--top N=25] [--store sqlite|postgres] [--json]';

interface Flags extends CommonFlags {
  /** µs between the profiler's samples. */
  interval: number;
  /** Rows printed a table. */
  top: number;
  /** The durable row's store; undefined: the every-guard row (memory store, audit file). */
  store: 'sqlite' | 'postgres' | undefined;
}

const workDirs: string[] = [];
const schemas: string[] = [];

/** Its own flags, then the common ones (`--duration` is one load's seconds, each server loaded once a round). */
function parseFlags(argv: readonly string[]): Flags {
  const { values, rest } = takeValueFlags(argv, ['--interval', '--top', '--store'], USAGE);
  const store = values['--store'];
  if (store !== undefined && store !== 'sqlite' && store !== 'postgres') {
    throw new Error(`--store must be sqlite or postgres\n${USAGE}`);
  }
  return {
    ...parseCommonFlags(rest, { duration: 3, rounds: 4, connections: 50, warmup: 3 }, USAGE),
    interval: positiveInteger('--interval', values['--interval'] ?? '100'),
    top: positiveInteger('--top', values['--top'] ?? '25'),
    store,
  };
}

interface Profiled {
  name: string;
  child: ChildServer;
  target: Target;
  profileDir: string;
}

/** The node options that make a server write its profile into `dir` when it exits. */
function profilerFlags(dir: string, interval: number): string[] {
  // --single-threaded-gc as `serve --gc auto` gives a one-core server: Airlock then serves
  // from the process started (no relaunch), which is the one the profiler is in.
  return ['--single-threaded-gc', '--cpu-prof', `--cpu-prof-dir=${dir}`, `--cpu-prof-interval=${interval}`];
}

function schemaFor(): string {
  const schema = `airlock_profile_${randomBytes(4).toString('hex')}`;
  schemas.push(schema);
  return schema;
}

/** A work directory with an empty `profile/` for the profiler's files. */
function profiledDir(prefix: string): { dir: string; profileDir: string } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  workDirs.push(dir);
  const profileDir = join(dir, 'profile');
  mkdirSync(profileDir);
  return { dir, profileDir };
}

async function startAirlock(token: string, body: string, flags: Flags): Promise<Profiled> {
  const { dir, profileDir } = profiledDir('airlock-profile-');
  const { store } = flags;
  const child = await startPinnedAirlock({
    name: 'airlock',
    buildDir: REPO_ROOT,
    workDir: dir,
    config:
      store === undefined
        ? airlockConfig(true, dir)
        : airlockConfig(false, dir, store === 'postgres' ? postgresStoreLines(schemaFor()) : []),
    ...(store === 'sqlite' && { dataDir: join(dir, 'sqlite') }),
    token,
    nodeFlags: profilerFlags(profileDir, flags.interval),
  });
  const headers = store === undefined ? guardedHeaders(token) : requestHeaders(token);
  return { name: 'airlock', child, profileDir, target: { url: `${child.baseUrl}/a2a/echo`, headers, body } };
}

async function startGuardedFloor(token: string, body: string, flags: Flags): Promise<Profiled> {
  const { dir, profileDir } = profiledDir('airlock-profile-floor-');
  const { store } = flags;
  const child = await startChild({
    name: 'floor+guards',
    script: 'bench/peers/floor-http.ts',
    nodeFlags: profilerFlags(profileDir, flags.interval),
    env: {
      BENCH_TOKEN: token,
      FLOOR_GUARDS: '1',
      ...(store === undefined
        ? { FLOOR_AUDIT_FILE: join(dir, 'audit.jsonl') }
        : floorStoreEnv(store, store === 'sqlite' ? join(dir, 'sqlite') : schemaFor())),
    },
    startOnCore: 0,
  });
  const headers = store === undefined ? guardedHeaders(token) : requestHeaders(token);
  return { name: 'floor+guards', child, profileDir, target: { url: `${child.baseUrl}/`, headers, body } };
}

/** What one server's loads added up to: the windows they ran in, their requests and CPU. */
interface Loads {
  windows: ProfileWindow[];
  requests: number;
  cpuMicros: number;
  reqPerSec: number[];
}

/** One load of `server` (`cpuPerRequest`), its window and CPU added to `loads`. */
async function loadOnce(server: Profiled, loads: Loads, flags: Flags): Promise<void> {
  const fromMicros = Number(process.hrtime.bigint() / 1000n);
  const load = await cpuPerRequest(server.child, server.target, flags.duration, flags.connections);
  const toMicros = Number(process.hrtime.bigint() / 1000n);
  if (load.failed > 0) throw new Error(`${server.name}: ${load.failed} requests failed under load`);
  loads.windows.push({ fromMicros, toMicros });
  loads.requests += load.requests;
  loads.cpuMicros += load.cpu * load.requests;
  loads.reqPerSec.push(load.reqPerSec);
}

/** Stops `server` (its profile is written as it exits) and splits the samples of its loads. */
async function splitLoads(server: Profiled, loads: Loads): Promise<{ split: ProfileSplit; cpu: number }> {
  await server.child.stop();
  const split = splitProfile(mainThreadProfile(server.profileDir), loads.windows, loads.requests, {
    root: REPO_ROOT.endsWith('/') ? REPO_ROOT : `${REPO_ROOT}/`,
    ownPrefixes: ['dist/', 'node_modules/.cache/airlock-bench-peers/'],
  });
  if (split.samples === 0) {
    throw new Error(
      `${server.name}: no profile sample fell in its loads' windows (V8's clock is not process.hrtime's here)`,
    );
  }
  return { split, cpu: loads.cpuMicros / loads.requests };
}

/** The profile of the main thread (thread 0 in V8's file name); worker threads write their own. */
function mainThreadProfile(dir: string): CpuProfile {
  const files = readdirSync(dir).filter((name) => name.endsWith('.cpuprofile'));
  const main = files.find((name) => /\.\d+\.0\.\d+\.cpuprofile$/.test(name)) ?? files[0];
  if (main === undefined) throw new Error(`no profile written in ${dir} (did the server exit cleanly?)`);
  return JSON.parse(readFileSync(join(dir, main), 'utf8')) as CpuProfile;
}

function fixed(value: number): string {
  return Number.isFinite(value) ? value.toFixed(2) : '—';
}

function report(
  airlock: ProfileSplit,
  floor: ProfileSplit,
  cpu: { airlock: number; floor: number },
  top: number,
): void {
  console.log(
    renderTable(
      ['µs a request', 'airlock', 'floor+guards', 'difference'],
      [
        ['CPU (/proc, profiler running)', fixed(cpu.airlock), fixed(cpu.floor), fixed(cpu.airlock - cpu.floor)],
        ['busy in the profile', fixed(airlock.busy), fixed(floor.busy), fixed(airlock.busy - floor.busy)],
        ...PROFILE_PARTS.map(([part, label]) => [
          `  ${label}`,
          fixed(airlock.parts[part]),
          fixed(floor.parts[part]),
          fixed(airlock.parts[part] - floor.parts[part]),
        ]),
      ],
    ),
  );
  console.log(`\nAirlock's own JavaScript by folder (µs a request)\n`);
  console.log(
    renderTable(
      ['folder', 'µs'],
      airlock.folders.slice(0, top).map((row) => [row.folder, fixed(row.micros)]),
    ),
  );
  for (const [name, split] of [
    ['airlock', airlock],
    ['floor+guards', floor],
  ] as const) {
    console.log(`\n${name}: largest functions (self time, µs a request)\n`);
    console.log(
      renderTable(
        ['function', 'part', 'µs'],
        split.functions.slice(0, top).map((entry) => [entry.name, entry.part, fixed(entry.micros)]),
      ),
    );
  }
  console.log(`\nnode's and V8's native functions Airlock spends more in than the floor (µs a request)\n`);
  console.log(
    renderTable(
      ['function', 'airlock', 'floor+guards', 'difference'],
      largestDifferences(
        airlock,
        floor,
        Math.min(top, 15),
        (entry) => entry.part === 'node' || entry.part === 'native',
      ).map((row) => [row.name, fixed(row.a), fixed(row.b), fixed(row.a - row.b)]),
    ),
  );
}

async function main(): Promise<number> {
  const flags = parseFlags(process.argv.slice(2));
  const startedAt = new Date();
  printMachine();
  const plan = pinGenerator();
  console.log(describePlan(plan));
  console.log(
    `${flags.warmup} s warm-up, then ${flags.rounds} rounds × ${flags.duration} s profiled per server, in alternating order (every ${flags.interval} µs), ${flags.connections} connections, ${flags.store === undefined ? 'the every-guard row' : `the ${flags.store} row`}\n`,
  );
  const token = `tok-${randomBytes(16).toString('hex')}`;
  const body = messageSend('hello');
  const servers = [await startAirlock(token, body, flags), await startGuardedFloor(token, body, flags)];
  const loads = servers.map((): Loads => ({ windows: [], requests: 0, cpuMicros: 0, reqPerSec: [] }));
  for (const server of servers) {
    pinServer(server.child.pid, plan);
    await verifyReply(server.name, server.target);
    await runLoad(server.target, { connections: flags.connections, pipelining: 1, duration: flags.warmup });
  }
  for (let round = 0; round < flags.rounds; round++) {
    for (const index of roundOrder([0, 1], round)) await loadOnce(servers[index]!, loads[index]!, flags);
    const line = servers.map((server, index) => `${server.name} ${Math.round(loads[index]!.reqPerSec[round]!)}`);
    console.log(`round ${round + 1}/${flags.rounds}  req/s under the profiler: ${line.join('  ')}`);
  }
  const airlock = await splitLoads(servers[0]!, loads[0]!);
  const floor = await splitLoads(servers[1]!, loads[1]!);
  console.log('');
  report(airlock.split, floor.split, { airlock: airlock.cpu, floor: floor.cpu }, flags.top);
  if (flags.json) {
    const path = writeResult('profile', startedAt, { flags, airlock, floor });
    console.log(`results: ${path}`);
  }
  return 0;
}

const shutdown = installShutdown(async () => {
  await dropBenchSchemas(schemas);
  for (const dir of workDirs) rmSync(dir, { recursive: true, force: true });
});
runMain(main, shutdown);
