/**
 * Prometheus metrics, end to end: a gateway with `metrics` on (port 0, a bearer token), a
 * scripted mix of requests (v1.0 and v0.3 sends, a bad token, a rate-limited caller, an
 * oversized body, a stream, an unknown method, an HTTP+JSON read), then `/metrics` scraped over
 * HTTP and its exposition text parsed: each series holds the expected values, the token is
 * required, and no string a caller chose becomes a label value.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parseConfig } from '../src/config/load.js';
import { rpc, startGateway, TOKEN_A, TOKEN_B, v03Message, v10Message, type TestGateway } from './helpers/gateway.js';

const METRICS_TOKEN = 'metrics-token-0123456789abcdef0123456789';

const YAML = `
server: { host: 127.0.0.1, port: 0, maxBodyBytes: 2048 }
limits: { requestsPerMinute: 10 }
metrics: { port: 0, token: { env: METRICS_TOKEN } }
agents:
  - slug: echo
    name: Echo
    description: Echoes.
    skills: [{ id: echo, name: Echo, description: Echoes text }]
    backend: { type: echo }
  - slug: writer
    name: Writer
    description: Writes.
    skills: [{ id: write, name: Write, description: Writes text }]
    backend: { type: writer, chunkDelayMs: 120 }
clients:
  - { id: a, token: "\${TOKEN_A}", agents: [echo, writer] }
  - { id: b, token: "\${TOKEN_B}", agents: [echo, writer] }
`;

/** `name{a="x",b="y"}` (labels sorted) → value. */
type Samples = Map<string, number>;

function parseExposition(text: string): Samples {
  const samples: Samples = new Map();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(match !== null, `not an exposition line: ${line}`);
    const labels = [...(match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)]
      .map(([, name, value]) => `${name}="${value}"`)
      .sort();
    samples.set(`${match[1]}{${labels.join(',')}}`, Number(match[3]));
  }
  return samples;
}

function sample(samples: Samples, name: string, labels: Record<string, string> = {}): number | undefined {
  const key = Object.entries(labels)
    .map(([label, value]) => `${label}="${value}"`)
    .sort()
    .join(',');
  return samples.get(`${name}{${key}}`);
}

/** GET /metrics with the token (null: none). */
async function scrape(url: string, token: string | null = METRICS_TOKEN): Promise<Response> {
  return fetch(url, token === null ? {} : { headers: { authorization: `Bearer ${token}` } });
}

describe('metrics over HTTP', () => {
  let gw: TestGateway;
  let metricsUrl: string;
  const streamGauges: { open?: number; turns?: number } = {};

  before(async () => {
    gw = await startGateway(YAML, { env: { METRICS_TOKEN } });
    metricsUrl = gw.gateway.metrics!.url!;
    const echo = `${gw.url}/a2a/echo`;
    // A completed v1.0 send and a v0.3 send.
    const v10 = await rpc(echo, 'SendMessage', { message: v10Message('hello') }, { version: '1.0' });
    assert.equal(v10.body.result?.task?.status.state, 'TASK_STATE_COMPLETED', JSON.stringify(v10.body));
    const v03 = await rpc(echo, 'message/send', { message: v03Message('hello') });
    assert.equal(v03.body.result?.status.state, 'completed', JSON.stringify(v03.body));
    // A bad token.
    assert.equal(
      (await rpc(echo, 'SendMessage', { message: v10Message('x') }, { token: 'nope-'.repeat(8) })).status,
      401,
    );
    // An oversized body (maxBodyBytes 2048).
    const big = await rpc(echo, 'SendMessage', { message: v10Message('x'.repeat(4000)) }, { version: '1.0' });
    assert.equal(big.status, 413);
    // A body that is not JSON by its Content-Type: -32005 over HTTP 200, refused before decoding.
    const typed = await fetch(echo, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', authorization: `Bearer ${TOKEN_A}` },
      body: 'hello',
    });
    assert.equal(typed.status, 200);
    assert.equal(((await typed.json()) as { error?: { code?: number } }).error?.code, -32005);
    // An unknown method, named by the caller.
    const unknown = await rpc(echo, 'evil/method-from-caller', {}, { version: '1.0' });
    assert.equal(unknown.body.error?.code, -32601, JSON.stringify(unknown.body));
    // An odd agent path: not routed, so not counted under any caller-chosen name.
    assert.equal((await rpc(`${gw.url}/a2a/Evil-Agent-From-Caller`, 'SendMessage', {})).status, 404);
    // An HTTP+JSON read of the v1.0 task.
    const read = await fetch(`${echo}/tasks/${v10.body.result.task.id as string}`, {
      headers: { authorization: `Bearer ${TOKEN_A}`, 'a2a-version': '1.0' },
    });
    assert.equal(read.status, 200, await read.text());
    // A stream, scraped while it is open.
    const stream = await fetch(`${gw.url}/a2a/writer`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN_A}`, 'a2a-version': '1.0' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 3,
        method: 'SendStreamingMessage',
        params: { message: v10Message('story') },
      }),
    });
    const reader = stream.body!.getReader();
    await reader.read();
    const during = parseExposition(await (await scrape(metricsUrl)).text());
    streamGauges.open = sample(during, 'airlock_sse_streams_open');
    streamGauges.turns = sample(during, 'airlock_turns_in_flight');
    while (!(await reader.read()).done);
    // A rate-limited caller (requestsPerMinute 10): b sends until it is refused.
    let limited = 0;
    for (let i = 0; i < 15 && limited === 0; i++) {
      const call = await rpc(echo, 'GetTask', { id: 'missing' }, { token: TOKEN_B, version: '1.0' });
      if (call.status === 429) limited += 1;
    }
    assert.equal(limited, 1, 'b was never rate limited');
  });

  after(() => gw.close());

  it('answers only with the token: none or a wrong one is 401, other paths 404, other methods 405', async () => {
    const none = await scrape(metricsUrl, null);
    assert.equal(none.status, 401);
    assert.match(none.headers.get('www-authenticate') ?? '', /^Bearer/);
    assert.equal((await scrape(metricsUrl, `${METRICS_TOKEN}x`)).status, 401);
    assert.equal((await scrape(metricsUrl, TOKEN_A)).status, 401);
    assert.equal(
      (await fetch(metricsUrl.replace('/metrics', '/other'), { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }))
        .status,
      404,
    );
    assert.equal(
      (await fetch(metricsUrl, { method: 'POST', headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).status,
      405,
    );
    const ok = await scrape(metricsUrl);
    assert.equal(ok.status, 200);
    assert.match(ok.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  });

  it('is a listener of its own: the A2A port does not serve /metrics', async () => {
    assert.notEqual(new URL(metricsUrl).port, new URL(gw.url).port);
    const onGateway = await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    assert.equal(onGateway.status, 404);
  });

  it('counts requests by agent, binding, method, dialect and outcome', async () => {
    const s = parseExposition(await (await scrape(metricsUrl)).text());
    const requests = (labels: Record<string, string>) => sample(s, 'airlock_requests_total', labels);
    const rpcOk = { agent: 'echo', binding: 'jsonrpc', outcome: 'ok' };
    assert.equal(requests({ ...rpcOk, method: 'send', dialect: '1.0' }), 1);
    assert.equal(requests({ ...rpcOk, method: 'send', dialect: '0.3' }), 1);
    assert.equal(requests({ agent: 'writer', binding: 'jsonrpc', method: 'stream', dialect: '1.0', outcome: 'ok' }), 1);
    assert.equal(requests({ agent: 'echo', binding: 'http-json', method: 'get', dialect: '1.0', outcome: 'ok' }), 1);
    // Refused before any method was read: the bad token, the oversized body, the Content-Type
    // (over HTTP 200), the 429 — none of them counted as ok.
    assert.equal(
      requests({ agent: 'echo', binding: 'jsonrpc', method: 'unknown', dialect: 'none', outcome: 'refused' }),
      5,
    );
    assert.equal(
      requests({ agent: 'echo', binding: 'jsonrpc', method: 'unknown', dialect: 'none', outcome: 'ok' }),
      undefined,
    );
    // b's GetTask of a missing task: an A2A error (-32001) over HTTP 200 is a refusal.
    assert.ok(
      (requests({ agent: 'echo', binding: 'jsonrpc', method: 'get', dialect: '1.0', outcome: 'refused' }) ?? 0) >= 9,
    );
  });

  it('counts refusals by class and reason', async () => {
    const s = parseExposition(await (await scrape(metricsUrl)).text());
    const refusals = (klass: string, reason: string) =>
      sample(s, 'airlock_refusals_total', { agent: 'echo', class: klass, reason });
    assert.equal(refusals('auth', 'invalid_credentials'), 1);
    assert.equal(refusals('rate', 'client_rate_limit'), 1);
    assert.equal(refusals('body', 'body_too_large'), 1);
  });

  it('counts task transitions and durations by agent and final state, and audit rows by type', async () => {
    const s = parseExposition(await (await scrape(metricsUrl)).text());
    assert.equal(sample(s, 'airlock_task_transitions_total', { agent: 'echo', state: 'submitted' }), 2);
    assert.equal(sample(s, 'airlock_task_transitions_total', { agent: 'echo', state: 'completed' }), 2);
    assert.equal(sample(s, 'airlock_task_transitions_total', { agent: 'writer', state: 'completed' }), 1);
    assert.equal(sample(s, 'airlock_task_duration_seconds_count', { agent: 'echo', state: 'completed' }), 2);
    const writerSeconds = sample(s, 'airlock_task_duration_seconds_sum', { agent: 'writer', state: 'completed' }) ?? 0;
    assert.ok(writerSeconds >= 0.2, `the writer's task took ${writerSeconds} s`);
    // No sink is configured: the rows are counted all the same (and no write latency observed).
    assert.equal(sample(s, 'airlock_audit_rows_total', { type: 'a2a.task.submitted' }), 3);
    assert.equal(sample(s, 'airlock_audit_rows_total', { type: 'a2a.server.auth_failed' }), 1);
    assert.equal(sample(s, 'airlock_audit_write_seconds_count'), 0);
  });

  it('times the task store by kind and operation; samples turns in flight and open streams', async () => {
    const s = parseExposition(await (await scrape(metricsUrl)).text());
    assert.ok((sample(s, 'airlock_store_operation_seconds_count', { store: 'memory', operation: 'put' }) ?? 0) >= 6);
    assert.ok((sample(s, 'airlock_store_operation_seconds_count', { store: 'memory', operation: 'get' }) ?? 0) >= 1);
    assert.equal(sample(s, 'airlock_store_errors_total', { store: 'memory', operation: 'put' }), undefined);
    assert.equal(streamGauges.open, 1);
    assert.equal(streamGauges.turns, 1);
    assert.equal(sample(s, 'airlock_sse_streams_open'), 0);
    assert.equal(sample(s, 'airlock_turns_in_flight'), 0);
  });

  it('no string a caller chose becomes a label value', async () => {
    const text = await (await scrape(metricsUrl)).text();
    assert.doesNotMatch(text, /evil|Evil|nope-/);
    const agents = new Set<string>();
    for (const [key] of parseExposition(text)) {
      for (const [, value] of key.matchAll(/agent="([^"]*)"/g)) agents.add(value!);
    }
    assert.deepEqual([...agents].sort(), ['echo', 'writer']);
  });
});

describe('metrics config', () => {
  const base = (metrics: string) => `
server: { port: 41241 }
metrics: ${metrics}
agents:
  - { slug: echo, name: Echo, description: E, skills: [{ id: e, name: E, description: E }], backend: { type: echo } }
`;

  it('is off unless the section is present, and the gateway then has no metrics', async () => {
    const gw = await startGateway();
    try {
      assert.equal(gw.gateway.metrics, undefined);
      assert.equal(gw.config.metrics, undefined);
    } finally {
      await gw.close();
    }
  });

  it('defaults host to loopback and keeps the token only as a digest', () => {
    const config = parseConfig(base('{ port: 9464, token: { env: M_TOKEN } }'), { M_TOKEN: METRICS_TOKEN });
    assert.equal(config.metrics?.host, '127.0.0.1');
    assert.equal(config.metrics?.port, 9464);
    assert.ok(Buffer.isBuffer(config.metrics?.tokenDigest));
    assert.ok(!JSON.stringify(config).includes(METRICS_TOKEN));
  });

  it('refuses bad values at load, in one line naming the key', () => {
    const refused: [string, RegExp][] = [
      ['{ host: 0.0.0.0, port: 9464 }', /^config: metrics\.host: "0\.0\.0\.0" is not loopback: set metrics\.token/],
      ['{ port: 41241 }', /^config: metrics\.port: 41241 is server\.port/],
      ['{ host: 127.0.0.1 }', /metrics/],
      ['{ port: 70000 }', /metrics\.port/],
      ['{ port: 9464, token: {} }', /^config: metrics\.token: names no env or file/],
      ['{ port: 9464, token: { env: SHORT } }', /^config: metrics\.token \(from SHORT\): token must be at least 32/],
      ['{ port: 9464, token: { env: ABSENT } }', /^config: metrics\.token: no token found/],
      ['{ port: 9464, extra: 1 }', /metrics/],
    ];
    for (const [section, message] of refused) {
      assert.throws(
        () => parseConfig(base(section), { SHORT: 'short' }),
        (error: Error) => message.test(error.message) && !error.message.includes('\n'),
        section,
      );
    }
  });

  it('a non-loopback host with a token is accepted', () => {
    const config = parseConfig(base('{ host: 0.0.0.0, port: 9464, token: { env: M_TOKEN } }'), {
      M_TOKEN: METRICS_TOKEN,
    });
    assert.equal(config.metrics?.host, '0.0.0.0');
  });
});
