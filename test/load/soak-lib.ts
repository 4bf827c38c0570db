/**
 * The sustained-load scenario shared by `test/load/sustained.test.ts` (10 s, in CI) and
 * `npm run soak` (60 s): a real `airlock serve` child process with every guard that costs per
 * request switched on — bearer auth for two clients, the rate limit, content scrubbing, the
 * hash-chained audit file and the SQLite task store (`--data`) — loaded with autocannon from this
 * process, while the child's resident set size is sampled from `/proc/<pid>/status`.
 *
 * Everything is bounded: the gateway listens on 127.0.0.1 only, each autocannon run has a fixed
 * duration and a watchdog, the child is stopped (SIGTERM, then SIGKILL) whatever happens, and the
 * temporary directory is removed.
 *
 * @example
 * ```ts
 * const report = await runSustained({ warmupSeconds: 2, seconds: 10 });
 * const failures = judgeSustained(report, { maxBytesPerRequest: 1024 });
 * ```
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createReadStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { verifyAuditFile, type AuditVerifyResult } from '../../src/audit/verify.js';
import { CLI } from '../helpers/cli.js';

/** The repository root: the child runs from there. */
export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

export const SOAK_TOKEN_A = 'soak-token-client-a-0123456789abcdef0123';
export const SOAK_TOKEN_B = 'soak-token-client-b-0123456789abcdef0123';
/** Listed in content.scrubSecrets, so every reply is scanned for it. */
const SCRUBBED = 'soak-secret-never-to-leave-0123456789abcdef';

const LISTENING = /listening on (http:\/\/127\.0\.0\.1:\d+)/;
const READY_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 3_000;
const STDERR_TAIL_CHARS = 4_000;

/** The v0.3 `message/send` the bench sends (the same bytes every time, as autocannon repeats it). */
export const MESSAGE_SEND = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'message/send',
  params: {
    message: { kind: 'message', role: 'user', messageId: 'm-1', parts: [{ kind: 'text', text: 'hello' }] },
  },
});

export interface GatewayOptions {
  /** limits.requestsPerMinute (default: high enough never to refuse a sustained run). */
  requestsPerMinute?: number;
  /** limits.maxConcurrentTasksPerPrincipal (default: the product default). */
  maxConcurrentTasksPerPrincipal?: number;
  /** Audit rows to `<workDir>/audit.jsonl` (default true). */
  audit?: boolean;
  /** Tasks in SQLite under `<workDir>/data` (default true). */
  sqlite?: boolean;
  /** Extra node flags for the child, e.g. `--trace-gc` (its stdout is drained, not shown). */
  nodeArgs?: readonly string[];
}

/** A gateway child process and the files it writes. */
export interface ChildGateway {
  readonly baseUrl: string;
  /** `http://127.0.0.1:PORT/a2a/echo`. */
  readonly endpoint: string;
  readonly pid: number;
  readonly workDir: string;
  /** Undefined when audit is off. */
  readonly auditFile: string | undefined;
  /** Throws if the child has exited. */
  assertAlive(): void;
  /** Stops the child: SIGTERM (it drains and closes its files), SIGKILL after a grace period. */
  stopChild(): Promise<void>;
  /** Stops the child and removes the work directory. */
  stop(): Promise<void>;
}

function gatewayYaml(options: GatewayOptions, auditFile: string | undefined): string {
  const limits = [`requestsPerMinute: ${options.requestsPerMinute ?? 100_000_000}`];
  if (options.maxConcurrentTasksPerPrincipal !== undefined) {
    limits.push(`maxConcurrentTasksPerPrincipal: ${options.maxConcurrentTasksPerPrincipal}`);
  }
  return [
    'server: { host: 127.0.0.1, port: 0 }',
    `limits: { ${limits.join(', ')} }`,
    `content: { scrubSecrets: ['${SCRUBBED}'] }`,
    ...(auditFile === undefined ? [] : [`audit: { file: '${auditFile}' }`]),
    'agents:',
    '  - slug: echo',
    '    name: Echo',
    '    description: Replies with the text it was sent.',
    '    skills: [{ id: echo, name: Echo, description: Repeats the text back. }]',
    '    backend: { type: echo }',
    'clients:',
    "  - { id: a, token: '${SOAK_TOKEN_A}', agents: [echo] }",
    "  - { id: b, token: '${SOAK_TOKEN_B}', agents: [echo] }",
    '',
  ].join('\n');
}

/**
 * Starts `airlock serve` from the sources (test/helpers/cli.ts, no build needed)
 * in a fresh temporary directory and resolves once it prints its listening line.
 */
export async function startChildGateway(options: GatewayOptions = {}): Promise<ChildGateway> {
  const workDir = mkdtempSync(join(tmpdir(), 'airlock-load-'));
  const auditFile = options.audit === false ? undefined : join(workDir, 'audit.jsonl');
  const configPath = join(workDir, 'airlock.yaml');
  writeFileSync(configPath, gatewayYaml(options, auditFile), { mode: 0o600 });
  const args = [...(options.nodeArgs ?? []), ...CLI, 'serve', '--config', configPath, '--log-level', 'silent'];
  if (options.sqlite !== false) args.push('--data', join(workDir, 'data'));
  const child = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    env: { ...process.env, NODE_ENV: 'production', SOAK_TOKEN_A, SOAK_TOKEN_B },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-STDERR_TAIL_CHARS)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const cleanUp = async (): Promise<void> => {
    await stopChild(child, exited);
    rmSync(workDir, { recursive: true, force: true });
  };
  try {
    const baseUrl = await listeningUrl(child, () => stderr);
    const pid = child.pid!;
    return {
      baseUrl,
      endpoint: `${baseUrl}/a2a/echo`,
      pid,
      workDir,
      auditFile,
      assertAlive() {
        if (child.exitCode !== null || child.signalCode !== null) {
          throw new Error(`gateway died (code ${child.exitCode}, signal ${child.signalCode})\n${stderr.trim()}`);
        }
      },
      stopChild: () => stopChild(child, exited),
      stop: cleanUp,
    };
  } catch (error) {
    await cleanUp();
    throw error;
  }
}

function listeningUrl(child: ChildProcess, stderr: () => string): Promise<string> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (reason: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(new Error(`gateway: ${reason}\n--- stderr ---\n${stderr().trim()}`));
    };
    const timer = setTimeout(() => fail(`no listening line within ${READY_TIMEOUT_MS} ms`), READY_TIMEOUT_MS);
    child.once('error', (error) => fail(error.message));
    child.once('exit', (code, signal) => fail(`exited before listening (code ${code}, signal ${signal})`));
    // The banner's first line; readline keeps draining stdout after it, so the pipe never fills
    // (other lines, e.g. from NODE_OPTIONS=--trace-gc, are skipped).
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      const url = LISTENING.exec(line)?.[1];
      if (url === undefined || settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(url);
    });
  });
}

async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const grace = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), STOP_GRACE_MS)));
  if ((await Promise.race([exited, grace])) === 'late') {
    child.kill('SIGKILL');
    await exited;
  }
  clearTimeout(timer);
}

// ---------------------------------------------------------------- requests

export function headersFor(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
}

/**
 * Sends one `message/send` and checks the reply: HTTP 200, a JSON-RPC result holding a completed
 * task whose artifact echoes the text. Throws with what came back otherwise.
 */
export async function checkReply(endpoint: string, token: string): Promise<void> {
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: headersFor(token),
    body: MESSAGE_SEND,
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  let task: { kind?: unknown; status?: { state?: unknown }; artifacts?: { parts?: { text?: unknown }[] }[] } = {};
  try {
    task = (JSON.parse(text) as { result?: typeof task }).result ?? {};
  } catch {
    // Reported below.
  }
  const echoed = task.artifacts?.[0]?.parts?.[0]?.text;
  if (response.status !== 200 || task.kind !== 'task' || task.status?.state !== 'completed' || echoed !== 'hello') {
    throw new Error(`unexpected reply: HTTP ${response.status} ${text.slice(0, 500)}`);
  }
}

// ---------------------------------------------------------------- load

export interface LoadRun {
  /** Mean of autocannon's per-second request counts. */
  reqPerSec: number;
  /** Responses received. */
  requests: number;
  /** Requests written (answered or not when the run ended). */
  sent: number;
  ok2xx: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** Responses by status code. */
  statuses: Record<number, number>;
  /** Every response's latency in ms (fractional), ascending. */
  latencies: number[];
}

export interface LoadSpec {
  url: string;
  token: string;
  connections: number;
  /** Seconds. */
  duration: number;
  /** Called with each response's status code as it arrives. */
  onResponse?: (status: number) => void;
}

/** Seconds past the planned duration after which a run that did not end is stopped. */
const OVERRUN_GRACE_S = 15;

/** One closed-loop autocannon run (pipelining 1) of `message/send` with the client's token. */
export function load(spec: LoadSpec): Promise<LoadRun> {
  const latencies: number[] = [];
  const statuses: Record<number, number> = {};
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: spec.url,
        method: 'POST',
        headers: headersFor(spec.token),
        body: MESSAGE_SEND,
        connections: spec.connections,
        pipelining: 1,
        duration: spec.duration,
        timeout: 10,
      },
      (error, result) => {
        clearTimeout(watchdog);
        if (error !== null) return reject(error);
        latencies.sort((a, b) => a - b);
        resolve({
          reqPerSec: result.requests.average,
          requests: latencies.length,
          sent: result.requests.sent,
          ok2xx: result['2xx'],
          non2xx: result.non2xx,
          errors: result.errors,
          timeouts: result.timeouts,
          statuses,
          latencies,
        });
      },
    );
    instance.on('response', (_client, status, _bytes, responseTime) => {
      latencies.push(responseTime);
      statuses[status] = (statuses[status] ?? 0) + 1;
      spec.onResponse?.(status);
    });
    const watchdog = setTimeout(() => instance.stop(), (spec.duration + OVERRUN_GRACE_S) * 1000);
  });
}

/** Several runs at once (e.g. one per client), merged into one summary. */
export async function loadTogether(specs: readonly LoadSpec[]): Promise<LoadRun> {
  const runs = await Promise.all(specs.map(load));
  const statuses: Record<number, number> = {};
  for (const run of runs) {
    for (const [status, count] of Object.entries(run.statuses)) {
      statuses[Number(status)] = (statuses[Number(status)] ?? 0) + count;
    }
  }
  const sum = (pick: (run: LoadRun) => number): number => runs.reduce((total, run) => total + pick(run), 0);
  return {
    reqPerSec: sum((run) => run.reqPerSec),
    requests: sum((run) => run.requests),
    sent: sum((run) => run.sent),
    ok2xx: sum((run) => run.ok2xx),
    non2xx: sum((run) => run.non2xx),
    errors: sum((run) => run.errors),
    timeouts: sum((run) => run.timeouts),
    statuses,
    latencies: runs.flatMap((run) => run.latencies).sort((a, b) => a - b),
  };
}

/** Nearest-rank percentile of an ascending array; NaN when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

// ---------------------------------------------------------------- memory

export interface RssSample {
  /** Seconds since sampling started. */
  t: number;
  mb: number;
}

/** The resident set size of `pid` in MB (VmRSS from /proc; Linux only). */
export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status)?.[1];
  if (kb === undefined) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(kb) / 1024;
}

/** Samples `pid`'s RSS every `intervalMs` until stopped; the first sample is taken at once. */
export function sampleRss(pid: number, intervalMs: number): { stop(): RssSample[] } {
  const samples: RssSample[] = [];
  const started = performance.now();
  const take = (): void => {
    try {
      samples.push({ t: (performance.now() - started) / 1000, mb: rssMb(pid) });
    } catch {
      // The child has gone; the caller notices through assertAlive.
    }
  };
  take();
  const timer = setInterval(take, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      take();
      return samples;
    },
  };
}

/** Least-squares slope of RSS over time, in MB per minute; NaN with fewer than two samples. */
export function slopeMbPerMin(samples: readonly RssSample[]): number {
  const n = samples.length;
  if (n < 2) return Number.NaN;
  const meanT = samples.reduce((sum, sample) => sum + sample.t, 0) / n;
  const meanMb = samples.reduce((sum, sample) => sum + sample.mb, 0) / n;
  let covariance = 0;
  let variance = 0;
  for (const sample of samples) {
    covariance += (sample.t - meanT) * (sample.mb - meanMb);
    variance += (sample.t - meanT) ** 2;
  }
  return (covariance / variance) * 60;
}

// ---------------------------------------------------------------- the scenario

export interface SustainedOptions {
  /** Seconds of load before the measured run (JIT, heap and SQLite cache warm up). */
  warmupSeconds: number;
  /** Seconds of measured load. */
  seconds: number;
  /** Connections per client (two clients load at once). Default 8. */
  connectionsPerClient?: number;
  /** RSS sampling interval. Default 1000 ms. */
  sampleMs?: number;
  gateway?: GatewayOptions;
}

export interface SustainedReport {
  seconds: number;
  connectionsPerClient: number;
  warmup: LoadRun;
  run: LoadRun;
  /** Replies checked before any load (one per client). */
  checkedReplies: number;
  /** Every sample, warm-up included (t = 0 when the warm-up starts). */
  rss: RssSample[];
  /** The samples the slope is fitted over: the second half of the measured run. */
  fitted: RssSample[];
  slopeMbPerMin: number;
  audit: AuditVerifyResult;
  /** Rows by event type. */
  auditTypes: Record<string, number>;
  /** Tasks submitted whose completion row is missing (by taskId). */
  uncompleted: number;
  /** Tasks the gateway was asked for: the checks + every request autocannon wrote. */
  sentTasks: number;
  /** Of those, answered with 2xx before the runs ended. */
  answeredTasks: number;
}

/**
 * Starts the guarded gateway, checks one reply per client, warms up, then loads it with both
 * clients for `seconds` while sampling its RSS; stops the child and verifies its audit file.
 */
export async function runSustained(options: SustainedOptions): Promise<SustainedReport> {
  const gateway = await startChildGateway(options.gateway);
  try {
    const connections = options.connectionsPerClient ?? 8;
    const specs = (duration: number): LoadSpec[] =>
      [SOAK_TOKEN_A, SOAK_TOKEN_B].map((token) => ({ url: gateway.endpoint, token, connections, duration }));
    await checkReply(gateway.endpoint, SOAK_TOKEN_A);
    await checkReply(gateway.endpoint, SOAK_TOKEN_B);
    const checkedReplies = 2;

    const sampler = sampleRss(gateway.pid, options.sampleMs ?? 1000);
    let rss: RssSample[] = [];
    let warmup: LoadRun;
    let run: LoadRun;
    let measuredFrom: number;
    const started = performance.now();
    try {
      warmup = await loadTogether(specs(options.warmupSeconds));
      gateway.assertAlive();
      measuredFrom = (performance.now() - started) / 1000;
      run = await loadTogether(specs(options.seconds));
      gateway.assertAlive();
    } finally {
      rss = sampler.stop();
    }
    const fitted = rss.filter((sample) => sample.t >= measuredFrom + options.seconds / 2);

    // Requests abandoned when a run ended may still be finishing: stop the child (it drains and
    // closes the audit file) before reading the file.
    await gateway.stopChild();
    const auditFile = gateway.auditFile!;
    const audit = await verifyAuditFile(auditFile);
    const rows = await auditRows(auditFile);
    return {
      seconds: options.seconds,
      connectionsPerClient: connections,
      warmup,
      run,
      checkedReplies,
      rss,
      fitted,
      slopeMbPerMin: slopeMbPerMin(fitted),
      audit,
      auditTypes: rows.types,
      uncompleted: rows.uncompleted,
      sentTasks: checkedReplies + warmup.sent + run.sent,
      answeredTasks: checkedReplies + warmup.ok2xx + run.ok2xx,
    };
  } finally {
    await gateway.stop();
  }
}

/** Counts an audit file's rows by type and the submitted tasks that have no completion row. */
export async function auditRows(path: string): Promise<{ types: Record<string, number>; uncompleted: number }> {
  const types: Record<string, number> = {};
  const open = new Set<string>();
  const lines = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.length === 0) continue;
    const row = JSON.parse(line) as { type: string; taskId?: string };
    types[row.type] = (types[row.type] ?? 0) + 1;
    if (row.taskId === undefined) continue;
    if (row.type === 'a2a.task.submitted') open.add(row.taskId);
    else if (row.type === 'a2a.task.completed') open.delete(row.taskId);
  }
  return { types, uncompleted: open.size };
}

export interface SustainedBounds {
  /**
   * Largest RSS growth accepted over the fitted samples, in bytes per request answered: the
   * slope in MB/min divided by the request rate, so that the bound means the same on a fast
   * machine and a slow one (garbage that V8 promotes before its next major GC, which the RSS
   * slope also shows, grows with the request rate too).
   */
  maxBytesPerRequest: number;
}

/** The RSS slope bound in MB/min that `maxBytesPerRequest` amounts to at this run's request rate. */
export function slopeBoundMbPerMin(report: SustainedReport, bounds: SustainedBounds): number {
  return (bounds.maxBytesPerRequest * report.run.reqPerSec * 60) / (1024 * 1024);
}

/** What is wrong with a sustained run; empty when every assertion holds. */
export function judgeSustained(report: SustainedReport, bounds: SustainedBounds): string[] {
  const problems: string[] = [];
  for (const [name, run] of [
    ['warm-up', report.warmup],
    ['run', report.run],
  ] as const) {
    if (run.non2xx > 0) problems.push(`${name}: ${run.non2xx} non-2xx answers ${JSON.stringify(run.statuses)}`);
    if (run.errors > 0) problems.push(`${name}: ${run.errors} socket errors`);
    if (run.timeouts > 0) problems.push(`${name}: ${run.timeouts} timeouts`);
  }
  if (report.run.requests === 0) problems.push('run: no responses');
  if (report.checkedReplies !== 2) problems.push('not every reply was checked before the load');
  const bound = slopeBoundMbPerMin(report, bounds);
  if (!(report.slopeMbPerMin < bound)) {
    problems.push(
      `RSS slope ${report.slopeMbPerMin.toFixed(1)} MB/min over the second half is not below ${bound.toFixed(1)} MB/min ` +
        `(${bounds.maxBytesPerRequest} B per request at ${report.run.reqPerSec.toFixed(0)} req/s)`,
    );
  }
  if (!report.audit.ok) {
    problems.push(
      `audit verify: broken at line ${report.audit.firstBrokenLine}: ${report.audit.reason} (${report.audit.rows} rows checked)`,
    );
  }
  const submitted = report.auditTypes['a2a.task.submitted'] ?? 0;
  const completed = report.auditTypes['a2a.task.completed'] ?? 0;
  const others = Object.entries(report.auditTypes).filter(
    ([type]) => type !== 'a2a.task.submitted' && type !== 'a2a.task.completed',
  );
  if (others.length > 0) problems.push(`audit: unexpected rows ${JSON.stringify(Object.fromEntries(others))}`);
  if (submitted !== completed || report.uncompleted !== 0) {
    problems.push(`audit: ${submitted} submitted vs ${completed} completed (${report.uncompleted} never completed)`);
  }
  if (report.audit.rows !== 2 * submitted) problems.push(`audit: ${report.audit.rows} rows ≠ 2 × ${submitted} tasks`);
  // Every request written ran, including those still in flight when autocannon stopped (answered
  // after the run ended, so not counted as responses): one task each, exactly.
  if (submitted !== report.sentTasks) {
    problems.push(
      `audit: ${submitted} tasks, but ${report.sentTasks} requests were sent (${report.answeredTasks} answered)`,
    );
  }
  return problems;
}

/** One line per figure, for CI output (`# ` prefixed) and for the soak script. */
export function describeSustained(report: SustainedReport): string[] {
  const { run } = report;
  const first = report.rss[0]?.mb ?? Number.NaN;
  const last = report.rss.at(-1)?.mb ?? Number.NaN;
  const peak = Math.max(...report.rss.map((sample) => sample.mb));
  return [
    `load: ${report.seconds} s, 2 clients × ${report.connectionsPerClient} connections, ${run.requests} responses, ${run.reqPerSec.toFixed(0)} req/s, ` +
      `p50 ${percentile(run.latencies, 50).toFixed(2)} ms, p99 ${percentile(run.latencies, 99).toFixed(2)} ms`,
    `errors: non-2xx ${run.non2xx + report.warmup.non2xx}, socket errors ${run.errors + report.warmup.errors}, ` +
      `timeouts ${run.timeouts + report.warmup.timeouts} (warm-up ${report.warmup.requests} responses included)`,
    `RSS: start ${first.toFixed(1)} MB, end ${last.toFixed(1)} MB, peak ${peak.toFixed(1)} MB; ` +
      `slope ${report.slopeMbPerMin.toFixed(2)} MB/min over the last ${report.fitted.length} samples (second half), ` +
      `≈ ${((report.slopeMbPerMin * 1024 * 1024) / 60 / run.reqPerSec).toFixed(1)} B per request`,
    `audit: ${report.audit.ok ? 'verified' : 'BROKEN'}, ${report.audit.rows} rows = ` +
      `${report.auditTypes['a2a.task.submitted'] ?? 0} submitted + ${report.auditTypes['a2a.task.completed'] ?? 0} completed ` +
      `(requests sent ${report.sentTasks}, answered ${report.answeredTasks})`,
  ];
}
