/**
 * The whole first hour, as a person lives it, in one temporary folder: `airlock init`, then
 * `airlock serve` on the config it wrote, a call with the generated token, and `airlock doctor`
 * while the gateway runs. Every step is the real CLI in a child process.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { after, describe, it } from 'node:test';

const MAIN = resolve('src/cli/main.ts');
const TSX = ['--import', import.meta.resolve('tsx'), MAIN];

function airlock(args: string[], cwd: string, env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [...TSX, ...args], {
    cwd,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

/** Starts `airlock serve` and resolves once its banner says it listens. */
async function serve(cwd: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [...TSX, 'serve', '--config', 'airlock.yaml', '--log-level', 'silent'], {
    cwd,
  });
  const lines = createInterface({ input: child.stdout });
  await new Promise<void>((ready, fail) => {
    const seen: string[] = [];
    const timer = setTimeout(() => fail(new Error(`no banner: ${seen.join('\n')}`)), 30_000);
    child.once('exit', (code) => fail(new Error(`serve exited with ${code}: ${seen.join('\n')}`)));
    lines.on('line', (line) => {
      seen.push(line);
      if (line.startsWith('airlock listening on ')) {
        clearTimeout(timer);
        ready();
      }
    });
  });
  return child;
}

describe('the first hour: init, serve, call, doctor', () => {
  const dir = mkdtempSync(join(tmpdir(), 'airlock-first-hour-'));
  let server: ChildProcess | undefined;
  after(() => {
    server?.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });

  it('works with nothing but the printed commands', async () => {
    const port = await freePort();
    const init = airlock(['init', '--port', String(port)], dir);
    assert.equal(init.status, 0, init.stderr);
    const next = init.stdout.split('\n').filter((line) => line.startsWith('  npx airlock '));
    assert.deepEqual(next, ['  npx airlock serve --config airlock.yaml', '  npx airlock doctor --config airlock.yaml']);

    server = await serve(dir);

    // The call line as printed: AIRLOCK_TOKEN="$(cat .airlock/client-token)" npx airlock call <url> "hello"
    const token = readFileSync(join(dir, '.airlock/client-token'), 'utf8').trim();
    const call = airlock(['call', `http://127.0.0.1:${port}/a2a/echo`, 'hello'], dir, { AIRLOCK_TOKEN: token });
    assert.equal(call.status, 0, call.stderr);
    assert.equal(call.stdout, 'hello\n');

    // One row per decision and outcome: however many the call wrote, doctor counts them all.
    const rows = readFileSync(join(dir, '.airlock/audit.jsonl'), 'utf8').trimEnd().split('\n').length;
    assert.ok(rows >= 2);
    const doctor = airlock(['doctor', '--config', 'airlock.yaml'], dir);
    assert.equal(doctor.stderr, '');
    assert.deepEqual(doctor.stdout.split('\n'), [
      'ok    config    airlock.yaml: 1 agent, 1 client',
      'ok    tokens    1 token, 1 from a file (0600)',
      `ok    port      127.0.0.1:${port} is served by this Airlock (it is running)`,
      'ok    store     memory: tasks do not survive a restart',
      'skip  redis     not configured',
      `ok    audit     .airlock/audit.jsonl: chain intact, ${rows} rows`,
      'skip  registry  no upstreams configured',
      'all good: 5 ok, 2 skipped',
      '',
    ]);
    assert.equal(doctor.status, 0);
  });
});
