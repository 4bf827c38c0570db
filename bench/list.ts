/**
 * ListTasks on 100k tasks: how fast the gateway pages through one owner's 100 000 tasks in each
 * task store, over JSON-RPC (v1.0 `ListTasks`, `A2A-Version: 1.0`, bearer auth).
 *
 * What runs: three gateways (bench/peers/airlock-filled.ts), each over a store filled with 100k
 * completed tasks of the bench client before it listens, through the store API:
 * - **memory** (`store.maxTasks` raised to 100 000 so that none is evicted),
 * - **SQLite** (a file in a temporary directory, `synchronous: full`),
 * - **PostgreSQL** (a schema of its own in DATABASE_URL or the local `test` database, dropped at
 *   the end; `--no-postgres` leaves it out).
 *
 * Two requests per store, both `pageSize: 50`: the **first page** (no token) and a **deep page**
 * (the page token of the 50 000th task, computed from the known fill: the page after it). Each
 * reply is checked once (50 tasks, `totalSize` 100 000). autocannon loads each target; one
 * warm-up each, then R interleaved rounds in rotating order; medians over rounds.
 *
 * There is no peer row: the @a2a-js/sdk server has no ListTasks over JSON-RPC (only through its
 * REST transport), and a raw node:http server has no tasks to list. The figures stand alone.
 *
 * Usage: node --import tsx bench/list.ts [--duration S=2] [--rounds N=3] [--connections C=20] [--warmup S=1] [--no-postgres] [--json]
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startChild, type ChildServer } from './lib/children.js';
import {
  dropBenchSchemas,
  postgresStoreLines,
  ECHO_AGENT_AND_CLIENT,
  installShutdown,
  parseCommonFlags,
  printMachine,
  roundOrder,
  rssOf,
  runMain,
  writeResult,
  formatMb,
  type Headline,
} from './lib/common.js';
import { runLoad, type RunStats, type Target } from './lib/load.js';
import { formatInt, formatMs, median, renderTable } from './lib/report.js';

const TASKS = 100_000;
const PAGE_SIZE = 50;
/** The deep page starts after this many tasks (list order: newest first). */
const DEEP_OFFSET = 50_000;
const OWNER = 'client:bench::bench@echo';
const PAUSE_BETWEEN_RUNS_MS = 250;
const FILL_TIMEOUT_MS = 600_000;

type StoreKind = 'memory' | 'sqlite' | 'postgres';
type Page = 'first' | 'deep';

interface Store {
  kind: StoreKind;
  label: string;
  child: ChildServer;
  fillSeconds: number;
}

interface Load {
  key: string;
  store: Store;
  page: Page;
  target: Target;
}

const benchSchema = `airlock_bench_list_${randomBytes(4).toString('hex')}`;

function storeLines(kind: StoreKind, workDir: string): string[] {
  switch (kind) {
    case 'memory':
      return ['store:', '  type: memory', `  maxTasks: ${TASKS}`];
    case 'sqlite':
      return ['store:', '  type: sqlite', `  path: '${join(workDir, 'list.db')}'`, `  maxTasks: ${TASKS}`];
    case 'postgres':
      return [...postgresStoreLines(benchSchema), `  maxTasks: ${TASKS}`];
  }
}

function config(kind: StoreKind, workDir: string): string {
  return [
    ...storeLines(kind, workDir),
    'server:',
    '  host: 127.0.0.1',
    '  port: 0',
    'limits:',
    '  requestsPerMinute: 100000000',
    // One owner holds all 100k tasks: its share must not evict them.
    `  maxTasksPerPrincipal: ${TASKS}`,
    ...ECHO_AGENT_AND_CLIENT,
    '',
  ].join('\n');
}

/** The page token of the task at list position `offset` (1-based), as every store encodes it. */
function pageTokenAfter(offset: number, baseMs: number): string {
  const index = TASKS - offset;
  const id = `bench-task-${String(index).padStart(6, '0')}`;
  return Buffer.from(JSON.stringify([baseMs + index, id]), 'utf8').toString('base64url');
}

async function startStore(kind: StoreKind, token: string, workDir: string, baseMs: number): Promise<Store> {
  const path = join(workDir, `airlock-list-${kind}.yaml`);
  writeFileSync(path, config(kind, workDir), { mode: 0o600 });
  const child = await startChild({
    name: `list-${kind}`,
    script: 'bench/peers/airlock-filled.ts',
    args: ['--config', path],
    env: { BENCH_TOKEN: token, BENCH_FILL: String(TASKS), BENCH_OWNER: OWNER, BENCH_BASE_MS: String(baseMs) },
    readyTimeoutMs: FILL_TIMEOUT_MS,
  });
  const fillSeconds = Number(/filled \d+ tasks in ([\d.]+) s/.exec(child.firstLine)?.[1] ?? Number.NaN);
  const label = { memory: 'memory', sqlite: 'SQLite', postgres: 'PostgreSQL' }[kind];
  console.log(
    `${label.padEnd(11)} pid ${child.pid}  ${child.baseUrl}  filled ${TASKS.toLocaleString('en-US')} tasks in ${fillSeconds.toFixed(1)} s  RSS ${formatMb(rssOf(child.pid))} MB`,
  );
  return { kind, label, child, fillSeconds };
}

function target(store: Store, token: string, page: Page, baseMs: number): Target {
  const params =
    page === 'first'
      ? { pageSize: PAGE_SIZE }
      : { pageSize: PAGE_SIZE, pageToken: pageTokenAfter(DEEP_OFFSET, baseMs) };
  return {
    url: `${store.child.baseUrl}/a2a/echo`,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'a2a-version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params }),
  };
}

/** One request: 50 tasks, totalSize 100 000, and for the deep page the expected first task. */
async function verify(load: Load, baseMs: number): Promise<void> {
  const response = await fetch(load.target.url, {
    method: 'POST',
    headers: load.target.headers,
    body: load.target.body,
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  const reply = JSON.parse(text) as {
    result?: { tasks?: { id: string; status: { timestamp: string } }[]; totalSize?: number };
  };
  const tasks = reply.result?.tasks ?? [];
  const firstIndex = load.page === 'first' ? TASKS - 1 : TASKS - DEEP_OFFSET - 1;
  const expectedId = `bench-task-${String(firstIndex).padStart(6, '0')}`;
  if (
    response.status !== 200 ||
    tasks.length !== PAGE_SIZE ||
    reply.result?.totalSize !== TASKS ||
    tasks[0]?.id !== expectedId
  ) {
    throw new Error(
      `${load.key}: unexpected ListTasks reply (HTTP ${response.status}, ${tasks.length} tasks of ${reply.result?.totalSize}): ${text.slice(0, 300)}`,
    );
  }
  if (Date.parse(tasks[0].status.timestamp) !== baseMs + firstIndex) throw new Error(`${load.key}: wrong order`);
}

function describe(stats: RunStats): string {
  return (
    `${formatInt(stats.reqPerSec).padStart(7)} req/s  p50 ${formatMs(stats.p50).padStart(7)} ms  ` +
    `p99 ${formatMs(stats.p99).padStart(7)} ms  non-2xx ${stats.non2xx}  errors ${stats.errors}  timeouts ${stats.timeouts}`
  );
}

async function main(): Promise<number> {
  const flags = parseCommonFlags(
    process.argv.slice(2),
    { duration: 2, rounds: 3, connections: 20, warmup: 1 },
    'usage: node --import tsx bench/list.ts [--duration S=2] [--rounds N=3] [--connections C=20] [--warmup S=1] [--no-postgres] [--json]',
  );
  const startedAt = new Date();
  console.log(
    `Airlock ListTasks benchmark: ${TASKS.toLocaleString('en-US')} tasks of one owner, pageSize ${PAGE_SIZE}, v1.0 JSON-RPC`,
  );
  printMachine();
  console.log(
    `${flags.connections} connections, ${flags.warmup} s warm-up per target, ${flags.rounds} interleaved rounds × ${flags.duration} s; ` +
      'no peer row: @a2a-js/sdk has no ListTasks over JSON-RPC',
  );
  console.log('');
  const token = randomBytes(32).toString('base64url');
  workDir = mkdtempSync(join(tmpdir(), 'airlock-bench-list-'));
  // Timestamps in the last minutes, well inside the default 60-minute idle TTL.
  const baseMs = Date.now() - TASKS - 60_000;
  const kinds: StoreKind[] = flags.postgres ? ['memory', 'sqlite', 'postgres'] : ['memory', 'sqlite'];
  const stores: Store[] = [];
  for (const kind of kinds) stores.push(await startStore(kind, token, workDir, baseMs));
  const loads: Load[] = stores.flatMap((store) =>
    (['first', 'deep'] as const).map((page) => ({
      key: `${store.kind}/${page}`,
      store,
      page,
      target: target(store, token, page, baseMs),
    })),
  );
  for (const load of loads) await verify(load, baseMs);
  console.log('every reply checked: 50 tasks, totalSize 100,000, expected first task\n');

  const options = (duration: number): { connections: number; pipelining: number; duration: number } => ({
    connections: flags.connections,
    pipelining: 1,
    duration,
  });
  const measure = async (load: Load, duration: number): Promise<RunStats> => {
    load.store.child.assertAlive();
    const stats = await runLoad(load.target, options(duration));
    load.store.child.assertAlive();
    await sleep(PAUSE_BETWEEN_RUNS_MS);
    return stats;
  };
  if (flags.warmup > 0) {
    for (const load of loads)
      console.log(`warm-up   ${load.key.padEnd(16)} ${describe(await measure(load, flags.warmup))}`);
    console.log('');
  }
  const runs: { round: number; key: string; stats: RunStats }[] = [];
  for (let round = 0; round < flags.rounds; round++) {
    for (const load of roundOrder(loads, round)) {
      const stats = await measure(load, flags.duration);
      runs.push({ round: round + 1, key: load.key, stats });
      console.log(`round ${round + 1}/${flags.rounds} ${load.key.padEnd(16)} ${describe(stats)}`);
    }
  }
  console.log('');
  const summaries = loads.map((load) => {
    const mine = runs.filter((run) => run.key === load.key).map((run) => run.stats);
    return {
      key: load.key,
      store: load.store.label,
      page: load.page,
      fillSeconds: load.store.fillSeconds,
      reqPerSec: median(mine.map((stats) => stats.reqPerSec)),
      p50: median(mine.map((stats) => stats.p50)),
      p99: median(mine.map((stats) => stats.p99)),
      roundsReqPerSec: mine.map((stats) => stats.reqPerSec),
      failures: mine.reduce((total, stats) => total + stats.non2xx + stats.errors + stats.timeouts, 0),
    };
  });
  console.log(`Median of ${flags.rounds} round(s):`);
  console.log(
    renderTable(
      ['store', 'page', 'req/s', 'p50 ms', 'p99 ms', 'req/s per round', 'fill s', 'failures'],
      summaries.map((summary) => [
        summary.store,
        summary.page === 'first' ? 'first' : `after ${DEEP_OFFSET.toLocaleString('en-US')}`,
        formatInt(summary.reqPerSec),
        formatMs(summary.p50),
        formatMs(summary.p99),
        summary.roundsReqPerSec.map(formatInt).join(' / '),
        summary.fillSeconds.toFixed(1),
        String(summary.failures),
      ]),
    ),
  );
  const failed = summaries.filter((summary) => summary.failures > 0);
  for (const summary of failed)
    console.log(`WARNING: ${summary.key}: ${summary.failures} failed requests; not comparable`);

  const headlines: Headline[] = summaries.map((summary) => ({
    figure: `ListTasks 100k, ${summary.store}, ${summary.page === 'first' ? 'first page' : 'deep page'}`,
    unit: 'req/s',
    higherIsBetter: true,
    airlock: summary.reqPerSec,
    note: `p99 ${formatMs(summary.p99)} ms; no peer`,
  }));
  if (flags.json) {
    const path = writeResult('list', startedAt, {
      benchmark: `ListTasks on ${TASKS} tasks, pageSize ${PAGE_SIZE}`,
      settings: flags,
      summary: summaries,
      headlines,
      runs,
    });
    console.log(`\nwrote ${path}`);
  }
  return failed.length === 0 ? 0 : 1;
}

let workDir: string | undefined;

const shutdown = installShutdown(async () => {
  if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true });
  await dropBenchSchemas([benchSchema]);
});
runMain(main, shutdown);
