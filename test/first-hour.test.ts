/**
 * The whole first hour, as a person lives it, in one temporary folder: `airlock init`, an
 * acting agent and its person added to the config it wrote (as docs/APPROVALS.md shows), then
 * `airlock serve`, a call with the generated token, a call that waits for the person, the person
 * approving in the console (headless Chromium: sign in with their token, Approve, Confirm), the
 * task completing, and `airlock doctor` while the gateway runs. Every airlock step is the real
 * CLI in a child process.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { after, describe, it } from 'node:test';
import { parseDocument } from 'yaml';
import { chromiumSkip, launchChromium } from './helpers/chromium.js';
import { rpc } from './helpers/gateway.js';
import { CLI } from './helpers/cli.js';

function airlock(args: string[], cwd: string, env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [...CLI, ...args], {
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
  const child = spawn(process.execPath, [...CLI, 'serve', '--config', 'airlock.yaml', '--log-level', 'silent'], {
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

/** What docs/APPROVALS.md asks for an acting agent: a person, the console, an owner for the client. */
function addApprovals(dir: string): void {
  const path = join(dir, 'airlock.yaml');
  const document = parseDocument(readFileSync(path, 'utf8'));
  document.set(
    'approvals',
    document.createNode({
      console: true,
      people: [{ id: 'me', token: { file: '.airlock/me-token', generate: true } }],
    }),
  );
  const agents = document.get('agents') as { add(item: unknown): void };
  agents.add(
    document.createNode({
      slug: 'deployer',
      name: 'Deployer',
      description: 'Deploys a service once the person responsible approves.',
      skills: [{ id: 'deploy', name: 'Deploy', description: 'Proposes a deployment.' }],
      backend: { type: 'module', module: resolve('examples/approvals/deploy.ts') },
      actions: { maxLevel: 'L4' },
    }),
  );
  document.setIn(['clients', 0, 'agents'], document.createNode(['echo', 'deployer']));
  document.setIn(['clients', 0, 'owner'], 'me');
  writeFileSync(path, document.toString());
}

describe('the first hour: init, serve, call, approve in the console, doctor', { skip: chromiumSkip }, () => {
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

    addApprovals(dir);
    server = await serve(dir);

    // The call line as printed: AIRLOCK_TOKEN="$(cat .airlock/client-token)" npx airlock call <url> "hello"
    const token = readFileSync(join(dir, '.airlock/client-token'), 'utf8').trim();
    const call = airlock(['call', `http://127.0.0.1:${port}/a2a/echo`, 'hello'], dir, { AIRLOCK_TOKEN: token });
    assert.equal(call.status, 0, call.stderr);
    assert.equal(call.stdout, 'hello\n');

    // An acting agent: the call comes back waiting for the person (exit 3: input required).
    const waiting = airlock(['call', `http://127.0.0.1:${port}/a2a/deployer`, 'web', '--json'], dir, {
      AIRLOCK_TOKEN: token,
    });
    assert.equal(waiting.status, 3, waiting.stderr + waiting.stdout);
    const parked = JSON.parse(waiting.stdout) as { id: string; status: { message: { parts: { data?: any }[] } } };
    const action = parked.status.message.parts.find((part) => part.data !== undefined)?.data;
    assert.equal(action.approve_url, `http://127.0.0.1:${port}/console#action-${action.action_id}`);

    // The person opens the link, signs in with their token (generated at the first start), approves, confirms.
    const browser = await launchChromium();
    try {
      const page = await (await browser.newContext()).newPage();
      await page.goto(action.approve_url);
      await page.getByText('me: token generated into .airlock/me-token').waitFor();
      await page.getByLabel('Your token or JWT').fill(readFileSync(join(dir, '.airlock/me-token'), 'utf8').trim());
      await page.getByRole('button', { name: 'Sign in' }).click();
      const item = page.locator(`li.linked[data-action-id="${action.action_id}"]`);
      await item.getByText('web', { exact: false }).first().waitFor();
      await item.getByRole('button', { name: /^Approve deploy/ }).click();
      await item.getByRole('button', { name: /^Confirm: approve deploy/ }).click();
      await item.waitFor({ state: 'detached' });
    } finally {
      await browser.close();
    }

    // The gateway resumes the task on the decision: the caller sees it completed.
    let state = '';
    for (let attempt = 0; attempt < 200 && state !== 'TASK_STATE_COMPLETED'; attempt++) {
      const got = await rpc(
        `http://127.0.0.1:${port}/a2a/deployer`,
        'GetTask',
        { id: parked.id },
        { token, version: '1.0' },
      );
      state = String(got.body.result?.status?.state);
      if (state !== 'TASK_STATE_COMPLETED') await new Promise((done) => setTimeout(done, 50));
    }
    assert.equal(state, 'TASK_STATE_COMPLETED');

    // One row per decision and outcome: however many the call wrote, doctor counts them all.
    const rows = readFileSync(join(dir, '.airlock/audit.jsonl'), 'utf8').trimEnd().split('\n').length;
    assert.ok(rows >= 2);
    const doctor = airlock(['doctor', '--config', 'airlock.yaml'], dir);
    assert.equal(doctor.stderr, '');
    assert.deepEqual(doctor.stdout.split('\n'), [
      'ok    config    airlock.yaml: 2 agents, 1 client',
      'ok    tokens    2 tokens, 2 from files (0600)',
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
