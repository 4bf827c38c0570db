/**
 * Memory: does the gateway stay bounded?
 *
 * (a) **100k tasks through a 10k-capped store.** 100 000 v0.3 `message/send` calls (each makes
 *     one completed task) go to Airlock with the memory store capped at 10 000 tasks
 *     (`store.maxTasks: 10000`), in steps of 10 000; after each step the child's resident set
 *     (VmRSS from /proc/<pid>/status) is read. The same for the @a2a-js/sdk echo server, whose
 *     InMemoryTaskStore keeps every task: that contrast is the point. Reported: RSS at 10k, 50k
 *     and 100k tasks, and the slope after the cap (RSS at 100k − RSS at 10k, per 1 000 tasks):
 *     flat (near 0) is what a bounded store should show.
 * (b) **1 000 concurrent SSE streams held open.** Each server gets 1 000 `message/stream` calls
 *     whose task stays `working` (Airlock: the `conformance` backend's hold scenario,
 *     `resubscribeHoldMs` 600 000; SDK: an executor that waits until canceled; raw node:http: a
 *     response that writes one event and stays open). RSS before, and with all 1 000 open (each
 *     has received its first event); the difference per stream in KB.
 *
 * Each server is a fresh child process; the clients run here. RSS counts everything the process
 * holds, garbage not yet collected included, so small differences are noise: read the slope and
 * the per-stream figure, not the last MB.
 *
 * Usage: node --import tsx bench/memory.ts [--tasks N=100000] [--streams N=1000] [--connections C=50] [--json]
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startChild, stopAllChildren, type ChildServer } from './lib/children.js';
import {
  formatMb,
  formatNumber,
  installShutdown,
  parseCommonFlags,
  printMachine,
  rssOf,
  runMain,
  writeResult,
  type Headline,
} from './lib/common.js';
import { sendAmount, verifyReply, type Target } from './lib/load.js';
import { renderTable } from './lib/report.js';
import { openHeldStreams } from './lib/sse.js';

const STEP = 10_000;
const CAP = 10_000;
const SETTLE_MS = 500;

function messageBody(method: string, messageId: string): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method,
    params: { message: { kind: 'message', role: 'user', messageId, parts: [{ kind: 'text', text: 'hello' }] } },
  });
}

function airlockConfig(): string {
  return [
    'store:',
    '  type: memory',
    `  maxTasks: ${CAP}`,
    'server:',
    '  host: 127.0.0.1',
    '  port: 0',
    'limits:',
    '  requestsPerMinute: 100000000',
    '  maxConcurrentTasks: 100000',
    '  maxConcurrentTasksPerPrincipal: 100000',
    // The held streams are unfinished tasks of one client: above the default share of 1,000.
    '  maxTasksPerPrincipal: 100000',
    '  maxStreams: 100000',
    '  maxStreamsPerPrincipal: 100000',
    'agents:',
    '  - slug: echo',
    '    name: Echo',
    '    description: Replies with the text it was sent.',
    '    skills:',
    '      - { id: echo, name: Echo, description: Repeats the text back. }',
    '    backend: { type: echo }',
    '  - slug: hold',
    '    name: Hold',
    '    description: Keeps a streamed task working.',
    '    skills:',
    '      - { id: hold, name: Hold, description: Holds the task open. }',
    '    backend: { type: conformance, resubscribeHoldMs: 600000 }',
    'clients:',
    '  - id: bench',
    "    token: '${BENCH_TOKEN}'",
    '    agents: [echo, hold]',
    '',
  ].join('\n');
}

function heldFirstEvent(): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    result: {
      kind: 'task',
      id: '6fdaa4ff-4066-4500-8a23-70a6e0129754',
      contextId: '7436f4a4-8433-44a6-bbc4-123288135ec9',
      status: { state: 'submitted', timestamp: new Date().toISOString() },
    },
  });
}

function headers(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
}

/** RSS after a short pause, so that the last replies' work has finished. */
async function settledRss(child: ChildServer): Promise<number> {
  await sleep(SETTLE_MS);
  child.assertAlive();
  return rssOf(child.pid);
}

interface Growth {
  server: string;
  /** RSS in bytes before the first task and after every STEP tasks. */
  samples: { tasks: number; rss: number }[];
  failures: number;
  seconds: number;
}

async function growth(
  label: string,
  child: ChildServer,
  target: Target,
  tasks: number,
  connections: number,
): Promise<Growth> {
  await verifyReply(label, target);
  const samples = [{ tasks: 0, rss: await settledRss(child) }];
  let failures = 0;
  const started = performance.now();
  for (let sent = 0; sent < tasks; sent += STEP) {
    const amount = Math.min(STEP, tasks - sent);
    failures += (await sendAmount(target, amount, connections)).failures;
    const rss = await settledRss(child);
    samples.push({ tasks: sent + amount, rss });
    console.log(
      `  ${label.padEnd(22)} ${String(sent + amount).padStart(7)} tasks  RSS ${formatMb(rss).padStart(7)} MB`,
    );
  }
  return { server: label, samples, failures, seconds: (performance.now() - started) / 1000 };
}

function rssAt(result: Growth, tasks: number): number {
  return result.samples.find((sample) => sample.tasks === tasks)?.rss ?? Number.NaN;
}

/** KB per 1 000 tasks from the cap to the end. */
function slopeKbPer1k(result: Growth): number {
  const last = result.samples.at(-1)!;
  const atCap = rssAt(result, CAP);
  return (last.rss - atCap) / 1024 / ((last.tasks - CAP) / 1000);
}

interface Held {
  server: string;
  before: number;
  with: number;
  open: number;
  failed: number;
  perStreamKb: number;
  openSeconds: number;
  firstError?: string;
}

async function held(
  label: string,
  child: ChildServer,
  makeTarget: (index: number) => Target,
  streams: number,
): Promise<Held> {
  // One stream first, so that lazily loaded code is not counted as the streams' memory.
  const probe = await openHeldStreams(1, makeTarget);
  await probe.close();
  const before = await settledRss(child);
  const started = performance.now();
  const open = await openHeldStreams(streams, (index) => makeTarget(index + 1));
  const openSeconds = (performance.now() - started) / 1000;
  const withStreams = await settledRss(child);
  const result: Held = {
    server: label,
    before,
    with: withStreams,
    open: open.open,
    failed: open.failed,
    perStreamKb: (withStreams - before) / 1024 / Math.max(1, open.open),
    openSeconds,
    ...(open.firstError !== undefined && { firstError: open.firstError }),
  };
  await open.close();
  console.log(
    `  ${label.padEnd(22)} ${open.open}/${streams} open in ${openSeconds.toFixed(1)} s  RSS ${formatMb(before)} → ${formatMb(withStreams)} MB  ` +
      `${formatNumber(result.perStreamKb)} KB/stream${open.failed > 0 ? `  FAILED ${open.failed} (${open.firstError})` : ''}`,
  );
  return result;
}

function optionsFrom(argv: string[]): { tasks: number; streams: number; rest: string[] } {
  const rest = [...argv];
  const take = (flag: string, fallback: number): number => {
    const at = rest.indexOf(flag);
    if (at === -1) return fallback;
    const value = Number(rest[at + 1]);
    if (!Number.isInteger(value) || value <= 0) throw new Error(`${flag} must be a positive integer`);
    rest.splice(at, 2);
    return value;
  };
  const tasks = take('--tasks', 100_000);
  const streams = take('--streams', 1_000);
  if (tasks < 2 * CAP || tasks % STEP !== 0)
    throw new Error(`--tasks must be a multiple of ${STEP} and at least ${2 * CAP}`);
  return { tasks, streams, rest };
}

async function main(): Promise<number> {
  const { tasks, streams, rest } = optionsFrom(process.argv.slice(2));
  // --duration, --rounds and --warmup are accepted (all.ts forwards them) but unused here.
  const flags = parseCommonFlags(
    rest,
    { duration: 1, rounds: 1, connections: 50, warmup: 0 },
    'usage: node --import tsx bench/memory.ts [--tasks N=100000] [--streams N=1000] [--connections C=50] [--json]',
  );
  const startedAt = new Date();
  console.log(
    `Airlock memory benchmark: ${tasks.toLocaleString('en-US')} tasks through a ${CAP.toLocaleString('en-US')}-capped store; ${streams} held SSE streams`,
  );
  printMachine();
  console.log(`${flags.connections} connections for the tasks; RSS is VmRSS of each server process`);
  console.log('');
  const token = randomBytes(32).toString('base64url');
  workDir = mkdtempSync(join(tmpdir(), 'airlock-bench-memory-'));
  const configPath = join(workDir, 'airlock-memory.yaml');
  writeFileSync(configPath, airlockConfig(), { mode: 0o600 });
  const startAirlock = (): Promise<ChildServer> =>
    startChild({
      name: 'airlock',
      script: 'dist/cli/main.js',
      args: ['serve', '--config', configPath, '--log-level', 'silent'],
      env: { BENCH_TOKEN: token },
    });
  const startSdk = (): Promise<ChildServer> =>
    startChild({ name: 'sdk', script: 'bench/peers/sdk-echo.ts', env: { BENCH_TOKEN: token } });

  // (a) tasks
  console.log(`(a) ${tasks.toLocaleString('en-US')} message/send, RSS every ${STEP.toLocaleString('en-US')} tasks`);
  const send = messageBody('message/send', 'm-1');
  let child = await startAirlock();
  const airlockGrowth = await growth(
    'Airlock (cap 10k)',
    child,
    { url: `${child.baseUrl}/a2a/echo`, headers: headers(token), body: send },
    tasks,
    flags.connections,
  );
  await stopAllChildren();
  child = await startSdk();
  const sdkGrowth = await growth(
    '@a2a-js/sdk (no cap)',
    child,
    { url: `${child.baseUrl}/a2a/jsonrpc`, headers: headers(token), body: send },
    tasks,
    flags.connections,
  );
  await stopAllChildren();
  console.log('');
  const growthRows = [airlockGrowth, sdkGrowth].map((result) => [
    result.server,
    formatMb(rssAt(result, 0)),
    formatMb(rssAt(result, CAP)),
    formatMb(rssAt(result, tasks / 2)),
    formatMb(rssAt(result, tasks)),
    formatNumber(slopeKbPer1k(result)),
    formatNumber(tasks / result.seconds, 0),
    String(result.failures),
  ]);
  console.log(
    renderTable(
      [
        'server',
        'RSS 0 MB',
        `RSS ${CAP / 1000}k MB`,
        `RSS ${tasks / 2000}k MB`,
        `RSS ${tasks / 1000}k MB`,
        'slope after cap KB/1k tasks',
        'tasks/s',
        'failures',
      ],
      growthRows,
    ),
  );
  console.log('');

  // (b) held streams
  console.log(`(b) ${streams} concurrent SSE streams held open`);
  const eventsFile = join(workDir, 'sse-events.json');
  const heldResults: Held[] = [];
  child = await startAirlock();
  const airlockHold = (index: number): Target => ({
    url: `${child.baseUrl}/a2a/hold`,
    headers: headers(token),
    body: messageBody('message/stream', `test-resubscribe-message-id-${index}`),
  });
  // The raw server's one event: a v0.3 task snapshot like the first event Airlock sends.
  writeFileSync(eventsFile, JSON.stringify([heldFirstEvent()]));
  heldResults.push(await held('Airlock (conformance)', child, airlockHold, streams));
  await stopAllChildren();
  child = await startSdk();
  heldResults.push(
    await held(
      '@a2a-js/sdk (express)',
      child,
      (index) => ({
        url: `${child.baseUrl}/a2a/hold`,
        headers: headers(token),
        body: messageBody('message/stream', `hold-${index}`),
      }),
      streams,
    ),
  );
  await stopAllChildren();
  child = await startChild({ name: 'raw', script: 'bench/peers/raw-sse.ts', env: { BENCH_SSE_EVENTS: eventsFile } });
  heldResults.push(
    await held(
      'raw node:http SSE',
      child,
      () => ({ url: `${child.baseUrl}/hold`, headers: headers(token), body: messageBody('message/stream', 'raw') }),
      streams,
    ),
  );
  await stopAllChildren();
  console.log('');
  console.log(
    renderTable(
      ['server', 'streams open', 'RSS before MB', `RSS with ${streams} MB`, 'KB per stream', 'open s'],
      heldResults.map((result) => [
        result.server,
        `${result.open}/${streams}`,
        formatMb(result.before),
        formatMb(result.with),
        formatNumber(result.perStreamKb),
        result.openSeconds.toFixed(1),
      ]),
    ),
  );
  const of = (name: string): Held => heldResults.find((result) => result.server.startsWith(name))!;
  const failed =
    airlockGrowth.failures + sdkGrowth.failures + heldResults.reduce((total, result) => total + result.failed, 0);
  if (failed > 0) console.log(`WARNING: ${failed} failed requests or streams; see above`);

  const headlines: Headline[] = [
    {
      figure: `RSS after ${tasks / 1000}k tasks (store capped at 10k)`,
      unit: 'MB',
      higherIsBetter: false,
      airlock: rssAt(airlockGrowth, tasks) / (1024 * 1024),
      sdk: rssAt(sdkGrowth, tasks) / (1024 * 1024),
      note: `Airlock at 10k/50k: ${formatMb(rssAt(airlockGrowth, CAP))}/${formatMb(rssAt(airlockGrowth, tasks / 2))} MB; SDK store uncapped`,
    },
    {
      figure: 'RSS slope after the cap',
      unit: 'KB/1k tasks',
      higherIsBetter: false,
      airlock: slopeKbPer1k(airlockGrowth),
      sdk: slopeKbPer1k(sdkGrowth),
    },
    {
      figure: `${streams} held SSE streams`,
      unit: 'KB/stream',
      higherIsBetter: false,
      airlock: of('Airlock').perStreamKb,
      raw: of('raw').perStreamKb,
      sdk: of('@a2a-js').perStreamKb,
      note: `Airlock RSS ${formatMb(of('Airlock').before)} → ${formatMb(of('Airlock').with)} MB`,
    },
  ];
  if (flags.json) {
    const path = writeResult('memory', startedAt, {
      benchmark: 'memory: capped store and held streams',
      settings: { tasks, streams, cap: CAP, step: STEP, connections: flags.connections },
      growth: [airlockGrowth, sdkGrowth].map((result) => ({ ...result, slopeKbPer1kAfterCap: slopeKbPer1k(result) })),
      held: heldResults,
      headlines,
    });
    console.log(`\nwrote ${path}`);
  }
  return failed === 0 ? 0 : 1;
}

let workDir: string | undefined;
const shutdown = installShutdown(async () => {
  if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true });
});
runMain(main, shutdown);
