/**
 * The HTTP+JSON codec: its route table, its decoder (the same canonical requests as the v1.0
 * JSON-RPC codec, checked as a property), and the v1.0.1 error mapping.
 */
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hostileArb, idArb, mutate, requestArb, sendParamsArb } from '../arbitraries.test.js';
import { A2A_ERRORS, A2AError, type A2AErrorCode } from '../errors.js';
import type { A2ARequest, PushConfigRequest } from '../model.js';
import { v10 } from '../v10/index.js';
import { decodeHttpJsonRequest } from './decode.js';
import { encodeHttpJsonRequest } from './encode.js';
import { HTTP_JSON_STATUS, httpJsonError } from './errors.js';
import { responseMediaType } from './index.js';
import { matchHttpJsonRoute, type HttpJsonRoute } from './routes.js';

const json = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/** What the server does with an encoded request: match the path, parse the query, parse the body. */
function overHttp(request: A2ARequest): A2ARequest {
  const encoded = encodeHttpJsonRequest(request);
  const route = matchHttpJsonRoute(encoded.method, encoded.path);
  assert.equal(route?.kind, 'route', `${encoded.method} ${encoded.path}`);
  const body = encoded.body === undefined ? undefined : json(encoded.body);
  return decodeHttpJsonRequest(route, new URLSearchParams(encoded.query.toString()), body);
}

function overJsonRpc(request: A2ARequest): A2ARequest {
  const wire = v10.encodeRequest(request);
  return v10.decodeRequest(wire.method, json(wire.params));
}

function outcome(decode: () => unknown): unknown {
  try {
    return { ok: json(decode()) };
  } catch (error) {
    assert.ok(error instanceof A2AError, `not an A2AError: ${String(error)}`);
    return { code: error.code, field: error.field };
  }
}

describe('HTTP+JSON codec: the round trip', () => {
  it('a canonical request encoded as JSON-RPC and as HTTP+JSON decodes to the same request', () => {
    fc.assert(
      fc.property(requestArb, (request) => {
        const viaRpc = overJsonRpc(request);
        assert.deepEqual(overHttp(request), viaRpc);
        assert.deepEqual(viaRpc, json(request));
      }),
      { numRuns: 400 },
    );
  });

  it('a broken send body is refused exactly as JSON-RPC refuses the same params', () => {
    const route: HttpJsonRoute = { kind: 'route', op: 'send', body: 'json' };
    fc.assert(
      fc.property(sendParamsArb, fc.nat(), hostileArb, (params, seed, replacement) => {
        const broken = mutate(json(v10.encodeRequest({ method: 'send', params }).params), seed, replacement);
        if (broken === null || typeof broken !== 'object' || Array.isArray(broken)) return;
        assert.deepEqual(
          outcome(() => decodeHttpJsonRequest(route, new URLSearchParams(), broken)),
          outcome(() => v10.decodeRequest('SendMessage', broken)),
        );
      }),
      { numRuns: 300 },
    );
  });
});

/** A canonical push-config request (no tenant: the binding's paths carry none). */
const pushRequestArb: fc.Arbitrary<PushConfigRequest> = fc.oneof(
  fc.record({
    op: fc.constant('create' as const),
    taskId: idArb,
    config: fc.record(
      {
        url: fc.webUrl(),
        id: idArb,
        token: idArb,
        authentication: fc.record({ scheme: idArb, credentials: idArb }, { requiredKeys: ['scheme'] }),
      },
      { requiredKeys: ['url'] },
    ),
  }),
  fc.record({ op: fc.constantFrom('get' as const, 'delete' as const), taskId: idArb, id: idArb }),
  fc.record(
    { op: fc.constant('list' as const), taskId: idArb, pageSize: fc.integer({ min: 1, max: 100 }), pageToken: idArb },
    { requiredKeys: ['op', 'taskId'] },
  ),
);

/** A push request as the SDKs send it over each binding (`a2a.proto`'s HTTP annotations). */
function pushOverBoth(request: PushConfigRequest): { rest: A2ARequest; rpc: A2ARequest } {
  const base = `/tasks/${encodeURIComponent(request.taskId)}/pushNotificationConfigs`;
  let wire: { method: string; path: string; query: URLSearchParams; body?: unknown; rpc: string; params: unknown };
  switch (request.op) {
    case 'create':
      wire = {
        method: 'POST',
        path: base,
        query: new URLSearchParams(),
        body: { ...request.config, taskId: request.taskId },
        rpc: 'CreateTaskPushNotificationConfig',
        params: { taskId: request.taskId, ...request.config },
      };
      break;
    case 'get':
    case 'delete':
      wire = {
        method: request.op === 'get' ? 'GET' : 'DELETE',
        path: `${base}/${encodeURIComponent(request.id ?? '')}`,
        query: new URLSearchParams(),
        rpc: request.op === 'get' ? 'GetTaskPushNotificationConfig' : 'DeleteTaskPushNotificationConfig',
        params: { taskId: request.taskId, id: request.id },
      };
      break;
    case 'list': {
      const query = new URLSearchParams();
      if (request.pageSize !== undefined) query.set('pageSize', String(request.pageSize));
      if (request.pageToken !== undefined) query.set('pageToken', request.pageToken);
      wire = {
        method: 'GET',
        path: base,
        query,
        rpc: 'ListTaskPushNotificationConfigs',
        params: { taskId: request.taskId, pageSize: request.pageSize, pageToken: request.pageToken },
      };
      break;
    }
  }
  const route = matchHttpJsonRoute(wire.method, wire.path);
  assert.equal(route?.kind, 'route', `${wire.method} ${wire.path}`);
  return {
    rest: decodeHttpJsonRequest(
      route,
      new URLSearchParams(wire.query.toString()),
      wire.body === undefined ? undefined : json(wire.body),
    ),
    rpc: v10.decodeRequest(wire.rpc, json(wire.params)),
  };
}

describe('HTTP+JSON codec: push-config routes', () => {
  it('a push request sent to its REST route and to its JSON-RPC method decodes to the same request', () => {
    fc.assert(
      fc.property(pushRequestArb, (request) => {
        const { rest, rpc } = pushOverBoth(request);
        assert.deepEqual(rest, rpc);
        assert.deepEqual(rest, { method: 'push-config', params: json(request) });
      }),
      { numRuns: 300 },
    );
  });

  const table: [string, string, string, unknown, string, Record<string, unknown>][] = [
    [
      'POST',
      '/tasks/t-1/pushNotificationConfigs',
      '',
      { url: 'https://h.example/a' },
      'CreateTaskPushNotificationConfig',
      { taskId: 't-1', url: 'https://h.example/a' },
    ],
    [
      'POST',
      '/tasks/t-1/pushNotificationConfigs',
      '',
      { taskId: 'other', url: 'https://h.example/a', id: 'c-1' },
      'CreateTaskPushNotificationConfig',
      { taskId: 't-1', url: 'https://h.example/a', id: 'c-1' },
    ],
    [
      'GET',
      '/tasks/t%3A1/pushNotificationConfigs/c%2F1',
      '',
      undefined,
      'GetTaskPushNotificationConfig',
      { taskId: 't:1', id: 'c/1' },
    ],
    [
      'GET',
      '/tasks/t-1/pushNotificationConfigs',
      'pageSize=2&pageToken=2',
      undefined,
      'ListTaskPushNotificationConfigs',
      { taskId: 't-1', pageSize: 2, pageToken: '2' },
    ],
    [
      'GET',
      '/tasks/t-1/pushNotificationConfigs',
      'taskId=other&pageSize=0',
      undefined,
      'ListTaskPushNotificationConfigs',
      { taskId: 't-1' },
    ],
    [
      'DELETE',
      '/tasks/t-1/pushNotificationConfigs/c-1',
      'id=other',
      undefined,
      'DeleteTaskPushNotificationConfig',
      { taskId: 't-1', id: 'c-1' },
    ],
  ];
  for (const [method, path, query, body, rpcMethod, params] of table) {
    it(`${method} ${path}${query ? `?${query}` : ''} is ${rpcMethod}`, () => {
      const route = matchHttpJsonRoute(method, path);
      assert.equal(route?.kind, 'route');
      assert.deepEqual(
        decodeHttpJsonRequest(route, new URLSearchParams(query), body),
        v10.decodeRequest(rpcMethod, params),
      );
    });
  }

  it('refuses what the JSON-RPC codec refuses, naming the same field', () => {
    const create = matchHttpJsonRoute('POST', '/tasks/t-1/pushNotificationConfigs');
    const list = matchHttpJsonRoute('GET', '/tasks/t-1/pushNotificationConfigs');
    assert.equal(create?.kind, 'route');
    assert.equal(list?.kind, 'route');
    for (const [decode, field] of [
      [() => decodeHttpJsonRequest(create, new URLSearchParams(), { token: 't' }), 'url'],
      [() => decodeHttpJsonRequest(list, new URLSearchParams('pageSize=101'), undefined), 'pageSize'],
      [() => decodeHttpJsonRequest({ ...create, taskId: '%E0%A4%A' }, new URLSearchParams(), { url: 'x' }), 'taskId'],
    ] as const) {
      assert.throws(
        decode,
        (error: unknown) => error instanceof A2AError && error.code === 'INVALID_PARAMS' && error.field === field,
      );
    }
  });
});

describe('HTTP+JSON codec: routes', () => {
  const cases: [string, string, unknown][] = [
    ['POST', '/message:send', { kind: 'route', op: 'send', body: 'json' }],
    ['POST', '/message:stream', { kind: 'route', op: 'stream', body: 'json' }],
    ['GET', '/tasks', { kind: 'route', op: 'list', body: 'none' }],
    ['GET', '/tasks/t-1', { kind: 'route', op: 'get', taskId: 't-1', body: 'none' }],
    ['POST', '/tasks/t-1:cancel', { kind: 'route', op: 'cancel', taskId: 't-1', body: 'optional' }],
    ['GET', '/tasks/t-1:subscribe', { kind: 'route', op: 'subscribe', taskId: 't-1', body: 'none' }],
    ['POST', '/tasks/t-1:subscribe', { kind: 'route', op: 'subscribe', taskId: 't-1', body: 'optional' }],
    ['GET', '/extendedAgentCard', { kind: 'route', op: 'extended-card', body: 'none' }],
    [
      'POST',
      '/tasks/t-1/pushNotificationConfigs',
      { kind: 'route', op: 'push-config', push: 'create', taskId: 't-1', body: 'json' },
    ],
    [
      'GET',
      '/tasks/t-1/pushNotificationConfigs',
      { kind: 'route', op: 'push-config', push: 'list', taskId: 't-1', body: 'none' },
    ],
    [
      'GET',
      '/tasks/t:1/pushNotificationConfigs/c:cancel',
      { kind: 'route', op: 'push-config', push: 'get', taskId: 't:1', configId: 'c:cancel', body: 'none' },
    ],
    [
      'DELETE',
      '/tasks/t-1/pushNotificationConfigs/c-1',
      { kind: 'route', op: 'push-config', push: 'delete', taskId: 't-1', configId: 'c-1', body: 'none' },
    ],
    ['PUT', '/tasks/t-1/pushNotificationConfigs', { kind: 'method-not-allowed', allow: 'POST, GET' }],
    ['POST', '/tasks/t-1/pushNotificationConfigs/c-1', { kind: 'method-not-allowed', allow: 'GET, DELETE' }],
    ['GET', '/tasks/t-1/pushNotificationConfigs/', undefined],
    ['GET', '/tasks/t-1/pushNotificationConfigs/c-1/x', undefined],
    ['GET', '/tasks//pushNotificationConfigs', undefined],
    ['GET', '/tasks/t-1/pushNotificationConfigs:cancel', undefined],
    ['POST', '/tasks/t-1/other', undefined],
    ['DELETE', '/tasks/t-1', { kind: 'method-not-allowed', allow: 'GET' }],
    ['GET', '/tasks/t-1:cancel', { kind: 'method-not-allowed', allow: 'POST' }],
    ['PUT', '/tasks/t-1:subscribe', { kind: 'method-not-allowed', allow: 'GET, POST' }],
    ['GET', '/message:send', { kind: 'method-not-allowed', allow: 'POST' }],
    ['GET', '/tasks/', undefined],
    ['GET', '/tasks/a/b', undefined],
    ['POST', '/message:other', undefined],
    ['GET', '/ask', undefined],
    ['GET', '', undefined],
  ];
  for (const [method, path, expected] of cases) {
    it(`${method} ${path || '(empty)'}`, () => assert.deepEqual(matchHttpJsonRoute(method, path), expected));
  }
  it('an inherited property name is no method', () => {
    assert.equal(matchHttpJsonRoute('constructor', '/tasks')?.kind, 'method-not-allowed');
  });
});

describe('HTTP+JSON codec: decoding', () => {
  const get: HttpJsonRoute = { kind: 'route', op: 'get', taskId: 't%2F1%3Acancel', body: 'none' };
  it('percent-decodes the path id once and reads integers from the query', () => {
    assert.deepEqual(decodeHttpJsonRequest(get, new URLSearchParams('historyLength=3'), undefined), {
      method: 'get',
      params: { id: 't/1:cancel', historyLength: 3 },
    });
  });
  it('refuses ids the JSON-RPC codec refuses (control characters, too long), naming id', () => {
    for (const raw of ['%0A', 'x'.repeat(300), '%E0%A4%A']) {
      assert.throws(
        () => decodeHttpJsonRequest({ ...get, taskId: raw }, new URLSearchParams(), undefined),
        (error: unknown) => error instanceof A2AError && error.code === 'INVALID_PARAMS' && error.field === 'id',
        raw,
      );
    }
  });
  it('refuses a repeated or malformed query value, naming the field', () => {
    const list: HttpJsonRoute = { kind: 'route', op: 'list', body: 'none' };
    for (const [query, field] of [
      ['pageSize=1&pageSize=2', 'pageSize'],
      ['pageSize=ten', 'pageSize'],
      ['includeArtifacts=yes', 'includeArtifacts'],
      ['status=working', 'status'],
      ['statusTimestampAfter=yesterday', 'statusTimestampAfter'],
    ]) {
      assert.throws(
        () => decodeHttpJsonRequest(list, new URLSearchParams(query), undefined),
        (error: unknown) => error instanceof A2AError && error.code === 'INVALID_PARAMS' && error.field === field,
        query,
      );
    }
  });
  it('ignores the service parameters in the query and unknown parameters', () => {
    const list: HttpJsonRoute = { kind: 'route', op: 'list', body: 'none' };
    const request = decodeHttpJsonRequest(list, new URLSearchParams('A2A-Version=1.0&x=1'), undefined);
    assert.deepEqual(request, { method: 'list', params: { pageSize: 50, includeArtifacts: false } });
  });
  it('the path id wins over an id in the body', () => {
    const cancel: HttpJsonRoute = { kind: 'route', op: 'cancel', taskId: 't-1', body: 'optional' };
    assert.deepEqual(decodeHttpJsonRequest(cancel, new URLSearchParams(), { id: 't-2' }), {
      method: 'cancel',
      params: { id: 't-1' },
    });
  });
  it('a body that is not an object is INVALID_REQUEST', () => {
    const send: HttpJsonRoute = { kind: 'route', op: 'send', body: 'json' };
    for (const body of [null, [], 'x', 1]) {
      assert.throws(
        () => decodeHttpJsonRequest(send, new URLSearchParams(), body),
        (error: unknown) => error instanceof A2AError && error.code === 'INVALID_REQUEST',
      );
    }
  });
});

describe('HTTP+JSON codec: errors (v1.0.1)', () => {
  it('maps every A2A error; the three changed in v1.0.1 are 400, 400 and 500', () => {
    assert.deepEqual(Object.keys(HTTP_JSON_STATUS).sort(), Object.keys(A2A_ERRORS).sort());
    assert.equal(HTTP_JSON_STATUS.TASK_NOT_CANCELABLE[0], 400);
    assert.equal(HTTP_JSON_STATUS.CONTENT_TYPE_NOT_SUPPORTED[0], 400);
    assert.equal(HTTP_JSON_STATUS.INVALID_AGENT_RESPONSE[0], 500);
    assert.equal(HTTP_JSON_STATUS.TASK_NOT_FOUND[0], 404);
  });
  it('renders a google.rpc.Status body with the ErrorInfo of a v1.0 JSON-RPC error', () => {
    for (const code of Object.keys(A2A_ERRORS) as A2AErrorCode[]) {
      const error = new A2AError(code);
      const rendered = httpJsonError(error);
      const body = JSON.parse(rendered.body) as { error: Record<string, unknown> };
      assert.equal(rendered.status, HTTP_JSON_STATUS[code][0]);
      assert.deepEqual(body.error, {
        code: rendered.status,
        status: HTTP_JSON_STATUS[code][1],
        message: error.message,
        details: v10.encodeError(error).data,
      });
    }
  });
  it('keeps an explicit status (413, 408) and a BadRequest detail for a named field', () => {
    const rendered = httpJsonError(new A2AError('INVALID_PARAMS', 'bad', { field: 'message.parts' }), 413);
    assert.equal(rendered.status, 413);
    assert.match(rendered.body, /"field":"message.parts"/);
    assert.match(rendered.body, /"code":413/);
  });
});

describe('responseMediaType', () => {
  it('answers application/a2a+json only to a request that names it, else application/json', () => {
    assert.equal(responseMediaType('application/a2a+json', undefined), 'application/a2a+json');
    assert.equal(responseMediaType('Application/A2A+JSON; charset=utf-8', undefined), 'application/a2a+json');
    assert.equal(responseMediaType(undefined, 'application/a2a+json, application/json;q=0.5'), 'application/a2a+json');
    assert.equal(responseMediaType('application/json', undefined), 'application/json');
    assert.equal(responseMediaType(undefined, '*/*'), 'application/json');
    assert.equal(responseMediaType(undefined, undefined), 'application/json');
  });
});
