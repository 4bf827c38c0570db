import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HOP_HEADER } from '../protocol/headers.js';
import type { GuardedClient } from './contracts.js';
import { OUTBOUND_HEADERS, createOutboundTransport, withHopHeader } from './outbound-transport.js';

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
  it('holds the hop header, value 1', () => {
    assert.deepEqual(OUTBOUND_HEADERS, { [HOP_HEADER]: '1' });
  });

  it('withHopHeader adds it to requests and streams, over what the caller set', async () => {
    const inner = recording();
    const wrapped = withHopHeader(inner);
    await wrapped.request({ ...options, headers: { [HOP_HEADER]: '0', accept: 'application/json' } });
    await wrapped.stream(options);
    assert.deepEqual(inner.seen, [{ [HOP_HEADER]: '1', accept: 'application/json' }, { [HOP_HEADER]: '1' }]);
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
