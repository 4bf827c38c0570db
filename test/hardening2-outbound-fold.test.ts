/**
 * Issue 16, items 8 and 11 (the transfer-coding part), end to end over loopback HTTP with a
 * hostile remote written on `node:http` (it serves a real v1.0 card and speaks JSON-RPC + SSE
 * with Airlock's own v1.0 encoder, so the bytes are exactly what it chooses):
 * - **a stream of 100k chunks**: `send({ stream: true })` through the outbound client
 *   (`createOutboundClient`: real card fetch, guarded transport, the fold in
 *   src/client/stream-fold.ts). The fold used to copy the parts so far and scan the artifacts on
 *   every event — quadratic: minutes for 100k chunks; it must now finish in seconds;
 * - **`Transfer-Encoding: gzip, chunked`**: a compressed body under the chunked framing is
 *   refused as a compressed response (src/net/client.ts `refuseEncodings`), for a blocking send,
 *   a stream, and through a real gateway whose `a2a` backend relays to that remote.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { type OutboundRuntime } from '../src/client/index.js';
import { UNTRUSTED_END_MARKER } from '../src/content/index.js';
import { encodeCardV10 } from '../src/protocol/card/encode.js';
import type { AgentCard, StreamEvent, Task } from '../src/protocol/model.js';
import { dialectForMethod } from '../src/protocol/version.js';
import { startRelayGateway, type RelayGateway } from './helpers/relay-gateway.js';
import { rpc, v10Message, type TestGateway } from './helpers/gateway.js';

const CARD_PATH = '/.well-known/agent-card.json';
const RPC_PATH = '/a2a/jsonrpc';
const CHUNKS = 100_000;
const COMPRESSED = 'the remote sent a compressed response, which Airlock never decodes';

/** What the remote does with a request, by its message text. */
type Behaviour = 'many-chunks' | 'gzip-chunked';

function card(base: string): AgentCard {
  return {
    name: 'Hostile remote',
    description: 'Streams a great many chunks, or compresses its replies.',
    version: '1',
    interfaces: [{ url: `${base}${RPC_PATH}`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    capabilities: { streaming: true, pushNotifications: false, extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'answer', name: 'Answer', description: 'Answers.', tags: ['answer'] }],
  };
}

function task(id: string, state: Task['status']['state']): Task {
  return {
    id,
    contextId: 'ctx-hostile',
    status: { state, timestamp: '2026-01-01T00:00:00.000Z' },
    artifacts: [],
    history: [],
  };
}

/** The SSE body of a stream: the task, CHUNKS appended chunks of one artifact, completed. */
function manyChunks(id: number | string, encode: (event: StreamEvent) => unknown): string {
  const frame = (event: StreamEvent) => `data: ${JSON.stringify({ jsonrpc: '2.0', id, result: encode(event) })}\n\n`;
  const out: string[] = [frame({ kind: 'task', task: task('t-many', 'working') })];
  for (let i = 0; i < CHUNKS; i++) {
    out.push(
      frame({
        kind: 'artifact-update',
        taskId: 't-many',
        contextId: 'ctx-hostile',
        artifact: { artifactId: 'reply', parts: [{ kind: 'text', text: 'x' }] },
        append: i > 0,
        lastChunk: i === CHUNKS - 1,
      }),
    );
  }
  out.push(
    frame({
      kind: 'status-update',
      taskId: 't-many',
      contextId: 'ctx-hostile',
      final: true,
      status: { state: 'completed', timestamp: '2026-01-01T00:00:01.000Z' },
    }),
  );
  return out.join('');
}

/** A gzip body under 'Transfer-Encoding: gzip, chunked' (node frames it as chunked: the header names it). */
function gzipChunked(res: ServerResponse, contentType: string, body: string): void {
  res.writeHead(200, { 'content-type': contentType, 'transfer-encoding': 'gzip, chunked' });
  const zipped = gzipSync(Buffer.from(body));
  res.write(zipped.subarray(0, 16));
  res.end(zipped.subarray(16));
}

async function startRemote(): Promise<{ cardUrl: string; close(): Promise<void> }> {
  let base = '';
  const server: Server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === CARD_PATH) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify(encodeCardV10(card(base))));
    }
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
      const json = (result: unknown) => JSON.stringify({ jsonrpc: '2.0', id: frame.id, result });
      if (request.method === 'cancel' || request.method === 'get') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end(json(dialect.encodeTask(task(request.params.id, 'canceled'))));
      }
      if (request.method !== 'send' && request.method !== 'stream') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify({ jsonrpc: '2.0', id: frame.id, error: { code: -32601, message: 'no' } }));
      }
      const part = request.params.message.parts[0];
      const behaviour = (part?.kind === 'text' ? part.text : '') as Behaviour;
      const completed = dialect.encodeSendResult({ kind: 'task', task: task('t-gzip', 'completed') });
      if (behaviour === 'gzip-chunked') {
        if (request.method === 'send') return gzipChunked(res, 'application/json', json(completed));
        return gzipChunked(res, 'text/event-stream', `data: ${json(completed)}\n\n`);
      }
      if (request.method === 'send') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end(json(completed));
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(manyChunks(frame.id, (event) => dialect.encodeStreamEvent(event)));
    });
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    cardUrl: `${base}${CARD_PATH}`,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

describe('hostile remote: a 100k-chunk stream and a compressed transfer coding (issue 16, items 8 and 11)', () => {
  let remote: { cardUrl: string; close(): Promise<void> };
  let dir: string;
  let airlock: OutboundRuntime;
  let relay: RelayGateway;
  let gw: TestGateway;

  before(async () => {
    remote = await startRemote();
    dir = mkdtempSync(join(tmpdir(), 'airlock-outbound-fold-'));
    writeFileSync(
      join(dir, 'registry.yaml'),
      `agents:
  - name: hostile
    card_url: ${remote.cardUrl}
    description: A remote with a great many chunks.
    effect: read_only
    poll_interval_s: 0.05
    max_wait_s: 60
    max_response_bytes: ${64 * 1024 * 1024}
    timeouts: { connect: 2, read: 30, total: 60 }
`,
    );
    relay = await startRelayGateway(dir);
    airlock = relay.airlock;
    gw = relay.gw;
  });

  after(async () => {
    await relay.close();
    await remote.close();
    rmSync(dir, { recursive: true, force: true });
  });

  // Item 8. Before the fix: 100k chunks on one artifact folded in about 209 s (quadratic); the
  // test's own timeout (60 s) would end it. Now the whole call — 100k SSE events read, decoded
  // and folded — takes a few seconds.
  it('a stream of 100k chunks folds into one framed reply in seconds, not minutes', { timeout: 60_000 }, async () => {
    const started = performance.now();
    const result = await airlock.send({ agent: 'hostile', message: 'many-chunks', stream: true });
    const seconds = (performance.now() - started) / 1000;
    assert.equal(result.status, 'success', JSON.stringify({ ...result, reply: result.reply.slice(0, 200) }));
    assert.equal(result.task_state, 'completed');
    assert.ok(result.reply.endsWith(UNTRUSTED_END_MARKER));
    assert.ok(result.reply.includes('xxxxxxxxxx'), 'the chunks are in the reply');
    assert.ok(seconds < 20, `${seconds.toFixed(1)} s for ${CHUNKS} chunks`);
  });

  // Item 11: 'Transfer-Encoding: gzip, chunked' is refused, with the compressed-response line.
  for (const stream of [false, true]) {
    it(`Transfer-Encoding: gzip, chunked is refused as a compressed response (${stream ? 'stream' : 'send'})`, async () => {
      const result = await airlock.send({ agent: 'hostile', message: 'gzip-chunked', stream });
      assert.equal(result.status, 'error', JSON.stringify(result));
      assert.equal(result.error_type, 'invalid_response');
      assert.equal(result.error_message, COMPRESSED);
      assert.equal(result.reply, '');
    });
  }

  it('Transfer-Encoding: gzip, chunked from the upstream of a gateway agent fails the task with that line', async () => {
    const sent = await rpc(
      `${gw.url}/a2a/relay`,
      'SendMessage',
      { message: v10Message('gzip-chunked') },
      { version: '1.0' },
    );
    assert.equal(sent.status, 200);
    const body = JSON.stringify(sent.body);
    assert.ok(body.includes(COMPRESSED), body);
    assert.ok(!body.includes('H4sI'), 'no compressed bytes relayed');
  });
});
