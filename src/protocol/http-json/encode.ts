/**
 * What the HTTP+JSON binding sends: results as the bare v1.0 messages (the JSON-RPC `result`
 * members, without the envelope), stream events as one StreamResponse per SSE `data:` line, and
 * on the client side a canonical request as method, path, query and body.
 *
 * @example
 * ```ts
 * HTTP_JSON_RESULTS.task(task);                       // '{"id":"t-1","contextId":…,"status":{…}}'
 * encodeHttpJsonRequest({ method: 'get', params: { id: 't-1' } }).path; // '/tasks/t-1'
 * ```
 */
import type { A2ARequest, ListTasksResult, PushConfigResult, SendResult, StreamEvent, Task } from '../model.js';
import { V10_JSON, v10 } from '../v10/index.js';

/**
 * The response bodies of the binding, as JSON text. `sendResult`, `task` and `streamEvent` use the
 * v1.0 codec's JSON writers (the same bytes as `JSON.stringify` of its encoders, without the objects).
 *
 * @example
 * ```ts
 * res.end(HTTP_JSON_RESULTS.sendResult({ kind: 'message', message })); // '{"message":{…}}'
 * ```
 */
export const HTTP_JSON_RESULTS = {
  sendResult: (result: SendResult): string => V10_JSON.sendResult(result),
  task: (task: Task): string => V10_JSON.task(task),
  list: (result: ListTasksResult): string => JSON.stringify(v10.encodeListResult(result)),
  streamEvent: (event: StreamEvent): string => V10_JSON.streamEvent(event),
  /** The flat TaskPushNotificationConfig, `{configs, nextPageToken}` for list, `{}` for delete. */
  pushResult: (result: PushConfigResult): string => JSON.stringify(v10.encodePushResult(result)),
} as const;

/**
 * A request as the binding sends it: the HTTP method, the path below the interface URL, the
 * query and, for POST, the JSON body.
 *
 * @example
 * ```ts
 * const { method, path, query } = encodeHttpJsonRequest(request);
 * await fetch(`${url}${path}${query.size > 0 ? `?${query}` : ''}`, { method });
 * ```
 */
export interface HttpJsonRequest {
  method: 'GET' | 'POST';
  path: string;
  query: URLSearchParams;
  body?: Record<string, unknown>;
}

/** Scalar fields of a GET request's message as query parameters (§11.5). */
function asQuery(fields: Record<string, unknown>): URLSearchParams {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    query.set(name, typeof value === 'string' ? value : JSON.stringify(value));
  }
  return query;
}

/**
 * Renders a canonical request for the binding (the client side; tests use it to check that
 * both bindings decode to the same request). Subscribe is sent as POST, as the prose says and
 * the SDKs do. Throws `A2AError('UNSUPPORTED_OPERATION')` for push configs, as the v1.0 codec.
 *
 * @example
 * ```ts
 * encodeHttpJsonRequest({ method: 'cancel', params: { id: 't 1' } }); // POST /tasks/t%201:cancel, body {}
 * ```
 */
export function encodeHttpJsonRequest(request: A2ARequest): HttpJsonRequest {
  const { params } = v10.encodeRequest(request);
  const { id, ...rest } = params;
  const taskPath = typeof id === 'string' ? `/tasks/${encodeURIComponent(id)}` : '';
  switch (request.method) {
    case 'send':
      return { method: 'POST', path: '/message:send', query: new URLSearchParams(), body: params };
    case 'stream':
      return { method: 'POST', path: '/message:stream', query: new URLSearchParams(), body: params };
    case 'get':
      return { method: 'GET', path: taskPath, query: asQuery(rest) };
    case 'list':
      return { method: 'GET', path: '/tasks', query: asQuery(params) };
    case 'cancel':
      return { method: 'POST', path: `${taskPath}:cancel`, query: new URLSearchParams(), body: rest };
    case 'subscribe':
      return { method: 'POST', path: `${taskPath}:subscribe`, query: new URLSearchParams(), body: rest };
    case 'push-config': // never reached: the v1.0 codec refused it above
    case 'extended-card':
      return { method: 'GET', path: '/extendedAgentCard', query: asQuery(params) };
  }
}
