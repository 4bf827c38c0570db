import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { createJsonBodyStep, readBoundedBody } from './body.js';
import { REFUSED } from './compose.js';
import type { AdmittedInbound } from './inbound.js';

function request(body: string | undefined, headers: Record<string, string> = {}) {
  const stream = new PassThrough();
  const req = Object.assign(stream, { headers, complete: false }) as unknown as IncomingMessage;
  const res = Object.assign(new PassThrough(), {
    req,
    shouldKeepAlive: true,
    destroyed: false,
    destroy() {
      this.destroyed = true;
    },
  }) as unknown as ServerResponse & { destroyed: boolean };
  if (body !== undefined) stream.end(body);
  return { req, res };
}

describe('readBoundedBody', () => {
  it('reads a body under the cap', async () => {
    const { req, res } = request('{"a":1}');
    const body = await readBoundedBody(req, res, 64, 1_000, assert.fail);
    assert.ok(Buffer.isBuffer(body));
    assert.equal(body.toString(), '{"a":1}');
  });

  it('413 over the cap (the connection will close), 408 when the body is late', async () => {
    const big = request('x'.repeat(100));
    const refusals: [number, string][] = [];
    assert.equal(await readBoundedBody(big.req, big.res, 10, 1_000, (s, m) => refusals.push([s, m])), REFUSED);
    assert.equal(big.res.shouldKeepAlive, false);
    const late = request(undefined);
    // readBody's timer never keeps a process alive: this test does, while it waits.
    const hold = setInterval(() => undefined, 1_000);
    assert.equal(await readBoundedBody(late.req, late.res, 10, 20, (s, m) => refusals.push([s, m])), REFUSED);
    clearInterval(hold);
    assert.deepEqual(refusals, [
      [413, 'Request body is larger than 10 bytes'],
      [408, 'Request body did not arrive within 20 ms'],
    ]);
  });

  it('a client that went away gets nothing: the response is destroyed', async () => {
    const gone = request(undefined);
    setImmediate(() => gone.req.emit('aborted'));
    assert.equal(await readBoundedBody(gone.req, gone.res, 10, 1_000, assert.fail), REFUSED);
    assert.equal((gone.res as { destroyed: boolean }).destroyed, true);
  });
});

describe('JSON body step', () => {
  const refusals: [number, string, string][] = [];
  const readJson = createJsonBodyStep({
    maxBodyBytes: 1_000,
    bodyTimeoutMs: 1_000,
    maxJsonDepth: 4,
    refuse: (_inbound, status, code, message) => refusals.push([status, code, message]),
  });
  const inbound = (body: string, headers?: Record<string, string>): AdmittedInbound => {
    const { req, res } = request(body, headers);
    return { req, res, body: undefined } as unknown as AdmittedInbound;
  };

  it('passes the body on (application/json with parameters; +json types too)', async () => {
    const cases: Record<string, string>[] = [
      { 'content-type': 'application/json' },
      { 'content-type': 'application/json; charset=utf-8' },
      { 'content-type': 'application/a2a+json' },
    ];
    for (const headers of cases) {
      const admitted = await readJson(inbound('{"a":[1]}', headers));
      assert.notEqual(admitted, REFUSED);
      assert.equal(admitted !== REFUSED && admitted.body.toString(), '{"a":[1]}');
    }
  });

  it('refuses another Content-Type or none (415) unread, then JSON nested too deep (400)', async () => {
    refusals.length = 0;
    assert.equal(await readJson(inbound('a=1', { 'content-type': 'text/plain' })), REFUSED);
    // No Content-Type: what a cross-origin page may send without a preflight (issue 16).
    assert.equal(await readJson(inbound('{"a":1}')), REFUSED);
    assert.equal(await readJson(inbound('[[[[[1]]]]]', { 'content-type': 'application/json' })), REFUSED);
    assert.deepEqual(refusals, [
      [415, 'CONTENT_TYPE_NOT_SUPPORTED', 'Content-Type must be application/json'],
      [415, 'CONTENT_TYPE_NOT_SUPPORTED', 'Content-Type must be application/json'],
      [400, 'INVALID_REQUEST', 'Request JSON is nested deeper than 4 levels'],
    ]);
  });
});
