/**
 * The `module` backend end to end: examples/module/glossary.ts behind a real gateway in both
 * dialects, modules that cannot work refused at startup, malformed events failing their task,
 * and `turn.history` (the session as the store holds it) seen by a module, per principal.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseConfig } from '../src/config/load.js';
import { BackendSetupError, prepareBackends, type PreparedBackends } from '../src/server/backends.js';
import { silentLogger } from '../src/server/log.js';
import {
  rpc,
  rpcStream,
  startGateway,
  TOKEN_A,
  TOKEN_B,
  TOKEN_C,
  v03Message,
  v10Message,
  type TestGateway,
} from './helpers/gateway.js';

const GLOSSARY = `
  - slug: glossary
    name: Glossary
    description: Explains terms.
    skills: [{ id: define, name: Define, description: Defines terms, tags: [example] }]
    backend:
      type: module
      module: examples/module/glossary.ts
      options:
        terms:
          card: The JSON document that describes an agent. It lists the agent's skills.
`;

function yamlWith(agents: string, slugs = 'glossary'): string {
  return `
server: { host: 127.0.0.1, port: 0 }
agents:${agents}
clients:
  - { id: a, token: "\${TOKEN_A}", agents: [${slugs}] }
  - { id: b, token: "\${TOKEN_B}", agents: [${slugs}] }
`;
}

async function start(yaml: string): Promise<{ gateway: TestGateway; backends: PreparedBackends }> {
  const config = parseConfig(yaml, { TOKEN_A, TOKEN_B, TOKEN_C });
  const backends = await prepareBackends(config, { logger: silentLogger });
  const gateway = await startGateway(yaml, { backends: backends.bySlug });
  return { gateway, backends };
}

describe('module backend: examples/module/glossary.ts behind the gateway', () => {
  let running: { gateway: TestGateway; backends: PreparedBackends };
  let endpoint: string;
  before(async () => {
    running = await start(yamlWith(GLOSSARY));
    endpoint = `${running.gateway.url}/a2a/glossary`;
  });
  after(async () => {
    await running.gateway.close();
    await running.backends.close();
  });

  it('answers a known term (v1.0 SendMessage): completed, the definition as the reply artifact', async () => {
    const { body } = await rpc(endpoint, 'SendMessage', { message: v10Message('card') }, { version: '1.0' });
    const task = body.result.task;
    assert.equal(task.status.state, 'TASK_STATE_COMPLETED');
    assert.equal(
      task.artifacts[0].parts[0].text,
      "The JSON document that describes an agent. It lists the agent's skills.",
    );
  });

  it('streams the definition sentence by sentence (v0.3 message/stream)', async () => {
    const { events } = await rpcStream(endpoint, 'message/stream', { message: v03Message('card') });
    const chunks = events.filter((event) => event.result?.kind === 'artifact-update');
    assert.equal(chunks.length, 2);
    assert.equal(chunks[1].result.lastChunk, true);
    assert.equal(events.at(-1).result.status.state, 'completed');
  });

  it('asks which term when it does not know one, and finishes when the caller answers on the task', async () => {
    const first = await rpc(endpoint, 'message/send', { message: v03Message('quark') });
    const task = first.body.result;
    assert.equal(task.status.state, 'input-required');
    assert.match(task.status.message.parts[0].text, /Which one\?/);
    const second = await rpc(endpoint, 'message/send', {
      message: v03Message('card', { taskId: task.id, contextId: task.contextId }),
    });
    assert.equal(second.body.result.status.state, 'completed');
    assert.equal(second.body.result.id, task.id);
  });

  it('keeps every inbound guard: an unknown token gets 401', async () => {
    const { status } = await rpc(endpoint, 'message/send', { message: v03Message('card') }, { token: 'x'.repeat(8) });
    assert.equal(status, 401);
  });
});

describe('module backend: startup refusals', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'airlock-module-'));
    await writeFile(join(dir, 'no-default.mjs'), 'export const backend = { kind: "x", async *run() {} };\n');
    await writeFile(join(dir, 'not-backend.mjs'), 'export default { kind: "x" };\n');
    await writeFile(join(dir, 'throws.mjs'), 'export default () => { throw new Error("no key configured"); };\n');
    await writeFile(join(dir, 'syntax.mjs'), 'export default {\n');
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  const cases: Array<[string, string, RegExp]> = [
    ['a missing file', 'missing.mjs', /no such file/],
    ['a module without the export', 'no-default.mjs', /has no export named "default"/],
    ['an export that is not a backend', 'not-backend.mjs', /does not export an AgentBackend/],
    ['a factory that throws', 'throws.mjs', /its factory failed: no key configured/],
    ['a module that does not parse', 'syntax.mjs', /could not be imported/],
  ];
  for (const [what, file, reason] of cases) {
    it(`refuses ${what}, naming the agent`, async () => {
      const yaml = yamlWith(`
  - slug: glossary
    name: G
    description: G.
    skills: [{ id: g, name: G, description: G }]
    backend: { type: module, module: ${JSON.stringify(join(dir, file))} }
`);
      const config = parseConfig(yaml, { TOKEN_A, TOKEN_B, TOKEN_C });
      await assert.rejects(prepareBackends(config, { logger: silentLogger }), (error: unknown) => {
        assert.ok(error instanceof BackendSetupError);
        assert.match(error.message, /^agents\[0\]\.backend \(glossary\): module backend: /);
        assert.match(error.message, reason);
        return true;
      });
    });
  }
});

describe('module backend: malformed events and session history', () => {
  let dir: string;
  let running: { gateway: TestGateway; backends: PreparedBackends };
  let memory: string;
  let glossary: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'airlock-module-'));
    // Replies with the session history it is given, as JSON.
    await writeFile(
      join(dir, 'memory.mjs'),
      `export default {
  kind: 'memory',
  async *run(turn) {
    const history = await turn.history({ maxTurns: 10, maxChars: 10000 });
    yield { type: 'completed', text: JSON.stringify(history) };
  },
};
`,
    );
    await writeFile(
      join(dir, 'bad-event.mjs'),
      `export default { kind: 'bad', async *run() { yield { type: 'text', text: 'ok' }; yield { type: 'txt', text: 'oops' }; } };\n`,
    );
    running = await start(
      yamlWith(
        `
  - slug: memory
    name: Memory
    description: Shows its history.
    skills: [{ id: m, name: M, description: M }]
    backend: { type: module, module: ${JSON.stringify(join(dir, 'memory.mjs'))} }
  - slug: glossary
    name: Bad
    description: Yields a bad event.
    skills: [{ id: b, name: B, description: B }]
    backend: { type: module, module: ${JSON.stringify(join(dir, 'bad-event.mjs'))} }
`,
        'glossary, memory',
      ),
    );
    memory = `${running.gateway.url}/a2a/memory`;
    glossary = `${running.gateway.url}/a2a/glossary`;
  });
  after(async () => {
    await running.gateway.close();
    await running.backends.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('fails the task of a module that yields an unknown event type, with the reason', async () => {
    const { body } = await rpc(glossary, 'message/send', { message: v03Message('hi') });
    assert.equal(body.result.status.state, 'failed');
    assert.match(body.result.status.message.parts[0].text, /invalid event \(unknown event type "txt"\)/);
  });

  it('gives the backend the earlier turns of its own session only', async () => {
    const reply = (body: { result: { status: { message: { parts: Array<{ text: string }> } } } }): unknown =>
      JSON.parse(body.result.status.message.parts[0]!.text);
    const first = await rpc(memory, 'message/send', { message: v03Message('first from a', { contextId: 'shared' }) });
    assert.deepEqual(reply(first.body), []);
    const second = await rpc(memory, 'message/send', {
      message: v03Message('second from a', { contextId: 'shared' }),
    });
    assert.deepEqual(reply(second.body), [
      { role: 'user', text: 'first from a' },
      { role: 'agent', text: '[]' },
    ]);
    // Client b names the same contextId: a different session, so no history of a's.
    const other = await rpc(
      memory,
      'message/send',
      { message: v03Message('from b', { contextId: 'shared' }) },
      { token: TOKEN_B },
    );
    assert.deepEqual(reply(other.body), []);
  });
});
