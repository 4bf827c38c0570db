/**
 * The packaging recipes in deploy/ cannot be built here (no container daemon, no systemd), so
 * this runs their exact commands outside a container, so that they cannot rot:
 * - Dockerfile: its ENTRYPOINT + CMD on deploy/airlock.yaml, then its HEALTHCHECK command, a
 *   call, and SIGTERM (STOPSIGNAL) → exit 0;
 * - compose.yaml: each Airlock service's command and environment, both replicas on one
 *   PostgreSQL schema and one Redis (a task sent to one is read on the other);
 * - airlock.service: ExecStart with its Environment, EnvironmentFile and WorkingDirectory.
 * What is mapped, and only that: the image's paths (/etc/airlock, /var/lib/airlock, /app,
 * /opt/airlock) to temporary folders and this checkout, `dist/cli/main.js` to this checkout's
 * sources (test/helpers/cli.ts; CI builds dist/ separately), service host names to 127.0.0.1, and the fixed port to a
 * free one (all replicas share one host here).
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { parse } from 'yaml';
import { dropSchema, postgresSkip, POSTGRES_URL, uniqueName } from './helpers/backing-services.js';
import { rpc } from './helpers/gateway.js';
import { exitOf } from './helpers/serve-process.js';
import { CLI } from './helpers/cli.js';

const DEPLOY = resolve('deploy');
const TOKEN = 'deploy-recipe-client-token-0123456789abcdef';

const pgSkip = await postgresSkip();
const children: ChildProcess[] = [];
const cleanups: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const cleanup of cleanups) await cleanup();
});

function read(name: string): string {
  return readFileSync(join(DEPLOY, name), 'utf8');
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'airlock-deploy-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A JSON array instruction of the Dockerfile (`ENTRYPOINT [...]`, `CMD [...]`, `HEALTHCHECK … CMD [...]`). */
function dockerArray(dockerfile: string, instruction: RegExp): string[] {
  const line = dockerfile.split('\n').find((candidate) => instruction.test(candidate));
  assert.ok(line !== undefined, `no ${instruction.source} in the Dockerfile`);
  return JSON.parse(line.slice(line.indexOf('['))) as string[];
}

/** The recipe's config, copied with its port replaced by a free one (and other lines as given). */
function configCopy(name: string, dir: string, port: number, replace: [string, string][] = []): string {
  let text = read(name).replace(/port: 41241/, `port: ${port}`);
  for (const [from, to] of replace) {
    assert.ok(text.includes(from), `${name} has ${from}`);
    text = text.replace(from, to);
  }
  const path = join(dir, 'airlock.yaml');
  writeFileSync(path, text);
  return path;
}

/** Runs `node dist/cli/main.js …args` as the recipe says, mapped to the sources; resolves when it listens. */
async function startRecipe(
  args: string[],
  options: { cwd: string; env: Record<string, string> },
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [...CLI, ...args, '--log-level', 'warn'], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? '', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const url = await new Promise<string>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`did not start: ${output}`)), 30_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /airlock listening on (http:\/\/\S+)/.exec(output);
      if (match !== null) {
        clearTimeout(timer);
        done(match[1] as string);
      }
    });
    child.once('exit', (code) => fail(new Error(`exited ${code}: ${output}`)));
  });
  return { child, url };
}

async function echo(port: number): Promise<string> {
  const sent = await rpc(
    `http://127.0.0.1:${port}/a2a/echo`,
    'SendMessage',
    { message: { messageId: `m-${Date.now()}`, role: 'ROLE_USER', parts: [{ text: 'recipe' }] } },
    { token: TOKEN, version: '1.0' },
  );
  assert.equal(sent.body.result?.task?.status?.state, 'TASK_STATE_COMPLETED', JSON.stringify(sent.body));
  return sent.body.result.task.id as string;
}

describe('deploy recipes, run outside their container', () => {
  it(
    'Dockerfile: the entrypoint serves deploy/airlock.yaml, the healthcheck passes, SIGTERM exits 0',
    { timeout: 60_000 },
    async () => {
      const dockerfile = read('Dockerfile');
      const entrypoint = dockerArray(dockerfile, /^ENTRYPOINT /);
      const cmd = dockerArray(dockerfile, /^CMD /);
      const health = dockerArray(dockerfile, /^HEALTHCHECK /);
      assert.deepEqual(entrypoint.slice(0, 2), ['node', 'dist/cli/main.js']);
      assert.match(dockerfile, /^USER node$/m, 'not root');
      assert.match(dockerfile, /npm prune --omit=dev/, 'production dependencies only');
      const dir = tempDir();
      const port = await freePort();
      const etc = configCopy('airlock.yaml', dir, port, [['/var/lib/airlock/audit.jsonl', join(dir, 'audit.jsonl')]]);
      const args = [...entrypoint.slice(2), ...cmd].map((arg) =>
        arg === '/etc/airlock/airlock.yaml' ? etc : arg === '/var/lib/airlock' ? join(dir, 'data') : arg,
      );
      const { child } = await startRecipe(args, {
        cwd: dir,
        env: { NODE_ENV: 'production', AIRLOCK_CLIENT_TOKEN: TOKEN },
      });
      const [program, ...rest] = health.map((arg) => arg.replace('41241', String(port)));
      assert.equal(program, 'node');
      const probe = spawnSync(process.execPath, rest, { encoding: 'utf8', timeout: 10_000 });
      assert.equal(probe.status, 0, probe.stderr);
      await echo(port);
      child.kill('SIGTERM');
      assert.equal(await exitOf({ child }), 0);
    },
  );

  it(
    'airlock.service: ExecStart with its environment serves, and stops on SIGTERM within TimeoutStopSec',
    { timeout: 60_000 },
    async () => {
      const unit = read('airlock.service');
      const value = (key: string): string => {
        const line = unit.split('\n').find((candidate) => candidate.startsWith(`${key}=`));
        assert.ok(line !== undefined, `${key} in the unit`);
        return line.slice(key.length + 1);
      };
      const [node, main, ...args] = value('ExecStart').split(' ');
      assert.equal(node, '/usr/bin/node');
      assert.equal(main, '/opt/airlock/dist/cli/main.js');
      assert.equal(value('User'), 'airlock');
      assert.equal(value('KillSignal'), 'SIGTERM');
      const dir = tempDir();
      const port = await freePort();
      const etc = configCopy('airlock.yaml', dir, port, [['/var/lib/airlock/audit.jsonl', join(dir, 'audit.jsonl')]]);
      // EnvironmentFile holds the secrets; Environment the rest.
      const [name, setting] = value('Environment').split('=') as [string, string];
      const mapped = args.map((arg) =>
        arg === '/etc/airlock/airlock.yaml' ? etc : arg === '/var/lib/airlock' ? join(dir, 'data') : arg,
      );
      assert.equal(value('WorkingDirectory'), '/var/lib/airlock');
      const { child } = await startRecipe(mapped, { cwd: dir, env: { [name]: setting, AIRLOCK_CLIENT_TOKEN: TOKEN } });
      await echo(port);
      const stopped = Date.now();
      child.kill('SIGTERM');
      assert.equal(await exitOf({ child }), 0);
      assert.ok(Date.now() - stopped < Number(value('TimeoutStopSec')) * 1000);
    },
  );

  it(
    'compose.yaml: both replicas on one PostgreSQL schema and one Redis, a task sent to A read on B',
    { timeout: 90_000, skip: pgSkip },
    async () => {
      const compose = parse(read('compose.yaml')) as {
        services: Record<string, { command?: string[]; environment?: Record<string, string>; volumes?: string[] }>;
      };
      const replicas = ['airlock-a', 'airlock-b'].map((name) => compose.services[name]);
      const schema = uniqueName('airlock_test');
      cleanups.push(() => dropSchema(schema));
      const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
      const running: { port: number; child: ChildProcess }[] = [];
      for (const service of replicas) {
        assert.ok(service?.command !== undefined && service.environment !== undefined);
        const volume = service.volumes?.find((entry) => entry.endsWith(':/etc/airlock/airlock.yaml:ro'));
        assert.equal(volume, './airlock-replica.yaml:/etc/airlock/airlock.yaml:ro');
        const dir = tempDir();
        const port = await freePort();
        const etc = configCopy('airlock-replica.yaml', dir, port, [
          [
            "store: { type: postgres, url: '${DATABASE_URL}' }",
            `store: { type: postgres, url: '\${DATABASE_URL}', schema: ${schema} }`,
          ],
        ]);
        const env = Object.fromEntries(
          Object.entries(service.environment).map(([key, setting]) => [
            key,
            key === 'DATABASE_URL'
              ? POSTGRES_URL
              : key === 'REDIS_URL'
                ? redisUrl
                : key === 'AIRLOCK_CLIENT_TOKEN'
                  ? TOKEN
                  : setting,
          ]),
        );
        const args = ['serve', ...service.command.map((arg) => (arg === '/etc/airlock/airlock.yaml' ? etc : arg))];
        running.push({ port, ...(await startRecipe(args, { cwd: dir, env })) });
      }
      const [a, b] = running as [(typeof running)[0], (typeof running)[0]];
      const id = await echo(a.port);
      const onB = await rpc(`http://127.0.0.1:${b.port}/a2a/echo`, 'GetTask', { id }, { token: TOKEN, version: '1.0' });
      assert.equal(onB.body.result?.status?.state, 'TASK_STATE_COMPLETED', JSON.stringify(onB.body));
      // The proxy (not run here) sends to both replicas by their service names.
      assert.match(read('nginx.conf'), /server airlock-a:41241[\s\S]*server airlock-b:41241/);
      for (const replica of running) replica.child.kill('SIGTERM');
      for (const replica of running) assert.equal(await exitOf(replica), 0);
    },
  );
});
