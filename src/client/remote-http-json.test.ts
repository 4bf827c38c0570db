/**
 * The HTTP+JSON binding's pure parts: how a request goes on the wire below the interface URL
 * (paths from the protocol codec, the tenant as a path prefix), and how a refusal's
 * `google.rpc.Status` body maps onto the JSON-RPC path's failures.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { A2AError } from '../protocol/errors.js';
import { httpJsonError } from '../protocol/http-json/index.js';
import type { SendParams } from '../protocol/model.js';
import { failureFromRpcError } from './call-failure.js';
import { httpJsonWire, restFailure } from './remote-http-json.js';

const params: SendParams = {
  message: { messageId: 'm-1', role: 'user', parts: [{ kind: 'text', text: 'hi' }] },
  configuration: { returnImmediately: false },
};

describe('httpJsonWire: the request on the wire', () => {
  const endpoint = { url: 'https://a.example/rest/' };

  it('send, stream, get, cancel: the binding paths below the interface URL', () => {
    const send = httpJsonWire(endpoint, { method: 'send', params });
    assert.equal(send.method, 'POST');
    assert.equal(send.url, 'https://a.example/rest/message:send');
    assert.equal((JSON.parse(send.body!) as { message: { messageId: string } }).message.messageId, 'm-1');
    assert.equal(httpJsonWire(endpoint, { method: 'stream', params }).url, 'https://a.example/rest/message:stream');
    assert.deepEqual(httpJsonWire(endpoint, { method: 'get', params: { id: 't 1', historyLength: 2 } }), {
      method: 'GET',
      url: 'https://a.example/rest/tasks/t%201?historyLength=2',
    });
    assert.deepEqual(httpJsonWire(endpoint, { method: 'cancel', params: { id: 't/1' } }), {
      method: 'POST',
      url: 'https://a.example/rest/tasks/t%2F1:cancel',
      body: '{}',
    });
  });

  it("puts the card's tenant in the path, not in the body or the query", () => {
    const tenant = { url: 'https://a.example/rest', tenant: 'acme co' };
    const send = httpJsonWire(tenant, { method: 'send', params: { ...params, tenant: 'acme co' } });
    assert.equal(send.url, 'https://a.example/rest/acme%20co/message:send');
    assert.equal((JSON.parse(send.body!) as { tenant?: string }).tenant, undefined);
    assert.equal(
      httpJsonWire(tenant, { method: 'get', params: { id: 't-1', tenant: 'acme co' } }).url,
      'https://a.example/rest/acme%20co/tasks/t-1',
    );
  });
});

describe('restFailure: a refusal as the JSON-RPC path reports it', () => {
  const statusBody = (error: A2AError): { status: number; body: Record<string, unknown> } => {
    const { status, body } = httpJsonError(error);
    return { status, body: JSON.parse(body) as Record<string, unknown> };
  };

  it('every A2A error maps to the error type its JSON-RPC error gives', () => {
    for (const code of [
      'TASK_NOT_FOUND',
      'TASK_NOT_CANCELABLE',
      'INVALID_AGENT_RESPONSE',
      'UNSUPPORTED_OPERATION',
      'INVALID_PARAMS',
      'INTERNAL',
      'VERSION_NOT_SUPPORTED',
    ] as const) {
      const error = new A2AError(code, 'the remote says so');
      const { status, body } = statusBody(error);
      const failure = restFailure(status, body);
      assert.equal(failure.errorType, failureFromRpcError(error).errorType, code);
      assert.equal(failure.fromRpcError, true, code);
    }
  });

  it("keeps the remote's words only as remoteText, naming the status and the error", () => {
    const { status, body } = statusBody(new A2AError('TASK_NOT_CANCELABLE', 'already done'));
    const failure = restFailure(status, body);
    assert.equal(failure.errorType, 'remote_error');
    assert.equal(failure.remoteText, 'HTTP 400 TASK_NOT_CANCELABLE: already done');
    assert.equal(failure.detail, undefined);
  });

  it('a body that names no A2A error is an HTTP refusal, as on JSON-RPC', () => {
    const plain = restFailure(404, { error: { code: 404, message: 'no route' } });
    assert.equal(plain.errorType, 'remote_error');
    assert.equal(plain.fromRpcError, false);
    assert.equal(plain.remoteText, 'HTTP 404: no route');
    const loop = restFailure(508, undefined);
    assert.match(loop.detail ?? '', /relay loop/);
    assert.equal(loop.remoteText, undefined);
  });
});
