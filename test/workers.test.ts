/**
 * `airlock serve --workers 2` on PostgreSQL: the real CLI, a cluster primary and two workers
 * behind one port. Connections spread over both workers (each worker keeps its own audit chain,
 * `audit.worker-N.jsonl`, which tells them apart); a subscriber on one worker streams a task
 * whose turn runs on the other; the per-principal rate limit holds across the workers (not 2×);
 * a killed worker is forked again; SIGTERM drains both and the primary exits 0. The memory store,
 * and SQLite without Redis, refuse `--workers 2` with one line.
 *
 * @example
 * ```sh
 * node --import tsx --test test/workers.test.ts
 * ```
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { verifyAuditFile } from '../src/audit/verify.js';
import { availableCores } from '../src/cli/collector.js';
import { dropSchema, postgresSkip, POSTGRES_URL, uniqueName, waitFor } from './helpers/backing-services.js';
import { TOKEN_A, TOKEN_C } from './helpers/gateway.js';
import { CLI } from './helpers/cli.js';

const pgSkip = await postgresSkip();
const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const RATE = 40;
const dir = mkdtempSync(join(tmpdir(), 'airlock-workers-'));
const schema = uniqueName('airlock_test_workers');

function writeConfig(name: string, store: string): string {
  const path = join(dir, name);
  writeFileSync(
    path,
    `
server: { host: 127.0.0.1, port: 0, drainSeconds: 10 }
${store}
audit: { file: ${JSON.stringify(join(dir, 'audit.jsonl'))} }
limits: { requestsPerMinute: ${RATE} }
agents:
  - slug: echo
    name: Echo
    description: Echoes.
    skills: [{ id: echo, name: Echo, description: Echoes }]
    backend: { type: echo }
  - slug: writer
    name: Writer
    description: Writes slowly.
    skills: [{ id: write, name: Write, description: Writes }]
    backend: { type: writer, chunkDelayMs: 60 }
clients:
  - { id: a, token: "\${TOKEN_A}", agents: [echo, writer] }
  - { id: c, token: "\${TOKEN_C}", agents: [echo] }
`,
  );
  return path;
}

/** `airlock serve --workers 2` and everything it wrote (stdout and stderr together). */
interface Cluster {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function startCluster(config: string): Cluster {
  const child = spawn(
    process.execPath,
    [...CLI, 'serve', '--config', config, '--workers', '2', '--log-level', 'info'],
    { cwd: REPO_ROOT, env: { ...process.env, TOKEN_A, TOKEN_C }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/** The JSON log lines of `event` in the output. */
function logged(output: string, event: string): Record<string, unknown>[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{') && line.includes(`"event":"${event}"`))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/**
 * One JSON-RPC POST. With `agent`, on that agent's one kept-alive connection (so on one worker);
 * without, on a new connection (which the primary hands to the next worker in turn).
 */
function post(
  url: string,
  method: string,
  params: unknown,
  options: { token?: string; agent?: Agent; stream?: boolean } = {},
): Promise<{ status: number; text: string }> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent: options.agent ?? false,
        headers: {
          'content-type': 'application/json',
          'a2a-version': '1.0',
          authorization: `Bearer ${options.token ?? TOKEN_A}`,
          ...(options.stream === true && { accept: 'text/event-stream' }),
        },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function message(text: string): unknown {
  return { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] };
}

/** Which worker's audit chain holds the task (each worker writes `audit.worker-N.jsonl`). */
function workerOf(taskId: string): number | undefined {
  for (const index of [1, 2]) {
    const file = join(dir, `audit.worker-${index}.jsonl`);
    if (existsSync(file) && readFileSync(file, 'utf8').includes(taskId)) return index;
  }
  return undefined;
}

async function sendEcho(url: string, options: { agent?: Agent; token?: string } = {}): Promise<string> {
  const sent = await post(`${url}/a2a/echo`, 'SendMessage', { message: message('hello workers') }, options);
  assert.equal(sent.status, 200, sent.text);
  return (JSON.parse(sent.text) as { result: { task: { id: string } } }).result.task.id;
}

// The refusals start at once, beside the cluster's start (each CLI start takes seconds).
function refusal(config: string, args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [...CLI, 'serve', '--config', config, '--workers', '2', ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, TOKEN_A, TOKEN_C, DATABASE_URL: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stderr })));
}
const memoryRefused = refusal(writeConfig('memory.yaml', ''), []);
const cluster: Cluster | undefined =
  pgSkip === false
    ? startCluster(
        writeConfig('pg.yaml', `store: { type: postgres, url: ${JSON.stringify(POSTGRES_URL)}, schema: ${schema} }`),
      )
    : undefined;
const sqliteRefused = refusal(writeConfig('sqlite.yaml', ''), ['--data', join(dir, 'data')]);

after(() => rmSync(dir, { recursive: true, force: true }));

describe('--workers 2 refused where the workers cannot share', () => {
  it('the memory store: one line naming why, exit 1', async () => {
    const { code, stderr } = await memoryRefused;
    assert.equal(code, 1);
    const lines = stderr.trim().split('\n');
    assert.equal(lines.length, 1, stderr);
    assert.match(lines[0]!, /^airlock: --workers 2 needs a store every worker shares, and the memory store/);
  });

  it('SQLite without redis.url: one line, exit 1', async () => {
    const { code, stderr } = await sqliteRefused;
    assert.equal(code, 1);
    const lines = stderr.trim().split('\n');
    assert.equal(lines.length, 1, stderr);
    assert.match(lines[0]!, /^airlock: --workers 2 on the SQLite store needs redis\.url/);
  });
});

describe('--workers 2 on PostgreSQL', { skip: pgSkip }, () => {
  let url: string;
  const agents: Agent[] = [];
  /** A kept-alive connection per worker: pinned[1] reaches worker 1, pinned[2] worker 2. */
  const pinned: Record<number, Agent> = {};

  before(async () => {
    await waitFor(
      () => logged(cluster!.output(), 'workers_listening').length > 0,
      100_000,
      'both workers listening',
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}: ${cluster!.output()}`);
    });
    url = /airlock listening on (http:\/\/\S+)/.exec(cluster!.output())![1]!;
  });

  after(async () => {
    for (const agent of agents) agent.destroy();
    if (cluster !== undefined && cluster.child.exitCode === null) {
      cluster.child.kill('SIGKILL');
      await cluster.exited;
    }
    for (const line of logged(cluster?.output() ?? '', 'workers_listening')) {
      for (const pid of line.pids as number[]) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Gone already.
        }
      }
    }
    await dropSchema(schema);
  });

  it('forks the workers with the collector serve --gc auto chose for the cores, and says so', () => {
    const [line] = logged(cluster!.output(), 'workers_listening');
    const cores = availableCores();
    // Two workers on two cores or fewer: each one's helper threads would take the other's core.
    assert.equal(line!.gc, cores <= 2 ? 'single-threaded' : 'concurrent', JSON.stringify(line));
    for (const pid of line!.pids as number[]) {
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      assert.equal(args.includes('--single-threaded-gc'), cores <= 2, args.join(' '));
    }
  });

  it('spreads new connections over both workers', async () => {
    const served = new Set<number | undefined>();
    for (let i = 0; i < 6; i++) served.add(workerOf(await sendEcho(url)));
    assert.deepEqual([...served].sort(), [1, 2]);
  });

  it('a subscriber on one worker streams a task whose turn runs on the other', async () => {
    for (let i = 0; i < 10 && (pinned[1] === undefined || pinned[2] === undefined); i++) {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      agents.push(agent);
      const index = workerOf(await sendEcho(url, { agent }));
      if (index !== undefined && pinned[index] === undefined) pinned[index] = agent;
    }
    assert.ok(pinned[1] !== undefined && pinned[2] !== undefined, 'a connection to each worker');
    const sent = await post(
      `${url}/a2a/writer`,
      'SendMessage',
      { message: message('stream me'), configuration: { returnImmediately: true } },
      { agent: pinned[1] },
    );
    const id = (JSON.parse(sent.text) as { result: { task: { id: string } } }).result.task.id;
    assert.equal(workerOf(id), 1, 'the turn runs on worker 1');
    const { text } = await post(`${url}/a2a/writer`, 'SubscribeToTask', { id }, { agent: pinned[2], stream: true });
    const events = text
      .split('\n\n')
      .map((frame) => frame.split('\n').find((line) => line.startsWith('data: ')))
      .filter((line): line is string => line !== undefined)
      .map((line) => JSON.parse(line.slice(6)) as { result: Record<string, any> });
    const chunks = events.filter((event) => event.result.artifactUpdate !== undefined);
    assert.ok(chunks.length >= 2, `${chunks.length} chunks through worker 2: ${text.slice(0, 400)}`);
    assert.equal(events.at(-1)?.result.statusUpdate?.status.state, 'TASK_STATE_COMPLETED');
    assert.equal(workerOf(id), 1, 'worker 2 only relayed it');
  });

  it(`holds the per-principal rate across workers: ${RATE} requests in all, then 429 on each`, async () => {
    for (let i = 0; i < RATE; i++) {
      const listed = await post(`${url}/a2a/echo`, 'ListTasks', {}, { token: TOKEN_C });
      assert.equal(listed.status, 200, `request ${i + 1}`);
    }
    for (const index of [1, 2]) {
      const refused = await post(`${url}/a2a/echo`, 'ListTasks', {}, { token: TOKEN_C, agent: pinned[index]! });
      assert.equal(refused.status, 429, `on worker ${index}`);
    }
  });

  it('forks a killed worker again, and the port keeps answering', async () => {
    const [worker1, worker2] = logged(cluster!.output(), 'workers_listening')[0]!.pids as number[];
    process.kill(worker2!, 'SIGKILL');
    await waitFor(() => logged(cluster!.output(), 'worker_restarted').length > 0, 60_000, 'worker 2 forked again');
    const exited = logged(cluster!.output(), 'worker_exited')[0]!;
    assert.equal(exited.worker, 2);
    assert.equal(exited.signal, 'SIGKILL');
    const restarted = logged(cluster!.output(), 'worker_restarted')[0]!;
    assert.notEqual(restarted.pid, worker2);
    assert.equal(typeof restarted.pid, 'number');
    process.kill(worker1!, 0); // worker 1 lived on
    const served = new Set<number | undefined>();
    for (let i = 0; i < 6; i++) served.add(workerOf(await sendEcho(url, { token: TOKEN_A })));
    assert.deepEqual([...served].sort(), [1, 2]);
  });

  it('SIGTERM drains both workers, the primary exits 0 and removes its pid file', async () => {
    const pidFile = join(dir, '.airlock', 'pg.yaml.pid');
    assert.equal(JSON.parse(readFileSync(pidFile, 'utf8')).pid, cluster!.child.pid, 'the pid file names the primary');
    const workerPids = [
      (logged(cluster!.output(), 'workers_listening')[0]!.pids as number[])[0]!,
      logged(cluster!.output(), 'worker_restarted')[0]!.pid as number,
    ];
    for (const agent of agents) agent.destroy();
    cluster!.child.kill('SIGTERM');
    assert.equal(await cluster!.exited, 0);
    assert.equal(logged(cluster!.output(), 'drained').length >= 2, true, 'each worker drained');
    for (const pid of workerPids) assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' });
    assert.equal(existsSync(pidFile), false);
    for (const index of [1, 2]) {
      const verified = await verifyAuditFile(join(dir, `audit.worker-${index}.jsonl`));
      assert.equal(verified.ok, true, JSON.stringify(verified));
    }
  });
});
