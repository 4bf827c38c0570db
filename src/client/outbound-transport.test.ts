import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HOP_HEADER, isInstanceId, parseHopChain } from '../protocol/headers.js';
import type { GuardedClient } from './contracts.js';
import { createOutboundTransport, outboundHeaders, processInstanceId, withHopHeader } from './outbound-transport.js';

function recording(): GuardedClient & { seen: (Record<string, string> | undefined)[] } {
  const seen: (Record<string, string> | undefined)[] = [];
  return {
    seen,
    request: async (options) => {
      seen.push(options.headers);
      return { status: 200, headers: {}, body: Buffer.alloc(0) };
    },
    stream: async (options) => {
      seen.push(options.headers);
      return { status: 200, headers: {}, body: (async function* () {})() };
    },
  };
}

const options = {
  method: 'GET' as const,
  url: 'https://agent.example/',
  maxResponseBytes: 1024,
  timeouts: { connectMs: 1000, readMs: 1000, totalMs: 1000 },
};

describe('outbound transport', () => {
  it('holds the hop header: this process’s instance id, one stable valid id per process', () => {
    const id = processInstanceId();
    assert.ok(isInstanceId(id), id);
    assert.equal(processInstanceId(), id);
    assert.deepEqual(outboundHeaders(), { [HOP_HEADER]: id });
    assert.deepEqual(parseHopChain(outboundHeaders('gw-a-0001')[HOP_HEADER]), ['gw-a-0001']);
  });

  it('withHopHeader adds it to requests and streams, over what the caller set', async () => {
    const inner = recording();
    const wrapped = withHopHeader(inner, 'gw-a-0001');
    await wrapped.request({ ...options, headers: { [HOP_HEADER]: '0', accept: 'application/json' } });
    await wrapped.stream(options);
    assert.deepEqual(inner.seen, [
      { [HOP_HEADER]: 'gw-a-0001', accept: 'application/json' },
      { [HOP_HEADER]: 'gw-a-0001' },
    ]);
  });

  it('wraps once: a transport that already carries the header is returned as it is', async () => {
    const wrapped = withHopHeader(recording());
    assert.equal(withHopHeader(wrapped), wrapped);
    const transport = createOutboundTransport({});
    try {
      assert.equal(withHopHeader(transport), transport);
    } finally {
      await transport.close();
    }
  });
});
