/**
 * A durable store taken apart: what SQLite or PostgreSQL adds to a request of Airlock and to one
 * of the floor, read in the same rounds. Four servers in one rotation, each started once (servers
 * on one core, the load on the other, as `bench:pair`): Airlock with its tasks in memory and in
 * the store, the floor (bench/peers/floor-http.ts) with its tasks in a `Map` and in the store's
 * table; echo and auth, no audit file, 50 connections, `message/send`. Per round, the store's
 * cost to each is its durable server's CPU µs a request less its in-memory one's; the medians of
 * those differences say whether Airlock's store costs it more than the floor's table costs the
 * floor, or whether what it pays over the floor is its request path (the in-memory difference).
 * The database's own CPU is not counted (PostgreSQL's backends are other processes), as in every
 * inbound row.
 *
 * Usage: node --import tsx bench/stores-apart.ts [--store postgres|sqlite] [--rounds N=12]
 *   [--duration S=3] [--warmup S=2] [--connections C=50] [--json]
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT, startChild, type ChildServer } from './lib/children.js';
import {
  dropBenchSchemas,
  installShutdown,
  parseCommonFlags,
  postgresStoreLines,
  printMachine,
  roundOrder,
  runMain,
  takeValueFlags,
  writeResult,
} from './lib/common.js';
import { cpuPerRequest, describePlan, pinGenerator, pinServer } from './lib/cpu.js';
import { airlockConfig, floorStoreEnv, messageSend, requestHeaders, startPinnedAirlock } from './lib/inbound-config.js';
import { verifyReply, type Target } from './lib/load.js';
import { median, renderTable } from './lib/report.js';

const USAGE =
  'usage: node --import tsx bench/stores-apart.ts [--store postgres|sqlite] [--rounds N=12] [--duration S=3] [--warmup S=2] [--connections C=50] [--json]';
type Store = 'postgres' | 'sqlite';

interface Server {
  name: string;
  child: ChildServer;
  target: Target;
}

const workDirs: string[] = [];
const schemas: string[] = [];

/** `--store` taken out of `argv` (PostgreSQL unless given); the rest are the common flags. */
function takeStore(argv: readonly string[]): { store: Store; rest: string[] } {
  const { values, rest } = takeValueFlags(argv, ['--store'], USAGE);
  const store = values['--store'] ?? 'postgres';
  if (store !== 'postgres' && store !== 'sqlite') throw new Error(`--store must be postgres or sqlite\n${USAGE}`);
  return { store, rest };
}

function workDir(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `airlock-apart-${name}-`));
  workDirs.push(dir);
  return dir;
}

function schemaFor(): string {
  const schema = `airlock_apart_${randomBytes(4).toString('hex')}`;
  schemas.push(schema);
  return schema;
}

async function startAirlock(name: string, store: Store | undefined, token: string, body: string): Promise<Server> {
  const dir = workDir(name);
  const storeLines = store === 'postgres' ? postgresStoreLines(schemaFor()) : [];
  const child = await startPinnedAirlock({
    name,
    buildDir: REPO_ROOT,
    workDir: dir,
    config: airlockConfig(false, dir, storeLines),
    ...(store === 'sqlite' && { dataDir: join(dir, 'sqlite') }),
    token,
  });
  return { name, child, target: { url: `${child.baseUrl}/a2a/echo`, headers: requestHeaders(token), body } };
}

async function startFloor(name: string, store: Store | undefined, token: string, body: string): Promise<Server> {
  const env: Record<string, string> =
    store === undefined
      ? { BENCH_TOKEN: token, FLOOR_AUDIT: '0' }
      : {
          BENCH_TOKEN: token,
          ...floorStoreEnv(store, store === 'sqlite' ? join(workDir(name), 'sqlite') : schemaFor()),
        };
  const child = await startChild({ name, script: 'bench/peers/floor-http.ts', env });
  return { name, child, target: { url: `${child.baseUrl}/`, headers: requestHeaders(token), body } };
}

/** The median over rounds of `over[r] - under[r]`. */
function medianDifference(over: readonly number[], under: readonly number[]): number {
  return median(over.map((value, round) => value - under[round]!).filter(Number.isFinite));
}

async function main(): Promise<number> {
  const { store, rest } = takeStore(process.argv.slice(2));
  const flags = parseCommonFlags(rest, { duration: 3, rounds: 12, connections: 50, warmup: 2 }, USAGE);
  const startedAt = new Date();
  printMachine();
  const plan = pinGenerator();
  console.log(describePlan(plan));
  console.log(`${flags.rounds} rounds × ${flags.duration} s per server, ${flags.connections} connections, ${store}\n`);
  const token = `tok-${randomBytes(16).toString('hex')}`;
  const body = messageSend('hello');
  const servers = [
    await startAirlock('airlock, memory', undefined, token, body),
    await startAirlock(`airlock, ${store}`, store, token, body),
    await startFloor('floor, memory', undefined, token, body),
    await startFloor(`floor, ${store}`, store, token, body),
  ];
  for (const server of servers) {
    pinServer(server.child.pid, plan);
    await verifyReply(server.name, server.target);
    if (flags.warmup > 0) await cpuPerRequest(server.child, server.target, flags.warmup, flags.connections);
  }
  const cpu: number[][] = servers.map(() => []);
  let failed = 0;
  for (let round = 0; round < flags.rounds; round++) {
    const line: string[] = [];
    for (const index of roundOrder([0, 1, 2, 3], round)) {
      const server = servers[index]!;
      const result = await cpuPerRequest(server.child, server.target, flags.duration, flags.connections);
      cpu[index]!.push(result.cpu);
      failed += result.failed;
      line.push(`${server.name} ${result.cpu.toFixed(1)}`);
    }
    console.log(`round ${String(round + 1).padStart(2)}/${flags.rounds}  ${line.join('  ')}`);
  }
  const [airlockMemory, airlockStore, floorMemory, floorStore] = cpu as [number[], number[], number[], number[]];
  const added = {
    airlock: medianDifference(airlockStore, airlockMemory),
    floor: medianDifference(floorStore, floorMemory),
  };
  const overFloor = {
    memory: medianDifference(airlockMemory, floorMemory),
    store: medianDifference(airlockStore, floorStore),
  };
  console.log(
    `\n${renderTable(
      ['server', 'CPU µs/req (median)'],
      servers.map((server, index) => [server.name, median(cpu[index]!).toFixed(1)]),
    )}`,
  );
  console.log(
    `\nadded by ${store} (medians of the rounds' differences): Airlock ${added.airlock.toFixed(1)} µs a request, the floor ${added.floor.toFixed(1)}`,
  );
  console.log(
    `Airlock over the floor: ${overFloor.memory.toFixed(1)} µs a request in memory, ${overFloor.store.toFixed(1)} with ${store}`,
  );
  if (failed > 0) console.log(`\nWARNING: ${failed} requests failed (non-2xx, errors or timeouts)`);
  if (flags.json) {
    const path = writeResult('stores-apart', startedAt, {
      store,
      rounds: flags.rounds,
      duration: flags.duration,
      connections: flags.connections,
      servers: servers.map((server, index) => ({ name: server.name, cpu: cpu[index] })),
      added,
      overFloor,
      failed,
    });
    console.log(`results: ${path}`);
  }
  return failed > 0 ? 1 : 0;
}

const shutdown = installShutdown(async () => {
  await dropBenchSchemas(schemas);
  for (const dir of workDirs) rmSync(dir, { recursive: true, force: true });
});
runMain(main, shutdown);
