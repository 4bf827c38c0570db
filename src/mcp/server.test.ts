import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  loopbackTransport,
  makeTask,
  startFakeRemote,
  stubCards,
  type FakeRemote,
} from '../client/fake-remote.test.js';
import { createClient, parseRegistry, type CallResult } from '../client/index.js';
import { MAX_MCP_BODY_BYTES, isLoopbackBindHost, startMcpHttp, type McpHttpHandle } from './http.js';

const ENV = { AIRLOCK_SECRET_TEST: 'tok-SECRET-0123456789abcdefXYZ' };

function registryYaml(url: string): string {
  const card = new URL('/.well-known/agent-card.json', url).href;
  return `agents:
  - name: reader
    card_url: ${card}
    description: Reads the news for you.
    effect: read_only
    auth: { bearer_env: AIRLOCK_SECRET_TEST }
  - name: shop
    card_url: ${card}
    description: Orders office supplies.
    effect: acting
    auth: { bearer_env: AIRLOCK_SECRET_TEST }
`;
}

/** A raw HTTP exchange, so that Host and Origin can be anything. */
function raw(
  url: string,
  options: { method?: string; path?: string; headers?: Record<string, string>; body?: string | Buffer },
): Promise<{ status: number; body: string }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: options.method ?? 'POST',
        path: options.path ?? target.pathname,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...options.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } },
});

describe('Streamable HTTP mode', () => {
  let remote: FakeRemote;
  let http: McpHttpHandle;
  let mcp: Client;

  before(async () => {
    remote = await startFakeRemote((request) =>
      request.method === 'send'
        ? { send: { kind: 'task', task: makeTask('t-9', 'completed', 'Headlines: calm seas') } }
        : { task: makeTask('t-9', 'completed', 'Headlines: calm seas') },
    );
    const client = createClient({
      registry: parseRegistry(registryYaml(remote.url), ENV),
      transport: loopbackTransport(),
      cards: stubCards(remote.url, '1.0'),
    });
    http = await startMcpHttp({ client, autonomy: 'read_only' }, { port: 0 });
    mcp = new Client({ name: 'airlock-test', version: '0.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(http.url)));
  });

  after(async () => {
    await mcp?.close();
    await http?.close();
    await remote?.close();
  });

  it('binds 127.0.0.1 at /mcp', () => {
    assert.match(http.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  });

  it('lists the tools with their annotations', async () => {
    const { tools } = await mcp.listTools();
    assert.deepEqual(
      tools.map((tool) => tool.name),
      ['a2a_list_agents', 'a2a_send', 'a2a_get_task'],
    );
    const send = tools.find((tool) => tool.name === 'a2a_send')!;
    assert.equal(send.annotations?.destructiveHint, true);
    assert.deepEqual((send.inputSchema.properties?.agent as { enum: string[] }).enum, ['reader', 'shop']);
    assert.doesNotMatch(JSON.stringify(tools), /CARD TEXT THAT MUST NOT BE LISTED/);
  });

  it('calls a2a_send and a2a_get_task', async () => {
    const sent = await mcp.callTool({ name: 'a2a_send', arguments: { agent: 'reader', message: 'News?' } });
    assert.equal(sent.isError ?? false, false);
    const result = JSON.parse((sent.content as Array<{ text: string }>)[0]!.text) as CallResult;
    assert.equal(result.status, 'success');
    assert.match(result.reply, /calm seas/);
    const got = await mcp.callTool({ name: 'a2a_get_task', arguments: { agent: 'reader', task_id: 't-9' } });
    assert.equal(got.isError ?? false, false);
  });

  it('refuses an acting agent under read_only autonomy', async () => {
    const before = remote.requests.length;
    const refused = await mcp.callTool({ name: 'a2a_send', arguments: { agent: 'shop', message: 'Buy 200 pens' } });
    assert.equal(refused.isError, true);
    const result = JSON.parse((refused.content as Array<{ text: string }>)[0]!.text) as CallResult;
    assert.equal(result.error_type, 'confirmation_required');
    assert.equal(remote.requests.length, before);
  });

  it('answers invalid input with a tool error, not a call', async () => {
    const before = remote.requests.length;
    const bad = await mcp.callTool({
      name: 'a2a_send',
      arguments: { agent: 'https://evil.example/a2a', message: 'hi' },
    });
    assert.equal(bad.isError, true);
    assert.equal(remote.requests.length, before);
  });

  it('refuses a Host or Origin that is not loopback (DNS rebinding)', async () => {
    const host = await raw(http.url, { headers: { host: 'attacker.example' }, body: INITIALIZE });
    assert.equal(host.status, 403);
    const origin = await raw(http.url, { headers: { origin: 'http://attacker.example' }, body: INITIALIZE });
    assert.equal(origin.status, 403);
    const fine = await raw(http.url, { body: INITIALIZE });
    assert.equal(fine.status, 200);
  });

  it('serves only /mcp, and caps bodies', async () => {
    assert.equal((await raw(http.url, { path: '/', body: INITIALIZE })).status, 404);
    const big = await raw(http.url, { body: Buffer.alloc(MAX_MCP_BODY_BYTES + 1, 0x20) });
    assert.equal(big.status, 413);
    assert.match(big.body, /too large/);
  });
});

describe('progress while a send waits', () => {
  it('sends heartbeats to a caller that asked for progress (a progress token)', async () => {
    let gets = 0;
    const remote = await startFakeRemote((request) => {
      if (request.method === 'send') return { send: { kind: 'task', task: makeTask('t-5', 'working') } };
      gets += 1;
      return { task: makeTask('t-5', gets >= 4 ? 'completed' : 'working', gets >= 4 ? 'done' : undefined) };
    });
    const client = createClient({
      registry: parseRegistry(
        registryYaml(remote.url).replace(/effect: read_only\n/, 'effect: read_only\n    poll_interval_s: 0.05\n'),
        ENV,
      ),
      transport: loopbackTransport(),
      cards: stubCards(remote.url, '1.0'),
    });
    const http = await startMcpHttp({ client, autonomy: 'read_only', progressIntervalMs: 20 }, { port: 0 });
    const mcp = new Client({ name: 'airlock-test', version: '0.0.0' });
    try {
      await mcp.connect(new StreamableHTTPClientTransport(new URL(http.url)));
      const progress: Array<{ progress: number; message?: string }> = [];
      const done = await mcp.callTool(
        { name: 'a2a_send', arguments: { agent: 'reader', message: 'Long job' } },
        { onprogress: (update) => void progress.push(update), resetTimeoutOnProgress: true },
      );
      assert.equal(JSON.parse((done.content as Array<{ text: string }>)[0]!.text).task_state, 'completed');
      assert.ok(progress.length >= 1, 'no progress received');
      assert.deepEqual(progress[0], { progress: 1, message: 'waiting for the remote agent' });
    } finally {
      await mcp.close();
      await http.close();
      await remote.close();
    }
  });
});

describe('HTTP bind address', () => {
  const client = createClient({
    registry: parseRegistry('agents: []\n', {}),
    transport: loopbackTransport(),
    cards: stubCards('http://127.0.0.1:1/', '1.0'),
  });

  it('refuses non-loopback addresses unless explicitly allowed', async () => {
    for (const host of ['0.0.0.0', '::', '192.168.1.10', 'example.com']) {
      await assert.rejects(startMcpHttp({ client, autonomy: 'read_only' }, { host, port: 0 }), /loopback only/);
    }
  });

  it('classifies bind hosts', () => {
    for (const host of ['127.0.0.1', '127.8.9.10', '::1', '[::1]', 'localhost', 'LOCALHOST', '::ffff:127.0.0.1']) {
      assert.equal(isLoopbackBindHost(host), true, host);
    }
    for (const host of ['0.0.0.0', '::', '10.0.0.1', '127.1', '2130706433', 'localhost.example', '', 'fe80::1']) {
      assert.equal(isLoopbackBindHost(host), false, host);
    }
  });

  it('binds ::1 when asked', async () => {
    const http = await startMcpHttp({ client, autonomy: 'read_only' }, { host: '::1', port: 0 }).catch(
      (error: NodeJS.ErrnoException) => {
        if (error.code === 'EADDRNOTAVAIL' || error.code === 'EAFNOSUPPORT') return undefined; // no IPv6 here
        throw error;
      },
    );
    if (http === undefined) return;
    assert.match(http.url, /^http:\/\/\[::1\]:\d+\/mcp$/);
    await http.close();
  });
});
