/**
 * Reload without restart, on the real `airlock serve` process: SIGHUP re-reads the config file.
 * A client added works at once and a client removed gets 401 at once, while a stream the
 * removed client opened before keeps flowing to its end; a limit change applies; a file that
 * does not load, or that changes a key only a restart applies (`server.port`), is refused whole
 * with one log line and the old config keeps serving. `airlock reload` does the same and prints
 * the outcome.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { reloadCommand } from '../src/cli/reload.js';
import { writeStateFile } from '../src/state/file.js';
import { serveFiles } from '../src/server/reload/pid-file.js';
import { TOKEN_A, TOKEN_B, eventually, rpc, rpcStream, v10Message } from './helpers/gateway.js';
import { exitOf, killHard, reloadOutcome, startServe, type ServeProcess } from './helpers/serve-process.js';

const running: ServeProcess[] = [];
const dirs: string[] = [];
after(async () => {
  for (const server of running) await killHard(server);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function yaml(options: { clients: string; limits?: string; server?: string }): string {
  return `
server: { host: 127.0.0.1, port: 0${options.server ?? ''} }
limits: { requestsPerMinute: 100${options.limits ?? ''} }
agents:
  - slug: writer
    name: Writer
    description: Writes slowly.
    skills: [{ id: write, name: Write, description: Writes }]
    backend: { type: writer, chunkDelayMs: 1000 }
clients:
${options.clients}
`;
}
const CLIENT_A = '  - { id: a, token: "${TOKEN_A}", agents: [writer] }';
const CLIENT_B = '  - { id: b, token: "${TOKEN_B}", agents: [writer] }';

/** The status of one cheap, authenticated request (a task that does not exist: 200 with an error body). */
async function statusFor(base: string, token: string): Promise<number> {
  return (await rpc(`${base}/a2a/writer`, 'GetTask', { id: 'no-such-task' }, { token, version: '1.0' })).status;
}

function count(text: string, pattern: RegExp): number {
  return text.match(new RegExp(pattern.source, 'g'))?.length ?? 0;
}

/** Waits (2 s at most) until the server's log holds `pattern` `times` times. */
async function logged(server: ServeProcess, pattern: RegExp, times = 1): Promise<void> {
  await eventually(() => count(server.output(), pattern) >= times, 2_000, `${pattern} in ${server.output()}`);
  assert.equal(count(server.output(), pattern), times, server.output());
}

/** `airlock reload` in this process (the command's own function): its exit code and lines. */
async function cli(config: string): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await reloadCommand({
    config,
    out: (line) => (stdout += `${line}\n`),
    err: (line) => (stderr += `airlock: ${line}\n`),
  });
  return { code, stdout, stderr };
}

describe('reload on SIGHUP', () => {
  it(
    'adds a client and revokes another at once while a stream stays open; refuses bad files whole',
    { timeout: 60_000 },
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'airlock-reload-'));
      dirs.push(dir);
      const path = join(dir, 'airlock.yaml');
      writeFileSync(path, yaml({ clients: CLIENT_A }));
      const server = await startServe(path, undefined, { TOKEN_A, TOKEN_B }, 'info');
      running.push(server);
      const base = server.url;
      const files = serveFiles(path);
      assert.equal(statSync(files.pid).mode & 0o777, 0o600, 'the pid file is the owner’s only');
      assert.equal(await statusFor(base, TOKEN_A), 200);
      assert.equal(await statusFor(base, TOKEN_B), 401);

      // A stream of client a, open across the reload that removes a.
      const stream = rpcStream(
        `${base}/a2a/writer`,
        'SendStreamingMessage',
        { message: v10Message('tides') },
        { token: TOKEN_A, version: '1.0' },
      ).then((result) => ({ ...result, endedAt: Date.now() }));
      await new Promise((resolve) => setTimeout(resolve, 150));

      writeFileSync(path, yaml({ clients: CLIENT_B }));
      const started = Date.now();
      assert.deepEqual(await reloadOutcome(server, path), {
        outcome: 'applied',
        changed: ['clients[a]', 'clients[b]'],
      });
      const reloadedAt = Date.now();
      assert.equal(await statusFor(base, TOKEN_B), 200, 'the added client works at once');
      assert.equal(await statusFor(base, TOKEN_A), 401, 'the removed client is refused at once');
      const reloadMs = reloadedAt - started;
      // The outcome file is written before the log line reaches this process through the pipe.
      await logged(server, /"event":"config_reloaded","changed":\["clients\[a\]","clients\[b\]"\]/);

      // A YAML error, then a schema error: refused whole, one line each, b still served, a still not.
      writeFileSync(path, `${yaml({ clients: CLIENT_B })}\n  : [oops`);
      const broken = await reloadOutcome(server, path);
      assert.equal(broken.outcome === 'refused' && broken.reason, 'invalid_config', JSON.stringify(broken));
      writeFileSync(path, yaml({ clients: `${CLIENT_A}\n${CLIENT_B}`, limits: ', maxParts: 0' }));
      const invalid = await reloadOutcome(server, path);
      assert.equal(invalid.outcome === 'refused' && invalid.reason, 'invalid_config', JSON.stringify(invalid));
      assert.match(invalid.outcome === 'refused' ? invalid.message : '', /limits\.maxParts/);
      await logged(server, /"event":"config_reload_refused"/, 2);
      assert.equal(await statusFor(base, TOKEN_B), 200);
      assert.equal(await statusFor(base, TOKEN_A), 401, 'the refused file (which re-adds a) applied nothing');

      // A port change needs a restart: refused, naming the key, with the live part not applied either.
      writeFileSync(
        path,
        yaml({ clients: `${CLIENT_A}\n${CLIENT_B}`, server: ', drainSeconds: 3' }).replace('port: 0', 'port: 1'),
      );
      const port = await reloadOutcome(server, path);
      assert.equal(port.outcome, 'refused');
      assert.deepEqual(port.outcome === 'refused' && port.restart, ['server.drainSeconds', 'server.port']);
      await logged(
        server,
        /"reason":"needs_restart","message":"these keys need a restart: server\.drainSeconds, server\.port/,
      );
      assert.equal(await statusFor(base, TOKEN_A), 401);

      // A limit applies: b may now send 2 requests a minute (a fresh window: the limit changed).
      writeFileSync(path, yaml({ clients: CLIENT_B }).replace('requestsPerMinute: 100', 'requestsPerMinute: 2'));
      assert.deepEqual(await reloadOutcome(server, path), {
        outcome: 'applied',
        changed: ['limits.requestsPerMinute'],
      });
      assert.equal(await statusFor(base, TOKEN_B), 200);
      assert.equal(await statusFor(base, TOKEN_B), 200);
      assert.equal(await statusFor(base, TOKEN_B), 429);

      // `airlock reload`: prints what changed, or why it was refused (exit 1).
      writeFileSync(
        path,
        yaml({ clients: `${CLIENT_A}\n${CLIENT_B}` }).replace('requestsPerMinute: 100', 'requestsPerMinute: 2'),
      );
      const applied = await cli(path);
      const none = await cli(join(dir, 'other.yaml'));
      assert.equal(applied.code, 0, applied.stderr);
      assert.match(applied.stdout, /^reloaded \(pid \d+\): clients\[a\]\n$/);
      assert.equal(await statusFor(base, TOKEN_A), 200);
      assert.equal(none.code, 1);
      assert.match(none.stderr, /^airlock: no airlock serve is running for .*other\.yaml/);
      writeFileSync(path, yaml({ clients: CLIENT_A }).replace('port: 0', 'port: 2'));
      const refused = await cli(path);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /reload refused \(pid \d+\): these keys need a restart: .*server\.port/);
      assert.ok(!server.output().includes(TOKEN_A) && !server.output().includes(TOKEN_B), 'no token in the log');

      // a's stream, open across every reload above, ends whole. It lasts 4 s (five chunks a second
      // apart): the off-thread check alone has taken over a second on a loaded two-core host.
      const streamed = await stream;
      assert.equal(streamed.status, 200);
      const states = streamed.events.map((event: any) => event.result?.statusUpdate?.status?.state).filter(Boolean);
      assert.equal(states.at(-1), 'TASK_STATE_COMPLETED', JSON.stringify(states));
      assert.ok(streamed.endedAt > reloadedAt, `the stream was still open after the reload (${reloadMs} ms)`);
      assert.ok(streamed.events.length >= 5, `every chunk arrived: ${streamed.events.length}`);

      // SIGTERM still drains and exits 0; the pid file goes with the process.
      server.child.kill('SIGTERM');
      assert.equal(await exitOf(server), 0, server.output());
      assert.throws(() => statSync(files.pid));
      const stale = await cli(path);
      assert.equal(stale.code, 1);
      // A pid file left behind: a pid no longer running, or one another program took over, gets no signal.
      await writeStateFile(files.pid, JSON.stringify({ pid: server.child.pid, config: path }));
      assert.match((await cli(path)).stderr, /no airlock serve is running \(pid \d+/);
      if (existsSync(`/proc/${process.pid}/cmdline`)) {
        // Where /proc tells: this test's own process is not airlock serve, so it gets no SIGHUP.
        await writeStateFile(files.pid, JSON.stringify({ pid: process.pid, config: path }));
        assert.match((await cli(path)).stderr, /the process is not airlock serve/);
      }
      process.stdout.write(`# reload applied in ${reloadMs} ms (SIGHUP to outcome file)\n`);
    },
  );
});
