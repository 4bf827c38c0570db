/**
 * Slow clients are cut off by the read timeouts without starving anyone else: 50 slowloris
 * sockets (a request line and headers that arrive one byte every 500 ms and never end) and 20
 * slow-body sockets (whole headers announcing 10 000 bytes, then one byte every 500 ms) hold
 * connections open against a gateway with `headersTimeoutMs: 1000` and `bodyTimeoutMs: 1000`,
 * while a well-behaved client sends `message/send` after `message/send` on fresh connections.
 *
 * Every slow socket must be closed by the server after its limit (not before) and within a
 * bound past it; the slow bodies get 408 first. Every request of the good client must succeed,
 * with its p99 latency under a bound. Everything is on loopback and bounded in count and time.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startGateway, TOKEN_A, TOKEN_B, withServer, type TestGateway } from '../helpers/gateway.js';
import { MESSAGE_SEND, percentile } from './soak-lib.js';

const HEADERS_TIMEOUT_MS = 1000;
const BODY_TIMEOUT_MS = 1000;
const SLOWLORIS = 50;
const SLOW_BODIES = 20;
const DRIP_MS = 500;
/**
 * How long past its limit a slow socket may stay open. Node checks headersTimeout only every
 * `connectionsCheckingInterval` (the gateway sets it to headersTimeoutMs / 2 = 500 ms), so a
 * slowloris socket is cut 1000-1500 ms after it connects; a slow body is cut by readBody's own
 * timer 1000 ms after its headers were read. 1000 ms of margin covers the check interval and a
 * busy 2-core machine; beyond ~2.5 s in all a socket would be "still open".
 */
const CUT_OFF_MARGIN_MS = 1000;
/**
 * The good client's p99 bound. Alone, a message/send on a fresh loopback connection takes
 * ≈ 1-3 ms here; 70 open slow sockets cost the event loop a few timers and one-byte reads per
 * second, so anything near this bound would mean the slow clients are starving the others.
 */
const GOOD_P99_MS = 250;
/** The whole scenario ends by then, whatever happens. */
const SCENARIO_MS = 6000;

interface SlowSocket {
  kind: 'slowloris' | 'slow-body';
  /** ms after connecting at which the server closed it (undefined: still open). */
  closedAfter: number | undefined;
  received: () => string;
  destroy(): void;
}

function openSlowSocket(port: number, kind: SlowSocket['kind'], index: number): Promise<SlowSocket> {
  // Slowloris: half dribble the request line itself, half send it whole and dribble a header.
  const dribbled =
    kind === 'slow-body'
      ? ' '.repeat(10_000)
      : index % 2 === 0
        ? `POST /a2a/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ${'a'.repeat(100)}`
        : `X-Slow-${index}: ${'b'.repeat(100)}`;
  const head =
    kind === 'slow-body'
      ? `POST /a2a/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN_B}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 10000\r\n\r\n'
      : index % 2 === 0
        ? ''
        : 'POST /a2a/echo HTTP/1.1\r\nHost: 127.0.0.1\r\n';
  return new Promise((resolve, reject) => {
    const socket: Socket = connect({ host: '127.0.0.1', port });
    let data = '';
    let connectedAt = 0;
    let timer: NodeJS.Timeout | undefined;
    const slow: SlowSocket = {
      kind,
      closedAfter: undefined,
      received: () => data,
      destroy() {
        clearInterval(timer);
        socket.destroy();
      },
    };
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (data += chunk));
    // Writes after the server has closed may fail (EPIPE, ECONNRESET): that is the point.
    socket.on('error', () => undefined);
    socket.once('close', () => {
      clearInterval(timer);
      slow.closedAfter = performance.now() - connectedAt;
    });
    socket.once('connect', () => {
      connectedAt = performance.now();
      if (head.length > 0) socket.write(head);
      let next = 0;
      const drip = (): void => {
        if (!socket.destroyed && next < dribbled.length) socket.write(dribbled[next++]!);
      };
      drip();
      timer = setInterval(drip, DRIP_MS);
      resolve(slow);
    });
    socket.once('error', reject);
  });
}

/** One message/send on a fresh connection; resolves with its latency in ms, rejects unless 200 + completed. */
function goodRequest(port: number): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/a2a/echo',
        method: 'POST',
        agent: false,
        headers: {
          authorization: `Bearer ${TOKEN_A}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(MESSAGE_SEND),
        },
        timeout: 5000,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => {
          const elapsed = performance.now() - started;
          const state = res.statusCode === 200 ? JSON.parse(body).result?.status?.state : undefined;
          if (state === 'completed') resolve(elapsed);
          else reject(new Error(`good client: HTTP ${res.statusCode} ${body.slice(0, 300)}`));
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('good client: no answer within 5 s')));
    req.on('error', reject);
    req.end(MESSAGE_SEND);
  });
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('slow clients are cut off by the read timeouts without starving others', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway(
      `${withServer(`{ host: 127.0.0.1, port: 0, headersTimeoutMs: ${HEADERS_TIMEOUT_MS}, bodyTimeoutMs: ${BODY_TIMEOUT_MS} }`)}\n` +
        'limits: { requestsPerMinute: 100000 }\n',
    );
  });
  after(() => gw.close());

  it(
    `${SLOWLORIS} slowloris and ${SLOW_BODIES} slow-body sockets are closed after their limits; a good client is served throughout`,
    { timeout: 20_000 },
    async (t) => {
      const port = Number(new URL(gw.url).port);
      // A few good requests first, so the loop below measures a warm server.
      for (let i = 0; i < 20; i++) await goodRequest(port);

      const slow = await Promise.all([
        ...Array.from({ length: SLOWLORIS }, (_, i) => openSlowSocket(port, 'slowloris', i)),
        ...Array.from({ length: SLOW_BODIES }, (_, i) => openSlowSocket(port, 'slow-body', i)),
      ]);
      const latencies: number[] = [];
      const failures: string[] = [];
      const started = performance.now();
      try {
        // The good client: one request after another (each on a new connection) until every slow
        // socket is gone and 500 ms more have passed, or the scenario's time is up.
        let allClosedAt: number | undefined;
        while (performance.now() - started < SCENARIO_MS) {
          try {
            latencies.push(await goodRequest(port));
          } catch (error) {
            failures.push(error instanceof Error ? error.message : String(error));
          }
          if (allClosedAt === undefined && slow.every((socket) => socket.closedAfter !== undefined)) {
            allClosedAt = performance.now();
          }
          if (allClosedAt !== undefined && performance.now() - allClosedAt > 500) break;
          await sleep(5);
        }
      } finally {
        for (const socket of slow) socket.destroy();
      }

      const cutOffs = (kind: SlowSocket['kind']): number[] =>
        slow
          .filter((socket) => socket.kind === kind)
          .map((socket) => socket.closedAfter ?? Number.POSITIVE_INFINITY)
          .sort((a, b) => a - b);
      const loris = cutOffs('slowloris');
      const bodies = cutOffs('slow-body');
      latencies.sort((a, b) => a - b);
      const p50 = percentile(latencies, 50);
      const p99 = percentile(latencies, 99);
      t.diagnostic(
        `slowloris cut off after ${loris[0]!.toFixed(0)}-${loris.at(-1)!.toFixed(0)} ms (headersTimeout ${HEADERS_TIMEOUT_MS} ms); ` +
          `slow bodies after ${bodies[0]!.toFixed(0)}-${bodies.at(-1)!.toFixed(0)} ms (bodyTimeout ${BODY_TIMEOUT_MS} ms)`,
      );
      t.diagnostic(
        `good client: ${latencies.length} requests, ${failures.length} failed, p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms, ` +
          `max ${latencies.at(-1)!.toFixed(2)} ms`,
      );

      assert.deepEqual(failures, []);
      assert.ok(latencies.length >= 100, `only ${latencies.length} good requests completed`);
      assert.ok(p99 < GOOD_P99_MS, `good client p99 ${p99.toFixed(1)} ms ≥ ${GOOD_P99_MS} ms`);

      // Not before the limit (the timeouts are what cut them), and not long after it.
      assert.ok(loris[0]! >= HEADERS_TIMEOUT_MS - 50, `a slowloris socket was closed after ${loris[0]} ms`);
      assert.ok(
        loris.at(-1)! <= HEADERS_TIMEOUT_MS + CUT_OFF_MARGIN_MS,
        `a slowloris socket stayed open ${loris.at(-1)} ms`,
      );
      assert.ok(bodies[0]! >= BODY_TIMEOUT_MS - 50, `a slow-body socket was closed after ${bodies[0]} ms`);
      assert.ok(
        bodies.at(-1)! <= BODY_TIMEOUT_MS + CUT_OFF_MARGIN_MS,
        `a slow-body socket stayed open ${bodies.at(-1)} ms`,
      );
      for (const socket of slow.filter((entry) => entry.kind === 'slow-body')) {
        assert.match(socket.received(), /^HTTP\/1\.1 408 /);
        assert.match(socket.received(), /did not arrive within 1000 ms/);
      }
      // Node answers a request whose headers never ended with 408 (or closes without a word).
      const lorisAnswers = slow.filter((entry) => entry.kind === 'slowloris').map((entry) => entry.received());
      assert.deepEqual(
        lorisAnswers.filter((text) => text !== '' && !text.startsWith('HTTP/1.1 408 ')),
        [],
      );
      t.diagnostic(
        `slowloris answers: ${lorisAnswers.filter((text) => text.startsWith('HTTP/1.1 408 ')).length} × 408, ` +
          `${lorisAnswers.filter((text) => text === '').length} closed silently`,
      );
    },
  );
});
