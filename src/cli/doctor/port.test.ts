/**
 * The port check: free, taken by something else, taken by this Airlock or by another one. The
 * bind is real; what answers on the port is a real HTTP server.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { parseConfig, type AirlockConfig } from '../../config/load.js';
import { getJson, portLine, tryBind } from './port.js';

const servers: Server[] = [];
after(async () => {
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
});

/** A loopback HTTP server answering each path with the given status and JSON. */
async function serveJson(routes: Record<string, [number, unknown]>): Promise<number> {
  const server = createServer((req, res) => {
    const [status, body] = routes[req.url ?? ''] ?? [404, { error: 'not found' }];
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

function configOn(port: number): AirlockConfig {
  return parseConfig(
    `server: { port: ${port} }
agents:
  - slug: echo
    name: Echo
    description: Echoes.
    skills: [{ id: echo, name: Echo, description: Echoes. }]
    backend: { type: echo }
`,
    {},
  );
}

const probe = { bind: tryBind, get: getJson };

describe('doctor: port', () => {
  it('a free port is ok', async () => {
    const port = await serveJson({});
    await new Promise((resolve) => servers.pop()!.close(resolve));
    assert.deepEqual(await portLine(configOn(port), probe), {
      status: 'ok',
      check: 'port',
      detail: `127.0.0.1:${port} is free`,
    });
  });

  it('a port held by a process that is not Airlock fails', async () => {
    const port = await serveJson({ '/healthz': [404, {}] });
    assert.deepEqual(await portLine(configOn(port), probe), {
      status: 'fail',
      check: 'port',
      detail: `127.0.0.1:${port} is in use by another process`,
    });
  });

  it('this Airlock (healthz, and the first agent with its configured name) is ok', async () => {
    const port = await serveJson({
      '/healthz': [200, { status: 'ok' }],
      '/a2a/echo/.well-known/agent-card.json': [200, { name: 'Echo' }],
    });
    assert.equal(
      (await portLine(configOn(port), probe)).detail,
      `127.0.0.1:${port} is served by this Airlock (it is running)`,
    );
  });

  it('another Airlock fails; one whose cards need credentials is a warning', async () => {
    const other = await serveJson({ '/healthz': [200, { status: 'ok' }] });
    const line = await portLine(configOn(other), probe);
    assert.equal(line.status, 'fail');
    assert.equal(
      line.detail,
      `127.0.0.1:${other} is in use by another Airlock (it does not publish "echo" as configured here)`,
    );
    const closed = await serveJson({
      '/healthz': [200, { status: 'ok' }],
      '/a2a/echo/.well-known/agent-card.json': [401, {}],
    });
    assert.equal((await portLine(configOn(closed), probe)).status, 'warn');
  });

  it('port 0 needs no check; a bind refused for another reason says why', async () => {
    assert.equal((await portLine(configOn(0), probe)).detail, '127.0.0.1:0: a free port is picked at start');
    const denied = await portLine(configOn(41240), { bind: () => Promise.resolve('EACCES'), get: getJson });
    assert.deepEqual(denied, {
      status: 'fail',
      check: 'port',
      detail: '127.0.0.1:41240 cannot be bound: permission denied',
    });
  });
});
