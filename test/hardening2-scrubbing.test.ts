/**
 * Issue 16, secret scrubbing: a configured secret never leaves Airlock in any field of any
 * outcome, in any of the disguises the normalising matcher knows. A hostile backend behind a real
 * gateway on loopback emits the secret — exact and disguised — in every field it controls, one
 * outcome kind per test (failed reason, rejected reason, input-required question, a late `message`
 * event's parts, a parked task's parts, an approval's parts, tool name and audit row, completed
 * with streamed text and a rich artifact, a direct message reply); every string of the JSON-RPC
 * answer (keys and values), of the stored task (GetTask) and of every audit row is then checked
 * with the matcher. Outbound: a remote on loopback answers with the registry entry's own token
 * in every disguise, and the call's result holds none of them.
 */
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { after, before, describe, it } from 'node:test';
import type { AgentBackend, AgentEvent, AgentTurn } from '../src/agents/backend.js';
import { MemoryAuditSink } from '../src/audit/memory.js';
import { fakeClock, loopbackTransport, makeTask, startFakeRemote, stubCards } from '../src/client/fake-remote.test.js';
import { createClient } from '../src/client/index.js';
import { parseRegistry } from '../src/client/registry.js';
import { redactSecrets } from '../src/content/redact.js';
import { rpc, rpcStream, startGateway, v10Message, type TestGateway } from './helpers/gateway.js';

const SECRET = 'sk-live-Zq81xTr09LmPw4Kd';
const ALICE_TOKEN = 'alice-person-token-0123456789abcdef012345678';
const BOT_TOKEN = 'bot-client-token-0123456789abcdef0123456789';

const b64 = (bytes: string | Buffer): string => Buffer.from(bytes).toString('base64');
const hexPairs = (s: string): string[] => Buffer.from(s).toString('hex').match(/../g) ?? [];

/** The secret in every disguise the matcher covers (issue 16, item 6). */
const DISGUISES: Readonly<Record<string, string>> = {
  exact: SECRET,
  upper: SECRET.toUpperCase(),
  spaced: [...SECRET].join(' '),
  zeroWidth: [...SECRET].join('\u200b'),
  softHyphen: [...SECRET].join('\u00ad'),
  fullwidth: [...SECRET].map((c) => String.fromCodePoint((c.codePointAt(0) ?? 0) + 0xfee0)).join(''),
  hex: Buffer.from(SECRET).toString('hex'),
  hexUpper: Buffer.from(SECRET).toString('hex').toUpperCase(),
  percent: hexPairs(SECRET)
    .map((h) => `%${h}`)
    .join(''),
  entities: [...SECRET].map((c) => `&#${c.codePointAt(0)};`).join(''),
  unicodeEscapes: [...SECRET].map((c) => `\\u${(c.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`).join(''),
  reversed: [...SECRET].reverse().join(''),
  splitByNewline: `${SECRET.slice(0, 9)}\n${SECRET.slice(9)}`,
  base64: b64(SECRET),
  base64LineBreaks: b64(`user:${SECRET}`).replace(/(.{8})/g, '$1\r\n'),
  base64OfBase64: b64(b64(SECRET)),
  utf16le: b64(Buffer.from(SECRET, 'utf16le')),
  utf16be: b64(Buffer.from(SECRET, 'utf16le').swap16()),
};
const ALL = Object.values(DISGUISES).join(' | ');

/** Every field a backend controls, each holding the secret in some disguise. */
function richParts(): any[] {
  const d = Object.values(DISGUISES);
  return [
    { kind: 'text', text: ALL, metadata: { [d[1] as string]: d[2], note: d[3] } },
    { kind: 'raw', raw: b64(`bytes ${SECRET}`), mediaType: 'text/plain', filename: `${d[4]}.txt` },
    { kind: 'url', url: `https://x.example/?k=${d[9]}`, filename: d[5] },
    { kind: 'data', data: { [SECRET]: d[6], list: [d[7], d[8], { deep: d[10] }], n: 1 }, metadata: { m: d[11] } },
  ];
}

/** Emits the secret in every field of the outcome the message names. */
class LeakyBackend implements AgentBackend {
  readonly kind = 'test-leaky';
  async *run(turn: AgentTurn): AsyncIterable<AgentEvent> {
    const text = turn.message.parts.map((part) => (part.kind === 'text' ? part.text : '')).join('');
    switch (text) {
      case 'failed':
        yield { type: 'failed', reason: ALL };
        return;
      case 'rejected':
        yield { type: 'rejected', reason: ALL };
        return;
      case 'input-required':
        yield { type: 'input-required', question: ALL };
        return;
      case 'late-message':
        yield { type: 'working', text: ALL };
        yield { type: 'message', parts: richParts() };
        return;
      case 'direct':
        yield { type: 'message', parts: richParts() };
        return;
      case 'whole':
        // The reply in one chunk that is also the last: scrubbed whole, not as a stream.
        yield { type: 'text', text: ALL, last: true };
        yield { type: 'completed' };
        return;
      case 'parked':
        yield {
          type: 'ask-person',
          remote: {
            question: ALL,
            agent: 'remote',
            taskId: 'remote-task',
            contextId: 'remote-context',
            state: 'input-required',
          },
        };
        return;
      case 'approval':
        yield { type: 'propose-action', action: { tool: 'send_email', args: { body: ALL, [SECRET]: 1 }, level: 'L4' } };
        return;
      case 'approval-tool':
        yield { type: 'propose-action', action: { tool: DISGUISES.upper as string, args: {}, level: 'L4' } };
        return;
      default: {
        // completed: streamed text (each disguise in its own chunk, split mid-way), a rich
        // artifact, and the final text.
        yield { type: 'working', text: ALL };
        for (const form of Object.values(DISGUISES)) {
          const half = Math.floor(form.length / 2);
          yield { type: 'text', text: `a ${form.slice(0, half)}` };
          yield { type: 'text', text: `${form.slice(half)} b ` };
        }
        yield { type: 'text', text: 'end', last: true };
        yield {
          type: 'artifact',
          artifact: { name: DISGUISES.hex, description: DISGUISES.spaced, metadata: { k: ALL }, parts: richParts() },
        };
        yield { type: 'completed', text: ALL };
      }
    }
  }
}

/** Every string (keys and values) of a JSON value. */
function strings(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const item of value) strings(item, out);
  else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      out.push(key);
      strings(item, out);
    }
  }
  return out;
}

/** No string of `value` holds the secret in any form the matcher knows (nor the plain secret). */
function assertNoSecret(value: unknown, where: string): void {
  const all = strings(value);
  assert.ok(all.length > 0, `${where}: nothing to check`);
  for (const s of all) {
    assert.ok(!s.includes(SECRET), `${where}: the secret itself in ${JSON.stringify(s).slice(0, 120)}`);
    const found = redactSecrets(s, [SECRET]);
    assert.equal(found.redacted, 0, `${where}: a disguised secret in ${JSON.stringify(s).slice(0, 160)}`);
  }
  // Raw bytes decoded: no secret inside.
  for (const s of all) {
    if (/^[A-Za-z0-9+/=]{12,}$/.test(s)) {
      assert.ok(!Buffer.from(s, 'base64').toString('latin1').includes(SECRET), `${where}: base64 ${s}`);
    }
  }
}

let gw: TestGateway;
let audit: MemoryAuditSink;
const endpoint = (): string => `${gw.url}/a2a/leaky`;

before(async () => {
  audit = new MemoryAuditSink();
  gw = await startGateway(
    `
server: { host: 127.0.0.1, port: 0 }
content: { scrubSecrets: ["\${SECRET}"] }
approvals:
  people:
    - { id: alice, token: "\${ALICE_TOKEN}" }
agents:
  - slug: leaky
    name: Leaky
    description: Leaks.
    skills: [{ id: leak, name: Leak, description: Leaks, tags: [test] }]
    backend: { type: echo }
    actions: { maxLevel: L4 }
clients:
  - { id: bot, token: "\${BOT_TOKEN}", agents: [leaky], owner: alice }
`,
    { auditSink: audit, env: { SECRET, ALICE_TOKEN, BOT_TOKEN }, backends: { leaky: new LeakyBackend() } },
  );
});
after(async () => {
  await gw.close();
});

async function send(text: string): Promise<any> {
  const { status, body } = await rpc(
    endpoint(),
    'SendMessage',
    { message: v10Message(text) },
    { version: '1.0', token: BOT_TOKEN },
  );
  assert.equal(status, 200);
  assert.equal(body.error, undefined, JSON.stringify(body.error));
  return body.result;
}

async function stored(taskId: string): Promise<any> {
  const { body } = await rpc(endpoint(), 'GetTask', { id: taskId }, { version: '1.0', token: BOT_TOKEN });
  return body.result;
}

function auditRowsOf(taskId: string): unknown[] {
  return audit.lines.filter((line) => line.includes(taskId)).map((line) => JSON.parse(line) as unknown);
}

const BOUNDED = { timeout: 15_000 };

describe('issue 16: a configured secret never leaves in any field, in any disguise', () => {
  for (const [kind, state] of [
    ['failed', 'TASK_STATE_FAILED'],
    ['rejected', 'TASK_STATE_REJECTED'],
    ['input-required', 'TASK_STATE_INPUT_REQUIRED'],
    ['late-message', 'TASK_STATE_COMPLETED'],
    ['approval', 'TASK_STATE_INPUT_REQUIRED'],
    ['completed', 'TASK_STATE_COMPLETED'],
    ['whole', 'TASK_STATE_COMPLETED'],
  ] as const) {
    it(`${kind}: the answer, the stored task and the audit rows hold no secret`, BOUNDED, async () => {
      const result = await send(kind);
      const task = result.task;
      assert.equal(task.status.state, state);
      assertNoSecret(result, `${kind} answer`);
      assertNoSecret(await stored(task.id), `${kind} stored task`);
      assertNoSecret(auditRowsOf(task.id), `${kind} audit rows`);
    });
  }

  it('completed, streamed: no SSE event holds a secret', BOUNDED, async () => {
    const { events } = await rpcStream(
      endpoint(),
      'SendStreamingMessage',
      { message: v10Message('completed') },
      { version: '1.0', token: BOT_TOKEN },
    );
    assert.ok(events.length > 3);
    const text = events
      .map((event) => event.result?.artifactUpdate?.artifact?.parts?.[0]?.text ?? '')
      .filter((t: string) => t.length > 0);
    assertNoSecret(events, 'stream events');
    // The streamed reply joined is clean too (a secret split across chunks).
    assertNoSecret(text.join(''), 'the joined stream');
  });

  it(
    'parked on a remote question (no approvals on this gateway): the parked parts hold no secret',
    BOUNDED,
    async () => {
      const plain = await startGateway(
        `
server: { host: 127.0.0.1, port: 0 }
content: { scrubSecrets: ["\${SECRET}"] }
agents:
  - slug: leaky
    name: Leaky
    description: Leaks.
    skills: [{ id: leak, name: Leak, description: Leaks, tags: [test] }]
    backend: { type: echo }
clients:
  - { id: bot, token: "\${BOT_TOKEN}", agents: [leaky] }
`,
        { env: { SECRET, BOT_TOKEN }, backends: { leaky: new LeakyBackend() } },
      );
      try {
        const url = `${plain.url}/a2a/leaky`;
        const { body } = await rpc(
          url,
          'SendMessage',
          { message: v10Message('parked') },
          { version: '1.0', token: BOT_TOKEN },
        );
        assert.equal(body.result.task.status.state, 'TASK_STATE_INPUT_REQUIRED');
        assertNoSecret(body.result, 'parked answer');
      } finally {
        await plain.close();
      }
    },
  );

  it('a direct message reply: every part field is scrubbed', BOUNDED, async () => {
    const result = await send('direct');
    assert.ok(result.message !== undefined);
    assertNoSecret(result, 'direct reply');
  });

  it(
    'an approval whose tool name is the secret is refused; the name is in no field and no audit row',
    BOUNDED,
    async () => {
      const result = await send('approval-tool');
      const task = result.task;
      assert.equal(task.status.state, 'TASK_STATE_FAILED');
      assertNoSecret(result, 'answer');
      assertNoSecret(auditRowsOf(task.id), 'audit rows');
      // The console's list of pending actions (what the person sees) holds no such action.
      const response = await fetch(`${gw.url}/approvals?format=json`, {
        headers: { authorization: `Bearer ${ALICE_TOKEN}`, accept: 'application/json' },
      });
      assertNoSecret(await response.text(), 'approvals screen');
    },
  );
});

describe("issue 16, outbound: the entry's token never comes back in a remote's reply, in any disguise", () => {
  const TOKEN = 'entry-token-Qw3rTy9876ZxCv';
  const forms = [
    Buffer.from(TOKEN).toString('hex'),
    Buffer.from(TOKEN).toString('hex').toUpperCase(),
    [...TOKEN].join(' '),
    [...TOKEN].join('\u200b'),
    TOKEN.toUpperCase(),
    [...TOKEN].reverse().join(''),
    (Buffer.from(TOKEN).toString('hex').match(/../g) ?? []).map((h) => `%${h}`).join(''),
    [...TOKEN].map((c) => `&#${c.codePointAt(0)};`).join(''),
    b64(b64(TOKEN)),
    b64(Buffer.from(TOKEN, 'utf16le')),
  ];

  for (const version of ['1.0', '0.3'] as const) {
    it(
      `v${version}: hex, spaced, zero-width, upper-case, reversed, percent, entities, base64 forms are redacted`,
      BOUNDED,
      async () => {
        const remote = await startFakeRemote((request) =>
          request.method === 'send'
            ? { send: { kind: 'task', task: makeTask('t-1', 'completed', forms.join(' / ')) } }
            : { task: makeTask('t-1', 'completed', forms.join(' / ')) },
        );
        try {
          const card = new URL('/.well-known/agent-card.json', remote.url).href;
          const registry = parseRegistry(
            `agents:
  - name: reader
    card_url: ${card}
    description: Reads.
    effect: read_only
    auth: { bearer_env: AIRLOCK_SECRET_ENTRY }
    max_reply_chars: 4000
`,
            { AIRLOCK_SECRET_ENTRY: TOKEN },
          );
          const clock = fakeClock();
          const client = createClient({
            registry,
            transport: loopbackTransport(),
            cards: stubCards(remote.url, version),
            audit: () => undefined,
            now: clock.now,
            sleep: clock.sleep,
          });
          const result = await client.send({ agent: 'reader', message: 'hello' });
          assert.equal(result.status, 'success', JSON.stringify(result));
          assert.equal(remote.requests[0]?.headers.authorization, `Bearer ${TOKEN}`);
          assert.equal(result.reply.split('[secret redacted]').length - 1, forms.length, result.reply);
          for (const s of strings(result)) {
            assert.equal(redactSecrets(s, [TOKEN]).redacted, 0, s);
            for (const form of forms) assert.ok(!s.includes(form), form);
          }
        } finally {
          await remote.close();
        }
      },
    );
  }
});
