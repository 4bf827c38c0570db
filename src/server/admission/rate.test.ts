import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { describe, it } from 'node:test';
import { RateLimiter } from '../limits/rate.js';
import { REFUSED } from './compose.js';
import type { AdmittedInbound } from './inbound.js';
import { createRateStep } from './rate.js';

function admitted() {
  const sent = { status: 0, headers: {} as Record<string, unknown> };
  const res = {
    req: { complete: true, headers: {} },
    writeHead: (status: number, headers: Record<string, unknown>) => ((sent.status = status), (sent.headers = headers)),
    end: () => undefined,
  } as unknown as ServerResponse;
  const inbound = {
    res,
    remote: '127.0.0.1',
    now: 0,
    agent: { config: { slug: 'echo' } },
    principal: { key: 'client:a' },
  } as unknown as AdmittedInbound;
  return { inbound, sent };
}

describe('rate step', () => {
  it('admits at once under the limit; over it: 429 with Retry-After, audited', () => {
    const rows: string[] = [];
    const rate = createRateStep({
      rates: new RateLimiter({ limit: 1 }),
      audit: { rateLimited: (reason: string) => rows.push(reason) },
    });
    const first = admitted();
    assert.equal(rate(first.inbound), first.inbound);
    const second = admitted();
    assert.equal(rate(second.inbound), REFUSED);
    assert.equal(second.sent.status, 429);
    assert.ok(Number(second.sent.headers['retry-after']) > 0);
    assert.deepEqual(rows, ['client_rate_limit']);
  });

  it('waits for a rate shared by replicas', async () => {
    const rate = createRateStep({ rates: { take: () => Promise.resolve(true as const) }, audit: {} as never });
    const { inbound } = admitted();
    assert.equal(await rate(inbound), inbound);
  });
});
