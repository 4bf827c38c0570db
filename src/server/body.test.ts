import assert from 'node:assert/strict';
import { once } from 'node:events';
import { type IncomingMessage, createServer } from 'node:http';
import { type AddressInfo, type Socket, connect } from 'node:net';
import { PassThrough } from 'node:stream';
import { afterEach, describe, it, mock } from 'node:test';
import { type BodyResult, readBody } from './body.js';

interface Outcome {
  result: BodyResult;
  /** ms from the readBody call to its result. */
  elapsed: number;
}

/** Things to undo after each test: servers, sockets, dribble timers. */
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/**
 * A loopback HTTP server whose one request is read with `read`, and a raw TCP socket to it.
 * The server answers the way the gateway's body step (admission/body.ts) does: 413 or 408
 * with `connection: close`, then closes.
 */
async function harness(read: (req: IncomingMessage) => Promise<BodyResult>): Promise<{
  socket: Socket;
  outcome: Promise<Outcome>;
}> {
  let deliver!: (outcome: Outcome) => void;
  const outcome = new Promise<Outcome>((resolve) => (deliver = resolve));
  const server = createServer((req, res) => {
    const started = performance.now();
    void read(req).then((result) => {
      deliver({ result, elapsed: performance.now() - started });
      const status = result.ok ? 200 : result.reason === 'too_large' ? 413 : 408;
      res.writeHead(status, { connection: 'close' });
      res.end(() => req.destroy());
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
  // The server may reset a connection it refused while we are still writing.
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  cleanups.push(() => {
    socket.destroy();
    server.closeAllConnections();
    server.close();
  });
  return { socket, outcome };
}

/** Writes one byte of `body` every `everyMs` until it is all sent or the socket closes. */
function dribble(socket: Socket, body: Buffer, everyMs: number): void {
  let sent = 0;
  const timer = setInterval(() => {
    if (sent >= body.length || socket.destroyed) {
      clearInterval(timer);
      return;
    }
    socket.write(body.subarray(sent, sent + 1));
    sent++;
  }, everyMs);
  cleanups.push(() => clearInterval(timer));
}

/** A request head for POST / with the given extra header lines. */
function head(...lines: string[]): string {
  return ['POST / HTTP/1.1', 'Host: localhost', 'Content-Type: application/json', ...lines, '', ''].join('\r\n');
}

describe('readBody over a real socket', () => {
  it('gives up on a body dribbled in slower than the deadline', { timeout: 5_000 }, async () => {
    const { socket, outcome } = await harness((req) => readBody(req, 1_048_576, 200));
    const body = Buffer.from('{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{}}');
    socket.write(head(`Content-Length: ${body.length}`));
    dribble(socket, body, 20); // ~1.2 s for the whole body
    const { result, elapsed } = await outcome;
    assert.deepEqual(result, { ok: false, reason: 'timeout' });
    assert.ok(elapsed >= 190 && elapsed < 1_000, `timed out after ${elapsed} ms`);
    // The server answers 408 and closes the connection on the dribbler.
    const response = await readAll(socket);
    assert.match(response, /^HTTP\/1\.1 408 /);
  });

  it('returns a dribbled body intact when it beats the deadline', { timeout: 5_000 }, async () => {
    const { socket, outcome } = await harness((req) => readBody(req, 1_048_576, 3_000));
    const body = Buffer.from('{"text":"héllo 😀"}');
    socket.write(head(`Content-Length: ${body.length}`));
    dribble(socket, body, 5);
    const { result } = await outcome;
    assert.ok(result.ok);
    assert.deepEqual(result.body, body);
  });

  it('returns a normal body intact, sent in pieces', async () => {
    const { socket, outcome } = await harness((req) => readBody(req, 1_048_576, 3_000));
    const body = Buffer.from(JSON.stringify({ parts: [{ kind: 'text', text: 'x'.repeat(50_000) }], note: 'ünï' }));
    socket.write(head(`Content-Length: ${body.length}`));
    socket.write(body.subarray(0, 1_000));
    setTimeout(() => socket.write(body.subarray(1_000)), 20);
    const { result } = await outcome;
    assert.ok(result.ok);
    assert.ok(result.body.equals(body));
  });

  it('returns a chunked body intact', async () => {
    const { socket, outcome } = await harness((req) => readBody(req, 1_048_576, 3_000));
    socket.write(head('Transfer-Encoding: chunked'));
    socket.write('5\r\n{"a":\r\n3\r\n42}\r\n0\r\n\r\n');
    const { result } = await outcome;
    assert.ok(result.ok);
    assert.equal(result.body.toString(), '{"a":42}');
  });

  it('refuses an oversized chunked body at the cap, before it has been sent whole', { timeout: 5_000 }, async () => {
    const { socket, outcome } = await harness((req) => readBody(req, 1_000, 3_000));
    socket.write(head('Transfer-Encoding: chunked'));
    // 1 200 bytes in two chunks, and the body never ends: no terminating chunk is ever sent.
    const piece = 'x'.repeat(600);
    socket.write(`258\r\n${piece}\r\n`);
    socket.write(`258\r\n${piece}\r\n`);
    const { result, elapsed } = await outcome;
    assert.deepEqual(result, { ok: false, reason: 'too_large' });
    assert.ok(elapsed < 1_000, `the deadline, not the cap, ended the read (${elapsed} ms)`);
    assert.match(await readAll(socket), /^HTTP\/1\.1 413 /);
  });

  it('refuses a Content-Length over the cap before reading any of the body', async () => {
    const { socket, outcome } = await harness((req) => readBody(req, 1_000, 3_000));
    socket.write(head('Content-Length: 1000000000'));
    const { result, elapsed } = await outcome;
    assert.deepEqual(result, { ok: false, reason: 'too_large' });
    assert.ok(elapsed < 100);
  });

  it('reports a client that hangs up mid-body as aborted, not after the deadline', { timeout: 5_000 }, async () => {
    const { socket, outcome } = await harness((req) => readBody(req, 1_000, 3_000));
    socket.write(head('Content-Length: 100'));
    socket.write('{"partial":');
    setTimeout(() => socket.destroy(), 50);
    const { result, elapsed } = await outcome;
    assert.deepEqual(result, { ok: false, reason: 'aborted' });
    assert.ok(elapsed < 1_000);
  });
});

describe('readBody timer', () => {
  /** A stand-in request: a stream with headers, driven by the test. */
  function fakeRequest(headers: Record<string, string> = {}): PassThrough & IncomingMessage {
    return Object.assign(new PassThrough(), { headers }) as unknown as PassThrough & IncomingMessage;
  }

  /** Runs `drive` against a fresh fake request and returns the result plus what became of the timer. */
  async function watchTimer(
    maxBytes: number,
    drive: (req: PassThrough) => void,
  ): Promise<{ result: BodyResult; timer: NodeJS.Timeout; cleared: boolean }> {
    const set = mock.method(globalThis, 'setTimeout');
    const clear = mock.method(globalThis, 'clearTimeout');
    try {
      const req = fakeRequest();
      const pending = readBody(req, maxBytes, 60_000);
      const timer = set.mock.calls[0]?.result as NodeJS.Timeout;
      drive(req);
      const result = await pending;
      const cleared = clear.mock.calls.some((call) => call.arguments[0] === timer);
      return { result, timer, cleared };
    } finally {
      set.mock.restore();
      clear.mock.restore();
    }
  }

  it('is unref’d and cleared when the body arrives', async () => {
    const { result, timer, cleared } = await watchTimer(100, (req) => req.end('{}'));
    assert.ok(result.ok);
    assert.equal(timer.hasRef(), false, 'a pending body must not keep the process alive');
    assert.ok(cleared);
  });

  it('is cleared when the body is too large', async () => {
    const { result, cleared } = await watchTimer(4, (req) => req.write('0123456789'));
    assert.equal(!result.ok && result.reason, 'too_large');
    assert.ok(cleared);
  });

  it('is cleared when the request errors', async () => {
    const { result, cleared } = await watchTimer(100, (req) => req.destroy(new Error('reset')));
    assert.equal(!result.ok && result.reason, 'aborted');
    assert.ok(cleared);
  });

  it('is not set at all without a timeout', async () => {
    const set = mock.method(globalThis, 'setTimeout');
    try {
      const req = fakeRequest();
      const pending = readBody(req, 100);
      req.end('{}');
      assert.ok((await pending).ok);
      assert.equal(set.mock.callCount(), 0);
    } finally {
      set.mock.restore();
    }
  });

  it('fires on its own and stops buffering what comes after', async () => {
    // The timer is unref'd, so with no socket about something else must keep the loop running.
    const keepAlive = setTimeout(() => undefined, 5_000);
    try {
      const req = fakeRequest();
      const pending = readBody(req, 100, 30);
      req.write('{"a":');
      const result = await pending;
      assert.deepEqual(result, { ok: false, reason: 'timeout' });
      assert.equal(req.isPaused(), true);
    } finally {
      clearTimeout(keepAlive);
    }
  });
});

/** Everything the peer sends until it closes the connection. */
async function readAll(socket: Socket): Promise<string> {
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  if (!socket.destroyed) await once(socket, 'close');
  return Buffer.concat(chunks).toString();
}
