/**
 * Issue 16, browsers: what a hostile web page in the user's browser, or a DNS-rebinding page,
 * could do to a gateway on loopback, end to end over HTTP against a real gateway (and a real
 * Chromium for the page):
 *
 * - credential-less `no-cors` POSTs from a page on another loopback origin locked every client
 *   out of the shared 127.0.0.1 address (they no longer count toward the lockout, and by
 *   default the page's Origin is refused before authentication);
 * - a POST without Content-Type was parsed as JSON (a page can send one without a preflight);
 * - an Origin not in `server.allowedOrigins` is refused on every A2A route;
 * - a rebinding `Host` could read an `anonymousLoopback` agent's tasks;
 * - `100 Continue` was sent before authentication.
 *
 * Needs /usr/bin/chromium for the page tests. Skipped (with the reason) only outside CI when it
 * is missing.
 */
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { chromiumSkip, launchChromium } from './helpers/chromium.js';
import { MemoryAuditSink } from '../src/audit/index.js';
import { rpc, startGateway, TOKEN_A, v03Message, withServer, type TestGateway } from './helpers/gateway.js';

const WRONG_TOKEN = 'not-a-client-token-0123456789abcdefghij';
const skipBrowser = chromiumSkip;

/** Adds an agent that admits anonymous loopback callers (and the REST ask route). */
const ANONYMOUS_AGENT = `  - slug: open
    name: Open
    description: Anonymous on loopback.
    skills: [{ id: open, name: Open, description: Echoes, tags: [demo] }]
    backend: { type: echo }
    anonymousLoopback: true
clients:`;

function yamlWith(server: string): string {
  return withServer(server).replace(/^clients:$/m, ANONYMOUS_AGENT);
}

/** One raw HTTP request (node:http, so that Host and Content-Type are exactly what we say). */
function raw(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? 'POST', headers: options.headers ?? {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers }),
      );
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

function rpcBody(method: string, params: unknown, id = 1): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method, params });
}

/** A page server on another loopback port: the hostile origin. */
async function pageServer(): Promise<{ server: Server; origin: string }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>a page on another origin</title><p>hello');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe('a hostile web page on another loopback origin', { skip: skipBrowser }, () => {
  let browser: Browser;
  let page: { server: Server; origin: string };

  before(async () => {
    page = await pageServer();
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await new Promise((resolve) => page?.server.close(resolve));
  });

  /** The page sends `count` credential-less no-cors POSTs (no Content-Type) to `target`. */
  async function hostilePage(target: string, count: number): Promise<void> {
    const context = await browser.newContext();
    try {
      const tab = await context.newPage();
      await tab.goto(page.origin);
      const sent = await tab.evaluate(
        async ({ target, count }) => {
          const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: 'x' } });
          const replies = await Promise.all(
            Array.from({ length: count }, () =>
              // A Blob without a type: no Content-Type header at all, and no preflight.
              fetch(target, { method: 'POST', mode: 'no-cors', body: new Blob([body]) }).then(
                (reply) => reply.type,
                (error: unknown) => String(error),
              ),
            ),
          );
          return replies;
        },
        { target, count },
      );
      assert.deepEqual(sent, Array(count).fill('opaque'), 'every POST reached the gateway');
    } finally {
      await context.close();
    }
  }

  it(
    'default settings: its credential-less POSTs are refused by Origin (403), and a client with a token is not locked out',
    { timeout: 60_000 },
    async () => {
      const sink = new MemoryAuditSink();
      const gw = await startGateway(yamlWith('{ host: 127.0.0.1, port: 0, defaultAgent: echo }'), { auditSink: sink });
      try {
        await hostilePage(`${gw.url}/a2a/echo`, 12);
        const forbidden = sink.ofType('a2a.server.forbidden');
        assert.equal(forbidden.length, 12);
        assert.ok(forbidden.every((row) => row.reason === 'origin_not_allowed' && row.remote === '127.0.0.1'));
        assert.equal(sink.ofType('a2a.server.auth_failed').length, 0, 'refused before authentication');
        const real = await rpc(`${gw.url}/a2a/echo`, 'message/send', { message: v03Message('hello') });
        assert.equal(real.status, 200);
        assert.equal(real.body.result.status.state, 'completed');
      } finally {
        await gw.close();
      }
    },
  );

  it(
    'its origin allowed: a dozen credential-less POSTs are 401 but do not lock a token client out; wrong tokens still do',
    { timeout: 60_000 },
    async () => {
      const sink = new MemoryAuditSink();
      const gw = await startGateway(
        yamlWith(`{ host: 127.0.0.1, port: 0, defaultAgent: echo, allowedOrigins: ['${page.origin}'] }`),
        { auditSink: sink },
      );
      const echo = `${gw.url}/a2a/echo`;
      try {
        await hostilePage(echo, 12);
        const failed = sink.ofType('a2a.server.auth_failed');
        assert.equal(failed.length, 12, 'the page reached authentication');
        assert.ok(failed.every((row) => row.reason === 'missing_credentials'));
        const real = await rpc(echo, 'message/send', { message: v03Message('still here') });
        assert.equal(real.status, 200, 'a client with a token is not locked out');
        assert.equal(sink.ofType('a2a.server.rate_limited').length, 0);

        // Token guessing is still stopped after 10 failures (limits.authFailuresPerMinute).
        for (let i = 0; i < 10; i++) {
          const wrong = await rpc(echo, 'tasks/get', { id: 'x' }, { token: `${WRONG_TOKEN}${i}` });
          assert.equal(wrong.status, 401);
        }
        assert.equal((await rpc(echo, 'tasks/get', { id: 'x' })).status, 429);
      } finally {
        await gw.close();
      }
    },
  );
});

describe(
  'a hostile web page against the approvals surface (which shares the address lockout)',
  { skip: skipBrowser },
  () => {
    const ALICE_TOKEN = 'alice-person-token-for-browsers-0123456789ab';
    const YAML = `${withServer('{ host: 127.0.0.1, port: 0, defaultAgent: echo }')}
approvals:
  console: true
  people:
    - { id: alice, token: "\${ALICE_TOKEN}" }
`;

    it(
      'credential-less POSTs and a cookie planted from another loopback port lock neither alice nor a token client out',
      { timeout: 60_000 },
      async () => {
        const page = await pageServer();
        const browser = await launchChromium();
        const sink = new MemoryAuditSink();
        const gw = await startGateway(YAML, { auditSink: sink, env: { ALICE_TOKEN } });
        try {
          const context = await browser.newContext();
          const tab = await context.newPage();
          await tab.goto(page.origin);
          // A string, not a function: the test's compiler would add helpers the page does not have.
          const target = JSON.stringify(`${gw.url}/approvals/some-action/approve`);
          const sent = await tab.evaluate<string[]>(`(async () => {
          const send = (credentials) =>
            fetch(${target}, { method: 'POST', mode: 'no-cors', credentials, body: new Blob(['{}']) }).then(
              (reply) => reply.type,
              (error) => String(error),
            );
          const bare = await Promise.all(Array.from({ length: 10 }, () => send('omit')));
          // Cookies ignore ports: a page on 127.0.0.1:other can set one the gateway receives.
          document.cookie = 'airlock_console=planted-by-another-port; path=/';
          const planted = await Promise.all(Array.from({ length: 10 }, () => send('include')));
          return [...bare, ...planted];
        })()`);
          await context.close();
          assert.deepEqual(sent, Array(20).fill('opaque'));
          const reasons = sink
            .ofType('a2a.server.auth_failed')
            .map((row) => row.reason)
            .sort();
          // Every attempt is audited. The first answers to a planted cookie tell the browser to
          // drop it (Set-Cookie Max-Age=0), so how many of the ten still carried it depends on how
          // many were in flight by then: at least one did, and none was counted as a guess.
          assert.equal(reasons.length, 20);
          const invalid = reasons.filter((reason) => reason === 'invalid_credentials').length;
          assert.ok(invalid >= 1 && invalid <= 10, `planted-cookie rows: ${invalid}`);
          assert.deepEqual(
            reasons.filter((reason) => reason !== 'invalid_credentials'),
            Array(20 - invalid).fill('missing_credentials'),
          );

          const alice = await fetch(`${gw.url}/approvals`, { headers: { authorization: `Bearer ${ALICE_TOKEN}` } });
          assert.equal(alice.status, 200, 'alice is not locked out');
          const real = await rpc(`${gw.url}/a2a/echo`, 'message/send', { message: v03Message('hello') });
          assert.equal(real.status, 200, 'a client with a token is not locked out');
        } finally {
          await gw.close();
          await browser.close();
          await new Promise((resolve) => page.server.close(resolve));
        }
      },
    );
  },
);

describe('browser-reachable requests to the A2A routes', () => {
  let gw: TestGateway;
  let sink: MemoryAuditSink;
  const ALLOWED = 'http://localhost:5173';

  before(async () => {
    sink = new MemoryAuditSink();
    gw = await startGateway(
      yamlWith(`{ host: 127.0.0.1, port: 0, defaultAgent: echo, rest: true, allowedOrigins: ['${ALLOWED}'] }`),
      { auditSink: sink },
    );
  });
  after(() => gw?.close());

  it('a POST without Content-Type is refused, unread: -32005 on JSON-RPC, 415 on ask; nothing runs', async () => {
    const submitted = sink.ofType('a2a.task.submitted').length;
    const message = { message: v03Message('parsed as JSON?') };
    const open = await raw(`${gw.url}/a2a/open`, { body: rpcBody('message/send', message) });
    assert.equal(open.status, 200);
    assert.equal(JSON.parse(open.body).error.code, -32005);
    const echo = await raw(`${gw.url}/a2a/echo`, {
      headers: { authorization: `Bearer ${TOKEN_A}` },
      body: rpcBody('message/send', message),
    });
    assert.equal(JSON.parse(echo.body).error.code, -32005);
    const ask = await raw(`${gw.url}/a2a/open/ask`, { body: JSON.stringify({ message: 'hi' }) });
    assert.equal(ask.status, 415);
    assert.match(ask.body, /Content-Type must be application\/json/);
    assert.equal(sink.ofType('a2a.task.submitted').length, submitted, 'nothing ran');
    // With the type (parameters allowed, and the A2A media type), the same call runs.
    for (const type of ['application/json; charset=utf-8', 'application/a2a+json']) {
      const typed = await raw(`${gw.url}/a2a/open`, {
        headers: { 'content-type': type },
        body: rpcBody('message/send', message),
      });
      assert.equal(JSON.parse(typed.body).result.status.state, 'completed', type);
    }
  });

  it('an Origin not in server.allowedOrigins is refused (403, audited) on every A2A route, even with a token', async () => {
    const before = sink.ofType('a2a.server.forbidden').length;
    const evil = { origin: 'http://127.0.0.1:9999', authorization: `Bearer ${TOKEN_A}` };
    const json = { ...evil, 'content-type': 'application/json' };
    const refused = [
      await raw(`${gw.url}/a2a/echo`, { headers: json, body: rpcBody('tasks/get', { id: 'x' }) }),
      await raw(`${gw.url}/a2a/open`, { headers: { ...json, authorization: '' }, body: rpcBody('tasks/list', {}) }),
      await raw(`${gw.url}/a2a/echo/ask`, { headers: json, body: JSON.stringify({ message: 'hi' }) }),
      await raw(`${gw.url}/a2a/echo/.well-known/agent-card.json`, { method: 'GET', headers: evil }),
      await raw(`${gw.url}/.well-known/agent-card.json`, { method: 'GET', headers: { origin: 'null' } }),
    ];
    for (const reply of refused) {
      assert.equal(reply.status, 403);
      assert.match(JSON.parse(reply.body).error.message, /server\.allowedOrigins/);
    }
    const rows = sink.ofType('a2a.server.forbidden').slice(before);
    assert.deepEqual(
      rows.map((row) => row.reason),
      Array(5).fill('origin_not_allowed'),
    );
    // An allowed origin, and no Origin at all (every non-browser client), pass.
    const allowed = await raw(`${gw.url}/a2a/echo`, {
      headers: { ...json, origin: ALLOWED },
      body: rpcBody('message/send', { message: v03Message('from the allowed app') }),
    });
    assert.equal(JSON.parse(allowed.body).result.status.state, 'completed');
    const card = await raw(`${gw.url}/a2a/echo/.well-known/agent-card.json`, { method: 'GET' });
    assert.equal(card.status, 200);
    assert.equal((await raw(`${gw.url}/healthz`, { method: 'GET', headers: { origin: 'http://x' } })).status, 200);
  });

  it('a rebinding Host to an anonymousLoopback agent is refused (403): it cannot read the anonymous callers’ tasks', async () => {
    const port = new URL(gw.url).port;
    const json = { 'content-type': 'application/json' };
    const created = await raw(`${gw.url}/a2a/open`, {
      headers: { ...json, host: `localhost:${port}` },
      body: rpcBody('message/send', { message: v03Message('anonymous on loopback') }),
    });
    const task = JSON.parse(created.body).result;
    assert.equal(task.status.state, 'completed');

    const before = sink.ofType('a2a.server.forbidden').length;
    for (const body of [rpcBody('tasks/get', { id: task.id }), rpcBody('tasks/list', {})]) {
      const rebound = await raw(`${gw.url}/a2a/open`, { headers: { ...json, host: `evil.example:${port}` }, body });
      assert.equal(rebound.status, 403);
      assert.doesNotMatch(rebound.body, new RegExp(task.id));
      assert.match(JSON.parse(rebound.body).error.message, /loopback Host/);
    }
    assert.deepEqual(
      sink
        .ofType('a2a.server.forbidden')
        .slice(before)
        .map((row) => [row.reason, row.agent]),
      [
        ['host_not_loopback', 'open'],
        ['host_not_loopback', 'open'],
      ],
    );
    // A loopback Host (the port may be any) still reads it.
    for (const host of [`127.0.0.1:${port}`, '[::1]', 'localhost']) {
      const local = await raw(`${gw.url}/a2a/open`, {
        headers: { ...json, host },
        body: rpcBody('tasks/get', { id: task.id }),
      });
      assert.equal(JSON.parse(local.body).result.id, task.id, host);
    }
  });
});

/** Sends headers only, with Expect: 100-continue; collects what the server says first. */
function expectContinue(url: string, headers: Record<string, string>, body: string): Promise<string> {
  const { hostname, port, pathname } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let received = '';
    let sentBody = false;
    const lines = Object.entries({
      host: `${hostname}:${port}`,
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      expect: '100-continue',
      ...headers,
    }).map(([name, value]) => `${name}: ${value}`);
    socket.on('connect', () => socket.write(`POST ${pathname} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`));
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      // A client that is told to continue sends its body, then reads the final answer.
      if (!sentBody && received.startsWith('HTTP/1.1 100')) {
        sentBody = true;
        socket.write(body);
      }
      if (/\r\n\r\n[\s\S]*"(?:result|error)"/.test(received.replace(/^HTTP\/1\.1 100[^\r]*\r\n\r\n/, ''))) {
        socket.end();
      }
    });
    socket.on('end', () => resolve(received));
    socket.on('close', () => resolve(received));
    socket.on('error', reject);
    socket.setTimeout(5_000, () => {
      socket.destroy();
      resolve(received);
    });
  });
}

describe('Expect: 100-continue', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway();
  });
  after(() => gw?.close());

  it('a bad token gets its 401 without a 100 Continue; a good one gets the 100, then its answer', async () => {
    const body = rpcBody('message/send', { message: v03Message('after the 100') });
    const refused = await expectContinue(`${gw.url}/a2a/echo`, { authorization: `Bearer ${WRONG_TOKEN}` }, body);
    assert.match(refused, /^HTTP\/1\.1 401 /, refused.slice(0, 40));
    assert.doesNotMatch(refused, /100 Continue/);
    const none = await expectContinue(`${gw.url}/a2a/echo`, {}, body);
    assert.match(none, /^HTTP\/1\.1 401 /);
    // Refused after authentication (wrong Content-Type): still no 100, and the connection closes.
    const typed = await expectContinue(
      `${gw.url}/a2a/echo`,
      { authorization: `Bearer ${TOKEN_A}`, 'content-type': 'text/plain' },
      body,
    );
    assert.match(typed, /^HTTP\/1\.1 200 /);
    assert.match(typed, /-32005/);
    assert.match(typed, /\r\nConnection: close\r\n/i);
    const admitted = await expectContinue(`${gw.url}/a2a/echo`, { authorization: `Bearer ${TOKEN_A}` }, body);
    assert.match(admitted, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /);
    assert.match(admitted, /"state":"completed"/);
  });
});
