/**
 * SSE streaming: how fast Airlock relays a streamed answer, next to a raw node:http SSE server
 * writing the same events and to the official @a2a-js/sdk streaming the same answer.
 *
 * What runs (each its own child process; the SSE client runs here, on undici):
 * - **Airlock**: `airlock serve` with the `writer` agent (`chunkDelayMs: 0`) and bearer auth; a
 *   v0.3 `message/stream` is answered with nine events: the task, two `working` updates, five
 *   text chunks of one artifact, `completed`.
 * - **raw node:http** (bench/peers/raw-sse.ts): replays the nine `data:` payloads of one stream
 *   captured from Airlock at start-up, one `write()` each: the ceiling.
 * - **@a2a-js/sdk** (bench/peers/sdk-echo.ts, `/a2a/writer`): an executor publishing the same nine
 *   events, v0.3 via legacyCompat, same bearer check.
 *
 * How it runs: C streams at once (closed loop: each worker reads a whole stream, then opens the
 * next), one warm-up per server, then R interleaved rounds in rotating order.
 *
 * How to read it: **events/s** is SSE events received per second over all streams (the chunks
 * relayed); **TTFC** is the time from sending the request to the first event (p50/p99 over every
 * stream of the run). The table shows the median over rounds; ratios are Airlock / raw and
 * Airlock / SDK of those medians (for TTFC, above 1× means slower).
 *
 * Usage: node --import tsx bench/stream.ts [--duration S=4] [--rounds N=3] [--connections C=32] [--warmup S=2] [--json]
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startChild, type ChildServer } from './lib/children.js';
import {
  installShutdown,
  parseCommonFlags,
  printMachine,
  roundOrder,
  runMain,
  writeResult,
  type CommonFlags,
  type Headline,
} from './lib/common.js';
import type { Target } from './lib/load.js';
import { formatInt, formatMs, formatRatio, median, renderTable } from './lib/report.js';
import { captureStream, streamLoop, type StreamLoopStats } from './lib/sse.js';

const EXPECTED_EVENTS = 9;
const PAUSE_BETWEEN_RUNS_MS = 250;
const MESSAGE_STREAM = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'message/stream',
  params: {
    message: { kind: 'message', role: 'user', messageId: 'm-1', parts: [{ kind: 'text', text: 'hello' }] },
  },
});

type Key = 'airlock' | 'raw' | 'sdk';

interface Server {
  key: Key;
  label: string;
  child: ChildServer;
  target: Target;
}

interface Summary {
  server: Key;
  label: string;
  eventsPerSec: number;
  streamsPerSec: number;
  ttfcP50: number;
  ttfcP99: number;
  roundsEventsPerSec: number[];
  errors: number;
  firstError?: string;
}

function airlockConfig(): string {
  return [
    'server:',
    '  host: 127.0.0.1',
    '  port: 0',
    'limits:',
    '  requestsPerMinute: 100000000',
    '  maxConcurrentTasks: 100000',
    '  maxConcurrentTasksPerPrincipal: 100000',
    '  maxStreams: 100000',
    '  maxStreamsPerPrincipal: 100000',
    'agents:',
    '  - slug: writer',
    '    name: Writer',
    '    description: Streams a short piece about the text it was sent.',
    '    skills:',
    '      - { id: write, name: Write, description: Writes a short piece. }',
    '    backend: { type: writer, chunkDelayMs: 0 }',
    'clients:',
    '  - id: bench',
    "    token: '${BENCH_TOKEN}'",
    '    agents: [writer]',
    '',
  ].join('\n');
}

function headers(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
}

async function startServers(token: string, workDir: string): Promise<Server[]> {
  const configPath = join(workDir, 'airlock-stream.yaml');
  writeFileSync(configPath, airlockConfig(), { mode: 0o600 });
  const airlockChild = await startChild({
    name: 'airlock',
    script: 'dist/cli/main.js',
    args: ['serve', '--config', configPath, '--log-level', 'silent'],
    env: { BENCH_TOKEN: token },
  });
  const airlock: Server = {
    key: 'airlock',
    label: 'Airlock (writer, auth)',
    child: airlockChild,
    target: { url: `${airlockChild.baseUrl}/a2a/writer`, headers: headers(token), body: MESSAGE_STREAM },
  };
  // The raw server replays exactly what Airlock sends.
  const events = await captureStream(airlock.target);
  if (events.length !== EXPECTED_EVENTS) {
    throw new Error(`Airlock's writer streamed ${events.length} events, expected ${EXPECTED_EVENTS}`);
  }
  const eventsFile = join(workDir, 'sse-events.json');
  writeFileSync(eventsFile, JSON.stringify(events));
  const rawChild = await startChild({
    name: 'raw',
    script: 'bench/peers/raw-sse.ts',
    env: { BENCH_SSE_EVENTS: eventsFile },
  });
  const sdkChild = await startChild({ name: 'sdk', script: 'bench/peers/sdk-echo.ts', env: { BENCH_TOKEN: token } });
  const servers: Server[] = [
    airlock,
    {
      key: 'raw',
      label: 'raw node:http SSE',
      child: rawChild,
      target: { url: `${rawChild.baseUrl}/stream`, headers: headers(token), body: MESSAGE_STREAM },
    },
    {
      key: 'sdk',
      label: '@a2a-js/sdk (express)',
      child: sdkChild,
      target: { url: `${sdkChild.baseUrl}/a2a/writer`, headers: headers(token), body: MESSAGE_STREAM },
    },
  ];
  for (const server of servers) {
    const got = await captureStream(server.target);
    if (got.length !== EXPECTED_EVENTS) {
      throw new Error(`${server.label}: ${got.length} events in one stream, expected ${EXPECTED_EVENTS}`);
    }
    console.log(`${server.label.padEnd(24)} pid ${server.child.pid}  ${server.target.url}  ${got.length} events ok`);
  }
  console.log('');
  return servers;
}

function describe(stats: StreamLoopStats): string {
  return (
    `${formatInt(stats.eventsPerSec).padStart(7)} events/s  ${formatInt(stats.streamsPerSec).padStart(6)} streams/s  ` +
    `TTFC p50 ${formatMs(stats.ttfcP50).padStart(6)} ms  p99 ${formatMs(stats.ttfcP99).padStart(6)} ms  errors ${stats.errors}` +
    (stats.firstError !== undefined ? ` (${stats.firstError})` : '')
  );
}

async function measure(server: Server, flags: CommonFlags, duration: number): Promise<StreamLoopStats> {
  server.child.assertAlive();
  const stats = await streamLoop(server.target, {
    concurrency: flags.connections,
    duration,
    expectEvents: EXPECTED_EVENTS,
  });
  server.child.assertAlive();
  await sleep(PAUSE_BETWEEN_RUNS_MS);
  return stats;
}

async function main(): Promise<number> {
  const flags = parseCommonFlags(
    process.argv.slice(2),
    { duration: 4, rounds: 3, connections: 32, warmup: 2 },
    'usage: node --import tsx bench/stream.ts [--duration S=4] [--rounds N=3] [--connections C=32] [--warmup S=2] [--json]',
  );
  const startedAt = new Date();
  console.log(
    'Airlock streaming benchmark: v0.3 message/stream (9 events), Airlock vs raw node:http SSE vs @a2a-js/sdk',
  );
  printMachine();
  console.log(
    `${flags.connections} concurrent streams (closed loop), ${flags.warmup} s warm-up per server, ` +
      `${flags.rounds} interleaved rounds × ${flags.duration} s per server; servers in child processes`,
  );
  console.log('');
  const token = randomBytes(32).toString('base64url');
  workDir = mkdtempSync(join(tmpdir(), 'airlock-bench-stream-'));
  const servers = await startServers(token, workDir);

  if (flags.warmup > 0) {
    for (const server of servers)
      console.log(`warm-up   ${server.key.padEnd(8)} ${describe(await measure(server, flags, flags.warmup))}`);
    console.log('');
  }
  const runs: { round: number; server: Key; stats: StreamLoopStats }[] = [];
  for (let round = 0; round < flags.rounds; round++) {
    for (const server of roundOrder(servers, round)) {
      const stats = await measure(server, flags, flags.duration);
      runs.push({ round: round + 1, server: server.key, stats });
      console.log(`round ${round + 1}/${flags.rounds} ${server.key.padEnd(8)} ${describe(stats)}`);
    }
  }
  console.log('');

  const summaries: Summary[] = servers.map((server) => {
    const mine = runs.filter((run) => run.server === server.key).map((run) => run.stats);
    const firstError = mine.find((stats) => stats.firstError !== undefined)?.firstError;
    return {
      server: server.key,
      label: server.label,
      eventsPerSec: median(mine.map((stats) => stats.eventsPerSec)),
      streamsPerSec: median(mine.map((stats) => stats.streamsPerSec)),
      ttfcP50: median(mine.map((stats) => stats.ttfcP50)),
      ttfcP99: median(mine.map((stats) => stats.ttfcP99)),
      roundsEventsPerSec: mine.map((stats) => stats.eventsPerSec),
      errors: mine.reduce((total, stats) => total + stats.errors, 0),
      ...(firstError !== undefined && { firstError }),
    };
  });
  const of = (key: Key): Summary => summaries.find((summary) => summary.server === key)!;
  const raw = of('raw');
  const sdk = of('sdk');
  const airlock = of('airlock');
  console.log(`Median of ${flags.rounds} round(s), ${flags.connections} concurrent streams:`);
  console.log(
    renderTable(
      ['server', 'events/s', 'vs raw', 'streams/s', 'TTFC p50 ms', 'TTFC p99 ms', 'events/s per round', 'errors'],
      summaries.map((summary) => [
        summary.label,
        formatInt(summary.eventsPerSec),
        formatRatio(summary.eventsPerSec / raw.eventsPerSec),
        formatInt(summary.streamsPerSec),
        formatMs(summary.ttfcP50),
        formatMs(summary.ttfcP99),
        summary.roundsEventsPerSec.map(formatInt).join(' / '),
        String(summary.errors),
      ]),
    ),
  );
  console.log('');
  const ratios = {
    eventsAirlockToRaw: airlock.eventsPerSec / raw.eventsPerSec,
    eventsAirlockToSdk: airlock.eventsPerSec / sdk.eventsPerSec,
    ttfcP99AirlockToRaw: airlock.ttfcP99 / raw.ttfcP99,
    ttfcP99AirlockToSdk: airlock.ttfcP99 / sdk.ttfcP99,
  };
  console.log(
    `events/s   Airlock / raw ${formatRatio(ratios.eventsAirlockToRaw)}   Airlock / SDK ${formatRatio(ratios.eventsAirlockToSdk)}`,
  );
  console.log(
    `TTFC p99   Airlock / raw ${formatRatio(ratios.ttfcP99AirlockToRaw)}   Airlock / SDK ${formatRatio(ratios.ttfcP99AirlockToSdk)}  (above 1× = slower)`,
  );
  const failed = summaries.filter((summary) => summary.errors > 0);
  for (const summary of failed) {
    console.log(`WARNING: ${summary.label}: ${summary.errors} failed streams (${summary.firstError}); not comparable`);
  }

  const headlines: Headline[] = [
    {
      figure: 'SSE events relayed',
      unit: 'events/s',
      higherIsBetter: true,
      airlock: airlock.eventsPerSec,
      raw: raw.eventsPerSec,
      sdk: sdk.eventsPerSec,
      note: `${flags.connections} streams`,
    },
    {
      figure: 'SSE time to first event p99',
      unit: 'ms',
      higherIsBetter: false,
      airlock: airlock.ttfcP99,
      raw: raw.ttfcP99,
      sdk: sdk.ttfcP99,
    },
  ];
  if (flags.json) {
    const path = writeResult('stream', startedAt, {
      benchmark: 'SSE streaming (message/stream, 9 events)',
      settings: flags,
      summary: summaries,
      ratios,
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
});
runMain(main, shutdown);
