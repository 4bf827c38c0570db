/**
 * The command line as a person uses it: `airlock serve` in a child process, its banner,
 * the generated demo token, config errors, and `airlock call` against it.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { Role, TaskState, type Message, type SendMessageRequest } from '@a2a-js/sdk';
import {
  Client,
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from '@a2a-js/sdk/client';
import { LegacyJsonRpcTransport } from '@a2a-js/sdk/compat/v0_3/client';
import { createServer as createNetServer } from 'node:net';
import { CLI } from './helpers/cli.js';

function airlock(args: string[], options: { cwd: string; env?: Record<string, string> }) {
  return spawnSync(process.execPath, [...CLI, ...args], {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    encoding: 'utf8',
    timeout: 20_000,
  });
}

describe('airlock serve and airlock call', () => {
  let dir: string;
  let child: ChildProcess;
  let banner: string[] = [];
  let url = '';

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'airlock-cli-'));
    const config = readFileSync('examples/demo.yaml', 'utf8');
    writeFileSync(join(dir, 'demo.yaml'), config);
    child = spawn(
      process.execPath,
      [...CLI, 'serve', '--config', 'demo.yaml', '--port', '0', '--log-level', 'silent'],
      {
        cwd: dir,
        env: { ...process.env, AIRLOCK_DEMO_TOKEN: '' },
      },
    );
    const lines = createInterface({ input: child.stdout! });
    banner = await new Promise<string[]>((resolveLines, reject) => {
      const seen: string[] = [];
      const timer = setTimeout(() => reject(new Error(`no banner: ${seen.join('\n')}`)), 15_000);
      lines.on('line', (line) => {
        seen.push(line);
        if (line.includes('npx airlock call')) {
          clearTimeout(timer);
          resolveLines(seen);
        }
      });
    });
    url = banner[0]!.replace('airlock listening on ', '');
  });

  after(() => {
    child.kill('SIGTERM');
  });

  it('prints where it listens on the first line, on loopback', () => {
    assert.match(banner[0]!, /^airlock listening on http:\/\/127\.0\.0\.1:\d+$/);
    assert.ok(banner.some((line) => line.includes('/a2a/echo/.well-known/agent-card.json')));
    assert.ok(banner.some((line) => line.startsWith('  curl -s ')));
  });

  it('generates the demo token into .airlock/demo-token with mode 0600 and never prints it', () => {
    const path = join(dir, '.airlock', 'demo-token');
    const token = readFileSync(path, 'utf8').trim();
    assert.ok(token.length >= 32);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.ok(banner.every((line) => !line.includes(token)));
  });

  it('airlock call prints the reply and exits 0', () => {
    const token = readFileSync(join(dir, '.airlock', 'demo-token'), 'utf8').trim();
    const result = airlock(['call', `${url}/a2a/echo`, 'hello there'], { cwd: dir, env: { AIRLOCK_TOKEN: token } });
    assert.equal(result.status, 0, result.stderr);
    assert.equal(result.stdout.trim(), 'hello there');
  });

  it('airlock call exits 3 when the agent asks for input, then answers on the task', () => {
    const token = readFileSync(join(dir, '.airlock', 'demo-token'), 'utf8').trim();
    const asked = airlock(['call', `${url}/a2a/writer`, 'ask me'], { cwd: dir, env: { AIRLOCK_TOKEN: token } });
    assert.equal(asked.status, 3, asked.stderr);
    const taskId = /task (\S+) input-required/.exec(asked.stderr)?.[1];
    assert.ok(taskId);
    const answered = airlock(['call', `${url}/a2a/writer`, 'lighthouses', '--task', taskId, '--stream'], {
      cwd: dir,
      env: { AIRLOCK_TOKEN: token },
    });
    assert.equal(answered.status, 0, answered.stderr);
    assert.match(answered.stdout, /lighthouses/);
  });

  it('the official SDK client talks to the served demo in v1.0 and in v0.3', async () => {
    const token = readFileSync(join(dir, '.airlock', 'demo-token'), 'utf8').trim();
    const fetchImpl: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers);
      headers.set('authorization', `Bearer ${token}`);
      return fetch(input, { ...init, headers });
    };
    const request = (text: string): SendMessageRequest => {
      const message: Message = {
        messageId: `sdk-${Date.now()}-${text}`,
        contextId: '',
        taskId: '',
        role: Role.ROLE_USER,
        parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' }],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      };
      const configuration = {
        acceptedOutputModes: [],
        taskPushNotificationConfig: undefined,
        returnImmediately: false,
      };
      return { tenant: '', message, metadata: undefined, configuration };
    };
    const v10 = await new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ fetchImpl })],
        cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
      }),
    ).createFromUrl(`${url}/a2a/echo/`);
    assert.equal(v10.protocolVersion, '1.0');
    const echoed = await v10.sendMessage(request('from the sdk'));
    assert.ok('status' in echoed);
    assert.equal(echoed.status?.state, TaskState.TASK_STATE_COMPLETED);
    let chunks = 0;
    const writer = await new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ fetchImpl })],
        cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
      }),
    ).createFromUrl(`${url}/a2a/writer/`);
    for await (const event of writer.sendMessageStream(request('the sea'))) {
      if (event.payload?.$case === 'artifactUpdate') chunks++;
    }
    assert.ok(chunks >= 5, `${chunks} chunks`);
    const card = await new DefaultAgentCardResolver({ fetchImpl, legacyCompat: { enabled: true } }).resolve(
      `${url}/a2a/echo/`,
    );
    const legacy = card.supportedInterfaces.find((entry) => entry.protocolVersion === '0.3');
    assert.ok(legacy);
    const v03 = new Client(new LegacyJsonRpcTransport({ endpoint: legacy.url, fetchImpl }), card);
    assert.equal(v03.protocolVersion, '0.3');
    const old = await v03.sendMessage(request('old dialect'));
    assert.ok('status' in old);
    assert.equal(old.status?.state, TaskState.TASK_STATE_COMPLETED);
  });

  it('airlock call --stream: the reply alone on stdout, each status on its own stderr line', () => {
    const token = readFileSync(join(dir, '.airlock', 'demo-token'), 'utf8').trim();
    const asked = airlock(['call', `${url}/a2a/writer`, 'ask me', '--stream'], {
      cwd: dir,
      env: { AIRLOCK_TOKEN: token },
    });
    assert.equal(asked.status, 3, asked.stderr);
    assert.equal(asked.stdout, '', 'a question is no reply');
    const lines = asked.stderr.trimEnd().split('\n');
    assert.match(lines.at(-2) ?? '', /^\[input-required\] .+\?$/, asked.stderr);
    assert.match(lines.at(-1) ?? '', /^task \S+ input-required \(context \S+\)$/);
    const taskId = /task (\S+) input-required/.exec(asked.stderr)![1]!;
    const answered = airlock(['call', `${url}/a2a/writer`, 'lighthouses', '--task', taskId, '--stream'], {
      cwd: dir,
      env: { AIRLOCK_TOKEN: token },
    });
    assert.equal(answered.status, 0, answered.stderr);
    assert.match(answered.stdout, /lighthouses/);
    assert.doesNotMatch(answered.stdout, /\[(working|completed)\]/, 'no status runs into the reply');
    assert.match(answered.stderr, /^\[completed\]$/m);
  });

  it('airlock call to a base URL, or to nothing, says so in one line', async () => {
    const base = airlock(['call', url, 'hi'], { cwd: dir, env: { AIRLOCK_TOKEN: 'x'.repeat(40) } });
    assert.equal(base.status, 1);
    assert.equal(
      base.stderr,
      `airlock: ${url}/ is not an agent endpoint (HTTP 404); did you mean ${url}/a2a/<agent>? (the agents are listed in the gateway's banner)\n`,
    );
    // A port that was free a moment ago: nothing listens there.
    const free = await new Promise<number>((done) => {
      const probe = createNetServer().listen(0, '127.0.0.1', () => {
        const port = (probe.address() as { port: number }).port;
        probe.close(() => done(port));
      });
    });
    const nothing = airlock(['call', `http://127.0.0.1:${free}/a2a/echo`, 'hi'], {
      cwd: dir,
      env: { AIRLOCK_TOKEN: 'x' },
    });
    assert.equal(nothing.status, 1);
    assert.equal(
      nothing.stderr,
      `airlock: nothing is listening at http://127.0.0.1:${free} (is the gateway running?)\n`,
    );
  });

  it('airlock call without a token exits 1 with a one-line reason', () => {
    const result = airlock(['call', `${url}/a2a/echo`, 'hi'], { cwd: dir, env: { AIRLOCK_TOKEN: '' } });
    assert.equal(result.status, 1);
    assert.match(result.stderr, /^airlock: 401 unauthorized/);
    assert.equal(result.stderr.trim().split('\n').length, 1);
  });
});

describe('configuration errors', () => {
  it('exit 1 with one line naming the bad key', () => {
    const dir = mkdtempSync(join(tmpdir(), 'airlock-cfg-'));
    writeFileSync(
      join(dir, 'bad.yaml'),
      'agents:\n  - slug: Bad Slug\n    name: x\n    description: y\n    skills: [{id: s, name: s, description: d}]\n    backend: {type: echo}\n',
    );
    const result = airlock(['serve', '--config', 'bad.yaml'], { cwd: dir });
    assert.equal(result.status, 1);
    assert.match(result.stderr, /^airlock: config: agents\[0\]\.slug: /);
    assert.equal(result.stderr.trim().split('\n').length, 1);
  });

  it('refuse duplicate keys', () => {
    const dir = mkdtempSync(join(tmpdir(), 'airlock-cfg-'));
    writeFileSync(join(dir, 'dup.yaml'), 'server: {}\nserver: {}\nagents: []\n');
    const result = airlock(['serve', '--config', 'dup.yaml'], { cwd: dir });
    assert.equal(result.status, 1);
    assert.match(result.stderr, /^airlock: config: dup\.yaml line \d+: .*[Mm]ap keys must be unique/);
  });

  it('refuse a missing ${VAR}', () => {
    const dir = mkdtempSync(join(tmpdir(), 'airlock-cfg-'));
    writeFileSync(
      join(dir, 'env.yaml'),
      'agents:\n  - slug: a\n    name: x\n    description: y\n    skills: [{id: s, name: s, description: d}]\n    backend: {type: echo}\nclients:\n  - {id: c, token: "${AIRLOCK_TEST_MISSING}", agents: [a]}\n',
    );
    const result = airlock(['serve', '--config', 'env.yaml'], { cwd: dir });
    assert.equal(result.status, 1);
    assert.match(result.stderr, /clients\[0\]\.token: environment variable AIRLOCK_TEST_MISSING is not set/);
  });
});

describe('non-loopback bind', () => {
  it('serve refuses --host 0.0.0.0 without server.allowNonLoopback, in one line naming both', () => {
    const dir = mkdtempSync(join(tmpdir(), 'airlock-cfg-'));
    writeFileSync(
      join(dir, 'ok.yaml'),
      'agents:\n  - slug: a\n    name: x\n    description: y\n    skills: [{id: s, name: s, description: d}]\n    backend: {type: echo}\n',
    );
    const result = airlock(['serve', '--config', 'ok.yaml', '--host', '0.0.0.0', '--port', '0'], { cwd: dir });
    assert.equal(result.status, 1);
    assert.match(
      result.stderr,
      /^airlock: config: --host: "0\.0\.0\.0" is not loopback, .*server\.allowNonLoopback: true$/m,
    );
    assert.equal(result.stderr.trim().split('\n').length, 1);
  });
});
