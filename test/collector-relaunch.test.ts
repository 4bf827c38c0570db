/**
 * `airlock serve` confined to one core starts the gateway again with `--single-threaded-gc`
 * (src/cli/collector.ts, src/cli/relaunch.ts), on the real CLI under `taskset -c 0`: the process
 * that serves has the flag and writes the pid file; the first one passes SIGTERM, SIGINT and
 * SIGHUP on and exits with the gateway's code; a terminal's Ctrl-C (SIGINT to the first one's
 * process group) drains once, not twice; a supervisor killed outright leaves no gateway behind;
 * `--gc concurrent` starts nothing again.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { serveFiles } from '../src/server/reload/pid-file.js';
import { CLI } from './helpers/cli.js';
import { exitOf, killHard, startServe, type ServeProcess } from './helpers/serve-process.js';
import { TOKEN_A, eventually, rpc, rpcStream, v10Message } from './helpers/gateway.js';

const HAS_TASKSET = process.platform === 'linux' && spawnSync('taskset', ['-c', '0', 'true']).status === 0;
const dirs: string[] = [];
const started: ServeProcess[] = [];
after(async () => {
  for (const server of started) await killHard(server);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function serveOnOneCore(extra: readonly string[] = []): Promise<ServeProcess & { configPath: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'airlock-gc-'));
  dirs.push(dir);
  const configPath = join(dir, 'airlock.yaml');
  writeFileSync(
    configPath,
    [
      'server: { host: 127.0.0.1, port: 0 }',
      'agents:',
      '  - { slug: echo, name: Echo, description: Echo., skills: [{ id: e, name: E, description: E }], backend: { type: echo } }',
      '  - { slug: writer, name: Writer, description: Slow., skills: [{ id: w, name: W, description: W }], backend: { type: writer, chunkDelayMs: 500 } }',
      'clients:',
      '  - { id: a, token: "${TOKEN_A}", agents: [echo, writer] }',
      '',
    ].join('\n'),
  );
  // A process group of its own, as a shell gives a command it starts: the test plays the terminal.
  const server = await startServe(configPath, undefined, { TOKEN_A }, 'info', {
    wrapper: ['taskset', '-c', '0'],
    args: extra,
    detached: true,
  });
  started.push(server);
  return { ...server, configPath };
}

/** The pid the serving process wrote (the gateway's, not its supervisor's). */
function servingPid(configPath: string): number {
  return (JSON.parse(readFileSync(serveFiles(configPath).pid, 'utf8')) as { pid: number }).pid;
}

function nodeArgsOf(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
}

/** Field 5 of /proc/<pid>/stat (after the command name in parentheses). */
function processGroupOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * A streamed answer of a few seconds (the writer agent), under way when this resolves: the turn
 * is running, so a drain has something to wait for.
 */
async function streamUnderway(url: string): Promise<{ ended: ReturnType<typeof rpcStream> }> {
  const ended = rpcStream(
    `${url}/a2a/writer`,
    'SendStreamingMessage',
    { message: v10Message('a slow answer') },
    { token: TOKEN_A, version: '1.0' },
  );
  // Cut short (the tests that stop at once), it rejects: that is read where it matters.
  ended.catch(() => undefined);
  await new Promise((resolve) => setTimeout(resolve, 200));
  return { ended };
}

function assertCompleted(events: readonly unknown[]): void {
  const last = events.at(-1) as { result?: { statusUpdate?: { status?: { state?: string } } } } | undefined;
  assert.equal(last?.result?.statusUpdate?.status?.state, 'TASK_STATE_COMPLETED', JSON.stringify(last));
}

function count(output: string, event: string): number {
  return output.split('\n').filter((line) => line.includes(`"event":"${event}"`)).length;
}

async function sendsHello(url: string): Promise<void> {
  const reply = await rpc(
    `${url}/a2a/echo`,
    'SendMessage',
    { message: v10Message('hello') },
    { token: TOKEN_A, version: '1.0' },
  );
  assert.equal(reply.status, 200);
  assert.equal(
    (reply.body as { result?: { task?: { status?: { state?: string } } } }).result?.task?.status?.state,
    'TASK_STATE_COMPLETED',
  );
}

describe(
  'airlock serve on one core: the collector on the JavaScript thread',
  { skip: !HAS_TASKSET && 'needs taskset on Linux' },
  () => {
    it('serves from a second process started with --single-threaded-gc, which logs why and writes the pid file', async () => {
      const server = await serveOnOneCore();
      const pid = servingPid(server.configPath);
      assert.notEqual(pid, server.child.pid, 'the gateway is a process of its own');
      assert.ok(nodeArgsOf(pid).includes('--single-threaded-gc'), nodeArgsOf(pid).join(' '));
      assert.ok(!nodeArgsOf(server.child.pid!).includes('--single-threaded-gc'));
      await eventually(() => /"event":"listening"/.test(server.output()), 5000, 'the listening line');
      assert.match(server.output(), /"event":"listening".*"gc":"single-threaded","gcReason":"1 core"/);
      await sendsHello(server.url);

      // SIGHUP to the supervisor reaches the gateway (a service manager's reload names the first pid).
      server.child.kill('SIGHUP');
      await eventually(() => count(server.output(), 'config_reloaded') === 1, 5000, 'the reload line');

      // SIGTERM to the supervisor: the gateway drains, both end, the code is the gateway's.
      server.child.kill('SIGTERM');
      assert.equal(await exitOf(server), 0);
      assert.equal(count(server.output(), 'drained'), 1);
      assert.equal(alive(pid), false);
    });

    it("drains once on a terminal's Ctrl-C (SIGINT to the whole process group): a running stream ends whole", async () => {
      const server = await serveOnOneCore();
      const pid = servingPid(server.configPath);
      const stream = await streamUnderway(server.url);
      // On one core the two deliveries mostly merge into one pending signal, so the outcome alone
      // cannot show a second SIGINT: the gateway must not be in the group a terminal signals.
      assert.notEqual(processGroupOf(pid), processGroupOf(server.child.pid!));
      process.kill(-server.child.pid!, 'SIGINT');
      // A second SIGINT would have cut the drain short: exit 1 and a stream without its end.
      assert.equal(await exitOf(server), 0, server.output());
      assert.equal(count(server.output(), 'stopping'), 1, server.output());
      assertCompleted((await stream.ended).events);
      assert.equal(alive(pid), false);
    });

    it("a service manager's SIGTERM to every process of the service (systemd's default) is one drain", async () => {
      const server = await serveOnOneCore();
      const pid = servingPid(server.configPath);
      const stream = await streamUnderway(server.url);
      process.kill(pid, 'SIGTERM');
      await eventually(() => count(server.output(), 'stopping') === 1, 5000, 'the stopping line');
      // The supervisor's copy arrives after the gateway's own: the same stop, not "stop now".
      server.child.kill('SIGTERM');
      assert.equal(await exitOf(server), 0, server.output());
      assertCompleted((await stream.ended).events);
    });

    it('a second Ctrl-C more than a second later stops at once, as without a supervisor', async () => {
      const server = await serveOnOneCore();
      await streamUnderway(server.url);
      process.kill(-server.child.pid!, 'SIGINT');
      await new Promise((resolve) => setTimeout(resolve, 1200));
      process.kill(-server.child.pid!, 'SIGINT');
      assert.equal(await exitOf(server), 1, server.output());
    });

    it('passes the exit code on: a gateway that cannot start fails the command with its one line', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'airlock-gc-'));
      dirs.push(dir);
      const configPath = join(dir, 'airlock.yaml');
      writeFileSync(configPath, 'server: { port: not-a-port }\n');
      const run = spawnSync('taskset', ['-c', '0', process.execPath, ...CLI, 'serve', '--config', configPath], {
        encoding: 'utf8',
      });
      assert.equal(run.status, 1);
      assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
      assert.match(run.stderr, /^airlock: /);
    });

    it('leaves no gateway behind when the supervisor is killed outright', async () => {
      const server = await serveOnOneCore();
      const pid = servingPid(server.configPath);
      server.child.kill('SIGKILL');
      await exitOf(server);
      await eventually(() => !alive(pid), 10_000, 'the gateway to end');
    });

    it('--gc concurrent serves from the first process, as V8 starts it', async () => {
      const server = await serveOnOneCore(['--gc', 'concurrent']);
      assert.equal(servingPid(server.configPath), server.child.pid);
      assert.ok(!nodeArgsOf(server.child.pid!).includes('--single-threaded-gc'));
      await eventually(() => /"event":"listening"/.test(server.output()), 5000, 'the listening line');
      assert.match(server.output(), /"gc":"concurrent","gcReason":"--gc concurrent"/);
      await sendsHello(server.url);
      server.child.kill('SIGTERM');
      assert.equal(await exitOf(server), 0);
    });

    it('refuses an unknown --gc with one line', () => {
      const run = spawnSync(process.execPath, [...CLI, 'serve', '--config', 'x.yaml', '--gc', 'fast'], {
        encoding: 'utf8',
      });
      assert.notEqual(run.status, 0);
      assert.match(run.stderr, /must be auto, single-threaded or concurrent/);
    });
  },
);
