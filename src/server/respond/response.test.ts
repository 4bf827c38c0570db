import assert from 'node:assert/strict';
import { createServer, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { dropUnreadBody, headerOf, methodNotAllowed, notFound, refuse, requestPath, sendJson } from './response.js';

let server: Server;
let port = 0;
let answer: (res: ServerResponse) => void = () => undefined;

before(async () => {
  server = createServer((_req, res) => answer(res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

function call(
  body?: string,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ port, host: '127.0.0.1', method: body === undefined ? 'GET' : 'POST', path: '/x' }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    if (body === undefined) req.end();
    else req.write(body); // never ended: the server answers before the body is read
  });
}

describe('response kit', () => {
  it('sendJson: JSON with its length; with headers, those headers and extras', async () => {
    answer = (res) => sendJson(res, 200, { status: 'ok' });
    const plain = await call();
    assert.equal(plain.headers['content-type'], 'application/json');
    assert.equal(plain.headers['content-length'], String(plain.body.length));
    assert.deepEqual(JSON.parse(plain.body), { status: 'ok' });
    answer = (res) =>
      sendJson(res, 201, { a: 1 }, { 'content-type': 'application/json; charset=utf-8' }, { 'x-b': '2' });
    const shaped = await call();
    assert.equal(shaped.status, 201);
    assert.equal(shaped.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(shaped.headers['x-b'], '2');
  });

  it('refuse: the google.rpc.Status shape; a request body left unread closes the connection', async () => {
    answer = (res) => refuse(res, 429, 'RESOURCE_EXHAUSTED', 'Too many requests; slow down', { 'retry-after': '3' });
    const refused = await call('{"unread": true');
    assert.equal(refused.status, 429);
    assert.equal(refused.headers['retry-after'], '3');
    assert.equal(refused.headers.connection, 'close');
    assert.deepEqual(JSON.parse(refused.body), {
      error: { code: 429, status: 'RESOURCE_EXHAUSTED', message: 'Too many requests; slow down' },
    });
    const bodiless = await call();
    assert.equal(bodiless.headers.connection, 'keep-alive');
  });

  it('notFound and methodNotAllowed', async () => {
    answer = (res) => notFound(res);
    const missing = await call();
    assert.equal(missing.status, 404);
    assert.deepEqual(JSON.parse(missing.body), { error: { code: 'NOT_FOUND', message: 'No such route or agent' } });
    answer = (res) => methodNotAllowed(res, 'GET, HEAD');
    const wrong = await call('x');
    assert.equal(wrong.status, 405);
    assert.equal(wrong.headers.allow, 'GET, HEAD');
    assert.equal(wrong.headers.connection, 'close');
  });

  it('dropUnreadBody keeps a body-less request’s connection', async () => {
    answer = (res) => {
      dropUnreadBody(res);
      res.end('ok');
    };
    assert.equal((await call()).headers.connection, 'keep-alive');
  });

  it('headerOf takes the first of repeated values; requestPath drops the query', () => {
    const req = { headers: { 'x-a': ['1', '2'], 'x-b': '3' } } as never;
    assert.equal(headerOf(req, 'x-a'), '1');
    assert.equal(headerOf(req, 'x-b'), '3');
    assert.equal(headerOf(req, 'x-c'), undefined);
    assert.equal(requestPath('/a2a/echo?A2A-Version=1.0'), '/a2a/echo');
    assert.equal(requestPath(undefined), '/');
  });
});
