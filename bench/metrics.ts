/**
 * What the Prometheus metrics cost on the hot path: the same gateway (echo agent, one token
 * client, memory store) with and without a `metrics` section, both without and with an audit
 * file (most deployments have one: then the audit rows the metrics count are built anyway),
 * v0.3 `message/send`, interleaved rounds; req/s, p50/p99 and the server's CPU time per request.
 * The cost is the median of each round's difference (on − off, measured back to back), which
 * holds up on a machine whose speed drifts between rounds better than a difference of medians.
 * Then, in process, the metric work one request adds (the request counter, two audit rows
 * through the metered sink, two timed store operations) timed on its own, in nanoseconds.
 *
 *   npm run bench:metrics                                    # 10 rounds × 4 s, 50 connections
 *   npm run bench:metrics -- --rounds 30 --duration 4 --json
 *
 * Servers run the build (`dist/cli/main.js`, as in production; the npm script builds first).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { auditTime, type AuditEvent } from '../src/audit/index.js';
import { meteredAuditSink } from '../src/server/metrics/audit-sink.js';
import { createSeries } from '../src/server/metrics/series.js';
import { startChild, type ChildServer } from './lib/children.js';
import {
  ECHO_AGENT_AND_CLIENT,
  installShutdown,
  parseCommonFlags,
  roundOrder,
  runMain,
  writeResult,
} from './lib/common.js';
import { cpuMicros, pinGenerator, pinServer } from './lib/cpu.js';
import { runLoad, verifyReply, type RunStats, type Target } from './lib/load.js';
import { formatInt, formatMs, median, renderTable } from './lib/report.js';

const MESSAGE_SEND = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'message/send',
  params: { message: { kind: 'message', role: 'user', messageId: 'm-1', parts: [{ kind: 'text', text: 'hello' }] } },
});

type RowKey = 'off' | 'on' | 'audit-off' | 'audit-on';

interface Row {
  key: RowKey;
  child: ChildServer;
  target: Target;
  runs: (RunStats & { cpuMicrosPerRequest: number })[];
}

async function start(key: RowKey, token: string, workDir: string): Promise<Row> {
  const configPath = join(workDir, `${key}.yaml`);
  // As bench/inbound.ts: no request-rate cap, so every request is served.
  const lines = [
    'server: { host: 127.0.0.1, port: 0 }',
    // As there: a task holds its slot until its audit row is written, so 16 would refuse some of 50 connections.
    'limits: { requestsPerMinute: 100000000, maxConcurrentTasksPerPrincipal: 64 }',
    ...(key.endsWith('on') ? ['metrics: { port: 0 }'] : []),
    ...(key.startsWith('audit') ? [`audit: { file: ${JSON.stringify(join(workDir, `${key}.jsonl`))} }`] : []),
  ];
  writeFileSync(configPath, [...lines, ...ECHO_AGENT_AND_CLIENT, ''].join('\n'), { mode: 0o600 });
  const child = await startChild({
    name: `metrics-${key}`,
    script: 'dist/cli/main.js',
    args: ['serve', '--config', configPath, '--log-level', 'silent'],
    env: { BENCH_TOKEN: token },
  });
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  return { key, child, target: { url: `${child.baseUrl}/a2a/echo`, headers, body: MESSAGE_SEND }, runs: [] };
}

async function measure(
  row: Row,
  seconds: number,
  connections: number,
): Promise<RunStats & { cpuMicrosPerRequest: number }> {
  const before = cpuMicros(row.child.pid) ?? Number.NaN;
  const stats = await runLoad(row.target, { connections, pipelining: 1, duration: seconds });
  const after = cpuMicros(row.child.pid) ?? Number.NaN;
  return { ...stats, cpuMicrosPerRequest: (after - before) / Math.max(1, stats.requests) };
}

/** The metric work of one request, in process: ns per request (median of 5 batches). */
function inProcessNanos(): number {
  const series = createSeries({ defaultMetrics: false });
  const sink = meteredAuditSink(series, new Set(['echo']), undefined);
  const time = auditTime();
  const batches: number[] = [];
  const n = 200_000;
  for (let batch = 0; batch < 5; batch++) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < n; i++) {
      const taskId = `t-${i}`;
      const submitted: AuditEvent = {
        type: 'a2a.task.submitted',
        time,
        outcome: 'ok',
        client: 'bench',
        agent: 'echo',
        taskId,
        contextId: 'c',
        inputChars: 5,
      };
      const completed: AuditEvent = {
        type: 'a2a.task.completed',
        time,
        outcome: 'ok',
        client: 'bench',
        agent: 'echo',
        taskId,
        contextId: 'c',
        outputChars: 5,
      };
      sink.write(submitted);
      series.storeSeconds.observe(0.00001, 'memory', 'put');
      sink.write(completed);
      series.storeSeconds.observe(0.00001, 'memory', 'put');
      series.requests.inc('echo', 'jsonrpc', 'send', '0.3', 'ok');
    }
    batches.push(Number(process.hrtime.bigint() - started) / n);
  }
  return median(batches);
}

async function main(): Promise<number> {
  const flags = parseCommonFlags(
    process.argv.slice(2),
    { duration: 4, rounds: 10, connections: 50, warmup: 2 },
    'bench/metrics.ts',
  );
  const startedAt = new Date();
  const workDir = mkdtempSync(join(tmpdir(), 'airlock-bench-metrics-'));
  const token = `bench-${'0123456789abcdef'.repeat(3)}`;
  try {
    const rows: Row[] = [];
    for (const key of ['off', 'on', 'audit-off', 'audit-on'] as const) rows.push(await start(key, token, workDir));
    const cores = pinGenerator();
    for (const row of rows) {
      pinServer(row.child.pid, cores);
      await verifyReply(row.key, row.target);
      await runLoad(row.target, { connections: flags.connections, pipelining: 1, duration: flags.warmup });
    }
    // Each pair (off, on) back to back, the pairs and their order turned every round.
    const pairs = [rows.slice(0, 2), rows.slice(2, 4)] as [[Row, Row], [Row, Row]];
    for (let round = 0; round < flags.rounds; round++) {
      for (const pair of roundOrder(pairs, round)) {
        for (const row of round % 2 === 0 ? pair : [...pair].reverse()) {
          row.runs.push(await measure(row, flags.duration, flags.connections));
        }
      }
    }
    const summary = rows.map((row) => ({
      key: row.key,
      reqPerSec: median(row.runs.map((run) => run.reqPerSec)),
      p50: median(row.runs.map((run) => run.p50)),
      p99: median(row.runs.map((run) => run.p99)),
      cpuMicrosPerRequest: median(row.runs.map((run) => run.cpuMicrosPerRequest)),
      failures: row.runs.reduce((sum, run) => sum + run.non2xx + run.errors + run.timeouts, 0),
      rounds: row.runs.map((run) => Math.round(run.reqPerSec)),
    }));
    const nanos = inProcessNanos();
    const added = ([off, on]: [Row, Row]): number =>
      median(on.runs.map((run, round) => run.cpuMicrosPerRequest - off.runs[round]!.cpuMicrosPerRequest));
    type Summary = (typeof summary)[number];
    const [off, on, auditOff, auditOn] = summary as [Summary, Summary, Summary, Summary];
    const result = {
      summary,
      onToOffReqPerSec: on.reqPerSec / off.reqPerSec,
      cpuMicrosPerRequestAdded: added(pairs[0]),
      withAudit: {
        onToOffReqPerSec: auditOn.reqPerSec / auditOff.reqPerSec,
        cpuMicrosPerRequestAdded: added(pairs[1]),
      },
      inProcessNanosPerRequest: nanos,
      pinned: cores.pinned,
    };
    if (flags.json) console.log(JSON.stringify(result, null, 2));
    else {
      console.log(
        renderTable(
          ['metrics', 'req/s', 'p50', 'p99', 'CPU µs/req', 'rounds (req/s, least–most)', 'failures'],
          summary.map((s) => [
            s.key,
            formatInt(s.reqPerSec),
            formatMs(s.p50),
            formatMs(s.p99),
            s.cpuMicrosPerRequest.toFixed(1),
            `${Math.min(...s.rounds)}–${Math.max(...s.rounds)}`,
            String(s.failures),
          ]),
        ),
      );
      console.log(
        `no audit file: on ÷ off req/s ${result.onToOffReqPerSec.toFixed(3)}, CPU per request added ${result.cpuMicrosPerRequestAdded.toFixed(1)} µs (median of the rounds' differences)`,
      );
      console.log(
        `audit file:    on ÷ off req/s ${result.withAudit.onToOffReqPerSec.toFixed(3)}, CPU per request added ${result.withAudit.cpuMicrosPerRequestAdded.toFixed(1)} µs`,
      );
      console.log(`in process, the metric work of one request: ${nanos.toFixed(0)} ns`);
    }
    writeResult('metrics', startedAt, result);
    return summary.some((s) => s.failures > 0) ? 1 : 0;
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

runMain(main, installShutdown());
