/**
 * HTTP+JSON requests → the canonical requests the JSON-RPC codec produces. The binding only
 * moves fields: path and query parameters become the fields of the v1.0 request message (as
 * gRPC transcoding does), and the v1.0 codec validates them, so both bindings refuse the same
 * values with the same errors.
 *
 * @example
 * ```ts
 * const route = matchHttpJsonRoute('GET', '/tasks/t-1');
 * decodeHttpJsonRequest(route, new URLSearchParams('historyLength=2'), undefined);
 * // { method: 'get', params: { id: 't-1', historyLength: 2 } }
 * ```
 */
import { A2AError, invalidParams } from '../errors.js';
import type { A2ARequest } from '../model.js';
import { v10 } from '../v10/index.js';
import type { HttpJsonRoute } from './routes.js';

/** The v1.0 method whose request message each operation's route carries. */
const METHOD_OF: Partial<Record<HttpJsonRoute['op'], string>> = {
  send: 'SendMessage',
  stream: 'SendStreamingMessage',
  get: 'GetTask',
  list: 'ListTasks',
  cancel: 'CancelTask',
  subscribe: 'SubscribeToTask',
  'extended-card': 'GetExtendedAgentCard',
};

/** The v1.0 push-config method each push route names (`a2a.proto`). */
const PUSH_METHOD_OF: Readonly<Record<NonNullable<HttpJsonRoute['push']>, string>> = {
  create: 'CreateTaskPushNotificationConfig',
  get: 'GetTaskPushNotificationConfig',
  list: 'ListTaskPushNotificationConfigs',
  delete: 'DeleteTaskPushNotificationConfig',
};

/** Query parameters read as integers and booleans (§11.5: scalars only, by their JSON names). */
const INTEGER_PARAMS = new Set(['historyLength', 'pageSize']);
const BOOLEAN_PARAMS = new Set(['includeArtifacts']);
/** Service parameters that may travel in the query (§3.6): not fields of the request. */
const SERVICE_PARAMS = new Set(['A2A-Version', 'A2A-Extensions']);
const INTEGER = /^-?\d{1,10}$/;

/**
 * A query string as request fields. A value that is not an integer (or a boolean) where one is
 * expected is passed on as text so that the codec refuses it naming the field; a parameter given
 * twice is refused (nested or repeated values are not part of the binding).
 */
function queryFields(query: URLSearchParams): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [name, value] of query) {
    if (SERVICE_PARAMS.has(name)) continue;
    if (Object.hasOwn(fields, name)) throw invalidParams(name, 'is given more than once');
    if (INTEGER_PARAMS.has(name) && INTEGER.test(value)) fields[name] = Number(value);
    else if (BOOLEAN_PARAMS.has(name) && (value === 'true' || value === 'false')) fields[name] = value === 'true';
    else fields[name] = value;
  }
  return fields;
}

/** A path segment (`{id}`, `{configId}`), percent-decoded once; a bad escape names `field`. */
function pathId(raw: string, field = 'id'): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw invalidParams(field, 'is not a valid path segment');
  }
}

/**
 * Decodes one HTTP+JSON request: `route` from {@link matchHttpJsonRoute}, the query, and the
 * parsed JSON body (undefined when the route reads none or none was sent). The path's task id
 * wins over an `id` in the body or the query. Throws `A2AError` as the v1.0 codec does
 * (INVALID_PARAMS with the field named).
 *
 * @example
 * ```ts
 * decodeHttpJsonRequest({ kind: 'route', op: 'cancel', taskId: 't-1', body: 'optional' }, new URLSearchParams(), {});
 * // { method: 'cancel', params: { id: 't-1' } }
 * ```
 *
 * The push-config routes name the task in `{id}` and the config in `{configId}`: as the fields
 * `taskId` and `id` of the v1.0 push messages (they win over the body's and the query's).
 */
export function decodeHttpJsonRequest(route: HttpJsonRoute, query: URLSearchParams, body: unknown): A2ARequest {
  const method = route.push === undefined ? METHOD_OF[route.op] : PUSH_METHOD_OF[route.push];
  if (method === undefined) throw new A2AError('METHOD_NOT_FOUND');
  if (body !== undefined && (body === null || typeof body !== 'object' || Array.isArray(body))) {
    throw new A2AError('INVALID_REQUEST', 'The request body must be a JSON object');
  }
  // GET routes carry their fields in the query; POST routes in the body (`body: "*"`).
  const fields: Record<string, unknown> =
    route.body === 'none' ? queryFields(query) : { ...(body as Record<string, unknown> | undefined) };
  if (route.push !== undefined) {
    if (route.taskId !== undefined) fields.taskId = pathId(route.taskId, 'taskId');
    // A create's body is the config itself: an `id` there is the config's, kept as sent.
    if (route.configId !== undefined) fields.id = pathId(route.configId);
  } else if (route.taskId !== undefined) fields.id = pathId(route.taskId);
  return v10.decodeRequest(method, fields);
}
