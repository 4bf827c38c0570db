/**
 * `airlock serve --workers N`: req/s of `message/send` (the echo agent, bearer auth) with 1 and
 * with 2 workers on one durable store, measured in one run on this machine.
 *
 * What runs: `airlock serve` from the sources (tsx; start-up only differs from the build) on
 * PostgreSQL (a schema of its own, dropped at the end) or, with `--store sqlite`, a SQLite file
 * plus Redis (`--workers` > 1 on SQLite needs it). `--redis` puts PostgreSQL's shared limits and
 * events on Redis too. With 1 worker the process keeps its limits itself; with 2, each request's
 * rate and in-flight checks go to the shared limiter (PostgreSQL or Redis) and each turn takes and
 * releases a lease in PostgreSQL, as replicas' do. The one principal's in-flight cap is raised to
 * 256, as its rate limit is, so that no turn is refused.
 *
 * A third row isolates what a replica costs from what the cluster costs: one process with
 * AIRLOCK_MULTI_REPLICA=1 (shared limits, bus and leases, no cluster).
 *
 * Cores: nothing is pinned. autocannon runs in this process and shares the machine's cores with
 * the workers (and with the primary, which accepts each connection and hands it to a worker), so
 * on a 2-core machine 2 workers compete with the load generator: the figures are a floor of what
 * 2 workers give when the load comes from elsewhere. Each row's CPU is the whole server tree's
 * (primary and workers, /proc) over the requests it answered.
 *
 * `--gc MODE` is passed to `airlock serve` (auto, the default, forks 2 workers on 2 cores with
 * `--single-threaded-gc`; `concurrent` keeps V8's default).
 *
 * Usage: node --import tsx bench/workers.ts [--store postgres|sqlite] [--redis] [--duration S]
 *   [--rounds N] [--connections C] [--warmup S] [--json] [--gc auto|single-threaded|concurrent]
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import {
  dropBenchSchemas,
  postgresStoreLines,
  ECHO_AGENT_AND_CLIENT,
  installShutdown,
  printMachine,
  roundOrder,
  runMain,
  writeResult,
} from './lib/common.js';
import { startChild, type ChildServer } from './lib/children.js';
import { runLoad, verifyReply, type RunStats, type Target } from './lib/load.js';
import { cpuMicros } from './lib/cpu.js';
import { formatInt, formatMs } from './lib/report.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
/** Rows: one process; one process in replica mode (shared limits, bus, leases); 2 workers. */
const ROWS = [
  { workers: 1, replica: false },
  { workers: 1, replica: true },
  { workers: 2, replica: false },
] as const;
const MESSAGE_SEND = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'message/send',
  params: {
    message: { kind: 'message', role: 'user', messageId: 'm-1', parts: [{ kind: 'text', text: 'hello' }] },
  },
});

const { values: flags } = parseArgs({
  options: {
    store: { type: 'string', default: 'postgres' },
    redis: { type: 'boolean', default: false },
    duration: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '32' },
    warmup: { type: 'string', default: '3' },
    json: { type: 'boolean', default: false },
    gc: { type: 'string', default: 'auto' },
  },
});
const store = flags.store === 'sqlite' ? 'sqlite' : 'postgres';
const useRedis = store === 'sqlite' || flags.redis;
const settings = {
  duration: Number(flags.duration),
  rounds: Number(flags.rounds),
  connections: Number(flags.connections),
  warmup: Number(flags.warmup),
};
const schema = `airlock_bench_workers_${randomBytes(4).toString('hex')}`;
const workDir = mkdtempSync(join(tmpdir(), 'airlock-bench-workers-'));

interface Row {
  workers: number;
  replica: boolean;
  child: ChildServer;
  target: Target;
  runs: (RunStats & { cpuUsPerReq: number | undefined; primaryUsPerReq: number | undefined })[];
}

/** The primary and every worker it forked (their CPU is the row's). */
function serverTree(pid: number | undefined): number[] {
  if (pid === undefined) return [];
  let children = '';
  try {
    children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' }).trim();
  } catch {
    // ps exits 1 when the process has no children (1 worker: the process serves itself).
  }
  return [pid, ...children.split(/\s+/).filter(Boolean).map(Number)];
}

function treeCpu(pid: number | undefined): number | undefined {
  let total = 0;
  for (const each of serverTree(pid)) {
    const micros = cpuMicros(each);
    if (micros === undefined) return undefined;
    total += micros;
  }
  return total;
}

async function startRow(workers: number, replica: boolean, token: string): Promise<Row> {
  const configPath = join(workDir, `airlock-${workers}${replica ? '-replica' : ''}.yaml`);
  const lines = [
    ...(store === 'postgres' ? postgresStoreLines(schema) : []),
    ...(useRedis ? ['redis:', `  url: '${REDIS_URL}'`] : []),
    'server:',
    '  host: 127.0.0.1',
    '  port: 0',
    'limits:',
    '  requestsPerMinute: 100000000',
    // One principal sends every request: its in-flight share (16 by default, shared by the
    // workers) would refuse some of C connections' turns while the shared slots are released.
    '  maxConcurrentTasksPerPrincipal: 256',
    ...ECHO_AGENT_AND_CLIENT,
    '',
  ];
  writeFileSync(configPath, lines.join('\n'), { mode: 0o600 });
  const args = [
    'serve',
    '--config',
    configPath,
    '--log-level',
    'silent',
    '--workers',
    String(workers),
    '--gc',
    flags.gc,
  ];
  if (store === 'sqlite') args.push('--data', join(workDir, 'sqlite'));
  const child = await startChild({
    name: `workers-${workers}`,
    script: 'src/cli/main.ts',
    args,
    env: { BENCH_TOKEN: token, ...(replica && { AIRLOCK_MULTI_REPLICA: '1' }) },
    readyTimeoutMs: 120_000,
  });
  // The banner comes from the first worker; wait until the primary has forked the rest and they
  // had time to listen (the log is silent here), then check a reply.
  const deadline = Date.now() + 120_000;
  while (workers > 1 && serverTree(child.pid).length < workers + 1 && Date.now() < deadline) await sleep(200);
  if (workers > 1) await sleep(5_000);
  const target = {
    url: `${child.baseUrl}/a2a/echo`,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: MESSAGE_SEND,
  };
  await verifyReply(`${workers} worker(s)`, target);
  return { workers, replica, child, target, runs: [] };
}

function label(row: { workers: number; replica: boolean }): string {
  return row.workers > 1 ? `${row.workers} workers` : row.replica ? '1 process, replica' : '1 process';
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? Number.NaN;
}

async function main(): Promise<number> {
  const startedAt = new Date();
  printMachine();
  const uptime = readFileSync('/proc/loadavg', 'utf8').trim();
  console.log(`load before: ${uptime}`);
  const through = store === 'sqlite' ? 'SQLite + Redis' : useRedis ? 'PostgreSQL + Redis' : 'PostgreSQL';
  console.log(
    `store: ${through}; ${settings.rounds} rounds × ${settings.duration} s, ${settings.connections} connections; serve --gc ${flags.gc}`,
  );
  const token = randomBytes(24).toString('hex');
  const rows: Row[] = [];
  // Started one after the other; each stays up for every round, so rounds alternate the order.
  // SQLite has no replica mode (AIRLOCK_MULTI_REPLICA refuses it): its workers share Redis only.
  for (const row of ROWS.filter((each) => store === 'postgres' || !each.replica)) {
    rows.push(await startRow(row.workers, row.replica, token));
  }
  for (const row of rows) {
    await runLoad(row.target, { connections: settings.connections, pipelining: 1, duration: settings.warmup });
  }
  let failed = false;
  for (let round = 0; round < settings.rounds; round++) {
    for (const row of roundOrder(rows, round)) {
      row.child.assertAlive();
      const before = treeCpu(row.child.pid);
      const primaryBefore = row.workers > 1 ? cpuMicros(row.child.pid) : undefined;
      const stats = await runLoad(row.target, {
        connections: settings.connections,
        pipelining: 1,
        duration: settings.duration,
      });
      const after = treeCpu(row.child.pid);
      const primaryAfter = row.workers > 1 ? cpuMicros(row.child.pid) : undefined;
      const primaryUsPerReq =
        primaryBefore !== undefined && primaryAfter !== undefined && stats.requests > 0
          ? (primaryAfter - primaryBefore) / stats.requests
          : undefined;
      const cpuUsPerReq =
        before !== undefined && after !== undefined && stats.requests > 0
          ? (after - before) / stats.requests
          : undefined;
      row.runs.push({ ...stats, cpuUsPerReq, primaryUsPerReq });
      if (stats.non2xx + stats.errors + stats.timeouts > 0) {
        failed = true;
        console.log(
          `  ${row.workers} worker(s): ${stats.non2xx} non-2xx, ${stats.errors} errors, ${stats.timeouts} timeouts`,
        );
      }
      await sleep(250);
    }
  }
  console.log(
    '\nrow                 req/s (median)  p50 ms  p99 ms  server CPU µs/req  of it primary  every round req/s',
  );
  for (const row of rows) {
    const cpu = row.runs.map((run) => run.cpuUsPerReq).filter((value): value is number => value !== undefined);
    const primary = row.runs.map((run) => run.primaryUsPerReq).filter((value): value is number => value !== undefined);
    console.log(
      [
        label(row).padEnd(19),
        formatInt(median(row.runs.map((run) => run.reqPerSec))).padStart(15),
        formatMs(median(row.runs.map((run) => run.p50))).padStart(7),
        formatMs(median(row.runs.map((run) => run.p99))).padStart(7),
        (cpu.length > 0 ? formatInt(median(cpu)) : '?').padStart(18),
        (primary.length > 0 ? formatInt(median(primary)) : '-').padStart(14),
        '  ' + row.runs.map((run) => formatInt(run.reqPerSec)).join(', '),
      ].join(' '),
    );
  }
  console.log(
    `load after: ${loadavg()
      .map((value) => value.toFixed(2))
      .join(' ')}`,
  );
  console.log('the load generator shares these cores with the workers (see the module comment)');
  if (flags.json) {
    const path = writeResult('workers', startedAt, {
      store: through,
      settings,
      rows: rows.map((row) => ({ workers: row.workers, replicaMode: row.replica, runs: row.runs })),
    });
    console.log(`wrote ${path}`);
  }
  return failed ? 1 : 0;
}

const shutdown = installShutdown(async () => {
  if (store === 'postgres') await dropBenchSchemas([schema]);
  rmSync(workDir, { recursive: true, force: true });
});
runMain(main, shutdown);
