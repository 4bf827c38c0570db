import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createGuardedClient, OutboundError } from '../net/index.js';
import { guardedFetch } from './fetch.js';

describe('the guarded fetch for tool servers', () => {
  let server: Server;
  let base: string;
  let requests = 0;
  const client = createGuardedClient({});
  before(async () => {
    server = createServer((req, res) => {
      requests += 1;
      if (req.url === '/redirect') {
        res.writeHead(302, { location: 'http://127.0.0.1:1/' }).end();
        return;
      }
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ auth: req.headers.authorization ?? null }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await client.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const fetch = (): ReturnType<typeof guardedFetch> =>
    guardedFetch(client, {
      privateNetwork: false,
      maxResponseBytes: 1024,
      timeoutMs: 5000,
      authorization: 'Bearer t0k3n-for-tests',
    });

  it('POSTs through the guarded client with the token', async () => {
    const response = await fetch()(`${base}/mcp`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { auth: 'Bearer t0k3n-for-tests' });
  });

  it('answers GET and DELETE 405 without sending anything', async () => {
    const before = requests;
    assert.equal((await fetch()(`${base}/mcp`, { method: 'GET' })).status, 405);
    assert.equal((await fetch()(`${base}/mcp`, { method: 'DELETE' })).status, 405);
    assert.equal(requests, before);
  });

  it('never follows a redirect', async () => {
    await assert.rejects(
      fetch()(`${base}/redirect`, { method: 'POST', body: '{}' }),
      (error: unknown) => error instanceof OutboundError && error.code === 'redirect_refused',
    );
  });

  it('refuses http to a non-loopback host before any request', async () => {
    await assert.rejects(
      fetch()('http://tools.example.test/mcp', { method: 'POST', body: '{}' }),
      (error: unknown) => error instanceof OutboundError && error.code === 'insecure_url',
    );
  });
});
