import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { A2AError } from './errors.js';
import type { A2ARequest, AgentCard, Message, StreamEvent, Task } from './model.js';
import { isTerminalState } from './model.js';
import { V10_JSON, V10_METHODS, v10 } from './v10/index.js';
import { UNKNOWN_TIMESTAMP } from './validation/timestamps.js';
import {
  assertA2AError,
  cardArb,
  escapeArb,
  hostileArb,
  listResultArb,
  messageArb,
  mutate,
  onlyA2AErrors,
  requestArb,
  sendResultArb,
  streamEventArb,
  taskArb,
  taskWithStrings,
  updatesWithStrings,
} from './arbitraries.test.js';

/** Through real JSON, as the wire would carry it. */
function json<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** Encoders must never emit `undefined` (it would vanish from JSON but not from structuredClone). */
function assertNoUndefined(value: unknown, path = 'root'): void {
  assert.notEqual(value, undefined, `undefined at ${path}`);
  if (Array.isArray(value)) value.forEach((v, i) => assertNoUndefined(v, `${path}[${i}]`));
  else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) assertNoUndefined(v, `${path}.${k}`);
  }
}

const userMessage = { messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: 'hello' }] };

function send(params: unknown): A2ARequest {
  return v10.decodeRequest('SendMessage', params);
}

describe('v10 round trips (property)', () => {
  it('every request: encodeRequest → decodeRequest is the identity', () => {
    fc.assert(
      fc.property(requestArb, (request) => {
        const wire = v10.encodeRequest(request);
        assertNoUndefined(wire.params);
        assert.ok(v10.hasMethod(wire.method));
        assert.deepEqual(v10.decodeRequest(wire.method, json(wire.params)), json(request));
      }),
      { numRuns: 300 },
    );
  });

  it('Task: encodeTask → decodeTask', () => {
    fc.assert(
      fc.property(taskArb, (task) => {
        const wire = v10.encodeTask(task);
        assertNoUndefined(wire);
        assert.deepEqual(v10.decodeTask(json(wire)), json(task));
      }),
    );
  });

  it('SendResult: encodeSendResult → decodeSendResult', () => {
    fc.assert(
      fc.property(sendResultArb, (result) => {
        const wire = v10.encodeSendResult(result);
        assertNoUndefined(wire);
        assert.deepEqual(v10.decodeSendResult(json(wire)), json(result));
      }),
    );
  });

  it('StreamEvent: encode → decode (final becomes "state is terminal")', () => {
    fc.assert(
      fc.property(streamEventArb, (event) => {
        const wire = v10.encodeStreamEvent(event);
        assertNoUndefined(wire);
        const expected: StreamEvent =
          event.kind === 'status-update' ? { ...event, final: isTerminalState(event.status.state) } : event;
        assert.deepEqual(v10.decodeStreamEvent(json(wire)), json(expected));
      }),
    );
  });

  it('ListTasksResult: encodeListResult → decodeListResult', () => {
    fc.assert(
      fc.property(listResultArb, (result) => {
        const wire = v10.encodeListResult(result);
        assertNoUndefined(wire);
        assert.deepEqual(v10.decodeListResult(json(wire)), json(result));
      }),
      { numRuns: 50 },
    );
  });

  it('AgentCard: encodeCard → decodeCard', () => {
    fc.assert(
      fc.property(cardArb, (card) => {
        const wire = v10.encodeCard(card);
        assertNoUndefined(wire);
        assert.deepEqual(v10.decodeCard(json(wire)), json(card));
      }),
    );
  });

  it('Message inside a send result keeps every optional field', () => {
    fc.assert(
      fc.property(messageArb(), (message: Message) => {
        const decoded = v10.decodeSendResult(json(v10.encodeSendResult({ kind: 'message', message })));
        assert.deepEqual(decoded, json({ kind: 'message', message }));
      }),
    );
  });
});

describe('v10 decoders only throw A2AError (property)', () => {
  for (const method of V10_METHODS) {
    it(`decodeRequest('${method}') on arbitrary input`, () => {
      fc.assert(
        fc.property(fc.oneof(hostileArb, fc.jsonValue()), (params) => {
          onlyA2AErrors(() => v10.decodeRequest(method, params));
        }),
        { numRuns: 200 },
      );
    });
  }

  it('decodeRequest on mutated valid requests', () => {
    fc.assert(
      fc.property(requestArb, fc.nat(), hostileArb, (request, seed, replacement) => {
        const wire = v10.encodeRequest(request);
        onlyA2AErrors(() => v10.decodeRequest(wire.method, mutate(wire.params, seed, replacement)));
      }),
      { numRuns: 500 },
    );
  });

  it('client decoders on arbitrary input', () => {
    fc.assert(
      fc.property(fc.oneof(hostileArb, fc.jsonValue()), (value) => {
        onlyA2AErrors(() => v10.decodeTask(value));
        onlyA2AErrors(() => v10.decodeSendResult(value));
        onlyA2AErrors(() => v10.decodeStreamEvent(value));
        onlyA2AErrors(() => v10.decodeListResult(value));
        onlyA2AErrors(() => v10.decodeCard(value));
        assert.ok(v10.decodeError(value) instanceof A2AError);
      }),
      { numRuns: 300 },
    );
  });

  it('client decoders on mutated valid results', () => {
    fc.assert(
      fc.property(streamEventArb, cardArb, fc.nat(), hostileArb, (event, card, seed, replacement) => {
        onlyA2AErrors(() => v10.decodeStreamEvent(mutate(v10.encodeStreamEvent(event), seed, replacement)));
        onlyA2AErrors(() => v10.decodeCard(mutate(v10.encodeCard(card), seed, replacement)));
      }),
      { numRuns: 500 },
    );
  });

  it('unknown methods are METHOD_NOT_FOUND, including v0.3 names and prototype keys', () => {
    for (const method of ['message/send', 'tasks/get', 'toString', '__proto__', 'constructor', '']) {
      assertA2AError(() => v10.decodeRequest(method, {}), 'METHOD_NOT_FOUND');
      assert.equal(v10.hasMethod(method), false);
    }
  });
});

describe('v10 SendMessage validation', () => {
  it('decodes the digest example', () => {
    const request = send({
      message: {
        messageId: 'm-1',
        role: 'ROLE_USER',
        parts: [
          { text: 'hello' },
          { raw: 'aGVsbG8=', mediaType: 'text/plain', filename: 'hello.txt' },
          { url: 'https://example.com/a.pdf', mediaType: 'application/pdf' },
          { data: [1, 2, 3] },
          { data: null, metadata: { why: 'null is a JSON value' } },
        ],
        contextId: 'ctx-1',
        referenceTaskIds: ['t-0'],
        extensions: ['https://ext.example/v1'],
        metadata: { trace: 'x' },
      },
      configuration: { returnImmediately: true, historyLength: 0, acceptedOutputModes: ['text/plain'] },
      metadata: { k: 1 },
      tenant: 'acme',
      unknownField: { ignored: true },
    });
    assert.deepEqual(request, {
      method: 'send',
      params: {
        message: {
          messageId: 'm-1',
          role: 'user',
          parts: [
            { kind: 'text', text: 'hello' },
            { kind: 'raw', raw: 'aGVsbG8=', mediaType: 'text/plain', filename: 'hello.txt' },
            { kind: 'url', url: 'https://example.com/a.pdf', mediaType: 'application/pdf' },
            { kind: 'data', data: [1, 2, 3] },
            { kind: 'data', data: null, metadata: { why: 'null is a JSON value' } },
          ],
          contextId: 'ctx-1',
          metadata: { trace: 'x' },
          extensions: ['https://ext.example/v1'],
          referenceTaskIds: ['t-0'],
        },
        configuration: { returnImmediately: true, historyLength: 0, acceptedOutputModes: ['text/plain'] },
        metadata: { k: 1 },
        tenant: 'acme',
      },
    });
  });

  it('defaults: no configuration means blocking; SendStreamingMessage decodes to stream', () => {
    const request = v10.decodeRequest('SendStreamingMessage', { message: userMessage });
    assert.equal(request.method, 'stream');
    assert.deepEqual(request.method === 'stream' && request.params.configuration, { returnImmediately: false });
  });

  it('ProtoJSON: "" and null read as unset', () => {
    const request = send({
      message: { ...userMessage, contextId: '', taskId: null, parts: [{ text: 'x', mediaType: '', filename: '' }] },
      tenant: '',
      metadata: null,
      configuration: null,
    });
    assert.deepEqual(request, {
      method: 'send',
      params: {
        message: { messageId: 'm-1', role: 'user', parts: [{ kind: 'text', text: 'x' }] },
        configuration: { returnImmediately: false },
      },
    });
  });

  const invalid: [string, unknown, string][] = [
    ['params not an object', [], 'params'],
    ['message missing', {}, 'message'],
    ['message not an object', { message: 'hi' }, 'message'],
    ['role missing (the official SDK accepts this)', { message: { ...userMessage, role: undefined } }, 'message.role'],
    ['role agent', { message: { ...userMessage, role: 'ROLE_AGENT' } }, 'message.role'],
    ['role unspecified', { message: { ...userMessage, role: 'ROLE_UNSPECIFIED' } }, 'message.role'],
    ['role lowercase (v0.3 spelling)', { message: { ...userMessage, role: 'user' } }, 'message.role'],
    ['role as a number', { message: { ...userMessage, role: 1 } }, 'message.role'],
    ['messageId missing', { message: { ...userMessage, messageId: undefined } }, 'message.messageId'],
    ['messageId empty', { message: { ...userMessage, messageId: '' } }, 'message.messageId'],
    ['messageId too long', { message: { ...userMessage, messageId: 'x'.repeat(257) } }, 'message.messageId'],
    ['parts empty', { message: { ...userMessage, parts: [] } }, 'message.parts'],
    ['parts not an array', { message: { ...userMessage, parts: { text: 'x' } } }, 'message.parts'],
    ['too many parts', { message: { ...userMessage, parts: Array(1001).fill({ text: 'x' }) } }, 'message.parts'],
    ['part with two members', { message: { ...userMessage, parts: [{ text: 'a', url: 'b' }] } }, 'message.parts[0]'],
    ['part with no member', { message: { ...userMessage, parts: [{ mediaType: 'text/plain' }] } }, 'message.parts[0]'],
    [
      'part text not a string',
      { message: { ...userMessage, parts: [{ text: 'ok' }, { text: 5 }] } },
      'message.parts[1].text',
    ],
    ['part raw not base64', { message: { ...userMessage, parts: [{ raw: 'not base64!' }] } }, 'message.parts[0].raw'],
    ['part raw bad length', { message: { ...userMessage, parts: [{ raw: 'abcde' }] } }, 'message.parts[0].raw'],
    ['part url too long', { message: { ...userMessage, parts: [{ url: 'h'.repeat(8193) }] } }, 'message.parts[0].url'],
    ['part url empty', { message: { ...userMessage, parts: [{ url: '', text: undefined }] } }, 'message.parts[0].url'],
    [
      'part metadata not an object',
      { message: { ...userMessage, parts: [{ text: 'x', metadata: [] }] } },
      'message.parts[0].metadata',
    ],
    [
      'part mediaType not a string',
      { message: { ...userMessage, parts: [{ text: 'x', mediaType: 1 }] } },
      'message.parts[0].mediaType',
    ],
    ['contextId with a space', { message: { ...userMessage, contextId: 'a b' } }, 'message.contextId'],
    ['contextId non-ASCII', { message: { ...userMessage, contextId: 'ctx-é' } }, 'message.contextId'],
    ['contextId too long', { message: { ...userMessage, contextId: 'c'.repeat(257) } }, 'message.contextId'],
    ['taskId not a string', { message: { ...userMessage, taskId: 42 } }, 'message.taskId'],
    ['metadata array', { message: { ...userMessage, metadata: [1] } }, 'message.metadata'],
    ['extensions not strings', { message: { ...userMessage, extensions: [1] } }, 'message.extensions[0]'],
    [
      'referenceTaskIds not an array',
      { message: { ...userMessage, referenceTaskIds: 't-1' } },
      'message.referenceTaskIds',
    ],
    ['configuration not an object', { message: userMessage, configuration: true }, 'configuration'],
    [
      'historyLength negative (the official SDK accepts this)',
      { message: userMessage, configuration: { historyLength: -1 } },
      'configuration.historyLength',
    ],
    [
      'historyLength fractional',
      { message: userMessage, configuration: { historyLength: 1.5 } },
      'configuration.historyLength',
    ],
    [
      'historyLength a string',
      { message: userMessage, configuration: { historyLength: '3' } },
      'configuration.historyLength',
    ],
    [
      'returnImmediately a string',
      { message: userMessage, configuration: { returnImmediately: 'true' } },
      'configuration.returnImmediately',
    ],
    [
      'acceptedOutputModes not an array',
      { message: userMessage, configuration: { acceptedOutputModes: 'text/plain' } },
      'configuration.acceptedOutputModes',
    ],
    ['request metadata not an object', { message: userMessage, metadata: 'x' }, 'metadata'],
    ['tenant not a string', { message: userMessage, tenant: 5 }, 'tenant'],
  ];
  for (const [name, params, field] of invalid) {
    it(`refuses ${name} with -32602 at ${field}`, () => {
      const error = assertA2AError(() => send(params), 'INVALID_PARAMS', field);
      assert.equal(error.rpcCode, -32602);
    });
  }

  it('refuses metadata nested deeper than the limit', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 100; i++) deep = { d: deep };
    assertA2AError(() => send({ message: { ...userMessage, metadata: deep } }), 'INVALID_PARAMS', 'message.metadata');
  });

  it('keeps a __proto__ key in metadata as data, without touching prototypes', () => {
    const request = send(
      JSON.parse(
        '{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}],"metadata":{"__proto__":{"polluted":true}}}}',
      ),
    );
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.ok(request.method === 'send' && Object.hasOwn(request.params.message.metadata ?? {}, '__proto__'));
  });
});

describe('v10 other methods', () => {
  it('GetTask', () => {
    assert.deepEqual(v10.decodeRequest('GetTask', { id: 't-1', historyLength: 0, tenant: 'acme' }), {
      method: 'get',
      params: { id: 't-1', historyLength: 0, tenant: 'acme' },
    });
    assertA2AError(() => v10.decodeRequest('GetTask', {}), 'INVALID_PARAMS', 'id');
    assertA2AError(() => v10.decodeRequest('GetTask', { id: '' }), 'INVALID_PARAMS', 'id');
    assertA2AError(() => v10.decodeRequest('GetTask', { id: 'x'.repeat(257) }), 'INVALID_PARAMS', 'id');
    assertA2AError(
      () => v10.decodeRequest('GetTask', { id: 't', historyLength: -1 }),
      'INVALID_PARAMS',
      'historyLength',
    );
  });

  it('CancelTask and SubscribeToTask need an id', () => {
    assert.deepEqual(v10.decodeRequest('CancelTask', { id: 't-1', metadata: { why: 'done' } }), {
      method: 'cancel',
      params: { id: 't-1', metadata: { why: 'done' } },
    });
    assert.deepEqual(v10.decodeRequest('SubscribeToTask', { id: 't-1' }), {
      method: 'subscribe',
      params: { id: 't-1' },
    });
    assertA2AError(() => v10.decodeRequest('CancelTask', {}), 'INVALID_PARAMS', 'id');
    assertA2AError(() => v10.decodeRequest('SubscribeToTask', { id: 7 }), 'INVALID_PARAMS', 'id');
  });

  it('GetExtendedAgentCard with or without params', () => {
    assert.deepEqual(v10.decodeRequest('GetExtendedAgentCard', undefined), { method: 'extended-card', params: {} });
    assert.deepEqual(v10.decodeRequest('GetExtendedAgentCard', { tenant: 't' }), {
      method: 'extended-card',
      params: { tenant: 't' },
    });
  });

  it('the four push-config methods decode to push-config, and cannot be encoded', () => {
    for (const method of [
      'CreateTaskPushNotificationConfig',
      'GetTaskPushNotificationConfig',
      'ListTaskPushNotificationConfigs',
      'DeleteTaskPushNotificationConfig',
    ]) {
      // The shapes of each are tested in v10/push.test.ts.
      const request = v10.decodeRequest(method, { taskId: 't', id: 'c', url: 'https://hook.example' });
      assert.equal(request.method, 'push-config');
    }
    assertA2AError(
      () => v10.encodeRequest({ method: 'push-config', params: { op: 'list', taskId: 't' } }),
      'UNSUPPORTED_OPERATION',
    );
  });

  it('ListTasks defaults', () => {
    assert.deepEqual(v10.decodeRequest('ListTasks', {}), {
      method: 'list',
      params: { pageSize: 50, includeArtifacts: false },
    });
  });

  it('ListTasks with every filter', () => {
    assert.deepEqual(
      v10.decodeRequest('ListTasks', {
        contextId: 'ctx-1',
        status: 'TASK_STATE_WORKING',
        pageSize: 100,
        pageToken: 'opaque',
        historyLength: 2,
        statusTimestampAfter: '2026-01-01T00:00:00Z',
        includeArtifacts: true,
        tenant: 'acme',
      }),
      {
        method: 'list',
        params: {
          contextId: 'ctx-1',
          status: 'working',
          pageSize: 100,
          pageToken: 'opaque',
          historyLength: 2,
          statusTimestampAfter: Date.UTC(2026, 0, 1),
          includeArtifacts: true,
          tenant: 'acme',
        },
      },
    );
  });

  it('ListTasks reads offsets and missing-Z timestamps', () => {
    const at = (value: string): unknown => {
      const request = v10.decodeRequest('ListTasks', { statusTimestampAfter: value });
      return request.method === 'list' ? request.params.statusTimestampAfter : undefined;
    };
    assert.equal(at('2026-01-01T02:00:00+02:00'), Date.UTC(2026, 0, 1));
    assert.equal(at('2026-01-01T00:00:00'), Date.UTC(2026, 0, 1));
    assert.equal(at('2026-01-01T00:00:00.123456789Z'), Date.UTC(2026, 0, 1, 0, 0, 0, 123));
  });

  const badList: [string, Record<string, unknown>, string][] = [
    ['pageSize 0', { pageSize: 0 }, 'pageSize'],
    ['pageSize 101', { pageSize: 101 }, 'pageSize'],
    ['pageSize fractional', { pageSize: 2.5 }, 'pageSize'],
    ['pageSize a string', { pageSize: '10' }, 'pageSize'],
    ['pageToken too long', { pageToken: 'p'.repeat(1025) }, 'pageToken'],
    ['pageToken not a string', { pageToken: 1 }, 'pageToken'],
    ['status UNSPECIFIED', { status: 'TASK_STATE_UNSPECIFIED' }, 'status'],
    ['status lowercase', { status: 'working' }, 'status'],
    ['status as a number', { status: 2 }, 'status'],
    ['statusTimestampAfter garbage', { statusTimestampAfter: 'yesterday' }, 'statusTimestampAfter'],
    ['statusTimestampAfter Feb 30', { statusTimestampAfter: '2026-02-30T00:00:00Z' }, 'statusTimestampAfter'],
    ['statusTimestampAfter a number', { statusTimestampAfter: 1767225600000 }, 'statusTimestampAfter'],
    ['includeArtifacts a string', { includeArtifacts: 'yes' }, 'includeArtifacts'],
    ['historyLength negative', { historyLength: -2 }, 'historyLength'],
    ['contextId with a newline', { contextId: 'a\nb' }, 'contextId'],
  ];
  for (const [name, params, field] of badList) {
    it(`ListTasks refuses ${name}`, () => {
      assertA2AError(() => v10.decodeRequest('ListTasks', params), 'INVALID_PARAMS', field);
    });
  }
});

describe('v10 encoders', () => {
  const task: Task = {
    id: 't-1',
    contextId: 'ctx-1',
    status: { state: 'completed', timestamp: '2026-01-01T00:00:00.000Z' },
    artifacts: [],
    history: [],
  };

  it('SendMessage result is wrapped; empty artifacts/history are omitted', () => {
    assert.deepEqual(v10.encodeSendResult({ kind: 'task', task }), {
      task: {
        id: 't-1',
        contextId: 'ctx-1',
        status: { state: 'TASK_STATE_COMPLETED', timestamp: '2026-01-01T00:00:00.000Z' },
      },
    });
    const message: Message = { messageId: 'a-1', role: 'agent', parts: [{ kind: 'text', text: 'hi' }] };
    assert.deepEqual(v10.encodeSendResult({ kind: 'message', message }), {
      message: { messageId: 'a-1', role: 'ROLE_AGENT', parts: [{ text: 'hi' }] },
    });
  });

  it('GetTask result is a bare Task', () => {
    assert.equal((v10.encodeTask(task) as { id: string }).id, 't-1');
  });

  it('stream events carry no kind and no final', () => {
    const status = v10.encodeStreamEvent({
      kind: 'status-update',
      taskId: 't-1',
      contextId: 'ctx-1',
      status: { state: 'working', timestamp: '2026-01-01T00:00:00.000Z' },
      final: true,
    });
    assert.deepEqual(status, {
      statusUpdate: {
        taskId: 't-1',
        contextId: 'ctx-1',
        status: { state: 'TASK_STATE_WORKING', timestamp: '2026-01-01T00:00:00.000Z' },
      },
    });
    const artifact = v10.encodeStreamEvent({
      kind: 'artifact-update',
      taskId: 't-1',
      contextId: 'ctx-1',
      artifact: { artifactId: 'a', parts: [{ kind: 'text', text: 'x' }] },
      append: true,
      lastChunk: false,
    });
    assert.deepEqual(artifact, {
      artifactUpdate: {
        taskId: 't-1',
        contextId: 'ctx-1',
        artifact: { artifactId: 'a', parts: [{ text: 'x' }] },
        append: true,
        lastChunk: false,
      },
    });
    assert.deepEqual(v10.encodeStreamEvent({ kind: 'task', task }), v10.encodeSendResult({ kind: 'task', task }));
  });

  it('ListTasks result always has the four members', () => {
    assert.deepEqual(v10.encodeListResult({ tasks: [], nextPageToken: '', pageSize: 50, totalSize: 0 }), {
      tasks: [],
      nextPageToken: '',
      pageSize: 50,
      totalSize: 0,
    });
  });

  it('errors carry ErrorInfo, plus BadRequest when a field is named', () => {
    assert.deepEqual(v10.encodeError(new A2AError('TASK_NOT_FOUND')), {
      code: -32001,
      message: 'Task not found',
      data: [
        { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'TASK_NOT_FOUND', domain: 'a2a-protocol.org' },
      ],
    });
    const error = assertA2AError(() => send({ message: { ...userMessage, parts: [] } }), 'INVALID_PARAMS');
    assert.deepEqual(v10.encodeError(error), {
      code: -32602,
      message: error.message,
      data: [
        { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'INVALID_PARAMS', domain: 'a2a-protocol.org' },
        {
          '@type': 'type.googleapis.com/google.rpc.BadRequest',
          fieldViolations: [{ field: 'message.parts', description: error.message }],
        },
      ],
    });
    assert.equal(
      (v10.encodeError(new A2AError('JSON_PARSE')).data as { reason: string }[])[0]?.reason,
      'JSON_PARSE_ERROR',
    );
  });

  it('encodes requests the way a v1.0 server expects', () => {
    assert.deepEqual(
      v10.encodeRequest({
        method: 'send',
        params: {
          message: { messageId: 'm', role: 'user', parts: [{ kind: 'text', text: 'x' }] },
          configuration: { returnImmediately: false },
          tenant: 'acme',
        },
      }),
      {
        method: 'SendMessage',
        params: { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'x' }] }, tenant: 'acme' },
      },
    );
    assert.deepEqual(
      v10.encodeRequest({
        method: 'list',
        params: { pageSize: 10, includeArtifacts: false, status: 'input-required', statusTimestampAfter: 0 },
      }),
      {
        method: 'ListTasks',
        params: { pageSize: 10, status: 'TASK_STATE_INPUT_REQUIRED', statusTimestampAfter: '1970-01-01T00:00:00.000Z' },
      },
    );
  });
});

describe('v10 client decoders on real-world shapes', () => {
  it('task with numeric enums, no timestamp, no contextId, no arrays', () => {
    assert.deepEqual(v10.decodeTask({ id: 't-1', status: { state: 3 }, extra: 'ignored' }), {
      id: 't-1',
      contextId: '',
      status: { state: 'completed', timestamp: UNKNOWN_TIMESTAMP },
      artifacts: [],
      history: [],
    });
  });

  it('normalises timestamps to UTC milliseconds with Z', () => {
    const task = v10.decodeTask({
      id: 't',
      contextId: 'c',
      status: { state: 'TASK_STATE_WORKING', timestamp: '2026-03-04T05:06:07.891234+01:00' },
    });
    assert.equal(task.status.timestamp, '2026-03-04T04:06:07.891Z');
  });

  it('agent messages with empty parts are accepted from remotes', () => {
    const result = v10.decodeSendResult({ message: { messageId: 'a', role: 'ROLE_AGENT', parts: [] } });
    assert.deepEqual(result, { kind: 'message', message: { messageId: 'a', role: 'agent', parts: [] } });
  });

  it('accepts a bare Task or Message as a SendMessage result', () => {
    assert.equal(
      v10.decodeSendResult({ id: 't', contextId: 'c', status: { state: 'TASK_STATE_SUBMITTED' } }).kind,
      'task',
    );
    assert.equal(v10.decodeSendResult({ messageId: 'a', role: 'ROLE_AGENT', parts: [{ text: 'x' }] }).kind, 'message');
  });

  it('refuses results with both or neither member', () => {
    assertA2AError(() => v10.decodeSendResult({}), 'INVALID_AGENT_RESPONSE', 'result');
    assertA2AError(
      () =>
        v10.decodeSendResult({
          task: { id: 't', status: { state: 'TASK_STATE_WORKING' } },
          message: { messageId: 'a', role: 'ROLE_AGENT', parts: [] },
        }),
      'INVALID_AGENT_RESPONSE',
      'result',
    );
    assertA2AError(
      () => v10.decodeStreamEvent({ statusUpdate: { taskId: 't', contextId: 'c', status: { state: 'x' } } }),
      'INVALID_AGENT_RESPONSE',
      'result.statusUpdate.status.state',
    );
  });

  it('stream status updates derive final from the state', () => {
    const done = v10.decodeStreamEvent({
      statusUpdate: { taskId: 't', contextId: 'c', status: { state: 'TASK_STATE_FAILED' } },
    });
    assert.equal(done.kind === 'status-update' && done.final, true);
    const asking = v10.decodeStreamEvent({
      statusUpdate: { taskId: 't', contextId: 'c', status: { state: 'TASK_STATE_INPUT_REQUIRED' } },
    });
    assert.equal(asking.kind === 'status-update' && asking.final, false);
  });

  it('ListTasks result with ProtoJSON defaults omitted', () => {
    assert.deepEqual(v10.decodeListResult({ tasks: [] }), { tasks: [], nextPageToken: '', pageSize: 0, totalSize: 0 });
  });

  it('decodes remote errors', () => {
    const notFound = v10.decodeError({ code: -32001, message: 'Task not found: t-9' });
    assert.equal(notFound.code, 'TASK_NOT_FOUND');
    assert.equal(notFound.message, 'Task not found: t-9');
    const byReason = v10.decodeError({
      code: -31999,
      message: 'nope',
      data: [
        {
          '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
          reason: 'VERSION_NOT_SUPPORTED',
          domain: 'a2a-protocol.org',
        },
      ],
    });
    assert.equal(byReason.code, 'VERSION_NOT_SUPPORTED');
    const withField = v10.decodeError({
      code: -32602,
      message: 'bad',
      data: [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field: 'message.role' }] }],
    });
    assert.equal(withField.field, 'message.role');
    assert.equal(v10.decodeError({ code: -1, message: 'weird' }).code, 'INTERNAL');
    assert.equal(v10.decodeError('oops').code, 'INVALID_AGENT_RESPONSE');
    assert.equal(v10.decodeError({ code: -32603, message: `a\r\nb${'x'.repeat(5000)}` }).message.includes('\n'), false);
  });
});

describe('v10 agent card', () => {
  const card: AgentCard = {
    name: 'Airlock',
    description: 'Gateway',
    version: '1.2.3',
    provider: { organization: 'Example', url: 'https://example.com' },
    interfaces: [
      { url: 'https://a.example/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url: 'https://a.example/a2a', protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
    ],
    capabilities: { streaming: true, pushNotifications: false, extendedAgentCard: true },
    securitySchemes: {
      bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
      key: { type: 'apiKey', location: 'header', name: 'X-API-Key' },
    },
    securityRequirements: [{ bearer: [] }, { key: [] }],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'echo', name: 'Echo', description: 'Echoes', tags: ['test'] }],
  };

  it('renders the v1.0 shape', () => {
    assert.deepEqual(v10.encodeCard(card), {
      name: 'Airlock',
      description: 'Gateway',
      supportedInterfaces: [
        { url: 'https://a.example/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
        { url: 'https://a.example/a2a', protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
      ],
      version: '1.2.3',
      provider: { url: 'https://example.com', organization: 'Example' },
      capabilities: { streaming: true, pushNotifications: false, extendedAgentCard: true },
      securitySchemes: {
        bearer: { httpAuthSecurityScheme: { scheme: 'Bearer', bearerFormat: 'JWT' } },
        key: { apiKeySecurityScheme: { location: 'header', name: 'X-API-Key' } },
      },
      securityRequirements: [{ schemes: { bearer: { list: [] } } }, { schemes: { key: { list: [] } } }],
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: [{ id: 'echo', name: 'Echo', description: 'Echoes', tags: ['test'] }],
    });
  });

  it('decodes a v0.3-shaped card too', () => {
    const decoded = v10.decodeCard({
      protocolVersion: '0.3.0',
      name: 'Legacy',
      description: 'Old agent',
      url: 'https://old.example/rpc',
      additionalInterfaces: [
        { url: 'https://old.example/rpc', transport: 'JSONRPC' },
        { url: 'https://old.example/rest', transport: 'HTTP+JSON' },
        { url: 'https://old.example/x', transport: 'CUSTOM' },
      ],
      version: '0.1',
      capabilities: { streaming: true, stateTransitionHistory: true },
      securitySchemes: {
        oauth: { type: 'oauth2', flows: {} },
        bearer: { type: 'http', scheme: 'Bearer' },
      },
      security: [{ oauth: ['read'] }, { bearer: [] }],
      defaultInputModes: ['text'],
      defaultOutputModes: ['text'],
      skills: [],
      supportsAuthenticatedExtendedCard: true,
    });
    assert.deepEqual(decoded, {
      name: 'Legacy',
      description: 'Old agent',
      version: '0.1',
      interfaces: [
        { url: 'https://old.example/rpc', protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
        { url: 'https://old.example/rest', protocolBinding: 'HTTP+JSON', protocolVersion: '0.3' },
      ],
      capabilities: { streaming: true, pushNotifications: false, extendedAgentCard: true },
      securitySchemes: { oauth: { type: 'oauth2', flows: {} }, bearer: { type: 'http', scheme: 'bearer' } },
      securityRequirements: [{ oauth: ['read'] }, { bearer: [] }],
      defaultInputModes: ['text'],
      defaultOutputModes: ['text'],
      skills: [],
    });
  });

  it('skips interfaces it cannot speak and keeps tenants', () => {
    const decoded = v10.decodeCard({
      name: 'x',
      supportedInterfaces: [
        { url: 'grpc.example:443', protocolBinding: 'GRPC', protocolVersion: '1.0', tenant: 'acme' },
        { url: 'https://x.example', protocolBinding: 'urn:custom', protocolVersion: '1.0' },
        { url: 'https://x.example', protocolBinding: 'JSONRPC', protocolVersion: '2.0' },
        { url: 'https://x.example', protocolBinding: 'JSONRPC', protocolVersion: '1.0.1' },
      ],
    });
    assert.deepEqual(decoded.interfaces, [
      { url: 'grpc.example:443', protocolBinding: 'GRPC', protocolVersion: '1.0', tenant: 'acme' },
      { url: 'https://x.example', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
    ]);
  });

  it('refuses a card with no endpoint at all', () => {
    assertA2AError(() => v10.decodeCard({ name: 'x' }), 'INVALID_AGENT_RESPONSE', 'card');
    assertA2AError(() => v10.decodeCard({ name: 'x', supportedInterfaces: 'https://x' }), 'INVALID_AGENT_RESPONSE');
  });
});

describe('v10 proto field names', () => {
  it('accepts snake_case parameter names as ProtoJSON does', () => {
    const get = v10.decodeRequest('GetTask', { id: 't1', history_length: 2 });
    assert.deepEqual(get, { method: 'get', params: { id: 't1', historyLength: 2 } });
    const list = v10.decodeRequest('ListTasks', { context_id: 'c1', page_size: 2, include_artifacts: true });
    assert.equal(list.method, 'list');
    if (list.method === 'list') {
      assert.equal(list.params.contextId, 'c1');
      assert.equal(list.params.pageSize, 2);
      assert.equal(list.params.includeArtifacts, true);
    }
    const send = v10.decodeRequest('SendMessage', {
      message: {
        message_id: 'm1',
        role: 'ROLE_USER',
        parts: [{ text: 'x', media_type: 'text/plain' }],
        context_id: 'c9',
      },
      configuration: { return_immediately: true },
    });
    assert.equal(send.method, 'send');
    if (send.method === 'send') {
      assert.equal(send.params.message.messageId, 'm1');
      assert.equal(send.params.message.contextId, 'c9');
      assert.equal(send.params.message.parts[0]?.mediaType, 'text/plain');
      assert.equal(send.params.configuration.returnImmediately, true);
    }
  });

  it('keeps metadata keys as sent', () => {
    const send = v10.decodeRequest('SendMessage', {
      message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'x' }], metadata: { some_key: 1 } },
    });
    if (send.method === 'send') assert.deepEqual(send.params.message.metadata, { some_key: 1 });
  });
});

describe('v10 JSON writers (property)', () => {
  it('write exactly JSON.stringify of the send-result encoder', () => {
    fc.assert(
      fc.property(sendResultArb, (result) => {
        assert.equal(V10_JSON.sendResult(result), JSON.stringify(v10.encodeSendResult(result)));
      }),
    );
  });

  it('write exactly JSON.stringify of the task encoder', () => {
    fc.assert(
      fc.property(taskArb, (task) => {
        assert.equal(V10_JSON.task(task), JSON.stringify(v10.encodeTask(task)));
      }),
    );
  });

  it('write exactly JSON.stringify of the stream-event encoder', () => {
    fc.assert(
      fc.property(streamEventArb, (event) => {
        assert.equal(V10_JSON.streamEvent(event), JSON.stringify(v10.encodeStreamEvent(event)));
      }),
      { numRuns: 300 },
    );
  });

  it('escape what JSON escapes, in every field', () => {
    fc.assert(
      fc.property(escapeArb, (text) => {
        const task = taskWithStrings(text);
        assert.equal(V10_JSON.task(task), JSON.stringify(v10.encodeTask(task)));
        const message = task.history[0] as Message;
        const result = { kind: 'message' as const, message };
        assert.equal(V10_JSON.sendResult(result), JSON.stringify(v10.encodeSendResult(result)));
        for (const event of updatesWithStrings(text)) {
          assert.equal(V10_JSON.streamEvent(event), JSON.stringify(v10.encodeStreamEvent(event)));
        }
      }),
    );
  });
});
