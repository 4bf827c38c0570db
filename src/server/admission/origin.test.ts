import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { describe, it } from 'node:test';
import { REFUSED } from './compose.js';
import type { Arrival } from './inbound.js';
import { createOriginStep, ORIGIN_REFUSED_MESSAGE } from './origin.js';

function arrival(origin?: string) {
  const sent = { status: 0, body: '' };
  const res = {
    req: { complete: true, headers: {} },
    writeHead: (status: number) => (sent.status = status),
    end: (body: string) => (sent.body = body),
  } as unknown as ServerResponse;
  const value = {
    req: { headers: origin === undefined ? {} : { origin } },
    res,
    remote: '127.0.0.1',
    fromLoopback: true,
  } as unknown as Arrival;
  return { value, sent };
}

describe('Origin step', () => {
  it('passes a request without Origin and one from an allowed origin, at once', () => {
    const step = createOriginStep({ allowedOrigins: ['http://localhost:3000'], audit: { forbidden: assert.fail } });
    const plain = arrival();
    assert.equal(step(plain.value), plain.value);
    const allowed = arrival('http://localhost:3000');
    assert.equal(step(allowed.value), allowed.value);
  });
  it('refuses any other Origin (none are allowed by default), `null` too: 403, audited', () => {
    const rows: string[] = [];
    const step = createOriginStep({ allowedOrigins: [], audit: { forbidden: (reason: string) => rows.push(reason) } });
    for (const origin of ['http://127.0.0.1:8080', 'null', 'http://localhost:3000']) {
      const { value, sent } = arrival(origin);
      assert.equal(step(value), REFUSED);
      assert.equal(sent.status, 403);
      assert.equal(JSON.parse(sent.body).error.message, ORIGIN_REFUSED_MESSAGE);
    }
    assert.deepEqual(rows, ['origin_not_allowed', 'origin_not_allowed', 'origin_not_allowed']);
  });
});
