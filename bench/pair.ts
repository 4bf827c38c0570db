/**
 * Paired rounds: the every-guard row of bench/inbound.ts (memory store, audit file, the same
 * config, body and headers) for two or more builds of the gateway, to tell a change of a few µs
 * from the machine's drift. Each round loads every build once, in an order that rotates, one
 * after the other within seconds; what is compared is each round's difference from the first
 * build, not the medians of separate runs. Give the first build twice (`--build a=DIR --build
 * a2=DIR`) for an A/A control: the spread two copies of one build show on this machine.
 *
 * A build is a directory holding a built gateway (`DIR/dist/cli/main.js`): a second checkout or
 * `git worktree add /tmp/base <commit>` with `npm run build` run there (node_modules may be a
 * symlink to this one's). Servers start on core 0 with `serve --gc auto`, as the inbound bench
 * starts them; the load runs here on the last core; CPU is the serving process's own (user +
 * system, every thread) per answered request.
 *
 * With `--peers`, raw node:http, the floor, the guarded floor (the floor with Airlock's always-on
 * checks, each a call of the project's own guard: bench/peers/floor-guards.ts) and the SDK's server
 * (bench/peers/, as `bench:inbound` runs them) join the rotation, and each build is judged against
 * them round by round: raw/build, floor/build and guarded floor/build CPU, build/raw and build/SDK
 * req/s, within one round, seconds apart, so that a slow spell of the machine that takes one row
 * of a long run and spares another does not decide a verdict.
 *
 * With `--fresh` every server is started anew for each load (a start, the warmup, the load, a
 * stop): a process keeps its own luck for its whole life (where its code and heap landed, what
 * the JIT chose), worth a few µs a request on some hosts, so without it one run compares one
 * process of each build; with it the rounds spread that luck as they spread the machine's drift.
 * Slower: a start and a warmup every load. The data (SQLite file, audit file, schema) stays.
 *
 * With `--store sqlite` the builds run the inbound bench's SQLite row instead (echo and auth, a
 * SQLite store, `synchronous=FULL`), and the floors among the peers write to SQLite too (no audit
 * rows, as the row has none; the guarded floor then skips the suspicious count, as Airlock does
 * without an audit trail); the SDK is left out (its target is the every-guard row's). With
 * `--store postgres` they run its PostgreSQL row (DATABASE_URL or the local `test` database, a
 * schema of each build's own, dropped at the end), and the floors write to a PostgreSQL table
 * (bench/peers/floor-postgres.ts, a schema each, no audit rows); the SDK is left out. The
 * database's own CPU is not in the figure, as in bench:inbound, and its processes are not pinned.
 *
 * Usage: node --import tsx bench/pair.ts --build NAME=DIR [--build NAME=DIR ...] [--peers] [--fresh]
 *        [--store memory|sqlite|postgres] [--rounds N=20] [--duration S=3] [--warmup S=2]
 *        [--connections C=50] [--text hello|ascii-4k|latin-4k|cyrillic-4k|chinese-4k] [--json]
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  dropBenchSchemas,
  installShutdown,
  parseCommonFlags,
  postgresStoreLines,
  printMachine,
  roundOrder,
  runMain,
  writeResult,
} from './lib/common.js';
import { startChild, type ChildServer } from './lib/children.js';
import { cpuPerRequest, describePlan, pinGenerator, pinServer } from './lib/cpu.js';
import {
  airlockConfig,
  floorStoreEnv,
  guardedHeaders,
  messageSend,
  requestHeaders,
  startPinnedAirlock,
} from './lib/inbound-config.js';
import { verifyReply, type Target } from './lib/load.js';
import { GUARDED_CPU_TARGET, POSTGRES_CPU_TARGET, SQLITE_CPU_TARGET } from './lib/inbound-summary.js';
import { renderPeerTable } from './lib/pair-peers.js';
import { median, renderTable } from './lib/report.js';
import { messageText, parseTextKind, TEXT_KINDS } from './lib/texts.js';

const USAGE =
  'usage: node --import tsx bench/pair.ts --build NAME=DIR [--build NAME=DIR ...] [--peers] [--fresh] [--store memory|sqlite|postgres] [--rounds N=20] [--duration S=3] [--warmup S=2] [--connections C=50] [--text KIND] [--json]';
type Peer = 'raw' | 'floor' | 'floor+guards' | 'sdk';
/** The row the builds run: every guard (memory store, audit file), the SQLite or the PostgreSQL row. */
type Store = 'memory' | 'sqlite' | 'postgres';
const STORES: readonly Store[] = ['memory', 'sqlite', 'postgres'];
const ROW_NAMES: Readonly<Record<Store, string>> = {
  memory: 'the every-guard row',
  sqlite: 'the SQLite row',
  postgres: 'the PostgreSQL row',
};
const CPU_TARGETS: Readonly<Record<Store, number>> = {
  memory: GUARDED_CPU_TARGET,
  sqlite: SQLITE_CPU_TARGET,
  postgres: POSTGRES_CPU_TARGET,
};
/**
 * The peers each row is read against: the SDK's target is the every-guard row's; the SQLite row
 * and the PostgreSQL row have their own floor and guarded floor (their tasks in a table of that
 * database).
 */
const ROW_PEERS: Readonly<Record<Store, readonly Peer[]>> = {
  memory: ['raw', 'floor', 'floor+guards', 'sdk'],
  sqlite: ['raw', 'floor', 'floor+guards'],
  postgres: ['raw', 'floor', 'floor+guards'],
};
const PEER_SCRIPTS: Readonly<Record<Peer, string>> = {
  raw: 'bench/peers/raw-http.ts',
  floor: 'bench/peers/floor-http.ts',
  'floor+guards': 'bench/peers/floor-http.ts',
  sdk: 'bench/peers/sdk-echo.ts',
};
const PAUSE_BETWEEN_RUNS_MS = 250;

/** What a run leaves, removed however it ends (its end, an error, Ctrl-C): see {@link installShutdown}. */
const workDirs: string[] = [];
/** The builds' PostgreSQL schemas (`--store postgres`). */
const schemas: string[] = [];
/** The PostgreSQL floors' schemas, one a peer for the whole run (dropped at the end with the builds'). */
const peerSchemas = new Map<Peer, string>();

function peerSchema(peer: Peer): string {
  let schema = peerSchemas.get(peer);
  if (schema === undefined) {
    schema = `airlock_pair_floor_${randomBytes(4).toString('hex')}`;
    peerSchemas.set(peer, schema);
    schemas.push(schema);
  }
  return schema;
}

interface Build {
  name: string;
  dir: string;
}

interface Started {
  /** A build's name, or the peer's: `raw`, `floor`, `floor+guards` or `sdk`. */
  name: string;
  /** The build's directory; undefined for a peer. */
  dir: string | undefined;
  child: ChildServer;
  target: Target;
}

function parseBuild(value: string): Build {
  const at = value.indexOf('=');
  if (at <= 0) throw new Error(`--build must be NAME=DIR, not ${value}`);
  const dir = resolve(value.slice(at + 1));
  if (!existsSync(join(dir, 'dist', 'cli', 'main.js'))) {
    throw new Error(`--build ${value}: ${dir}/dist/cli/main.js not found (run npm run build there)`);
  }
  return { name: value.slice(0, at), dir };
}

/**
 * A build on its row. `schema` is the build's own PostgreSQL schema (the PostgreSQL row only),
 * so that no build reads another's tasks.
 */
async function start(
  build: Build,
  store: Store,
  token: string,
  body: string,
  workDir: string,
  schema: string,
): Promise<Started> {
  const guarded = store === 'memory';
  const storeLines = store === 'postgres' ? postgresStoreLines(schema) : [];
  const child = await startPinnedAirlock({
    name: build.name,
    buildDir: build.dir,
    workDir,
    config: airlockConfig(guarded, workDir, storeLines),
    ...(store === 'sqlite' && { dataDir: join(workDir, 'sqlite') }),
    token,
  });
  return {
    name: build.name,
    dir: build.dir,
    child,
    target: {
      url: `${child.baseUrl}/a2a/echo`,
      headers: guarded ? guardedHeaders(token) : requestHeaders(token),
      body,
    },
  };
}

/**
 * raw node:http, the floor (its audit file in `workDir`; with the SQLite row, the SQLite floor
 * and its table there), the guarded floor or the SDK's server, as bench:inbound starts them.
 */
async function startPeer(peer: Peer, store: Store, token: string, body: string, workDir: string): Promise<Started> {
  const guarded = peer === 'floor+guards';
  const floorStore: Record<string, string> =
    store === 'sqlite'
      ? floorStoreEnv('sqlite', join(workDir, guarded ? 'floor-guards-sqlite' : 'floor-sqlite'))
      : store === 'postgres'
        ? floorStoreEnv('postgres', peerSchema(peer))
        : { FLOOR_AUDIT_FILE: join(workDir, guarded ? 'floor-guards-audit.jsonl' : 'floor-audit.jsonl') };
  const env: Record<string, string> =
    peer === 'floor' || guarded
      ? { BENCH_TOKEN: token, ...(guarded && { FLOOR_GUARDS: '1' }), ...floorStore }
      : { BENCH_TOKEN: token };
  const child = await startChild({ name: peer, script: PEER_SCRIPTS[peer], env });
  return {
    name: peer,
    dir: undefined,
    child,
    target: { url: `${child.baseUrl}${peer === 'sdk' ? '/a2a/jsonrpc' : '/'}`, headers: requestHeaders(token), body },
  };
}

/** One load of one server: its CPU µs a request (as bench:inbound counts it), and its failures. */
function measure(
  server: Started,
  duration: number,
  connections: number,
): Promise<{ cpu: number; reqPerSec: number; failed: number }> {
  return cpuPerRequest(server.child, server.target, duration, connections);
}

/** `--build NAME=DIR` (repeated), `--peers`, `--fresh`, `--store` and `--text KIND` taken out of `argv`; the rest are the common flags. */
function takeOwnFlags(argv: readonly string[]): {
  builds: Build[];
  peers: boolean;
  fresh: boolean;
  store: Store;
  text: string | undefined;
  rest: string[];
} {
  const rest: string[] = [];
  const builds: Build[] = [];
  let text: string | undefined;
  let peers = false;
  let fresh = false;
  let store: Store = 'memory';
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    if (flag === '--peers') {
      peers = true;
    } else if (flag === '--fresh') {
      fresh = true;
    } else if (flag === '--build' || flag === '--text' || flag === '--store') {
      const value = argv[++i];
      if (value === undefined) throw new Error(`${flag} needs a value\n${USAGE}`);
      if (flag === '--build') builds.push(parseBuild(value));
      else if (flag === '--text') text = value;
      else if ((STORES as readonly string[]).includes(value)) store = value as Store;
      else throw new Error(`--store must be memory, sqlite or postgres, not ${value}\n${USAGE}`);
    } else {
      rest.push(flag);
    }
  }
  return { builds, peers, fresh, store, text, rest };
}

async function main(): Promise<number> {
  const own = takeOwnFlags(process.argv.slice(2));
  const { rounds, duration, warmup, connections, json } = parseCommonFlags(
    own.rest,
    { duration: 3, rounds: 20, connections: 50, warmup: 2 },
    USAGE,
  );
  const { builds, peers, fresh, store } = own;
  if (builds.length < (peers ? 1 : 2)) throw new Error(`give at least two builds, or one with --peers\n${USAGE}`);
  if (new Set(builds.map((build) => build.name)).size !== builds.length) throw new Error('build names must differ');
  const text = parseTextKind(own.text ?? 'hello');
  if (text === undefined) throw new Error(`--text must be one of ${TEXT_KINDS.join(', ')}`);

  const startedAt = new Date();
  printMachine();
  const plan = pinGenerator();
  console.log(describePlan(plan));
  console.log(
    `${rounds} rounds × ${duration} s per build, ${connections} connections, text ${text}, ${ROW_NAMES[store]}${fresh ? ', every server started anew for each load' : ''}\n`,
  );

  const token = `tok-${randomBytes(16).toString('hex')}`;
  const body = messageSend(messageText(text));
  // What starts each server, once (or, with --fresh, for each of its loads).
  const launchers: { name: string; source: string; launch: () => Promise<Started> }[] = [];
  for (const build of builds) {
    const workDir = mkdtempSync(join(tmpdir(), `airlock-pair-${build.name}-`));
    workDirs.push(workDir);
    const schema = `airlock_pair_${randomBytes(4).toString('hex')}`;
    if (store === 'postgres') schemas.push(schema);
    launchers.push({
      name: build.name,
      source: build.dir,
      launch: () => start(build, store, token, body, workDir, schema),
    });
  }
  if (peers) {
    const workDir = mkdtempSync(join(tmpdir(), 'airlock-pair-peers-'));
    workDirs.push(workDir);
    for (const peer of ROW_PEERS[store]) {
      launchers.push({
        name: peer,
        source: PEER_SCRIPTS[peer],
        launch: () => startPeer(peer, store, token, body, workDir),
      });
    }
  }
  /** Starts one server, pinned, its reply checked, warmed up unless told not to. */
  const ready = async (index: number, warm = true): Promise<Started> => {
    const launcher = launchers[index]!;
    const server = await launcher.launch();
    pinServer(server.child.pid, plan);
    await verifyReply(launcher.name, server.target);
    if (warm && warmup > 0) await measure(server, warmup, connections);
    return server;
  };
  const servers: Started[] = [];
  for (let index = 0; index < launchers.length; index++) {
    // With --fresh this start only checks the server: each load starts (and warms) its own.
    const server = await ready(index, !fresh);
    servers.push(server);
    const { name, source } = launchers[index]!;
    console.log(`${name.padEnd(12)} ${fresh ? 'started anew for each load' : `pid ${server.child.pid}`}  ${source}`);
    if (fresh) await server.child.stop();
  }

  const cpu: number[][] = servers.map(() => []);
  const reqPerSec: number[][] = servers.map(() => []);
  let failed = 0;
  for (let round = 0; round < rounds; round++) {
    const line: string[] = [];
    for (const index of roundOrder(
      servers.map((_, i) => i),
      round,
    )) {
      const server = fresh ? await ready(index) : servers[index]!;
      const result = await measure(server, duration, connections);
      if (fresh) await server.child.stop();
      cpu[index]!.push(result.cpu);
      reqPerSec[index]!.push(result.reqPerSec);
      failed += result.failed;
      line.push(`${servers[index]!.name} ${result.cpu.toFixed(1)}`);
      await sleep(PAUSE_BETWEEN_RUNS_MS);
    }
    console.log(`round ${String(round + 1).padStart(2)}/${rounds}  ${line.join('  ')}`);
  }

  const base = cpu[0]!;
  const rows = servers.map((server, index) => {
    const own = cpu[index]!;
    if (index === 0 || server.dir === undefined) return [server.name, median(own).toFixed(1), '', ''];
    const differences = own.map((value, round) => value - base[round]!).filter(Number.isFinite);
    const lower = differences.filter((difference) => difference < 0).length;
    return [
      server.name,
      median(own).toFixed(1),
      `${median(differences) >= 0 ? '+' : ''}${median(differences).toFixed(1)}`,
      `${lower} of ${differences.length}`,
    ];
  });
  console.log(
    `\n${renderTable(
      ['build', 'CPU µs/req (median)', `paired vs ${servers[0]!.name} (median)`, 'rounds lower'],
      rows,
    )}`,
  );
  if (peers) {
    const figures = servers.map((server, index) => ({
      name: server.name,
      figures: { cpu: cpu[index]!, reqPerSec: reqPerSec[index]! },
    }));
    console.log(`\n${renderPeerTable(figures, CPU_TARGETS[store], store === 'memory', { fresh })}`);
  }
  if (failed > 0) console.log(`\nWARNING: ${failed} requests failed (non-2xx, errors or timeouts)`);
  if (json) {
    const path = writeResult('pair', startedAt, {
      builds,
      rounds,
      duration,
      connections,
      text,
      peers,
      store,
      cpuPerRequest: Object.fromEntries(servers.map((server, index) => [server.name, cpu[index]])),
      reqPerSec: Object.fromEntries(servers.map((server, index) => [server.name, reqPerSec[index]])),
      failed,
    });
    console.log(`\nwrote ${path}`);
  }
  return failed > 0 ? 1 : 0;
}

const shutdown = installShutdown(async () => {
  for (const workDir of workDirs) rmSync(workDir, { recursive: true, force: true });
  await dropBenchSchemas(schemas);
});
runMain(main, shutdown);
