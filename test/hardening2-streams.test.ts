/**
 * Streams, end to end over HTTP (issue 16, item 3): SSE streams are capped per principal and in
 * total (503 + Retry-After, audited `stream_limit`), a stream's slot is given back however the
 * stream ends, the SSE writer respects backpressure and cuts off a reader that falls too far
 * behind (a final JSON-RPC error event), and a client that opens many streams it never reads
 * neither slows another client's echo down nor grows the gateway's memory without bound.
 *
 * The hostile client uses raw sockets: it sends the request, reads the response head, then
 * stops reading (the socket is paused), as a client that never reads would.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { AgentBackend, AgentEvent } from '../src/agents/backend.js';
import { MemoryAuditSink } from '../src/audit/index.js';
import { READER_BEHIND_MESSAGE } from '../src/server/routes/jsonrpc.js';
import {
  rpc,
  rpcStream,
  startGateway,
  TOKEN_A,
  TOKEN_B,
  v03Message,
  v10Message,
  type TestGateway,
} from './helpers/gateway.js';

const CHUNK = 'x'.repeat(64 * 1024);
/** Chunks the flood agent writes once it is let go: 20 MiB, far over any one reader's share. */
const FLOOD_CHUNKS = 320;

/** A backend that waits until the test lets it go, then writes FLOOD_CHUNKS chunks of 64 KiB, 4 ms apart. */
class FloodBackend implements AgentBackend {
  readonly kind = 'flood';
  #release: () => void = () => {};
  #gate = new Promise<void>((resolve) => {
    this.#release = resolve;
  });

  /** Settles once the last event was yielded. */
  readonly done: Promise<void>;
  #finished: () => void = () => {};

  constructor() {
    this.done = new Promise<void>((resolve) => {
      this.#finished = resolve;
    });
  }

  letGo(): void {
    this.#release();
  }

  async *run(): AsyncIterable<AgentEvent> {
    yield { type: 'working' };
    await this.#gate;
    for (let n = 0; n < FLOOD_CHUNKS; n++) {
      yield { type: 'text', text: CHUNK, last: n === FLOOD_CHUNKS - 1 };
      await new Promise((resolve) => setTimeout(resolve, 4));
    }
    // The bridge stops pulling at the final event: say so first.
    this.#finished();
    yield { type: 'completed' };
  }
}

function yaml(limits: string): string {
  return `
server: { host: 127.0.0.1, port: 0 }
limits: ${limits}
agents:
  - slug: echo
    name: Echo
    description: Echoes.
    skills: [{ id: echo, name: Echo, description: Echoes text }]
    backend: { type: echo }
  - slug: slow
    name: Slow
    description: Writes slowly.
    skills: [{ id: write, name: Write, description: Writes text }]
    backend: { type: writer, chunkDelayMs: 10000 }
  - slug: flood
    name: Flood
    description: Writes a lot.
    skills: [{ id: write, name: Write, description: Writes text }]
    backend: { type: echo }
clients:
  - { id: a, token: "\${TOKEN_A}", agents: [echo, slow, flood] }
  - { id: b, token: "\${TOKEN_B}", agents: [echo, slow, flood] }
`;
}

/** A raw socket that sent one JSON-RPC call, read the response's first bytes, and stopped reading. */
interface RawStream {
  socket: Socket;
  status: number;
  head: string;
  /** Resumes reading; resolves with everything read until the server closed or went quiet. */
  readRest(quietMs?: number): Promise<string>;
}

function openRaw(
  url: string,
  path: string,
  token: string,
  method: string,
  params: unknown,
  version = '1.0',
): Promise<RawStream> {
  const { port } = new URL(url);
  const body = JSON.stringify({ jsonrpc: '2.0', id: 9, method, params });
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\n` +
          `accept: text/event-stream\r\nauthorization: Bearer ${token}\r\na2a-version: ${version}\r\n` +
          `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    });
    socket.once('error', reject);
    socket.once('data', (chunk: Buffer) => {
      // From here on the client reads nothing.
      socket.pause();
      socket.off('error', reject);
      socket.on('error', () => {});
      const head = chunk.toString('latin1');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
      resolve({
        socket,
        status,
        head,
        readRest: (quietMs = 1500) =>
          new Promise<string>((done) => {
            const parts: Buffer[] = [];
            let timer = setTimeout(finish, quietMs);
            function finish(): void {
              clearTimeout(timer);
              socket.destroy();
              done(Buffer.concat(parts).toString('latin1'));
            }
            socket.on('data', (more: Buffer) => {
              parts.push(more);
              clearTimeout(timer);
              timer = setTimeout(finish, quietMs);
            });
            socket.once('close', finish);
            socket.resume();
          }),
      });
    });
  });
}

async function startTask(url: string, slug: string, token: string): Promise<string> {
  const call = await rpc(
    `${url}/a2a/${slug}`,
    'SendMessage',
    { message: v10Message('go'), configuration: { returnImmediately: true } },
    { token, version: '1.0' },
  );
  assert.equal(call.status, 200, JSON.stringify(call.body));
  return call.body.result.task.id as string;
}

function assertStreamRefused(raw: RawStream, setting: RegExp): void {
  assert.equal(raw.status, 503, raw.head);
  assert.match(raw.head, /retry-after: \d+/i);
  assert.match(raw.head, setting);
}

async function echoMs(url: string): Promise<number> {
  const started = performance.now();
  const call = await rpc(
    `${url}/a2a/echo`,
    'SendMessage',
    { message: v10Message('ping') },
    { token: TOKEN_B, version: '1.0' },
  );
  assert.equal(call.status, 200);
  return performance.now() - started;
}

function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

describe('hardening 2: streams', () => {
  describe('caps on open streams', () => {
    let gw: TestGateway;
    let sink: MemoryAuditSink;
    before(async () => {
      sink = new MemoryAuditSink();
      gw = await startGateway(yaml('{ maxStreamsPerPrincipal: 3, maxStreams: 5 }'), { auditSink: sink });
    });
    after(async () => {
      await gw.close();
    });

    it('maxStreamsPerPrincipal: SubscribeToTask streams a client never reads are capped (503 + Retry-After, audited); another client is not', async () => {
      const task = await startTask(gw.url, 'slow', TOKEN_A);
      const held: RawStream[] = [];
      for (let n = 0; n < 3; n++) {
        const raw = await openRaw(gw.url, '/a2a/slow', TOKEN_A, 'SubscribeToTask', { id: task });
        assert.equal(raw.status, 200, raw.head);
        held.push(raw);
      }
      const refused = await openRaw(gw.url, '/a2a/slow', TOKEN_A, 'SubscribeToTask', { id: task });
      assertStreamRefused(refused, /limits\.maxStreamsPerPrincipal = 3/);
      refused.socket.destroy();
      // The v0.3 names and SendStreamingMessage count against the same cap.
      const v03 = await openRaw(gw.url, '/a2a/slow', TOKEN_A, 'tasks/resubscribe', { id: task }, '0.3');
      assertStreamRefused(v03, /maxStreamsPerPrincipal/);
      v03.socket.destroy();
      const send = await rpc(`${gw.url}/a2a/echo`, 'message/stream', { message: v03Message('hi') }, { token: TOKEN_A });
      assert.equal(send.status, 503);
      const rows = sink.ofType('a2a.server.rate_limited').filter((row) => row.reason === 'stream_limit');
      assert.equal(rows.length, 3);
      // Client b has its own share.
      const other = await rpcStream(
        `${gw.url}/a2a/echo`,
        'SendStreamingMessage',
        { message: v10Message('hi') },
        {
          token: TOKEN_B,
          version: '1.0',
        },
      );
      assert.equal(other.status, 200);
      assert.ok(other.events.length > 0);
      // A client gone gives its slot back.
      for (const raw of held) raw.socket.destroy();
      let again: RawStream | undefined;
      for (let attempt = 0; attempt < 50; attempt++) {
        again = await openRaw(gw.url, '/a2a/slow', TOKEN_A, 'SubscribeToTask', { id: task });
        if (again.status === 200) break;
        again.socket.destroy();
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.equal(again?.status, 200);
      again?.socket.destroy();
      await rpc(`${gw.url}/a2a/slow`, 'CancelTask', { id: task }, { token: TOKEN_A, version: '1.0' });
    });

    it('a stream that ends with its task gives its slot back', async () => {
      for (let n = 0; n < 8; n++) {
        const stream = await rpcStream(
          `${gw.url}/a2a/echo`,
          'SendStreamingMessage',
          { message: v10Message(`hi ${n}`) },
          {
            token: TOKEN_A,
            version: '1.0',
          },
        );
        assert.equal(stream.status, 200, `stream ${n}`);
      }
    });

    it('maxStreams: the gateway-wide cap refuses every client once reached', async () => {
      const task = await startTask(gw.url, 'slow', TOKEN_A);
      const held: RawStream[] = [];
      for (let n = 0; n < 3; n++) {
        const raw = await openRaw(gw.url, '/a2a/slow', TOKEN_A, 'SubscribeToTask', { id: task });
        assert.equal(raw.status, 200, raw.head);
        held.push(raw);
      }
      const taskB = await startTask(gw.url, 'slow', TOKEN_B);
      for (let n = 0; n < 2; n++) {
        const raw = await openRaw(gw.url, '/a2a/slow', TOKEN_B, 'SubscribeToTask', { id: taskB });
        assert.equal(raw.status, 200, raw.head);
        held.push(raw);
      }
      // b holds 2 of its 3, but the gateway holds 5 of 5.
      const refused = await openRaw(gw.url, '/a2a/slow', TOKEN_B, 'SubscribeToTask', { id: taskB });
      assertStreamRefused(refused, /limits\.maxStreams = 5/);
      refused.socket.destroy();
      for (const raw of held) raw.socket.destroy();
      await rpc(`${gw.url}/a2a/slow`, 'CancelTask', { id: task }, { token: TOKEN_A, version: '1.0' });
      await rpc(`${gw.url}/a2a/slow`, 'CancelTask', { id: taskB }, { token: TOKEN_B, version: '1.0' });
    });
  });

  describe('fair shares: a client that opens many streams and never reads them', () => {
    let gw: TestGateway;
    let flood: FloodBackend;
    before(async () => {
      flood = new FloodBackend();
      // Default stream caps; the flood task may write 32 MiB (more than a reader's share).
      gw = await startGateway(yaml('{ maxTaskOutputBytes: 33554432, requestsPerMinute: 1000000 }'), {
        backends: { flood },
      });
    });
    after(async () => {
      await gw.close();
    });

    it('its streams past the cap are refused, the rest are cut off when they fall behind; b keeps its echo latency; memory stays bounded', async (t) => {
      // b's baseline.
      for (let n = 0; n < 5; n++) await echoMs(gw.url);
      const baseline: number[] = [];
      for (let n = 0; n < 30; n++) baseline.push(await echoMs(gw.url));

      const task = await startTask(gw.url, 'flood', TOKEN_A);
      const opened: RawStream[] = [];
      let refused = 0;
      for (let n = 0; n < 150; n++) {
        const raw = await openRaw(gw.url, '/a2a/flood', TOKEN_A, 'SubscribeToTask', { id: task });
        if (raw.status === 200) opened.push(raw);
        else {
          assertStreamRefused(raw, /limits\.maxStreamsPerPrincipal = 16/);
          refused++;
          raw.socket.destroy();
        }
      }
      assert.equal(opened.length, 16, 'the default per-principal cap admits 16');
      assert.equal(refused, 134);

      const rssBefore = process.memoryUsage().rss;
      let rssPeak = rssBefore;
      const sampler = setInterval(() => {
        rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
      }, 20);
      flood.letGo();
      const during: number[] = [];
      let finished = false;
      void flood.done.then(() => {
        finished = true;
      });
      while (!finished) during.push(await echoMs(gw.url));
      clearInterval(sampler);
      // Only the state: the task's 20 MiB artifact is not the point here.
      let done: any;
      for (let attempt = 0; attempt < 100 && done?.status.state !== 'TASK_STATE_COMPLETED'; attempt++) {
        if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 20));
        const call = await rpc(
          `${gw.url}/a2a/flood`,
          'GetTask',
          { id: task, historyLength: 0 },
          { token: TOKEN_A, version: '1.0' },
        );
        done = call.body.result;
      }
      // The task itself ran to its end and is readable.
      assert.equal(done.status.state, 'TASK_STATE_COMPLETED');

      const base = median(baseline);
      const load = median(during);
      const growthMb = (rssPeak - rssBefore) / 2 ** 20;
      t.diagnostic(
        `b echo median ${base.toFixed(1)} ms before, ${load.toFixed(1)} ms during (${during.length} calls, max ${Math.max(...during).toFixed(1)} ms); ` +
          `RSS ${(rssBefore / 2 ** 20).toFixed(0)} MB → peak ${(rssPeak / 2 ** 20).toFixed(0)} MB (+${growthMb.toFixed(0)} MB)`,
      );
      // Every one of a's streams got the final error event and was closed, far short of the 20 MiB.
      const rests = await Promise.all(opened.map((raw) => raw.readRest()));
      for (const rest of rests) {
        assert.ok(rest.length < 12 * 1024 * 1024, `a stream delivered ${rest.length} bytes`);
        assert.match(rest, /event: error\ndata: .*fell too far behind/);
        assert.ok(rest.includes(READER_BEHIND_MESSAGE.slice(0, 40)));
        assert.doesNotMatch(rest, /TASK_STATE_COMPLETED/);
      }
      // Their slots are free again.
      const next = await rpcStream(
        `${gw.url}/a2a/echo`,
        'SendStreamingMessage',
        { message: v10Message('hi') },
        {
          token: TOKEN_A,
          version: '1.0',
        },
      );
      assert.equal(next.status, 200);

      assert.ok(load <= 2 * base + 15, `b's echo median ${load.toFixed(1)} ms vs baseline ${base.toFixed(1)} ms`);
      // The flood task itself is 20 MiB (stored and encoded); 16 readers may add ~1 MiB each.
      assert.ok(growthMb < 150, `RSS grew ${growthMb.toFixed(0)} MB`);
    });
  });
});
