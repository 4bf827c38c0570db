import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ConfigError } from './errors.js';
import { loadConfigFile } from './load.js';
import { loadConfigFileOffThread, runInWorker, sibling } from './off-thread.js';

const dir = mkdtempSync(join(tmpdir(), 'airlock-off-thread-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const ENV = { TOKEN_A: 'tok-a-0123456789abcdef0123456789', SCRUB: 'sk-scrub-secret-0123', METRICS: 'm'.repeat(40) };

/** Most sections, each with something the schema defaults and something the loader resolves. */
const RICH = `
server: { host: 127.0.0.1, port: 0, trustedProxies: [10.0.0.0/8], allowedOrigins: ['http://LocalHost:80'], rest: true }
store: { maxTasks: 500 }
limits: { requestsPerMinute: 120, maxParts: 8 }
content: { scrubSecrets: [{ env: SCRUB }] }
audit: { file: ${join(dir, 'audit.jsonl')} }
push: { enabled: true, allowPrivate: [10.1.0.0/16] }
metrics: { port: 0, token: { env: METRICS } }
telemetry: { otlp: { endpoint: http://127.0.0.1:4318/v1/traces } }
agents:
  - slug: echo
    name: Echo
    description: Replies with the text it was sent.
    skills: [{ id: echo, name: Echo, description: Repeats the text back., tags: [demo] }]
    backend: { type: echo }
    extensions: [{ uri: 'urn:airlock:test:trace', params: { depth: 2 } }]
clients:
  - { id: a, token: '\${TOKEN_A}', agents: [echo] }
`;

function written(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

/** What `loadConfigFile` throws for the file, or undefined. */
function inProcessError(path: string, env: NodeJS.ProcessEnv): ConfigError | undefined {
  try {
    loadConfigFile(path, env);
    return undefined;
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error;
  }
}

describe('loadConfigFileOffThread', () => {
  it('gives the config loadConfigFile gives: defaults, digests, sets, resolved sections', async () => {
    const path = written('rich.yaml', RICH);
    const offThread = await loadConfigFileOffThread(path, ENV);
    assert.deepEqual(offThread, loadConfigFile(path, ENV));
    assert.ok(Buffer.isBuffer(offThread.clients[0]?.tokenDigest), 'the digest is made here, a Buffer');
    assert.ok(offThread.clients[0]?.agents instanceof Set);
    assert.equal(offThread.limits.maxParts, 8);
    assert.equal(offThread.push.maxAttempts, 4, 'a schema default, applied in the worker');
    assert.deepEqual(offThread.server.allowedOrigins, ['http://localhost']);
  });

  it('refuses what loadConfigFile refuses, with the same error: schema, YAML, references, the environment', async () => {
    const cases: Record<string, [string, NodeJS.ProcessEnv]> = {
      schema: [RICH.replace('maxParts: 8', 'maxParts: 0'), ENV],
      unknownKey: [RICH.replace('rest: true', 'rest: true, colour: blue'), ENV],
      union: [RICH.replace('backend: { type: echo }', 'backend: { type: teleport }'), ENV],
      yaml: [`${RICH}\n  : [oops`, ENV],
      notMapping: ['- a\n- b\n', ENV],
      reference: [RICH.replace('agents: [echo]', 'agents: [nobody]'), ENV],
      missingVariable: [RICH, { ...ENV, SCRUB: '' }],
      rawToolToken: [
        `${RICH}tools: { servers: [{ name: s, http: { url: 'https://t.example/mcp', token: plain } }] }\n`,
        ENV,
      ],
    };
    for (const [name, [text, env]] of Object.entries(cases)) {
      const path = written(`${name}.yaml`, text);
      const expected = inProcessError(path, env);
      assert.ok(expected !== undefined, `${name}: loadConfigFile accepts it`);
      await assert.rejects(
        loadConfigFileOffThread(path, env),
        (error: unknown) =>
          error instanceof ConfigError && error.message === expected.message && error.key === expected.key,
        `${name}: ${expected.message}`,
      );
    }
    await assert.rejects(loadConfigFileOffThread(join(dir, 'absent.yaml'), ENV), /config: .*absent\.yaml/);
  });
});

describe('runInWorker', () => {
  it('rejects with the caller’s error when the worker cannot load, or ends without an answer', async () => {
    const failure = (reason: string): Error => new ConfigError('', `config: ${reason}`);
    await assert.rejects(
      runInWorker(new URL('./no-such-worker.js', import.meta.url), {}, failure),
      (error: unknown) => error instanceof ConfigError && /worker thread failed/.test(error.message),
    );
    const silent = new URL(`data:text/javascript,${encodeURIComponent('// answers nothing')}`);
    await assert.rejects(
      runInWorker(silent, {}, failure),
      (error: unknown) => error instanceof ConfigError && /ended without an answer \(exit 0\)/.test(error.message),
    );
  });

  it('stops a worker that does not answer in time, and says so', async () => {
    const hanging = new URL(`data:text/javascript,${encodeURIComponent('setInterval(() => {}, 1000);')}`);
    const started = Date.now();
    await assert.rejects(
      runInWorker(hanging, {}, (reason) => new ConfigError('', `config: ${reason}`), 300),
      (error: unknown) => error instanceof ConfigError && /did not answer within 0\.3 s/.test(error.message),
    );
    assert.ok(Date.now() - started < 5_000);
  });

  it('names the worker beside the module, .ts from the sources and .js once built', () => {
    assert.equal(
      sibling('file:///app/src/config/off-thread.ts', 'check-worker').href,
      'file:///app/src/config/check-worker.ts',
    );
    assert.equal(
      sibling('file:///app/dist/config/off-thread.js', 'check-worker').href,
      'file:///app/dist/config/check-worker.js',
    );
  });
});
