/**
 * What the serving thread of `airlock serve` loads. The config's and the upstream registry's
 * schema checks run in worker threads of their own (src/config/off-thread.ts), so TypeBox (683
 * modules, a quarter of the serving heap when it sits there; see docs/PERFORMANCE-LOG.md) never
 * enters the main thread: not at start, not on a reload, not for a
 * gateway with an upstream registry. The module list comes from a loader hook registered in the
 * main thread only.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { TOKEN_A, rpc, v10Message } from './helpers/gateway.js';
import { exitOf, killHard, reloadOutcome, startServe, type ServeProcess } from './helpers/serve-process.js';

const HOOKS = fileURLToPath(new URL('./helpers/main-thread-modules.mjs', import.meta.url));
const running: ServeProcess[] = [];
const dirs: string[] = [];
after(async () => {
  for (const server of running) await killHard(server);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function configYaml(dir: string, limit: number): string {
  return `
server: { host: 127.0.0.1, port: 0 }
limits: { requestsPerMinute: ${limit} }
audit: { file: "${join(dir, 'audit.jsonl')}" }
upstreams: { registry: "${join(dir, 'registry.yaml')}", pins: "${join(dir, 'pins.json')}" }
agents:
  - slug: echo
    name: Echo
    description: Replies with the text it was sent.
    skills: [{ id: echo, name: Echo, description: Repeats the text back. }]
    backend: { type: echo }
  - slug: relay
    name: Relay
    description: Relays to the upstream.
    skills: [{ id: relay, name: Relay, description: Relays. }]
    backend: { type: a2a, agent: upstream }
clients:
  - { id: a, token: "\${TOKEN_A}", agents: [echo, relay] }
`;
}

const REGISTRY = `agents:
  - name: upstream
    card_url: https://upstream.example/.well-known/agent-card.json
    description: Never contacted in this test.
    effect: read_only
`;

describe('the serving thread', () => {
  it('never loads TypeBox: at start, on a reload, with an upstream registry', { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'airlock-isolate-'));
    dirs.push(dir);
    const path = join(dir, 'airlock.yaml');
    const list = join(dir, 'modules.txt');
    writeFileSync(path, configYaml(dir, 100));
    writeFileSync(join(dir, 'registry.yaml'), REGISTRY);
    const server = await startServe(path, undefined, { TOKEN_A, AIRLOCK_TEST_MODULE_LIST: list }, 'info', {
      nodeFlags: ['--import', HOOKS],
    });
    running.push(server);
    const sent = await rpc(
      `${server.url}/a2a/echo`,
      'SendMessage',
      { message: v10Message('hi') },
      {
        token: TOKEN_A,
        version: '1.0',
      },
    );
    assert.equal(sent.status, 200);

    // A reload that changes a limit: checked in a worker, applied here.
    writeFileSync(path, configYaml(dir, 200));
    assert.deepEqual(await reloadOutcome(server, path), { outcome: 'applied', changed: ['limits.requestsPerMinute'] });

    // A file the schema refuses: the worker's ConfigError comes back whole, naming the key.
    writeFileSync(path, configYaml(dir, 100).replace('requestsPerMinute: 100', 'requestsPerMinute: -1'));
    const refused = await reloadOutcome(server, path);
    assert.equal(refused?.outcome === 'refused' && refused.reason, 'invalid_config', JSON.stringify(refused));
    assert.match(refused?.outcome === 'refused' ? refused.message : '', /config: limits\.requestsPerMinute: /);

    server.child.kill('SIGTERM');
    assert.equal(await exitOf(server), 0, server.output());
    const loaded = readFileSync(list, 'utf8').trim().split('\n');
    // The hook saw the main thread: the gateway's own modules, the off-thread loaders among them.
    assert.ok(
      loaded.some((url) => /\/config\/off-thread\.[jt]s$/.test(url)),
      loaded.slice(0, 5).join('\n'),
    );
    assert.ok(loaded.some((url) => /\/client\/registry\/off-thread\.[jt]s$/.test(url)));
    assert.deepEqual(
      loaded.filter((url) => url.includes('/node_modules/typebox/') || /[/-]schema(-check)?\.[jt]s$/.test(url)),
      [],
      'no schema module in the serving thread',
    );
  });
});
