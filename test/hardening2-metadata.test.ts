/**
 * Issue 16, item 1: every byte a caller (or a backend) can make Airlock keep counts against a
 * limit. End to end over HTTP against a real gateway:
 * - message and part `metadata`, `extensions`, `referenceTaskIds` are held to
 *   `limits.maxMetadataBytes` / `maxMetadataKeys` / `maxMetadataDepth` (the finding: a
 *   one-character message stored ~1 MiB of metadata per task), in both dialects, refused with
 *   -32602 naming the setting and audited `a2a.task.rejected` with its own reason;
 * - a backend that streams forever (reply text, or artifacts) fails its turn at
 *   `limits.maxTaskOutputBytes`, saying so in the task's status;
 * - a long multi-turn task keeps its newest `limits.maxHistoryMessages` messages.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { AgentBackend, AgentEvent, AgentTurn } from '../src/agents/backend.js';
import { MemoryAuditSink } from '../src/audit/index.js';
import { asTask, sdkClient, sendRequest, stateOf, userMessage } from './helpers/sdk-caller.js';
import { rpc, startGateway, TOKEN_A, v03Message, v10Message, type TestGateway } from './helpers/gateway.js';

const DEFAULT_LIMITS_YAML = `
server: { host: 127.0.0.1, port: 0, rest: true }
agents:
  - slug: echo
    name: Echo
    description: Echoes.
    skills: [{ id: echo, name: Echo, description: Echoes text }]
    backend: { type: echo }
clients:
  - { id: a, token: "\${TOKEN_A}", agents: [echo] }
`;

/** `{ pad: "xxx…" }` whose JSON is exactly `bytes` long. */
function metadataOf(bytes: number): Record<string, string> {
  return { pad: 'x'.repeat(bytes - '{"pad":""}'.length) };
}

function reasonOf(event: MemoryAuditSink['events'][number]): string {
  return String((event as { reason?: unknown }).reason);
}

describe('hardening 2: metadata a caller makes Airlock keep is capped (default limits)', () => {
  let gw: TestGateway;
  const sink = new MemoryAuditSink();
  let endpoint: string;

  before(async () => {
    gw = await startGateway(DEFAULT_LIMITS_YAML, { auditSink: sink });
    endpoint = `${gw.url}/a2a/echo`;
  });
  after(async () => {
    await gw?.close();
  });

  it('the finding: ~1 MiB of message.metadata on a one-character message is refused (-32602, names the setting), audited, not stored', async () => {
    const before = sink.events.length;
    const call = await rpc(
      endpoint,
      'SendMessage',
      { message: v10Message('x', { metadata: metadataOf(1000 * 1000) }) },
      { version: '1.0' },
    );
    assert.equal(call.status, 200);
    assert.equal(call.body.error?.code, -32602, JSON.stringify(call.body).slice(0, 300));
    assert.match(call.body.error.message, /limits\.maxMetadataBytes = 4096/);
    assert.ok(!call.body.error.message.includes('xxxx'));
    const rows = sink.events.slice(before);
    assert.deepEqual(
      rows.map((row) => `${row.type}:${reasonOf(row)}`),
      ['a2a.task.rejected:metadata_too_large'],
    );
    const listed = await rpc(endpoint, 'ListTasks', {}, { version: '1.0' });
    assert.equal(listed.body.result.tasks.length, 0);
  });

  it('metadata just under the cap is accepted and stored with the task', async () => {
    const metadata = metadataOf(4096);
    const call = await rpc(endpoint, 'SendMessage', { message: v10Message('x', { metadata }) }, { version: '1.0' });
    assert.equal(call.body.error, undefined, JSON.stringify(call.body).slice(0, 300));
    const task = call.body.result.task;
    const got = await rpc(endpoint, 'GetTask', { id: task.id }, { version: '1.0' });
    assert.deepEqual(got.body.result.history[0].metadata, metadata);
  });

  it('part metadata counts too, in v0.3 as in v1.0 (message/send, SendMessage)', async () => {
    const half = metadataOf(2100);
    const v03 = await rpc(endpoint, 'message/send', {
      message: v03Message('', {
        parts: [
          { kind: 'text', text: 'a', metadata: half },
          { kind: 'text', text: 'b', metadata: half },
        ],
      }),
    });
    assert.equal(v03.body.error?.code, -32602, JSON.stringify(v03.body).slice(0, 300));
    assert.match(v03.body.error.message, /limits\.maxMetadataBytes/);
    const v10 = await rpc(
      endpoint,
      'SendMessage',
      {
        message: v10Message('', {
          parts: [
            { text: 'a', metadata: half },
            { text: 'b', metadata: half },
          ],
        }),
      },
      { version: '1.0' },
    );
    assert.equal(v10.body.error?.code, -32602);
    // The message's own metadata and its parts' add up: each alone would pass.
    const mixed = await rpc(endpoint, 'message/send', {
      message: v03Message('a', { metadata: half, parts: [{ kind: 'text', text: 'a', metadata: half }] }),
    });
    assert.equal(mixed.body.error?.code, -32602);
  });

  it('extensions and referenceTaskIds are stored too, and count against the same cap (both dialects)', async () => {
    const uris = Array.from({ length: 40 }, (_, i) => `https://example.com/ext/${i}/${'e'.repeat(100)}`);
    const v10 = await rpc(
      endpoint,
      'SendMessage',
      { message: v10Message('x', { extensions: uris }) },
      { version: '1.0' },
    );
    assert.equal(v10.body.error?.code, -32602, JSON.stringify(v10.body).slice(0, 300));
    const v03 = await rpc(endpoint, 'message/send', { message: v03Message('x', { referenceTaskIds: uris }) });
    assert.equal(v03.body.error?.code, -32602, JSON.stringify(v03.body).slice(0, 300));
  });

  it('many small keys and deep nesting are refused with their own settings and reasons', async () => {
    const before = sink.events.length;
    const many: Record<string, number> = {};
    for (let i = 0; i < 200; i++) many[`k${i}`] = i;
    const keys = await rpc(
      endpoint,
      'SendMessage',
      { message: v10Message('x', { metadata: many }) },
      { version: '1.0' },
    );
    assert.equal(keys.body.error?.code, -32602);
    assert.match(keys.body.error.message, /limits\.maxMetadataKeys = 128/);
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 12; i++) deep = { d: deep };
    const nested = await rpc(endpoint, 'message/send', { message: v03Message('x', { metadata: deep }) });
    assert.equal(nested.body.error?.code, -32602);
    assert.match(nested.body.error.message, /limits\.maxMetadataDepth = 8/);
    assert.deepEqual(
      sink.events
        .slice(before)
        .filter((e) => e.type === 'a2a.task.rejected')
        .map(reasonOf),
      ['metadata_too_many_keys', 'metadata_too_deep'],
    );
  });

  it('the official @a2a-js/sdk client: a plain message and metadata under the cap pass, over the cap is a -32602 error', async () => {
    const client = await sdkClient(gw.url, 'echo', TOKEN_A);
    const plain = asTask(await client.sendMessage(sendRequest(userMessage('hi'))));
    assert.equal(stateOf(plain), 'TASK_STATE_COMPLETED');
    const small = asTask(await client.sendMessage(sendRequest(userMessage('hi', { metadata: { trace: 'abc' } }))));
    assert.equal(stateOf(small), 'TASK_STATE_COMPLETED');
    await assert.rejects(
      client.sendMessage(sendRequest(userMessage('x', { metadata: metadataOf(100_000) }))),
      (error: unknown) => error instanceof Error && /-32602|maxMetadataBytes/.test(error.message),
    );
  });

  it('the ask route (no metadata on the wire) goes through the same turn steps, and passes', async () => {
    const before = sink.events.length;
    const response = await fetch(`${endpoint}/ask`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN_A}` },
      body: JSON.stringify({ message: 'hello' }),
    });
    assert.equal(response.status, 200, await response.clone().text());
    const body = (await response.json()) as { state: string };
    assert.equal(body.state, 'completed');
    assert.deepEqual(
      sink.events.slice(before).filter((e) => e.type === 'a2a.task.rejected'),
      [],
    );
  });
});

/** Streams reply text (or artifacts) until it is stopped; records that it was. */
class FloodBackend implements AgentBackend {
  readonly kind = 'flood';
  stopped = 0;
  constructor(readonly mode: 'text' | 'artifact' | 'working') {}

  async *run(turn: AgentTurn): AsyncIterable<AgentEvent> {
    const chunk = 'y'.repeat(8192);
    try {
      for (let i = 0; i < 100_000 && !turn.signal.aborted; i++) {
        await new Promise((resolve) => setImmediate(resolve));
        if (this.mode === 'text') yield { type: 'text', text: chunk };
        else if (this.mode === 'working') yield { type: 'working', text: chunk };
        else yield { type: 'artifact', artifact: { name: `a${i}`, parts: [{ kind: 'text', text: chunk }] } };
      }
      yield { type: 'completed' };
    } finally {
      this.stopped++;
    }
  }
}

/** Asks for more every turn: a task that goes on for as many turns as its caller likes. */
class ChattyBackend implements AgentBackend {
  readonly kind = 'chatty';
  async *run(turn: AgentTurn): AsyncIterable<AgentEvent> {
    const text = turn.message.parts[0]?.kind === 'text' ? turn.message.parts[0].text : '';
    yield { type: 'input-required', question: `got ${text}; more?` };
  }
}

const TASK_CAPS_YAML = `
server: { host: 127.0.0.1, port: 0 }
limits: { maxTaskOutputBytes: 65536, maxHistoryMessages: 6 }
agents:
${['text', 'artifact', 'working', 'chatty']
  .map(
    (slug) => `  - slug: ${slug}
    name: ${slug}
    description: Test backend.
    skills: [{ id: t, name: T, description: Test }]
    backend: { type: echo }`,
  )
  .join('\n')}
clients:
  - { id: a, token: "\${TOKEN_A}", agents: [text, artifact, working, chatty] }
`;

describe('hardening 2: what one task keeps is bounded (history, backend output)', () => {
  let gw: TestGateway;
  const sink = new MemoryAuditSink();
  const floods = {
    text: new FloodBackend('text'),
    artifact: new FloodBackend('artifact'),
    working: new FloodBackend('working'),
  };

  before(async () => {
    gw = await startGateway(TASK_CAPS_YAML, {
      auditSink: sink,
      backends: { ...floods, chatty: new ChattyBackend() },
    });
  });
  after(async () => {
    await gw?.close();
  });

  for (const mode of ['text', 'artifact', 'working'] as const) {
    it(`a backend streaming ${mode} forever: the turn fails at limits.maxTaskOutputBytes, says so, and the backend is stopped`, async () => {
      const endpoint = `${gw.url}/a2a/${mode}`;
      const call = await rpc(endpoint, 'SendMessage', { message: v10Message('go') }, { version: '1.0' });
      assert.equal(call.body.error, undefined, JSON.stringify(call.body).slice(0, 300));
      const task = call.body.result.task;
      assert.equal(task.status.state, 'TASK_STATE_FAILED');
      assert.match(task.status.message.parts[0].text, /limits\.maxTaskOutputBytes/);
      const got = await rpc(endpoint, 'GetTask', { id: task.id }, { version: '1.0' });
      const stored = JSON.stringify(got.body.result);
      assert.ok(stored.length < 65536 + 16 * 1024, `stored task is ${stored.length} bytes`);
      // Output up to the cap is kept (status texts also leave with the history cap: six messages).
      if (mode !== 'working') assert.ok(stored.length > 65536 - 16 * 1024, `stored task is ${stored.length} bytes`);
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(floods[mode].stopped, 1);
      const failed = sink.events.filter((event) => event.type === 'a2a.task.failed' && event.taskId === task.id);
      assert.deepEqual(failed.map(reasonOf), ['output_too_large']);
    });
  }

  it('a long multi-turn task keeps its newest limits.maxHistoryMessages messages, oldest dropped first', async () => {
    const endpoint = `${gw.url}/a2a/chatty`;
    const first = await rpc(endpoint, 'SendMessage', { message: v10Message('turn-0') }, { version: '1.0' });
    const id = first.body.result.task.id;
    for (let i = 1; i < 10; i++) {
      const next = await rpc(
        endpoint,
        'SendMessage',
        { message: v10Message(`turn-${i}`, { taskId: id }) },
        { version: '1.0' },
      );
      assert.equal(next.body.result?.task?.status.state, 'TASK_STATE_INPUT_REQUIRED', JSON.stringify(next.body));
      assert.ok(next.body.result.task.history.length <= 6);
    }
    const got = await rpc(endpoint, 'GetTask', { id }, { version: '1.0' });
    const texts = got.body.result.history.map((message: any) => message.parts[0].text);
    assert.equal(texts.length, 6);
    assert.deepEqual(texts, [
      'turn-7',
      'got turn-7; more?',
      'turn-8',
      'got turn-8; more?',
      'turn-9',
      'got turn-9; more?',
    ]);
  });
});
