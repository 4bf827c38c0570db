import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { A2AError } from './errors.js';
import { jsonRpcError, jsonRpcResult, parseJsonRpcCall, salvageId } from './jsonrpc.js';
import { v03 } from './v03/index.js';
import { v10 } from './v10/index.js';
import { assertA2AError, hostileArb } from './arbitraries.test.js';

describe('parseJsonRpcCall', () => {
  it('accepts a well-formed call', () => {
    assert.deepEqual(parseJsonRpcCall({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 't' } }), {
      id: 1,
      method: 'GetTask',
      params: { id: 't' },
    });
    assert.deepEqual(parseJsonRpcCall({ jsonrpc: '2.0', id: 'abc', method: 'GetExtendedAgentCard' }), {
      id: 'abc',
      method: 'GetExtendedAgentCard',
      params: {},
    });
  });

  const badEnvelopes: [string, unknown][] = [
    ['a batch', [{ jsonrpc: '2.0', id: 1, method: 'x' }]],
    ['null', null],
    ['a string', 'hi'],
    ['a wrong version', { jsonrpc: '1.0', id: 1, method: 'x' }],
    ['no version', { id: 1, method: 'x' }],
    ['an object id', { jsonrpc: '2.0', id: {}, method: 'x' }],
    ['a null id', { jsonrpc: '2.0', id: null, method: 'x' }],
    ['a non-finite id', { jsonrpc: '2.0', id: Infinity, method: 'x' }],
    ['a too-long id', { jsonrpc: '2.0', id: 'i'.repeat(257), method: 'x' }],
    ['no method', { jsonrpc: '2.0', id: 1 }],
    ['an empty method', { jsonrpc: '2.0', id: 1, method: '' }],
    ['a non-string method', { jsonrpc: '2.0', id: 1, method: 5 }],
    ['a too-long method', { jsonrpc: '2.0', id: 1, method: 'm'.repeat(129) }],
  ];
  it('passes a notification through with no id, for the dispatcher to refuse last', () => {
    assert.equal(parseJsonRpcCall({ jsonrpc: '2.0', method: 'x' }).id, undefined);
  });

  for (const [name, frame] of badEnvelopes) {
    it(`refuses ${name} with INVALID_REQUEST (-32600)`, () => {
      assert.equal(assertA2AError(() => parseJsonRpcCall(frame), 'INVALID_REQUEST').rpcCode, -32600);
    });
  }

  for (const params of [null, [], 'x', 3]) {
    it(`refuses params ${JSON.stringify(params)} with INVALID_PARAMS at params`, () => {
      assertA2AError(
        () => parseJsonRpcCall({ jsonrpc: '2.0', id: 1, method: 'x', params }),
        'INVALID_PARAMS',
        'params',
      );
    });
  }

  it('never throws anything but A2AError (property)', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          hostileArb,
          fc.jsonValue(),
          fc.record({ jsonrpc: fc.constant('2.0'), id: fc.jsonValue(), method: fc.jsonValue(), params: hostileArb }),
        ),
        (frame) => {
          try {
            parseJsonRpcCall(frame);
          } catch (error) {
            assert.ok(error instanceof A2AError);
          }
          const id = salvageId(frame);
          assert.ok(id === null || typeof id === 'string' || typeof id === 'number');
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('salvageId', () => {
  it('returns a usable id and null otherwise', () => {
    assert.equal(salvageId({ id: 7 }), 7);
    assert.equal(salvageId({ id: 'x' }), 'x');
    assert.equal(salvageId({ id: 'x'.repeat(257) }), null);
    assert.equal(salvageId({ id: NaN }), null);
    assert.equal(salvageId({ id: {} }), null);
    assert.equal(salvageId([{ id: 1 }]), null);
    assert.equal(salvageId('x'), null);
  });
});

describe('response frames', () => {
  it('result and error frames in both dialects', () => {
    assert.deepEqual(jsonRpcResult(1, { ok: true }), { jsonrpc: '2.0', id: 1, result: { ok: true } });
    const error = new A2AError('METHOD_NOT_FOUND');
    assert.deepEqual(jsonRpcError(null, v03.encodeError(error)), {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32601, message: 'Method not found' },
    });
    const framed = jsonRpcError('a', v10.encodeError(error));
    assert.equal(framed.error.code, -32601);
    assert.ok(Array.isArray(framed.error.data));
  });

  it('an SSE data line of a v1.0 stream event is a result frame around a StreamResponse', () => {
    const frame = jsonRpcResult(
      5,
      v10.encodeStreamEvent({
        kind: 'status-update',
        taskId: 't',
        contextId: 'c',
        status: { state: 'completed', timestamp: '2026-01-01T00:00:00.000Z' },
        final: true,
      }),
    );
    assert.equal(
      JSON.stringify(frame),
      '{"jsonrpc":"2.0","id":5,"result":{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-01-01T00:00:00.000Z"}}}}',
    );
  });
});
