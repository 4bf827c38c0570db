import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { A2AError } from './errors.js';
import type {
  A2ARequest,
  AgentCard,
  Artifact,
  Message,
  Part,
  SendResult,
  StreamEvent,
  Task,
  TaskStatus,
} from './model.js';
import { V03_JSON, V03_METHODS, v03 } from './v03/index.js';
import { v10 } from './v10/index.js';
import { UNKNOWN_TIMESTAMP } from './validation/timestamps.js';
import {
  assertA2AError,
  cardArb,
  escapeArb,
  hostileArb,
  listParamsArb,
  listResultArb,
  mutate,
  onlyA2AErrors,
  requestArb,
  sendResultArb,
  streamEventArb,
  taskArb,
  taskWithStrings,
  updatesWithStrings,
} from './arbitraries.test.js';

function json<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

function assertNoUndefined(value: unknown, path = 'root'): void {
  assert.notEqual(value, undefined, `undefined at ${path}`);
  if (Array.isArray(value)) value.forEach((v, i) => assertNoUndefined(v, `${path}[${i}]`));
  else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) assertNoUndefined(v, `${path}.${k}`);
  }
}

// ---------------------------------------------------------------------------------------------
// What v0.3 can carry: text and data parts lose mediaType/filename; a wrapped non-object data
// value loses an empty metadata object (there is nothing left once the flag is removed).

function viewPart(part: Part): Part {
  if (part.kind === 'raw' || part.kind === 'url') return part;
  const out: Part = part.kind === 'text' ? { kind: 'text', text: part.text } : { kind: 'data', data: part.data };
  const wrapped =
    part.kind === 'data' && (typeof part.data !== 'object' || part.data === null || Array.isArray(part.data));
  if (part.metadata !== undefined && !(wrapped && Object.keys(part.metadata).length === 0))
    out.metadata = part.metadata;
  return out;
}
function viewMessage(message: Message): Message {
  return { ...message, parts: message.parts.map(viewPart) };
}
function viewArtifact(artifact: Artifact): Artifact {
  return { ...artifact, parts: artifact.parts.map(viewPart) };
}
function viewStatus(status: TaskStatus): TaskStatus {
  return status.message === undefined ? status : { ...status, message: viewMessage(status.message) };
}
function viewTask(task: Task): Task {
  return {
    ...task,
    status: viewStatus(task.status),
    artifacts: task.artifacts.map(viewArtifact),
    history: task.history.map(viewMessage),
  };
}
function viewResult(result: SendResult): SendResult {
  return result.kind === 'task'
    ? { kind: 'task', task: viewTask(result.task) }
    : { kind: 'message', message: viewMessage(result.message) };
}
function viewEvent(event: StreamEvent): StreamEvent {
  switch (event.kind) {
    case 'task':
    case 'message':
      return viewResult(event);
    case 'status-update':
      return { ...event, status: viewStatus(event.status) };
    case 'artifact-update':
      return { ...event, artifact: viewArtifact(event.artifact) };
  }
}
/** v0.3 has no tenant anywhere; the other request fields all survive. */
function viewRequest(request: A2ARequest): A2ARequest {
  switch (request.method) {
    case 'send':
    case 'stream': {
      const { tenant: _tenant, ...params } = request.params;
      return { method: request.method, params: { ...params, message: viewMessage(params.message) } };
    }
    case 'get':
    case 'cancel':
    case 'subscribe': {
      const { tenant: _tenant, ...params } = request.params;
      return { ...request, params };
    }
    case 'extended-card':
      return { method: 'extended-card', params: {} };
    default:
      return request;
  }
}

const userMessage = { kind: 'message', messageId: 'm-1', role: 'user', parts: [{ kind: 'text', text: 'hello' }] };

function send(params: unknown): A2ARequest {
  return v03.decodeRequest('message/send', params);
}

describe('v03 round trips (property)', () => {
  it('every request: encodeRequest → decodeRequest (ListTasks is UNSUPPORTED_OPERATION)', () => {
    fc.assert(
      fc.property(requestArb, (request) => {
        if (request.method === 'list') {
          assertA2AError(() => v03.encodeRequest(request), 'UNSUPPORTED_OPERATION');
          return;
        }
        const wire = v03.encodeRequest(request);
        assertNoUndefined(wire.params);
        assert.ok(v03.hasMethod(wire.method));
        assert.deepEqual(v03.decodeRequest(wire.method, json(wire.params)), json(viewRequest(request)));
      }),
      { numRuns: 300 },
    );
  });

  it('Task: encodeTask → decodeTask', () => {
    fc.assert(
      fc.property(taskArb, (task) => {
        const wire = v03.encodeTask(task);
        assertNoUndefined(wire);
        assert.deepEqual(v03.decodeTask(json(wire)), json(viewTask(task)));
      }),
    );
  });

  it('SendResult: encodeSendResult → decodeSendResult', () => {
    fc.assert(
      fc.property(sendResultArb, (result) => {
        const wire = v03.encodeSendResult(result);
        assertNoUndefined(wire);
        assert.deepEqual(v03.decodeSendResult(json(wire)), json(viewResult(result)));
      }),
    );
  });

  it('StreamEvent: encode → decode, final included', () => {
    fc.assert(
      fc.property(streamEventArb, (event) => {
        const wire = v03.encodeStreamEvent(event);
        assertNoUndefined(wire);
        assert.deepEqual(v03.decodeStreamEvent(json(wire)), json(viewEvent(event)));
      }),
    );
  });

  it('AgentCard: encodeCard → decodeCard (via the embedded v1.0 interfaces)', () => {
    fc.assert(
      fc.property(cardArb, (card) => {
        const wire = v03.encodeCard(card);
        assertNoUndefined(wire);
        assert.deepEqual(v03.decodeCard(json(wire)), json(card));
      }),
    );
  });

  it('AgentCard without the embedded list: only the 0.3 endpoints remain', () => {
    fc.assert(
      fc.property(cardArb, (card) => {
        const wire = json(v03.encodeCard(card)) as Record<string, unknown>;
        delete wire.supportedInterfaces;
        const decoded = v03.decodeCard(wire);
        assert.ok(decoded.interfaces.length >= 1);
        for (const i of decoded.interfaces) {
          assert.equal(i.protocolVersion, '0.3');
          assert.ok(card.interfaces.some((c) => c.url === i.url && c.protocolBinding === i.protocolBinding));
        }
        assert.deepEqual({ ...decoded, interfaces: [] }, json({ ...card, interfaces: [] }));
      }),
    );
  });

  it('ListTasks is not part of v0.3', () => {
    fc.assert(
      fc.property(listResultArb, listParamsArb, (result, params) => {
        assertA2AError(() => v03.encodeListResult(result), 'UNSUPPORTED_OPERATION');
        assertA2AError(() => v03.decodeListResult(v10.encodeListResult(result)), 'UNSUPPORTED_OPERATION');
        assertA2AError(() => v03.encodeRequest({ method: 'list', params }), 'UNSUPPORTED_OPERATION');
      }),
      { numRuns: 20 },
    );
    assertA2AError(() => v03.decodeRequest('ListTasks', {}), 'METHOD_NOT_FOUND');
    assertA2AError(() => v03.decodeRequest('tasks/list', {}), 'METHOD_NOT_FOUND');
  });
});

describe('v03 decoders only throw A2AError (property)', () => {
  for (const method of V03_METHODS) {
    it(`decodeRequest('${method}') on arbitrary input`, () => {
      fc.assert(
        fc.property(fc.oneof(hostileArb, fc.jsonValue()), (params) => {
          onlyA2AErrors(() => v03.decodeRequest(method, params));
        }),
        { numRuns: 200 },
      );
    });
  }

  it('decodeRequest on mutated valid requests', () => {
    fc.assert(
      fc.property(requestArb, fc.nat(), hostileArb, (request, seed, replacement) => {
        if (request.method === 'list') return;
        const wire = v03.encodeRequest(request);
        onlyA2AErrors(() => v03.decodeRequest(wire.method, mutate(wire.params, seed, replacement)));
      }),
      { numRuns: 500 },
    );
  });

  it('client decoders on arbitrary input', () => {
    fc.assert(
      fc.property(fc.oneof(hostileArb, fc.jsonValue()), (value) => {
        onlyA2AErrors(() => v03.decodeTask(value));
        onlyA2AErrors(() => v03.decodeSendResult(value));
        onlyA2AErrors(() => v03.decodeStreamEvent(value));
        onlyA2AErrors(() => v03.decodeCard(value));
        assert.ok(v03.decodeError(value) instanceof A2AError);
      }),
      { numRuns: 300 },
    );
  });

  it('client decoders on mutated valid results', () => {
    fc.assert(
      fc.property(streamEventArb, cardArb, fc.nat(), hostileArb, (event, card, seed, replacement) => {
        onlyA2AErrors(() => v03.decodeStreamEvent(mutate(v03.encodeStreamEvent(event), seed, replacement)));
        onlyA2AErrors(() => v03.decodeCard(mutate(v03.encodeCard(card), seed, replacement)));
      }),
      { numRuns: 500 },
    );
  });

  it('v1.0 method names are not v0.3 methods', () => {
    for (const method of ['SendMessage', 'GetTask', 'toString', '__proto__']) {
      assertA2AError(() => v03.decodeRequest(method, {}), 'METHOD_NOT_FOUND');
      assert.equal(v03.hasMethod(method), false);
    }
  });
});

describe('v03 message/send validation', () => {
  it('decodes the digest example (file parts, data parts, blocking)', () => {
    const request = send({
      message: {
        kind: 'message',
        messageId: 'm-1',
        role: 'user',
        parts: [
          { kind: 'text', text: 'hello', metadata: { lang: 'en' } },
          { kind: 'file', file: { bytes: 'aGVsbG8=', mimeType: 'text/plain', name: 'hello.txt' } },
          { kind: 'file', file: { uri: 'https://example.com/a.pdf' } },
          { kind: 'data', data: { a: 1 } },
        ],
        contextId: 'ctx-1',
        taskId: 'task-1',
      },
      configuration: { blocking: false, historyLength: 3, acceptedOutputModes: ['text/plain'] },
      metadata: { m: true },
    });
    assert.deepEqual(request, {
      method: 'send',
      params: {
        message: {
          messageId: 'm-1',
          role: 'user',
          parts: [
            { kind: 'text', text: 'hello', metadata: { lang: 'en' } },
            { kind: 'raw', raw: 'aGVsbG8=', mediaType: 'text/plain', filename: 'hello.txt' },
            { kind: 'url', url: 'https://example.com/a.pdf' },
            { kind: 'data', data: { a: 1 } },
          ],
          contextId: 'ctx-1',
          taskId: 'task-1',
        },
        configuration: { returnImmediately: true, historyLength: 3, acceptedOutputModes: ['text/plain'] },
        metadata: { m: true },
      },
    });
  });

  it('blocking polarity: absent → blocking, even when configuration is present', () => {
    const config = (configuration: unknown): unknown => {
      const request = send({ message: userMessage, configuration });
      return request.method === 'send' ? request.params.configuration.returnImmediately : undefined;
    };
    assert.equal(config(undefined), false);
    assert.equal(config({}), false);
    assert.equal(config({ blocking: true }), false);
    assert.equal(config({ blocking: false }), true);
  });

  it('accepts a message without kind; message/stream decodes to stream', () => {
    const { kind: _kind, ...noKind } = userMessage;
    assert.equal(send({ message: noKind }).method, 'send');
    assert.equal(v03.decodeRequest('message/stream', { message: userMessage }).method, 'stream');
  });

  it('unwraps a flagged data value and drops the flag', () => {
    const request = send({
      message: {
        ...userMessage,
        parts: [
          { kind: 'data', data: { value: [1, 2] }, metadata: { data_part_compat: true } },
          { kind: 'data', data: { value: 'x' }, metadata: { data_part_compat: true, keep: 1 } },
          { kind: 'data', data: { value: 'not wrapped' } },
        ],
      },
    });
    assert.ok(request.method === 'send');
    assert.deepEqual(request.params.message.parts, [
      { kind: 'data', data: [1, 2] },
      { kind: 'data', data: 'x', metadata: { keep: 1 } },
      { kind: 'data', data: { value: 'not wrapped' } },
    ]);
  });

  const invalid: [string, unknown, string][] = [
    ['params not an object', 'x', 'params'],
    ['message missing', {}, 'message'],
    ['message kind wrong', { message: { ...userMessage, kind: 'task' } }, 'message.kind'],
    ['role missing (the official SDK accepts this)', { message: { ...userMessage, role: undefined } }, 'message.role'],
    ['role agent', { message: { ...userMessage, role: 'agent' } }, 'message.role'],
    ['role in v1.0 spelling', { message: { ...userMessage, role: 'ROLE_USER' } }, 'message.role'],
    ['messageId empty', { message: { ...userMessage, messageId: '' } }, 'message.messageId'],
    ['parts empty', { message: { ...userMessage, parts: [] } }, 'message.parts'],
    ['part kind missing', { message: { ...userMessage, parts: [{ text: 'x' }] } }, 'message.parts[0].kind'],
    [
      'part kind unknown',
      { message: { ...userMessage, parts: [{ kind: 'image', text: 'x' }] } },
      'message.parts[0].kind',
    ],
    ['text part without text', { message: { ...userMessage, parts: [{ kind: 'text' }] } }, 'message.parts[0].text'],
    ['file part without file', { message: { ...userMessage, parts: [{ kind: 'file' }] } }, 'message.parts[0].file'],
    [
      'file with bytes and uri',
      { message: { ...userMessage, parts: [{ kind: 'file', file: { bytes: 'aGk=', uri: 'https://x' } }] } },
      'message.parts[0].file',
    ],
    [
      'file with neither',
      { message: { ...userMessage, parts: [{ kind: 'file', file: { name: 'a' } }] } },
      'message.parts[0].file',
    ],
    [
      'file bytes not base64',
      { message: { ...userMessage, parts: [{ kind: 'file', file: { bytes: '***' } }] } },
      'message.parts[0].file.bytes',
    ],
    [
      'file uri too long',
      { message: { ...userMessage, parts: [{ kind: 'file', file: { uri: 'u'.repeat(8193) } }] } },
      'message.parts[0].file.uri',
    ],
    [
      'file mimeType not a string',
      { message: { ...userMessage, parts: [{ kind: 'file', file: { uri: 'https://x', mimeType: 1 } }] } },
      'message.parts[0].file.mimeType',
    ],
    [
      'data part with an array',
      { message: { ...userMessage, parts: [{ kind: 'data', data: [1] }] } },
      'message.parts[0].data',
    ],
    [
      'data part with a string',
      { message: { ...userMessage, parts: [{ kind: 'data', data: 'x' }] } },
      'message.parts[0].data',
    ],
    ['data part without data', { message: { ...userMessage, parts: [{ kind: 'data' }] } }, 'message.parts[0].data'],
    ['contextId empty', { message: { ...userMessage, contextId: '' } }, 'message.contextId'],
    ['taskId with a space', { message: { ...userMessage, taskId: 't 1' } }, 'message.taskId'],
    ['blocking a string', { message: userMessage, configuration: { blocking: 'false' } }, 'configuration.blocking'],
    [
      'historyLength negative',
      { message: userMessage, configuration: { historyLength: -5 } },
      'configuration.historyLength',
    ],
    [
      'historyLength fractional',
      { message: userMessage, configuration: { historyLength: 0.5 } },
      'configuration.historyLength',
    ],
    [
      'pushNotificationConfig not an object',
      { message: userMessage, configuration: { pushNotificationConfig: 'x' } },
      'configuration.pushNotificationConfig',
    ],
    ['metadata not an object', { message: userMessage, metadata: [] }, 'metadata'],
  ];
  for (const [name, params, field] of invalid) {
    it(`refuses ${name} with -32602 at ${field}`, () => {
      assertA2AError(() => send(params), 'INVALID_PARAMS', field);
    });
  }
});

describe('v03 other methods', () => {
  it('tasks/get, tasks/cancel, tasks/resubscribe', () => {
    assert.deepEqual(v03.decodeRequest('tasks/get', { id: 't-1', historyLength: 2, metadata: {} }), {
      method: 'get',
      params: { id: 't-1', historyLength: 2 },
    });
    assert.deepEqual(v03.decodeRequest('tasks/cancel', { id: 't-1', metadata: { a: 1 } }), {
      method: 'cancel',
      params: { id: 't-1', metadata: { a: 1 } },
    });
    assert.deepEqual(v03.decodeRequest('tasks/resubscribe', { id: 't-1' }), {
      method: 'subscribe',
      params: { id: 't-1' },
    });
    assertA2AError(() => v03.decodeRequest('tasks/get', {}), 'INVALID_PARAMS', 'id');
    assertA2AError(
      () => v03.decodeRequest('tasks/get', { id: 't', historyLength: -1 }),
      'INVALID_PARAMS',
      'historyLength',
    );
    assertA2AError(() => v03.decodeRequest('tasks/cancel', { id: '' }), 'INVALID_PARAMS', 'id');
    assertA2AError(() => v03.decodeRequest('tasks/resubscribe', { id: 1 }), 'INVALID_PARAMS', 'id');
    assertA2AError(() => v03.decodeRequest('tasks/get', { id: 't', metadata: 'x' }), 'INVALID_PARAMS', 'metadata');
  });

  it('agent/getAuthenticatedExtendedCard and the push-config methods', () => {
    assert.deepEqual(v03.decodeRequest('agent/getAuthenticatedExtendedCard', undefined), {
      method: 'extended-card',
      params: {},
    });
    // The push-config decoders and encoders are tested in v03/push.test.ts.
    assert.equal(v03.decodeRequest('tasks/pushNotificationConfig/list', { id: 't' }).method, 'push-config');
    assertA2AError(
      () => v03.encodeRequest({ method: 'push-config', params: { op: 'list', taskId: 't' } }),
      'UNSUPPORTED_OPERATION',
    );
  });

  it('encodes requests for 0.3 servers: explicit blocking, kind tags, no tenant', () => {
    assert.deepEqual(
      v03.encodeRequest({
        method: 'send',
        params: {
          message: { messageId: 'm', role: 'user', parts: [{ kind: 'raw', raw: 'aGk=', mediaType: 'text/plain' }] },
          configuration: { returnImmediately: false },
          tenant: 'acme',
        },
      }),
      {
        method: 'message/send',
        params: {
          message: {
            kind: 'message',
            messageId: 'm',
            role: 'user',
            parts: [{ kind: 'file', file: { bytes: 'aGk=', mimeType: 'text/plain' } }],
          },
          configuration: { blocking: true },
        },
      },
    );
    assert.deepEqual(v03.encodeRequest({ method: 'subscribe', params: { id: 't', tenant: 'x' } }), {
      method: 'tasks/resubscribe',
      params: { id: 't' },
    });
  });
});

describe('v03 encoders', () => {
  const task: Task = {
    id: 't-1',
    contextId: 'ctx-1',
    status: { state: 'input-required', timestamp: '2026-01-01T00:00:00.000Z' },
    artifacts: [{ artifactId: 'a', parts: [{ kind: 'data', data: 42, mediaType: 'application/json' }] }],
    history: [],
  };

  it('bare Task with kind; non-object data wrapped; text/data mediaType dropped', () => {
    assert.deepEqual(v03.encodeSendResult({ kind: 'task', task }), {
      kind: 'task',
      id: 't-1',
      contextId: 'ctx-1',
      status: { state: 'input-required', timestamp: '2026-01-01T00:00:00.000Z' },
      artifacts: [
        { artifactId: 'a', parts: [{ kind: 'data', data: { value: 42 }, metadata: { data_part_compat: true } }] },
      ],
    });
  });

  it('bare Message with kind', () => {
    assert.deepEqual(
      v03.encodeSendResult({
        kind: 'message',
        message: { messageId: 'a', role: 'agent', parts: [{ kind: 'text', text: 'hi' }] },
      }),
      { kind: 'message', messageId: 'a', role: 'agent', parts: [{ kind: 'text', text: 'hi' }] },
    );
  });

  it('status-update carries final from the canonical event', () => {
    const base = {
      kind: 'status-update' as const,
      taskId: 't-1',
      contextId: 'ctx-1',
      status: { state: 'input-required' as const, timestamp: '2026-01-01T00:00:00.000Z' },
    };
    assert.deepEqual(v03.encodeStreamEvent({ ...base, final: true }), {
      kind: 'status-update',
      taskId: 't-1',
      contextId: 'ctx-1',
      status: { state: 'input-required', timestamp: '2026-01-01T00:00:00.000Z' },
      final: true,
    });
    assert.equal((v03.encodeStreamEvent({ ...base, final: false }) as { final: boolean }).final, false);
  });

  it('artifact-update with kind', () => {
    assert.deepEqual(
      v03.encodeStreamEvent({
        kind: 'artifact-update',
        taskId: 't',
        contextId: 'c',
        artifact: { artifactId: 'a', parts: [{ kind: 'url', url: 'https://x/y', filename: 'y' }] },
        lastChunk: true,
      }),
      {
        kind: 'artifact-update',
        taskId: 't',
        contextId: 'c',
        artifact: { artifactId: 'a', parts: [{ kind: 'file', file: { uri: 'https://x/y', name: 'y' } }] },
        lastChunk: true,
      },
    );
  });

  it('errors are plain JSON-RPC errors', () => {
    assert.deepEqual(v03.encodeError(new A2AError('EXTENDED_AGENT_CARD_NOT_CONFIGURED')), {
      code: -32007,
      message: 'Extended agent card is not configured',
    });
    const error = assertA2AError(() => send({ message: { ...userMessage, parts: [] } }), 'INVALID_PARAMS');
    assert.deepEqual(v03.encodeError(error), {
      code: -32602,
      message: 'Invalid params: message.parts must not be empty',
    });
  });
});

describe('v03 client decoders on real-world shapes', () => {
  it('timestamps without Z are UTC; missing timestamps are the epoch', () => {
    const task = v03.decodeTask({
      kind: 'task',
      id: 't',
      contextId: 'c',
      status: { state: 'working', timestamp: '2025-07-01T10:00:00' },
    });
    assert.equal(task.status.timestamp, '2025-07-01T10:00:00.000Z');
    assert.equal(
      v03.decodeTask({ id: 't', contextId: 'c', status: { state: 'unknown' } }).status.timestamp,
      UNKNOWN_TIMESTAMP,
    );
  });

  it('requires contextId on tasks; refuses a wrong kind', () => {
    assertA2AError(
      () => v03.decodeTask({ id: 't', status: { state: 'working' } }),
      'INVALID_AGENT_RESPONSE',
      'result.contextId',
    );
    assertA2AError(
      () => v03.decodeTask({ kind: 'message', id: 't', contextId: 'c', status: { state: 'working' } }),
      'INVALID_AGENT_RESPONSE',
      'result.kind',
    );
    assertA2AError(
      () => v03.decodeTask({ id: 't', contextId: 'c', status: { state: 'TASK_STATE_WORKING' } }),
      'INVALID_AGENT_RESPONSE',
      'result.status.state',
    );
  });

  it('infers a missing kind from the shape', () => {
    assert.equal(v03.decodeSendResult({ id: 't', contextId: 'c', status: { state: 'completed' } }).kind, 'task');
    assert.equal(v03.decodeSendResult({ messageId: 'a', role: 'agent', parts: [] }).kind, 'message');
    const event = v03.decodeStreamEvent({ taskId: 't', contextId: 'c', status: { state: 'completed' } });
    assert.deepEqual(event, {
      kind: 'status-update',
      taskId: 't',
      contextId: 'c',
      status: { state: 'completed', timestamp: UNKNOWN_TIMESTAMP },
      final: true,
    });
  });

  it('a send result cannot be an update event', () => {
    assertA2AError(
      () =>
        v03.decodeSendResult({
          kind: 'status-update',
          taskId: 't',
          contextId: 'c',
          status: { state: 'working' },
          final: false,
        }),
      'INVALID_AGENT_RESPONSE',
      'result.kind',
    );
  });

  it('decodes a stream of the digest example', () => {
    const frames = [
      { kind: 'task', id: 't', contextId: 'c', status: { state: 'submitted' } },
      {
        kind: 'artifact-update',
        taskId: 't',
        contextId: 'c',
        artifact: { artifactId: 'a', parts: [{ kind: 'text', text: 'Hel' }] },
        append: false,
      },
      {
        kind: 'artifact-update',
        taskId: 't',
        contextId: 'c',
        artifact: { artifactId: 'a', parts: [{ kind: 'text', text: 'lo' }] },
        append: true,
        lastChunk: true,
      },
      { kind: 'status-update', taskId: 't', contextId: 'c', status: { state: 'completed' }, final: true },
    ];
    const events = frames.map((frame) => v03.decodeStreamEvent(frame));
    assert.deepEqual(
      events.map((e) => e.kind),
      ['task', 'artifact-update', 'artifact-update', 'status-update'],
    );
    const last = events[3];
    assert.ok(last?.kind === 'status-update' && last.final);
  });

  it('decodes remote errors with their 0.3 names', () => {
    assert.equal(
      v03.decodeError({ code: -32007, message: 'Authenticated Extended Card is not configured' }).code,
      'EXTENDED_AGENT_CARD_NOT_CONFIGURED',
    );
    assert.equal(v03.decodeError({ code: -32601, message: 'Method not found' }).code, 'METHOD_NOT_FOUND');
    assert.equal(v03.decodeError({ message: 'no code' }).code, 'INVALID_AGENT_RESPONSE');
  });
});

describe('v03 agent card', () => {
  const card: AgentCard = {
    name: 'Airlock',
    description: 'Gateway',
    version: '1.2.3',
    interfaces: [
      { url: 'https://a.example/v1', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url: 'https://a.example/a2a', protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
      { url: 'https://a.example/rest', protocolBinding: 'HTTP+JSON', protocolVersion: '0.3' },
    ],
    capabilities: { streaming: true, pushNotifications: false, extendedAgentCard: true },
    securitySchemes: {
      bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
      key: { type: 'apiKey', location: 'query', name: 'key', description: 'API key' },
    },
    securityRequirements: [{ bearer: [] }, { key: ['read'] }],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills: [{ id: 'echo', name: 'Echo', description: 'Echoes', tags: ['test'], examples: ['hi'] }],
  };

  it('renders the v0.3 shape with the v1.0 interface list embedded', () => {
    assert.deepEqual(v03.encodeCard(card), {
      protocolVersion: '0.3.0',
      name: 'Airlock',
      description: 'Gateway',
      url: 'https://a.example/a2a',
      preferredTransport: 'JSONRPC',
      additionalInterfaces: [
        { url: 'https://a.example/a2a', transport: 'JSONRPC' },
        { url: 'https://a.example/rest', transport: 'HTTP+JSON' },
      ],
      version: '1.2.3',
      capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: false },
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        key: { type: 'apiKey', in: 'query', name: 'key', description: 'API key' },
      },
      security: [{ bearer: [] }, { key: ['read'] }],
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain', 'application/json'],
      skills: [{ id: 'echo', name: 'Echo', description: 'Echoes', tags: ['test'], examples: ['hi'] }],
      supportsAuthenticatedExtendedCard: true,
      supportedInterfaces: [
        { url: 'https://a.example/v1', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
        { url: 'https://a.example/a2a', protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
        { url: 'https://a.example/rest', protocolBinding: 'HTTP+JSON', protocolVersion: '0.3' },
      ],
    });
  });

  it('falls back to the first interface when none is declared at 0.3', () => {
    const onlyV1: AgentCard = { ...card, interfaces: [card.interfaces[0]!] };
    const wire = v03.encodeCard(onlyV1) as Record<string, unknown>;
    assert.equal(wire.url, 'https://a.example/v1');
    assert.equal('additionalInterfaces' in wire, false);
  });

  it('refuses to render a card without interfaces', () => {
    assertA2AError(() => v03.encodeCard({ ...card, interfaces: [] }), 'INTERNAL');
  });

  it('decodes a v1.0-shaped card too, skipping schemes it cannot represent (HTTP Basic)', () => {
    const decoded = v03.decodeCard({
      name: 'New',
      description: 'v1 agent',
      version: '2',
      supportedInterfaces: [{ url: 'https://n.example', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
      capabilities: { extendedAgentCard: false, streaming: false },
      securitySchemes: {
        mtls: { mtlsSecurityScheme: {} },
        basic: { httpAuthSecurityScheme: { scheme: 'Basic' } },
        key: { apiKeySecurityScheme: { location: 'header', name: 'X-Key' } },
      },
      securityRequirements: [{ schemes: { key: { list: [] }, mtls: {} } }],
      defaultInputModes: [],
      defaultOutputModes: [],
      skills: [{ id: 's', name: 'S', description: 'd', tags: [], securityRequirements: [] }],
    });
    assert.deepEqual(decoded, {
      name: 'New',
      description: 'v1 agent',
      version: '2',
      interfaces: [{ url: 'https://n.example', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
      capabilities: { streaming: false, pushNotifications: false, extendedAgentCard: false },
      securitySchemes: { mtls: { type: 'mutualTLS' }, key: { type: 'apiKey', location: 'header', name: 'X-Key' } },
      securityRequirements: [{ key: [], mtls: [] }],
      defaultInputModes: [],
      defaultOutputModes: [],
      skills: [{ id: 's', name: 'S', description: 'd', tags: [] }],
    });
  });

  it('refuses malformed known fields', () => {
    const base = v03.encodeCard(card) as Record<string, unknown>;
    assertA2AError(() => v03.decodeCard({ ...base, name: 5 }), 'INVALID_AGENT_RESPONSE', 'card.name');
    assertA2AError(() => v03.decodeCard({ ...base, skills: {} }), 'INVALID_AGENT_RESPONSE', 'card.skills');
    assertA2AError(
      () => v03.decodeCard({ ...base, security: [{ bearer: 'x' }] }),
      'INVALID_AGENT_RESPONSE',
      'card.security[0].bearer',
    );
    assertA2AError(
      () => v03.decodeCard({ ...base, capabilities: { streaming: 'yes' } }),
      'INVALID_AGENT_RESPONSE',
      'card.capabilities.streaming',
    );
  });
});

describe('v03 JSON writers (property)', () => {
  it('write exactly JSON.stringify of the send-result encoder', () => {
    fc.assert(
      fc.property(sendResultArb, (result) => {
        assert.equal(V03_JSON.sendResult(result), JSON.stringify(v03.encodeSendResult(result)));
      }),
    );
  });

  it('write exactly JSON.stringify of the task encoder', () => {
    fc.assert(
      fc.property(taskArb, (task) => {
        assert.equal(V03_JSON.task(task), JSON.stringify(v03.encodeTask(task)));
      }),
    );
  });

  it('write exactly JSON.stringify of the stream-event encoder', () => {
    fc.assert(
      fc.property(streamEventArb, (event) => {
        assert.equal(V03_JSON.streamEvent(event), JSON.stringify(v03.encodeStreamEvent(event)));
      }),
      { numRuns: 300 },
    );
  });

  it('escape what JSON escapes, in every field', () => {
    fc.assert(
      fc.property(escapeArb, (text) => {
        const task = taskWithStrings(text);
        assert.equal(V03_JSON.task(task), JSON.stringify(v03.encodeTask(task)));
        const message = task.history[0] as Message;
        const result = { kind: 'message' as const, message };
        assert.equal(V03_JSON.sendResult(result), JSON.stringify(v03.encodeSendResult(result)));
        for (const event of updatesWithStrings(text)) {
          assert.equal(V03_JSON.streamEvent(event), JSON.stringify(v03.encodeStreamEvent(event)));
        }
      }),
    );
  });
});
