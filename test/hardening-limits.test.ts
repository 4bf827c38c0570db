/**
 * Limits, end to end over HTTP: tasks in flight (global and per principal), one running task per
 * context, request body size and time, headers time, JSON nesting, and message size. Slow turns
 * are held open with a writer whose chunks are ten seconds apart, and canceled by the test.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { MemoryAuditSink } from '../src/audit/index.js';
import { processInstanceId } from '../src/client/outbound-transport.js';
import {
  DEFAULT_YAML,
  rpc,
  startGateway,
  TOKEN_A,
  TOKEN_B,
  TOKEN_C,
  v03Message,
  v10Message,
  withServer,
  type TestGateway,
} from './helpers/gateway.js';

/** A gateway whose `slow` agent holds each turn for ten seconds between chunks. */
function slowYaml(limits: string): string {
  return `
server: { host: 127.0.0.1, port: 0 }
limits: ${limits}
agents:
  - slug: slow
    name: Slow
    description: Writes slowly.
    skills: [{ id: write, name: Write, description: Writes text }]
    backend: { type: writer, chunkDelayMs: 10000 }
  - slug: echo
    name: Echo
    description: Echoes.
    skills: [{ id: echo, name: Echo, description: Echoes text }]
    backend: { type: echo }
clients:
  - { id: a, token: "\${TOKEN_A}", agents: [slow, echo] }
  - { id: b, token: "\${TOKEN_B}", agents: [slow, echo] }
  - { id: c, token: "\${TOKEN_C}", agents: [slow, echo] }
`;
}

/** Starts a turn on the slow agent and returns at once; the task stays running. */
async function hold(url: string, token: string, extra: Record<string, unknown> = {}): Promise<any> {
  const call = await rpc(
    `${url}/a2a/slow`,
    'SendMessage',
    { message: v10Message('a long story', extra), configuration: { returnImmediately: true } },
    { token, version: '1.0' },
  );
  assert.equal(call.status, 200, JSON.stringify(call.body));
  assert.ok(call.body.result?.task, JSON.stringify(call.body));
  return call.body.result.task;
}

async function cancel(url: string, token: string, id: string): Promise<void> {
  const call = await rpc(`${url}/a2a/slow`, 'CancelTask', { id }, { token, version: '1.0' });
  assert.equal(call.body.result?.status.state, 'TASK_STATE_CANCELED', JSON.stringify(call.body));
}

function assertUnavailable(call: { status: number; body: any; headers: Headers }): void {
  assert.equal(call.status, 503, JSON.stringify(call.body));
  assert.equal(call.body.error.status, 'UNAVAILABLE');
  const retryAfter = Number(call.headers.get('retry-after'));
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1, `Retry-After ${call.headers.get('retry-after')}`);
}

describe('tasks in flight', () => {
  it('maxConcurrentTasksPerPrincipal: a principal over its share gets 503 + Retry-After; others do not; a released slot admits again', async () => {
    const sink = new MemoryAuditSink();
    const gw = await startGateway(slowYaml('{ maxConcurrentTasksPerPrincipal: 2 }'), { auditSink: sink });
    try {
      // Turns that ended, or that wait for input, hold no slot.
      for (let i = 0; i < 3; i++) {
        const done = await rpc(`${gw.url}/a2a/echo`, 'message/send', { message: v03Message(`n${i}`) });
        assert.equal(done.body.result?.status.state, 'completed');
        const waiting = await rpc(`${gw.url}/a2a/slow`, 'message/send', { message: v03Message('ask me') });
        assert.equal(waiting.body.result?.status.state, 'input-required');
      }
      assert.equal(gw.gateway.service.running, 0);

      const first = await hold(gw.url, TOKEN_A);
      // A stream holds a slot as well as a send that returned.
      const controller = new AbortController();
      const stream = await fetch(`${gw.url}/a2a/slow`, {
        method: 'POST',
        signal: controller.signal,
        headers: {
          'content-type': 'application/json',
          accept: 'text/event-stream',
          authorization: `Bearer ${TOKEN_A}`,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'message/stream', params: { message: v03Message('s') } }),
      });
      assert.equal(stream.status, 200);
      const reader = stream.body!.getReader();
      let text = '';
      while (!text.includes('\n\n')) text += new TextDecoder().decode((await reader.read()).value);
      const streamed = JSON.parse(
        text
          .split('\n\n')[0]!
          .replace(/^data: /m, '')
          .split('\n')
          .at(-1)!,
      ).result;
      assert.equal(gw.gateway.service.running, 2);

      const refused = await rpc(
        `${gw.url}/a2a/slow`,
        'SendMessage',
        { message: v10Message('third'), configuration: { returnImmediately: true } },
        { version: '1.0' },
      );
      assertUnavailable(refused);
      // Any agent: the slots are the principal's, not the agent's.
      assertUnavailable(await rpc(`${gw.url}/a2a/echo`, 'message/send', { message: v03Message('quick') }));
      assert.equal(gw.gateway.service.running, 2);

      const other = await hold(gw.url, TOKEN_B);
      assert.equal(gw.gateway.service.running, 3);

      await cancel(gw.url, TOKEN_A, first.id);
      const again = await hold(gw.url, TOKEN_A);
      await cancel(gw.url, TOKEN_A, streamed.id);
      controller.abort();
      await reader.cancel().catch(() => undefined);
      assert.equal((await rpc(`${gw.url}/a2a/echo`, 'message/send', { message: v03Message('ok') })).status, 200);
      await cancel(gw.url, TOKEN_A, again.id);
      await cancel(gw.url, TOKEN_B, other.id);

      const limited = sink.ofType('a2a.server.rate_limited');
      assert.deepEqual(
        limited.map((row) => [row.reason, row.client]),
        [
          ['concurrency_limit', 'a'],
          ['concurrency_limit', 'a'],
        ],
      );
    } finally {
      await gw.close();
    }
  });

  it('maxConcurrentTasks: with the gateway full every caller gets 503 + Retry-After; a released slot admits again', async () => {
    const gw = await startGateway(slowYaml('{ maxConcurrentTasks: 2 }'));
    try {
      const a = await hold(gw.url, TOKEN_A);
      const b = await hold(gw.url, TOKEN_B);
      // c has nothing running, and is still refused: the gateway is full.
      const refused = await rpc(
        `${gw.url}/a2a/slow`,
        'message/send',
        { message: v03Message('c'), configuration: { blocking: false } },
        { token: TOKEN_C },
      );
      assertUnavailable(refused);
      assertUnavailable(
        await rpc(`${gw.url}/a2a/echo`, 'message/send', { message: v03Message('c') }, { token: TOKEN_C }),
      );
      // Nothing was created for the refused calls.
      const listed = await rpc(`${gw.url}/a2a/slow`, 'ListTasks', {}, { token: TOKEN_C, version: '1.0' });
      assert.equal(listed.body.result.totalSize, 0);

      await cancel(gw.url, TOKEN_B, b.id);
      const c = await hold(gw.url, TOKEN_C);
      assertUnavailable(
        await rpc(`${gw.url}/a2a/echo`, 'message/send', { message: v03Message('b') }, { token: TOKEN_B }),
      );
      await cancel(gw.url, TOKEN_A, a.id);
      await cancel(gw.url, TOKEN_C, c.id);
      assert.equal(gw.gateway.service.running, 0);
    } finally {
      await gw.close();
    }
  });
});

describe('one running task per context', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway(slowYaml('{}'));
  });
  after(() => gw.close());

  it('refuses a second send in the same contextId while the first runs (-32004, both dialects); another client may use that contextId', async () => {
    const contextId = `ctx-busy-${Date.now()}`;
    const first = await hold(gw.url, TOKEN_A, { contextId });
    assert.equal(first.contextId, contextId);

    const v10 = await rpc(
      `${gw.url}/a2a/slow`,
      'SendMessage',
      { message: v10Message('again', { contextId }), configuration: { returnImmediately: true } },
      { version: '1.0' },
    );
    assert.equal(v10.body.error.code, -32004);
    assert.match(v10.body.error.message, /still running in this contextId/);
    const v03 = await rpc(`${gw.url}/a2a/slow`, 'message/send', {
      message: v03Message('again', { contextId }),
      configuration: { blocking: false },
    });
    assert.equal(v03.body.error.code, -32004);
    assert.match(v03.body.error.message, /contextId/);
    const listed = await rpc(`${gw.url}/a2a/slow`, 'ListTasks', { contextId }, { version: '1.0' });
    assert.equal(listed.body.result.totalSize, 1, 'the refused sends made no task');

    // Client b's contextId of the same name is its own session.
    const other = await hold(gw.url, TOKEN_B, { contextId });
    assert.equal(other.contextId, contextId);

    // Once the first turn is over, the context takes a new task.
    await cancel(gw.url, TOKEN_A, first.id);
    const next = await hold(gw.url, TOKEN_A, { contextId });
    assert.notEqual(next.id, first.id);
    await cancel(gw.url, TOKEN_A, next.id);
    await cancel(gw.url, TOKEN_B, other.id);
  });
});

/** A raw connection to the gateway: what arrives, and when the server closes it. */
function rawConnection(url: string): { socket: Socket; received: () => string; closed: Promise<void> } {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  let text = '';
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => (text += chunk));
  // A reset after the server closed is how some refusals end; what arrived is what counts.
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return { socket, received: () => text, closed };
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('request body and headers', () => {
  let gw: TestGateway;
  let sink: MemoryAuditSink;
  before(async () => {
    sink = new MemoryAuditSink();
    gw = await startGateway(
      withServer(
        '{ host: 127.0.0.1, port: 0, defaultAgent: echo, maxBodyBytes: 1024, bodyTimeoutMs: 300, headersTimeoutMs: 200 }',
      ),
      { auditSink: sink },
    );
  });
  after(() => gw.close());

  const head = (extra: string): string =>
    `POST /a2a/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN_A}\r\n` +
    `Content-Type: application/json\r\n${extra}\r\n`;

  it('maxBodyBytes: refuses an oversized chunked body with 413 while it is still being sent, and closes the connection', async () => {
    const { socket, received, closed } = rawConnection(gw.url);
    socket.write(head('Transfer-Encoding: chunked\r\n'));
    // Up to 1 MiB in 512-byte chunks, one every few ms, stopping as soon as an answer arrives.
    const chunk = `200\r\n${'x'.repeat(512)}\r\n`;
    let sent = 0;
    while (received() === '' && sent < 1024 * 1024 && !socket.destroyed) {
      socket.write(chunk);
      sent += 512;
      await sleep(2);
    }
    assert.match(received(), /^HTTP\/1\.1 413 /);
    assert.ok(sent < 8 * 1024, `the answer came after ${sent} bytes, before the body was sent whole`);
    assert.match(received(), /connection: close/i);
    assert.match(received(), /"code":-32600/);
    // The terminating chunk was never sent, and the server has closed the connection.
    await within(closed, 1000, 'the server closing the connection');
    assert.equal(sink.ofType('a2a.task.submitted').length, 0);
  });

  it('bodyTimeoutMs: a client that sends its headers and dribbles the body gets 408 and is cut off', async () => {
    const { socket, received, closed } = rawConnection(gw.url);
    const started = Date.now();
    socket.write(head('Content-Length: 200\r\n'));
    const dribble = setInterval(() => {
      if (!socket.destroyed) socket.write(' ');
    }, 40);
    try {
      await within(closed, 1500, 'the server closing the connection');
    } finally {
      clearInterval(dribble);
    }
    const elapsed = Date.now() - started;
    assert.match(received(), /^HTTP\/1\.1 408 /);
    assert.match(received(), /did not arrive within 300 ms/);
    assert.ok(elapsed >= 250, `cut off after ${elapsed} ms, not before the limit`);
    assert.equal(sink.ofType('a2a.task.submitted').length, 0);
  });

  /**
   * Streams a chunked body after `head` in 4 KiB chunks until the server closes the connection
   * or `limit` bytes went out; returns the status line and whether the server closed.
   */
  async function floodAfter(
    url: string,
    head: string,
    limit = 128 * 1024,
  ): Promise<{ status: string; closed: boolean; sent: number }> {
    const { socket, received, closed } = rawConnection(url);
    let isClosed = false;
    void closed.then(() => (isClosed = true));
    socket.write(`${head}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`);
    const chunk = `1000\r\n${'x'.repeat(4096)}\r\n`;
    let sent = 0;
    while (!isClosed && sent < limit) {
      socket.write(chunk);
      sent += 4096;
      await sleep(2);
    }
    // A close already on its way gets a moment to arrive.
    if (!isClosed) await Promise.race([closed, sleep(50)]);
    socket.destroy();
    return { status: received().split('\r\n')[0] ?? '', closed: isClosed, sent };
  }

  it('an unauthenticated caller’s oversized body is never read: 401 and the connection is closed', async () => {
    const result = await floodAfter(gw.url, 'POST /a2a/echo HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    assert.match(result.status, /^HTTP\/1\.1 401 /);
    assert.ok(result.closed, `the server kept reading after ${result.sent} bytes`);
  });

  it('a request refused before its body is read (404, 405, hop loop 508, rate-limit 429) is not drained past maxBodyBytes', async () => {
    const limited = await startGateway(
      `${withServer('{ host: 127.0.0.1, port: 0, maxBodyBytes: 1024, bodyTimeoutMs: 300 }')}\nlimits: { requestsPerMinute: 1 }\n`,
    );
    try {
      const used = await rpc(`${limited.url}/a2a/echo`, 'tasks/get', { id: 'x' }, { token: TOKEN_C });
      assert.equal(used.status, 200);
      const cases: [string, string, RegExp][] = [
        ['unknown route', 'POST /no-such-route HTTP/1.1\r\nHost: 127.0.0.1\r\n', / 404 /],
        ['wrong method', 'PUT /a2a/echo HTTP/1.1\r\nHost: 127.0.0.1\r\n', / 405 /],
        [
          'hop loop',
          `POST /a2a/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Airlock-Hop: ${processInstanceId()}\r\n`,
          / 508 /,
        ],
        ['malformed hop', 'POST /a2a/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Airlock-Hop: 1\r\n', / 400 /],
        ['rate limited', `POST /a2a/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN_C}\r\n`, / 429 /],
      ];
      const outcomes: string[] = [];
      for (const [what, head, status] of cases) {
        const result = await floodAfter(limited.url, head);
        assert.match(result.status, status, what);
        if (!result.closed) outcomes.push(`${what}: still reading after ${result.sent} bytes`);
      }
      assert.deepEqual(outcomes, []);
    } finally {
      await limited.close();
    }
  });

  it('headersTimeoutMs: a client that never finishes its headers gets 408 and is cut off, not before the limit', async () => {
    const { socket, received, closed } = rawConnection(gw.url);
    const started = Date.now();
    socket.write('POST /a2a/echo HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    await within(closed, 800, 'the server cutting off a client 600 ms past headersTimeoutMs (200 ms)');
    const elapsed = Date.now() - started;
    // The headers timer's answer, not some other close (a reset, a crash, the body timer).
    assert.match(received(), /^HTTP\/1\.1 408 /);
    assert.ok(elapsed >= 150, `cut off after ${elapsed} ms, before headersTimeoutMs (200 ms)`);
    assert.equal(sink.ofType('a2a.task.submitted').length, 0);
  });
});

describe('JSON nesting depth', () => {
  it('maxJsonDepth: refuses a deeply nested params object with -32600 before parsing it, and creates no task', async () => {
    const sink = new MemoryAuditSink();
    const gw = await startGateway(DEFAULT_YAML, { auditSink: sink });
    try {
      const nest = (depth: number): unknown => (depth === 0 ? 'leaf' : { n: nest(depth - 1) });
      // Within the default limit (32): accepted. (In the request's metadata, which is not stored:
      // message metadata has its own, smaller depth cap, limits.maxMetadataDepth.)
      const shallow = await rpc(`${gw.url}/a2a/echo`, 'message/send', {
        message: v03Message('shallow'),
        metadata: nest(20),
      });
      assert.equal(shallow.body.result?.status.state, 'completed', JSON.stringify(shallow.body));
      const deep = await rpc(`${gw.url}/a2a/echo`, 'message/send', {
        message: v03Message('deep', { metadata: nest(40) }),
      });
      assert.equal(deep.status, 400);
      assert.equal(deep.body.error.code, -32600);
      assert.match(deep.body.error.message, /nested deeper than 32/);
      // Arrays count too, in either dialect.
      const arrays = await rpc(
        `${gw.url}/a2a/echo`,
        'SendMessage',
        { message: v10Message('deep', { metadata: { a: JSON.parse('['.repeat(40) + ']'.repeat(40)) } }) },
        { version: '1.0' },
      );
      assert.equal(arrays.body.error.code, -32600);
      assert.equal(sink.ofType('a2a.task.submitted').length, 1);
      const listed = await rpc(`${gw.url}/a2a/echo`, 'ListTasks', {}, { version: '1.0' });
      assert.equal(listed.body.result.totalSize, 1);
    } finally {
      await gw.close();
    }
  });
});

describe('message limits', () => {
  let gw: TestGateway;
  let sink: MemoryAuditSink;
  before(async () => {
    sink = new MemoryAuditSink();
    gw = await startGateway(DEFAULT_YAML, { auditSink: sink });
  });
  after(() => gw.close());

  const texts = (count: number, each = 'p'): { text: string }[] =>
    Array.from({ length: count }, () => ({ text: each }));

  it('maxParts (16): refuses 17 parts with -32602 in both dialects, audited as too_many_parts, no task', async () => {
    const before = sink.ofType('a2a.task.submitted').length;
    const ok = await rpc(
      `${gw.url}/a2a/echo`,
      'SendMessage',
      { message: v10Message('', { parts: texts(16) }) },
      { version: '1.0' },
    );
    assert.equal(ok.body.result?.task.status.state, 'TASK_STATE_COMPLETED', JSON.stringify(ok.body));
    const v10 = await rpc(
      `${gw.url}/a2a/echo`,
      'SendMessage',
      { message: v10Message('', { parts: texts(17) }) },
      { version: '1.0' },
    );
    assert.equal(v10.body.error.code, -32602);
    assert.match(v10.body.error.message, /17 parts; at most 16/);
    const v03 = await rpc(`${gw.url}/a2a/echo`, 'message/send', {
      message: v03Message('', { parts: texts(17).map((part) => ({ kind: 'text', ...part })) }),
    });
    assert.equal(v03.body.error.code, -32602);
    assert.equal(sink.ofType('a2a.task.submitted').length, before + 1);
    const rejected = sink.ofType('a2a.task.rejected').slice(-2);
    assert.deepEqual(
      rejected.map((row) => [row.reason, row.client, row.agent]),
      [
        ['too_many_parts', 'a', 'echo'],
        ['too_many_parts', 'a', 'echo'],
      ],
    );
  });

  it('maxInputChars (8192): refuses 8193 characters of text, over all parts together, with -32602, audited as input_too_long, no task', async () => {
    const before = sink.ofType('a2a.task.submitted').length;
    const ok = await rpc(`${gw.url}/a2a/echo`, 'message/send', { message: v03Message('x'.repeat(8192)) });
    assert.equal(ok.body.result?.status.state, 'completed', JSON.stringify(ok.body).slice(0, 200));
    const long = await rpc(`${gw.url}/a2a/echo`, 'message/send', { message: v03Message('x'.repeat(8193)) });
    assert.equal(long.body.error.code, -32602);
    assert.match(long.body.error.message, /8193 characters; at most 8192/);
    const split = await rpc(
      `${gw.url}/a2a/echo`,
      'SendMessage',
      { message: v10Message('', { parts: [{ text: 'y'.repeat(4097) }, { text: 'y'.repeat(4097) }] }) },
      { version: '1.0' },
    );
    assert.equal(split.body.error.code, -32602);
    assert.equal(sink.ofType('a2a.task.submitted').length, before + 1);
    const rejected = sink.ofType('a2a.task.rejected').slice(-2);
    assert.deepEqual(
      rejected.map((row) => row.reason),
      ['input_too_long', 'input_too_long'],
    );
    assert.ok(!sink.text().includes('yyyyyyyy'), 'no content in the audit trail');
  });
});
