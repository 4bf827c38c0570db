/**
 * The network gate, the hop header and the audit trail, end to end over HTTP.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MemoryAuditSink, verifyAuditFile } from '../src/audit/index.js';
import { processInstanceId } from '../src/client/outbound-transport.js';
import { HOP_HEADER } from '../src/protocol/headers.js';
import { DEFAULT_YAML, TOKEN_A, rpc, startGateway, v03Message, type TestGateway } from './helpers/gateway.js';

/** A non-loopback address of this machine, if it has one (traffic to it never leaves the host). */
function localNonLoopbackAddress(): string | undefined {
  for (const entries of Object.values(networkInterfaces())) {
    for (const entry of entries ?? []) if (!entry.internal && entry.family === 'IPv4') return entry.address;
  }
  return undefined;
}

function withServer(yaml: string, server: string): string {
  return yaml.replace(/^server: .*$/m, `server: ${server}`);
}

describe('network gate', () => {
  it('refuses a caller forwarded by a trusted proxy from outside loopback, on every route', async () => {
    const sink = new MemoryAuditSink();
    const gw = await startGateway(
      withServer(DEFAULT_YAML, '{ host: 127.0.0.1, port: 0, defaultAgent: echo, trustedProxies: [127.0.0.1] }'),
      { auditSink: sink },
    );
    try {
      const outside = { 'x-forwarded-for': '203.0.113.9', authorization: `Bearer ${TOKEN_A}` };
      for (const path of ['/.well-known/agent-card.json', '/a2a/echo/.well-known/agent-card.json', '/healthz']) {
        const response = await fetch(`${gw.url}${path}`, { headers: outside });
        assert.equal(response.status, 403, path);
        const body = (await response.json()) as { error: { status: string } };
        assert.equal(body.error.status, 'PERMISSION_DENIED');
      }
      const post = await fetch(`${gw.url}/a2a/echo`, {
        method: 'POST',
        headers: { ...outside, 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: v03Message('hi') } }),
      });
      assert.equal(post.status, 403);
      assert.equal(gw.gateway.service.running, 0);
      const rows = sink.events.filter((event) => event.type === 'a2a.server.forbidden');
      assert.equal(rows.length, 4);
      assert.deepEqual(
        rows.map((row) => [row.reason, 'remote' in row ? row.remote : undefined]),
        Array(4).fill(['address_not_allowed', '203.0.113.9']),
      );
      // A loopback client behind the same proxy is admitted.
      const inside = await fetch(`${gw.url}/healthz`, { headers: { 'x-forwarded-for': '127.0.0.1' } });
      assert.equal(inside.status, 200);
    } finally {
      await gw.close();
    }
  });

  it('ignores X-Forwarded-For from a peer that is not a trusted proxy (a client cannot claim loopback)', async () => {
    const gw = await startGateway(
      withServer(DEFAULT_YAML, '{ host: 127.0.0.1, port: 0, defaultAgent: echo, trustedProxies: [10.0.0.0/8] }'),
    );
    try {
      // The peer (127.0.0.1) is not trusted, so its header is ignored and the peer stands: admitted.
      const response = await fetch(`${gw.url}/healthz`, { headers: { 'x-forwarded-for': '203.0.113.9' } });
      assert.equal(response.status, 200);
    } finally {
      await gw.close();
    }
  });

  it('without trusted proxies, X-Forwarded-For changes nothing', async () => {
    const gw = await startGateway();
    try {
      const response = await fetch(`${gw.url}/healthz`, { headers: { 'x-forwarded-for': '203.0.113.9' } });
      assert.equal(response.status, 200);
    } finally {
      await gw.close();
    }
  });

  const address = localNonLoopbackAddress();
  it(
    'refuses a real connection to a non-loopback interface unless allowNonLoopback is on',
    { skip: address === undefined ? 'this machine has no non-loopback IPv4 interface' : false },
    async () => {
      // The loader refuses this bind (src/config/bind.ts); the gate behind it is tested all the same.
      const closed = await startGateway(withServer(DEFAULT_YAML, '{ port: 0, defaultAgent: echo }'), {
        server: { host: String(address) },
      });
      try {
        const card = await fetch(`${closed.url}/.well-known/agent-card.json`);
        assert.equal(card.status, 403);
        const call = await rpc(`${closed.url}/a2a/echo`, 'message/send', { message: v03Message('hi') });
        assert.equal(call.status, 403);
      } finally {
        await closed.close();
      }
      const open = await startGateway(
        withServer(
          DEFAULT_YAML,
          `{ host: '${address}', port: 0, defaultAgent: echo, allowNonLoopback: true, allowInsecureNetwork: true }`,
        ),
      );
      try {
        const call = await rpc(`${open.url}/a2a/echo`, 'message/send', { message: v03Message('hi') });
        assert.equal(call.status, 200);
        assert.equal(call.body.result.status.state, 'completed');
      } finally {
        await open.close();
      }
    },
  );
});

describe('hop header', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway();
  });
  after(() => gw.close());

  it('refuses a relay loop (its own id in the chain), before auth and before any task: 508, saying so', async () => {
    const own = gw.config.server.instanceId ?? processInstanceId();
    const response = await fetch(`${gw.url}/a2a/echo`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${TOKEN_A}`,
        [HOP_HEADER]: `gw-other-0001, ${own}`,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: v03Message('hi') } }),
    });
    assert.equal(response.status, 508);
    assert.match(((await response.json()) as { error: { message: string } }).error.message, /relay loop/);
    assert.equal(gw.gateway.service.running, 0);
    const card = await fetch(`${gw.url}/a2a/echo/.well-known/agent-card.json`, { headers: { [HOP_HEADER]: own } });
    assert.equal(card.status, 508);
  });

  it('serves a peer gateway’s call (a chain without its own id), and refuses a malformed one (400)', async () => {
    const send = (hop: string) =>
      fetch(`${gw.url}/a2a/echo`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN_A}`, [HOP_HEADER]: hop },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: v03Message('hi') } }),
      });
    const peer = await send('gw-peer-00001');
    assert.equal(peer.status, 200);
    assert.equal(((await peer.json()) as { result: { status: { state: string } } }).result.status.state, 'completed');
    assert.equal((await send('1')).status, 400, 'the old bare hop header is not a chain');
  });
});

describe('audit trail', () => {
  it('writes a hash-chained file: submitted then one outcome per task, refusals, and never content or tokens', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'airlock-audit-'));
    const file = join(dir, 'audit.jsonl');
    const yaml = `${DEFAULT_YAML}\naudit: { file: '${file}' }\n`;
    const gw = await startGateway(yaml);
    try {
      const secretText = 'the-caller-said-this-private-thing';
      const sent = await rpc(`${gw.url}/a2a/echo`, 'message/send', { message: v03Message(secretText) });
      assert.equal(sent.body.result.status.state, 'completed');
      const asked = await rpc(`${gw.url}/a2a/writer`, 'message/send', { message: v03Message('ask me') });
      assert.equal(asked.body.result.status.state, 'input-required');
      const wrong = await rpc(
        `${gw.url}/a2a/echo`,
        'message/send',
        { message: v03Message('x') },
        {
          token: 'not-a-real-token-0123456789abcdefghij',
        },
      );
      assert.equal(wrong.status, 401);
      const forbidden = await rpc(
        `${gw.url}/a2a/writer`,
        'message/send',
        { message: v03Message('x') },
        {
          token: 'token-for-client-c-0123456789abcdef0123',
        },
      );
      assert.equal(forbidden.status, 403);
    } finally {
      await gw.close();
    }
    try {
      const text = readFileSync(file, 'utf8');
      assert.ok(!text.includes('the-caller-said-this-private-thing'));
      assert.ok(!text.includes(TOKEN_A));
      assert.ok(!text.includes('not-a-real-token'));
      const rows = text
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { type: string; reason?: string; client?: string; inputChars?: number });
      const types = rows.map((row) => row.type);
      assert.deepEqual(types, [
        'a2a.task.submitted',
        'a2a.task.completed',
        'a2a.task.submitted',
        'a2a.task.input_required',
        'a2a.server.auth_failed',
        'a2a.server.forbidden',
      ]);
      assert.equal(rows[0]?.client, 'a');
      assert.equal(rows[0]?.inputChars, 'the-caller-said-this-private-thing'.length);
      assert.equal(rows[4]?.reason, 'invalid_credentials');
      assert.equal(rows[5]?.reason, 'agent_not_allowed');
      const verified = await verifyAuditFile(file);
      assert.equal(verified.ok, true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
