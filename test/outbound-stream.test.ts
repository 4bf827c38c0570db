/**
 * Outbound streaming: `send({ stream: true })` against a scripted SSE remote on a real loopback
 * `node:http` server, in both dialects, through the real guarded transport (`stream()`, with
 * its total byte cap and total timeout). Checked: chunks accumulate into the framed reply; a
 * stream over max_response_bytes is cut (response_too_large) and its task canceled; a stream
 * that stalls past max_wait_s times out (request_timeout) and its task is canceled; a stream
 * that ends early is invalid_response (and canceled); a remote without the streaming
 * capability is polled instead; input-required over a stream is handed back with its ids.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import type { AuditEvent } from '../src/audit/events.js';
import { assertAuditSafe } from '../src/audit/safety.js';
import { createClient, parseRegistry, type CallResult } from '../src/client/index.js';
import { processInstanceId } from '../src/client/outbound-transport.js';
import { makeTask, stubCards } from '../src/client/fake-remote.test.js';
import type { CardResolver } from '../src/client/contracts.js';
import { UNTRUSTED_END_MARKER, UNTRUSTED_START_MARKER } from '../src/content/index.js';
import { createGuardedClient } from '../src/net/index.js';
import { HOP_HEADER } from '../src/protocol/headers.js';
import type { A2ARequest, StreamEvent, Task } from '../src/protocol/model.js';
import { dialectForMethod } from '../src/protocol/version.js';

const SECRET = 'tok-STREAM-0123456789abcdefXYZ';

/** What a stream script can do: send canonical events, raw bytes, or end the stream. */
interface StreamWriter {
  event(event: StreamEvent): void;
  raw(text: string): void;
  end(): void;
}

interface Seen {
  method: string;
  headers: IncomingHttpHeaders;
  request: A2ARequest;
}

interface Remote {
  url: string;
  seen: Seen[];
  methods(): string[];
  close(): Promise<void>;
}

type Script = (request: A2ARequest, out: StreamWriter) => void;

/**
 * The scripted remote: streams run `script`; CancelTask answers a canceled task; a send
 * answers a working task and GetTask a completed one (the polling fallback).
 */
async function startRemote(script: Script): Promise<Remote> {
  const seen: Seen[] = [];
  const open = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const frame = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        id: number;
        method: string;
        params: unknown;
      };
      const dialect = dialectForMethod(frame.method)!;
      const request = dialect.decodeRequest(frame.method, frame.params);
      seen.push({ method: frame.method, headers: req.headers, request });
      const json = (result: unknown) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: frame.id, result }));
      };
      if (request.method === 'cancel') return json(dialect.encodeTask(makeTask(request.params.id, 'canceled')));
      if (request.method === 'get') {
        return json(dialect.encodeTask(makeTask(request.params.id, 'completed', 'polled answer')));
      }
      if (request.method === 'send') {
        return json(dialect.encodeSendResult({ kind: 'task', task: makeTask('t-poll', 'working') }));
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.flushHeaders();
      open.add(res);
      res.on('close', () => open.delete(res));
      script(request, {
        event: (event) => {
          const result = dialect.encodeStreamEvent(event);
          res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', id: frame.id, result })}\n\n`);
        },
        raw: (text) => res.write(text),
        end: () => res.end(),
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/a2a/remote`,
    seen,
    methods: () => seen.map((row) => row.method),
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of open) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function status(taskId: string, state: Task['status']['state'], text?: string): StreamEvent {
  return {
    kind: 'status-update',
    taskId,
    contextId: 'ctx-1',
    final: state !== 'working' && state !== 'submitted',
    status: {
      state,
      timestamp: '2026-01-01T00:00:00.000Z',
      ...(text !== undefined && {
        message: { messageId: `m-${state}`, role: 'agent', parts: [{ kind: 'text', text }] },
      }),
    },
  };
}

function chunk(taskId: string, text: string, append: boolean, lastChunk = false): StreamEvent {
  return {
    kind: 'artifact-update',
    taskId,
    contextId: 'ctx-1',
    artifact: { artifactId: 'a-1', parts: [{ kind: 'text', text }] },
    append,
    lastChunk,
  };
}

/** Cards for `url`, with `capabilities.streaming` as given. */
function cardsFor(url: string, version: '1.0' | '0.3', streaming: boolean): CardResolver {
  const stub = stubCards(url, version);
  return {
    async resolve(entry) {
      const trusted = await stub.resolve(entry);
      return { ...trusted, card: { ...trusted.card, capabilities: { ...trusted.card.capabilities, streaming } } };
    },
  };
}

function framedText(result: CallResult): string {
  const start = result.reply.indexOf(UNTRUSTED_START_MARKER);
  const end = result.reply.indexOf(UNTRUSTED_END_MARKER);
  assert.ok(start !== -1 && end > start, `framed: ${result.reply}`);
  return result.reply.slice(start + UNTRUSTED_START_MARKER.length, end);
}

const remotes: Remote[] = [];
const transport = createGuardedClient({});

after(async () => {
  await Promise.all(remotes.map((remote) => remote.close()));
  await transport.close();
});

async function setup(version: '1.0' | '0.3', script: Script, options: { streaming?: boolean; entry?: string } = {}) {
  const remote = await startRemote(script);
  remotes.push(remote);
  const audit: AuditEvent[] = [];
  const registry = parseRegistry(
    `agents:
  - name: streamer
    card_url: ${new URL('/.well-known/agent-card.json', remote.url).href}
    description: Streams its answers.
    effect: read_only
    auth: { bearer_env: AIRLOCK_SECRET_TEST }
    poll_interval_s: 0.05
${options.entry ?? '    max_wait_s: 5'}
`,
    { AIRLOCK_SECRET_TEST: SECRET },
  );
  const client = createClient({
    registry,
    transport,
    cards: cardsFor(remote.url, version, options.streaming ?? true),
    audit: (event) => {
      assertAuditSafe(event);
      audit.push(event);
    },
  });
  return { remote, client, audit };
}

const BOUNDED = { timeout: 10_000 };

for (const version of ['1.0', '0.3'] as const) {
  const METHOD = version === '1.0' ? 'SendStreamingMessage' : 'message/stream';
  const CANCEL = version === '1.0' ? 'CancelTask' : 'tasks/cancel';

  describe(`outbound streaming (v${version})`, () => {
    it('accumulates streamed chunks into the framed reply', BOUNDED, async () => {
      const { remote, client, audit } = await setup(version, (_request, out) => {
        out.event({ kind: 'task', task: makeTask('t-s', 'submitted') });
        out.event(status('t-s', 'working', 'thinking…'));
        out.event(chunk('t-s', 'Hel', false));
        out.event(chunk('t-s', `lo, ${SECRET} `, true));
        out.event(chunk('t-s', 'world', true, true));
        out.event(status('t-s', 'completed'));
        out.end();
      });
      const result = await client.send({ agent: 'streamer', message: 'hi', stream: true });
      assert.equal(result.status, 'success', JSON.stringify(result));
      assert.equal(result.task_state, 'completed');
      assert.equal(result.task_id, 't-s');
      assert.equal(result.context_id, 'ctx-1');
      const text = framedText(result);
      assert.ok(text.includes('Hello, '), text);
      assert.ok(text.includes('world'), text);
      assert.ok(!JSON.stringify(result).includes(SECRET), 'the bearer token is redacted');
      assert.deepEqual(remote.methods(), [METHOD]);
      const headers = remote.seen[0]!.headers;
      assert.equal(headers[HOP_HEADER], processInstanceId());
      assert.equal(headers.authorization, `Bearer ${SECRET}`);
      assert.equal(headers['a2a-version'], version === '1.0' ? '1.0' : undefined);
      assert.match(String(headers.accept), /text\/event-stream/);
      assert.equal(audit.length, 1);
      assert.equal(audit[0]!.type, 'a2a.client.send');
      assert.equal(audit[0]!.outcome, 'ok');
    });

    it('cuts a stream over max_response_bytes and cancels the task', BOUNDED, async () => {
      const { remote, client, audit } = await setup(
        version,
        (_request, out) => {
          out.event({ kind: 'task', task: makeTask('t-big', 'working') });
          // The chunks come a little later, as a real stream's would: the task is known by then.
          setTimeout(() => {
            for (let i = 0; i < 20; i += 1) out.event(chunk('t-big', 'x'.repeat(200), i > 0));
          }, 50);
        },
        { entry: '    max_wait_s: 5\n    max_response_bytes: 2048' },
      );
      const result = await client.send({ agent: 'streamer', message: 'a lot', stream: true });
      assert.equal(result.status, 'error', JSON.stringify(result));
      assert.equal(result.error_type, 'response_too_large');
      assert.equal(result.task_id, 't-big');
      assert.equal(result.task_state, 'canceled');
      assert.deepEqual(remote.methods(), [METHOD, CANCEL]);
      assert.equal((remote.seen[1]!.request.params as { id: string }).id, 't-big');
      assert.equal(audit[0]!.outcome, 'error');
      assert.equal(audit[0]!.reason, 'response_too_large');
    });

    it('times out a stalled stream at max_wait_s and cancels the task', BOUNDED, async () => {
      const { remote, client } = await setup(
        version,
        (_request, out) => {
          out.event({ kind: 'task', task: makeTask('t-stall', 'submitted') });
          out.event(status('t-stall', 'working'));
          // …and nothing more.
        },
        { entry: '    max_wait_s: 0.5' },
      );
      const started = Date.now();
      const result = await client.send({ agent: 'streamer', message: 'wait', stream: true });
      assert.ok(Date.now() - started >= 450, 'waited about max_wait_s');
      assert.equal(result.error_type, 'request_timeout', JSON.stringify(result));
      assert.equal(result.task_id, 't-stall');
      assert.equal(result.task_state, 'canceled');
      assert.deepEqual(remote.methods(), [METHOD, CANCEL]);
    });

    it('treats a stream that ends without a final state as invalid_response, and cancels', BOUNDED, async () => {
      const { remote, client } = await setup(version, (_request, out) => {
        out.event({ kind: 'task', task: makeTask('t-short', 'working') });
        out.end();
      });
      const result = await client.send({ agent: 'streamer', message: 'short', stream: true });
      assert.equal(result.error_type, 'invalid_response', JSON.stringify(result));
      assert.equal(result.task_id, 't-short');
      assert.deepEqual(remote.methods(), [METHOD, CANCEL]);
    });

    it('refuses a garbled event as invalid_response', BOUNDED, async () => {
      const { client } = await setup(version, (_request, out) => {
        out.raw('data: {not json\n\n');
        out.end();
      });
      const result = await client.send({ agent: 'streamer', message: 'garbled', stream: true });
      assert.equal(result.error_type, 'invalid_response', JSON.stringify(result));
    });

    it('falls back to send + poll when the card does not offer streaming', BOUNDED, async () => {
      const { remote, client } = await setup(version, () => assert.fail('no stream expected'), { streaming: false });
      const result = await client.send({ agent: 'streamer', message: 'hi', stream: true });
      assert.equal(result.status, 'success', JSON.stringify(result));
      assert.ok(framedText(result).includes('polled answer'));
      const send = version === '1.0' ? 'SendMessage' : 'message/send';
      const get = version === '1.0' ? 'GetTask' : 'tasks/get';
      assert.deepEqual(remote.methods(), [send, get]);
    });

    it('hands input-required back with ids; a streamed follow-up answers the same task', BOUNDED, async () => {
      const { remote, client } = await setup(version, (request, out) => {
        const taskId = request.method === 'stream' ? request.params.message.taskId : undefined;
        if (taskId === undefined) {
          out.event({ kind: 'task', task: makeTask('t-ask', 'submitted') });
          out.event(status('t-ask', 'input-required', 'Which day?'));
        } else {
          out.event(status(taskId, 'working'));
          out.event(chunk(taskId, 'booked for Tuesday', false, true));
          out.event(status(taskId, 'completed'));
        }
        out.end();
      });
      const asked = await client.send({ agent: 'streamer', message: 'book a train', stream: true });
      assert.equal(asked.status, 'input_required', JSON.stringify(asked));
      assert.equal(asked.task_state, 'input-required');
      assert.equal(asked.task_id, 't-ask');
      assert.equal(asked.context_id, 'ctx-1');
      assert.ok(framedText(asked).includes('Which day?'));
      const answered = await client.send({
        agent: 'streamer',
        message: 'Tuesday',
        taskId: asked.task_id,
        contextId: asked.context_id,
        stream: true,
      });
      assert.equal(answered.status, 'success', JSON.stringify(answered));
      assert.equal(answered.task_id, 't-ask');
      assert.ok(framedText(answered).includes('booked for Tuesday'));
      assert.deepEqual(remote.methods(), [METHOD, METHOD], 'no cancel');
    });
  });
}
