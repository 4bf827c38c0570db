/**
 * The guarded client against real loopback servers (http on 127.0.0.1, https with a test CA).
 * Every refusal is checked two ways: the error code, and that the server never saw the request
 * (or saw only the first one), so each test fails if its control is removed.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import https from 'node:https';
import type net from 'node:net';
import { gzipSync } from 'node:zlib';
import { after, before, beforeEach, describe, test } from 'node:test';
import { createGuardedClient } from './client.js';
import type { GuardedClient, GuardedRequestOptions } from './client.js';
import type { Resolver } from './connector.js';
import { OutboundError } from './errors.js';
import { makeTestPki, opensslAvailable } from './test-pki.test.js';
import type { TestPki } from './test-pki.test.js';

interface Seen {
  connections: number;
  requests: { method: string; url: string; headers: http.IncomingHttpHeaders; body: string }[];
}

const timeouts = { connectMs: 1000, readMs: 1000, totalMs: 3000 };

function routes(seen: Seen): http.RequestListener {
  return (req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      seen.requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const path = (req.url ?? '').split('?')[0];
      switch (path) {
        case '/ok':
          res.setHeader('content-type', 'text/plain');
          return void res.end(`hello ${req.method} ${body}`);
        case '/redirect':
          res.writeHead(302, { location: '/ok' });
          return void res.end();
        case '/not-modified':
          res.writeHead(304);
          return void res.end();
        case '/missing':
          res.writeHead(404);
          return void res.end('no such thing');
        case '/big': // chunked, no content-length: only counting while reading can stop it
          res.write(Buffer.alloc(600, 97));
          res.write(Buffer.alloc(600, 97));
          return void res.end();
        case '/exact':
          res.write(Buffer.alloc(500, 97));
          return void res.end(Buffer.alloc(500, 97));
        case '/declared':
          // Declares 5000 bytes, sends 10 and stalls: only a check of the declared length,
          // made before reading, refuses this as too large (counting would wait for bytes).
          res.writeHead(200, { 'content-length': '5000' });
          return void res.write(Buffer.alloc(10, 97));
        case '/gzip':
          res.writeHead(200, { 'content-encoding': 'gzip' });
          return void res.end(gzipSync(Buffer.alloc(100_000, 97)));
        case '/identity':
          res.writeHead(200, { 'content-encoding': 'identity' });
          return void res.end('plain');
        case '/te-gzip': {
          // A compressed transfer coding under chunked: node frames the body as chunked (the
          // header names it), the bytes inside the chunks are gzip.
          res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'gzip, chunked' });
          const zipped = gzipSync(Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, result: 'x'.repeat(50_000) })));
          res.write(zipped.subarray(0, 10));
          return void res.end(zipped.subarray(10));
        }
        case '/drip': {
          // A byte every 40 ms forever: never idle long enough for the read timeout.
          res.writeHead(200, { 'content-type': 'text/plain' });
          const timer = setInterval(() => res.write('.'), 40);
          res.on('close', () => clearInterval(timer));
          return;
        }
        case '/stall-body':
          res.writeHead(200);
          res.write('x');
          return;
        case '/stall-headers':
          return;
        case '/sse': {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          const timer = setInterval(() => res.write(`data: ${'x'.repeat(90)}\n\n`), 2);
          res.on('close', () => clearInterval(timer));
          return;
        }
        default:
          res.writeHead(500);
          res.end();
      }
    });
  };
}

async function listen(server: http.Server | https.Server, seen: Seen): Promise<number> {
  server.on('connection', () => seen.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as net.AddressInfo).port;
}

async function stop(server: http.Server | https.Server | undefined): Promise<void> {
  if (server === undefined) return;
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** A resolver that answers from a fixed table and records every question. */
function tableResolver(table: Record<string, string[]>): Resolver & { asked: string[] } {
  const asked: string[] = [];
  const resolve = async (hostname: string) => {
    asked.push(hostname);
    const answers = table[hostname];
    if (answers === undefined) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    return answers.map((address) => ({ address, family: address.includes(':') ? (6 as const) : (4 as const) }));
  };
  return Object.assign(resolve, { asked });
}

async function refusal(promise: Promise<unknown>): Promise<OutboundError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof OutboundError, `expected an OutboundError, got ${String(error)}`);
    assert.doesNotMatch(error.message, /[\r\n]/);
    return error;
  }
  assert.fail('expected a refusal');
}

describe('guarded client over http on loopback', { timeout: 8000 }, () => {
  const seen: Seen = { connections: 0, requests: [] };
  const server = http.createServer(routes(seen));
  let port = 0;
  let base = '';
  let client: GuardedClient;
  const resolver = tableResolver({
    'evil.test': ['127.0.0.1'],
    'private.test': ['10.0.0.7'],
    'metadata.test': ['169.254.169.254'],
    'mapped.test': ['::ffff:10.0.0.7'],
    'nat64.test': ['64:ff9b::a9fe:a9fe'],
    'sixtofour.test': ['2002:7f00:1::1'],
    'mixed.test': ['93.184.216.34', '10.0.0.7'],
  });
  const get = (path: string, extra: Partial<GuardedRequestOptions> = {}): GuardedRequestOptions => ({
    method: 'GET',
    url: `${base}${path}`,
    maxResponseBytes: 1000,
    timeouts,
    ...extra,
  });

  before(async () => {
    port = await listen(server, seen);
    base = `http://127.0.0.1:${port}`;
    client = createGuardedClient({ resolve: resolver });
  });
  after(async () => {
    await client.close();
    await stop(server);
  });
  beforeEach(() => {
    seen.connections = 0;
    seen.requests.length = 0;
    resolver.asked.length = 0;
  });

  test('GET and POST reach a loopback server over plain http; accept-encoding is identity whatever the caller set', async () => {
    const got = await client.request(get('/ok', { headers: { 'Accept-Encoding': 'gzip, br', 'X-Trace': 'abc' } }));
    assert.equal(got.status, 200);
    assert.equal(got.body.toString(), 'hello GET ');
    assert.equal(got.headers['content-type'], 'text/plain');
    const posted = await client.request(
      get('/ok', { method: 'POST', body: '{"a":1}', headers: { 'content-type': 'application/json' } }),
    );
    assert.equal(posted.body.toString(), 'hello POST {"a":1}');
    assert.equal(seen.requests.length, 2);
    for (const request of seen.requests) assert.equal(request.headers['accept-encoding'], 'identity');
    assert.equal(seen.requests[0]?.headers['x-trace'], 'abc');
  });

  test('framing, host and proxy headers cannot be set by the caller', async () => {
    await client.request(
      get('/ok', {
        headers: { Host: 'evil.example', 'Proxy-Authorization': 'Basic x', Connection: 'upgrade', TE: 'gzip' },
      }),
    );
    const headers = seen.requests[0]?.headers ?? {};
    assert.equal(headers.host, `127.0.0.1:${port}`);
    assert.equal(headers['proxy-authorization'], undefined);
    assert.equal(headers.te, undefined);
  });

  test('defaultHeaders go on every request and stream, over what the caller set', async () => {
    const composed = createGuardedClient({ resolve: resolver, defaultHeaders: { 'X-Default': 'on' } });
    try {
      await composed.request(get('/ok', { headers: { 'x-default': 'caller', 'x-trace': 'abc' } }));
      const streamed = await composed.stream(get('/ok'));
      for await (const chunk of streamed.body) void chunk;
      assert.equal(seen.requests.length, 2);
      for (const request of seen.requests) assert.equal(request.headers['x-default'], 'on');
      assert.equal(seen.requests[0]?.headers['x-trace'], 'abc');
      await client.request(get('/ok'));
      assert.equal(seen.requests[2]?.headers['x-default'], undefined, 'only the client configured with them');
    } finally {
      await composed.close();
    }
  });

  test('localhost is reached through its pinned loopback addresses, without the resolver', async () => {
    const got = await client.request(get('/ok', { url: `http://localhost:${port}/ok` }));
    assert.equal(got.status, 200);
    assert.equal(resolver.asked.length, 0);
  });

  test('a 3xx is redirect_refused and never followed', async () => {
    for (const path of ['/redirect', '/not-modified']) {
      const error = await refusal(client.request(get(path)));
      assert.equal(error.code, 'redirect_refused');
    }
    assert.deepEqual(
      seen.requests.map((request) => request.url),
      ['/redirect', '/not-modified'],
    );
  });

  test('other non-2xx statuses are returned for the caller to judge', async () => {
    const got = await client.request(get('/missing'));
    assert.equal(got.status, 404);
    assert.equal(got.body.toString(), 'no such thing');
  });

  test('an oversized chunked reply is refused while reading; a reply of exactly the cap is not', async () => {
    const error = await refusal(client.request(get('/big')));
    assert.equal(error.code, 'response_too_large');
    assert.equal((await client.request(get('/exact'))).body.length, 1000);
  });

  test('a declared content-length over the cap is refused before reading', async () => {
    const error = await refusal(client.request(get('/declared', { timeouts: { ...timeouts, readMs: 2000 } })));
    assert.equal(error.code, 'response_too_large');
  });

  test('a gzip reply is refused before decoding; an explicit identity encoding is fine', async () => {
    const error = await refusal(client.request(get('/gzip', { maxResponseBytes: 1_000_000 })));
    assert.equal(error.code, 'invalid_response');
    assert.match(error.message, /encoded reply/);
    assert.doesNotMatch(error.message, /gzip/);
    assert.equal((await client.request(get('/identity'))).body.toString(), 'plain');
  });

  // Issue 16, item 11: a compressed transfer coding ('Transfer-Encoding: gzip, chunked') is refused
  // like a compressed content coding, before any byte of the body is decoded.
  test('a reply with Transfer-Encoding: gzip, chunked is refused as a compressed response', async () => {
    for (const call of [
      () => client.request(get('/te-gzip', { maxResponseBytes: 1_000_000 })),
      async () => {
        for await (const piece of (await client.stream(get('/te-gzip', { maxResponseBytes: 1_000_000 }))).body)
          void piece;
      },
    ]) {
      const error = await refusal(call());
      assert.equal(error.code, 'invalid_response');
      assert.match(error.message, /transfer-encoding other than chunked/);
      assert.equal(error.detail, 'the remote sent a compressed response, which Airlock never decodes');
      assert.doesNotMatch(error.message, /gzip/);
    }
  });

  test('a reply that drips past the total timeout is cut off at the total timeout', async () => {
    const started = Date.now();
    const error = await refusal(
      client.request(get('/drip', { timeouts: { connectMs: 1000, readMs: 1000, totalMs: 200 } })),
    );
    const elapsed = Date.now() - started;
    assert.equal(error.code, 'request_timeout');
    assert.match(error.message, /did not finish within 200 ms/);
    assert.ok(elapsed >= 190 && elapsed < 800, `took ${elapsed} ms`);
  });

  test('a server that stops sending hits the read timeout (headers and body)', async () => {
    // undici runs read timers on a ~0.5 s tick, so both stalls run side by side to keep this fast.
    const short = { connectMs: 1000, readMs: 200, totalMs: 3000 };
    const [body, headers] = await Promise.all([
      refusal(client.request(get('/stall-body', { timeouts: short }))),
      refusal(client.request(get('/stall-headers', { timeouts: short }))),
    ]);
    assert.equal(body.code, 'request_timeout');
    assert.match(body.message, /stopped sending for 200 ms/);
    assert.equal(headers.code, 'request_timeout');
    assert.match(headers.message, /sent no response within 200 ms/);
  });

  test('a lookup that hangs hits the connect timeout', async () => {
    const hanging = createGuardedClient({ resolve: () => new Promise(() => {}) });
    try {
      const started = Date.now();
      const error = await refusal(
        hanging.request(
          get('', { url: 'https://slow.example/', timeouts: { connectMs: 150, readMs: 1000, totalMs: 3000 } }),
        ),
      );
      assert.equal(error.code, 'request_timeout');
      assert.match(error.message, /connecting to slow\.example:443 took longer than 150 ms/);
      assert.ok(Date.now() - started < 1000);
    } finally {
      await hanging.close();
    }
  });

  test('stream(): the SSE total is capped while streaming, and the total timeout applies', async () => {
    const stream = await client.stream(get('/sse', { maxResponseBytes: 5000 }));
    assert.equal(stream.status, 200);
    let received = 0;
    const error = await refusal(
      (async () => {
        for await (const chunk of stream.body) received += chunk.length;
      })(),
    );
    assert.equal(error.code, 'response_too_large');
    assert.ok(received <= 5000);

    const dripping = await client.stream(
      get('/drip', { maxResponseBytes: 1_000_000, timeouts: { ...timeouts, totalMs: 150 } }),
    );
    const timedOut = await refusal(
      (async () => {
        for await (const _chunk of dripping.body) {
          // keep reading
        }
      })(),
    );
    assert.equal(timedOut.code, 'request_timeout');
  });

  test("the caller's signal cancels the request", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const error = await refusal(
      client.request(get('/drip', { maxResponseBytes: 1_000_000, signal: controller.signal })),
    );
    assert.equal(error.code, 'network_error');
    assert.match(error.message, /cancelled/);
    const deadline = await refusal(
      client.request(get('/drip', { maxResponseBytes: 1_000_000, signal: AbortSignal.timeout(50) })),
    );
    assert.equal(deadline.code, 'request_timeout');
  });

  test('URLs with credentials and plain http to non-loopback hosts are refused before any lookup or connection', async () => {
    assert.equal(
      (await refusal(client.request(get('', { url: `http://u:p@127.0.0.1:${port}/ok` })))).code,
      'url_has_credentials',
    );
    assert.equal((await refusal(client.request(get('', { url: `http://evil.test:${port}/ok` })))).code, 'insecure_url');
    assert.equal(resolver.asked.length, 0);
    assert.equal(seen.connections, 0);
  });

  test('odd spellings of the loopback address (decimal, octal, hex, short, IPv4-mapped) never connect', async () => {
    for (const host of ['2130706433', '0x7f000001', '0177.0.0.1', '0x7f.1', '127.1', '[::ffff:127.0.0.1]']) {
      for (const scheme of ['http', 'https']) {
        const error = await refusal(client.request(get('', { url: `${scheme}://${host}:${port}/ok` })));
        assert.ok(['address_blocked', 'insecure_url'].includes(error.code), `${scheme}://${host}: ${error.code}`);
      }
    }
    assert.equal(seen.connections, 0);
  });

  test('a host name that resolves to loopback is refused, and the loopback server never sees a connection', async () => {
    const error = await refusal(client.request(get('', { url: `https://evil.test:${port}/ok` })));
    assert.equal(error.code, 'address_blocked');
    assert.match(error.message, /evil\.test refused: 127\.0\.0\.1 is a loopback address/);
    const listed = createGuardedClient({ resolve: resolver, privateAllow: ['evil.test', '127.0.0.0/8'] });
    try {
      const again = await refusal(
        listed.request(get('', { url: `https://evil.test:${port}/ok`, privateNetwork: true })),
      );
      assert.equal(again.code, 'address_blocked');
    } finally {
      await listed.close();
    }
    assert.equal(seen.connections, 0);
  });

  test('private, metadata, IPv4-mapped, NAT64, 6to4 and mixed answers are refused', async () => {
    for (const host of ['private.test', 'metadata.test', 'mapped.test', 'nat64.test', 'sixtofour.test', 'mixed.test']) {
      const error = await refusal(client.request(get('', { url: `https://${host}:${port}/ok` })));
      assert.equal(error.code, 'address_blocked', host);
    }
    for (const literal of [
      '10.0.0.7',
      '[::ffff:10.0.0.7]',
      '[64:ff9b::a00:7]',
      '169.254.169.254',
      '2852039166',
      '0xa9fea9fe',
    ]) {
      const error = await refusal(client.request(get('', { url: `https://${literal}:${port}/ok` })));
      assert.equal(error.code, 'address_blocked', literal);
    }
  });

  test('private_network with an allowlist still never reaches metadata or link-local', async () => {
    const permissive = createGuardedClient({ resolve: resolver, privateAllow: ['0.0.0.0/0', '::/0', 'metadata.test'] });
    try {
      for (const url of [
        'https://metadata.test/',
        'https://nat64.test/',
        'https://169.254.169.254/',
        'https://[fe80::1]/',
      ]) {
        const error = await refusal(permissive.request(get('', { url, privateNetwork: true })));
        assert.equal(error.code, 'address_blocked', url);
      }
    } finally {
      await permissive.close();
    }
  });

  test('HTTP_PROXY, HTTPS_PROXY, ALL_PROXY and NO_PROXY are ignored', async () => {
    const proxySeen: Seen = { connections: 0, requests: [] };
    const fakeProxy = http.createServer(routes(proxySeen));
    const proxyPort = await listen(fakeProxy, proxySeen);
    const names = [
      'HTTP_PROXY',
      'HTTPS_PROXY',
      'ALL_PROXY',
      'http_proxy',
      'https_proxy',
      'all_proxy',
      'NO_PROXY',
      'no_proxy',
    ];
    const saved = names.map((name) => [name, process.env[name]] as const);
    for (const name of names)
      process.env[name] = name.toLowerCase().startsWith('no') ? '' : `http://127.0.0.1:${proxyPort}`;
    const fresh = createGuardedClient();
    try {
      const got = await fresh.request(get('/ok'));
      assert.equal(got.status, 200);
      assert.equal(proxySeen.connections, 0);
      assert.equal(seen.requests.length, 1);
    } finally {
      for (const [name, value] of saved) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      await fresh.close();
      await stop(fakeProxy);
    }
  });

  test('with an egress proxy set, loopback goes direct and an IPv6 literal meant for the proxy is refused', async () => {
    const proxySeen: Seen = { connections: 0, requests: [] };
    const fakeProxy = http.createServer(routes(proxySeen));
    const proxyPort = await listen(fakeProxy, proxySeen);
    const proxied = createGuardedClient({ egressProxy: `http://127.0.0.1:${proxyPort}`, resolve: resolver });
    try {
      assert.equal((await proxied.request(get('/ok'))).status, 200);
      const v6 = await refusal(proxied.request(get('', { url: 'https://[2606:4700::1111]/' })));
      assert.equal(v6.code, 'address_blocked');
      assert.match(v6.message, /IPv6 literal/);
      const privateLiteral = await refusal(proxied.request(get('', { url: 'https://10.0.0.7/' })));
      assert.equal(privateLiteral.code, 'address_blocked');
      assert.equal(proxySeen.connections, 0);
    } finally {
      await proxied.close();
      await stop(fakeProxy);
    }
  });

  test('bad settings and options fail fast; a closed client refuses work', async () => {
    assert.throws(() => createGuardedClient({ privateAllow: ['*.corp'] }), /privateAllow: "\*\.corp"/);
    assert.throws(
      () => createGuardedClient({ egressProxy: 'https://u:hunter2@p' }),
      (error: Error) => {
        assert.doesNotMatch(error.message, /hunter2/);
        return true;
      },
    );
    await assert.rejects(client.request(get('/ok', { maxResponseBytes: -1 })), TypeError);
    await assert.rejects(client.request(get('/ok', { timeouts: { connectMs: 0, readMs: 1, totalMs: 1 } })), TypeError);
    const closing = createGuardedClient();
    await closing.close();
    assert.equal((await refusal(closing.request(get('/ok')))).code, 'network_error');
  });
});

describe('guarded client over https with a test CA', { timeout: 8000 }, () => {
  let pki: TestPki | undefined;
  let rogue: TestPki | undefined;
  let server: https.Server | undefined;
  let rogueServer: https.Server | undefined;
  const seen: Seen = { connections: 0, requests: [] };
  const rogueSeen: Seen = { connections: 0, requests: [] };
  let port = 0;
  let roguePort = 0;

  before(async () => {
    if (!opensslAvailable()) return;
    pki = makeTestPki(['localhost']);
    rogue = makeTestPki(['localhost']);
    server = https.createServer({ key: pki.key, cert: pki.cert }, routes(seen));
    rogueServer = https.createServer({ key: rogue.key, cert: rogue.cert }, routes(rogueSeen));
    port = await listen(server, seen);
    roguePort = await listen(rogueServer, rogueSeen);
  });
  after(async () => {
    await stop(server);
    await stop(rogueServer);
    pki?.cleanup();
    rogue?.cleanup();
  });

  const get = (url: string): GuardedRequestOptions => ({ method: 'GET', url, maxResponseBytes: 1000, timeouts });

  test('https to localhost verifies against the system roots plus the CA file', async (t) => {
    if (pki === undefined) return t.skip('openssl is not installed');
    const client = createGuardedClient({ caFile: pki.caFile });
    try {
      const got = await client.request(get(`https://localhost:${port}/ok`));
      assert.equal(got.status, 200);
      assert.equal(got.body.toString(), 'hello GET ');
    } finally {
      await client.close();
    }
  });

  test('without the CA file, or against another CA, TLS fails and no request is sent', async (t) => {
    if (pki === undefined || rogue === undefined) return t.skip('openssl is not installed');
    seen.requests.length = 0;
    const plain = createGuardedClient();
    const trusting = createGuardedClient({ caFile: pki.caFile });
    try {
      const untrusted = await refusal(plain.request(get(`https://localhost:${port}/ok`)));
      assert.equal(untrusted.code, 'network_error');
      assert.match(untrusted.message, /^TLS with localhost failed/);
      const wrongCa = await refusal(trusting.request(get(`https://localhost:${roguePort}/ok`)));
      assert.equal(wrongCa.code, 'network_error');
      assert.equal(seen.requests.length, 0);
      assert.equal(rogueSeen.requests.length, 0);
    } finally {
      await plain.close();
      await trusting.close();
    }
  });

  test('the certificate is checked against the URL host: a cert for localhost does not serve 127.0.0.1', async (t) => {
    if (pki === undefined) return t.skip('openssl is not installed');
    const client = createGuardedClient({ caFile: pki.caFile });
    try {
      const error = await refusal(client.request(get(`https://127.0.0.1:${port}/ok`)));
      assert.equal(error.code, 'network_error');
      assert.match(error.message, /ERR_TLS_CERT_ALTNAME_INVALID/);
    } finally {
      await client.close();
    }
  });
});
