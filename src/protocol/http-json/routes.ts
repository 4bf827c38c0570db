/**
 * The HTTP+JSON binding's paths (v1.0 §11.3, the `google.api.http` annotations of `a2a.proto`):
 * which operation a method and a path name, relative to the agent's interface URL. One table;
 * a new route is one row.
 *
 * @example
 * ```ts
 * matchHttpJsonRoute('GET', '/tasks/t-1'); // { kind: 'route', op: 'get', taskId: 't-1', body: 'none' }
 * matchHttpJsonRoute('PUT', '/tasks');     // { kind: 'method-not-allowed', allow: 'GET' }
 * matchHttpJsonRoute('GET', '/nope');      // undefined: not a binding path
 * matchHttpJsonRoute('DELETE', '/tasks/t-1/pushNotificationConfigs/c-1');
 * // { kind: 'route', op: 'push-config', push: 'delete', body: 'none', taskId: 't-1', configId: 'c-1' }
 * ```
 */
import type { A2AOperation, PushConfigRequest } from '../model.js';

/**
 * What a route reads from the request body: `json` must have one (`Content-Type` checked, limits
 * applied), `optional` reads one only when the request carries one (the SDK sends `:cancel` and
 * `:subscribe` without a body), `none` never reads it.
 *
 * @example
 * ```ts
 * const body: HttpJsonBody = route.body; // 'json' for message:send
 * ```
 */
export type HttpJsonBody = 'json' | 'optional' | 'none';

/**
 * A matched route: the operation, the task id from the path (still percent-encoded text decoded
 * once, checked later by the codec), and how the body is read.
 *
 * @example
 * ```ts
 * const route: HttpJsonRoute = { kind: 'route', op: 'cancel', taskId: 't-1', body: 'optional' };
 * ```
 */
export interface HttpJsonRoute {
  kind: 'route';
  op: A2AOperation;
  /** The `{id}` path segment, for the task routes. */
  taskId?: string;
  /** For `push-config`: which of the four push operations the method names. */
  push?: PushConfigRequest['op'];
  /** The `{configId}` path segment of `…/pushNotificationConfigs/{configId}`. */
  configId?: string;
  body: HttpJsonBody;
}

/**
 * A binding path asked with a method it does not take: answered 405 with `Allow`.
 *
 * @example
 * ```ts
 * const miss: HttpJsonMethodMiss = { kind: 'method-not-allowed', allow: 'POST' };
 * ```
 */
export interface HttpJsonMethodMiss {
  kind: 'method-not-allowed';
  allow: string;
}

/** What one method of a row names: the operation, the push operation for push rows, the body. */
interface RouteEntry {
  op: A2AOperation;
  push?: PushConfigRequest['op'];
  body: HttpJsonBody;
}

/** One row: a path shape and, per HTTP method, the operation it names. */
interface RouteRow {
  /**
   * A fixed path, or a task path: `/tasks/{id}` followed by `suffix` (e.g. `:cancel`, or
   * {@link PUSH_CONFIGS} and {@link PUSH_CONFIG} for the push-config collection and one config).
   */
  readonly path: string | { readonly taskSuffix: string };
  readonly methods: Readonly<Record<string, RouteEntry>>;
}

/** The suffix of `/tasks/{id}/pushNotificationConfigs`. */
const PUSH_CONFIGS = '/pushNotificationConfigs';
/** The suffix of `/tasks/{id}/pushNotificationConfigs/{configId}` (the config id captured apart). */
const PUSH_CONFIG = '/pushNotificationConfigs/{configId}';

/** The v1.0 routes (`a2a.proto`'s `google.api.http` annotations). */
const ROUTES: readonly RouteRow[] = [
  { path: '/message:send', methods: { POST: { op: 'send', body: 'json' } } },
  { path: '/message:stream', methods: { POST: { op: 'stream', body: 'json' } } },
  { path: '/tasks', methods: { GET: { op: 'list', body: 'none' } } },
  { path: { taskSuffix: '' }, methods: { GET: { op: 'get', body: 'none' } } },
  { path: { taskSuffix: ':cancel' }, methods: { POST: { op: 'cancel', body: 'optional' } } },
  // The prose says POST, the proto GET (A2A#1574): both are served.
  {
    path: { taskSuffix: ':subscribe' },
    methods: { GET: { op: 'subscribe', body: 'none' }, POST: { op: 'subscribe', body: 'optional' } },
  },
  { path: '/extendedAgentCard', methods: { GET: { op: 'extended-card', body: 'none' } } },
  {
    path: { taskSuffix: PUSH_CONFIGS },
    methods: {
      POST: { op: 'push-config', push: 'create', body: 'json' },
      GET: { op: 'push-config', push: 'list', body: 'none' },
    },
  },
  {
    path: { taskSuffix: PUSH_CONFIG },
    methods: {
      GET: { op: 'push-config', push: 'get', body: 'none' },
      DELETE: { op: 'push-config', push: 'delete', body: 'none' },
    },
  },
];

const TASK_PREFIX = '/tasks/';
const TASK_SUFFIXES = [':cancel', ':subscribe'];

/**
 * Splits `/tasks/{id}[:verb]` into its id and verb, and `/tasks/{id}/pushNotificationConfigs[/{configId}]`
 * into its id, suffix and config id; undefined for any other shape.
 */
function taskPath(path: string): { id: string; suffix: string; configId?: string } | undefined {
  if (!path.startsWith(TASK_PREFIX)) return undefined;
  let rest = path.slice(TASK_PREFIX.length);
  const segments = rest.split('/');
  if (segments.length > 1) {
    const [id = '', collection, configId] = segments;
    // Nothing else nests below a task; every segment is non-empty.
    if (id === '' || `/${collection}` !== PUSH_CONFIGS || segments.length > 3) return undefined;
    if (configId === undefined) return { id, suffix: PUSH_CONFIGS };
    return configId === '' ? undefined : { id, suffix: PUSH_CONFIG, configId };
  }
  let suffix = '';
  for (const verb of TASK_SUFFIXES) {
    if (rest.endsWith(verb)) {
      suffix = verb;
      rest = rest.slice(0, -verb.length);
      break;
    }
  }
  // An id is one path segment; an empty one or a nested path is no route of ours.
  if (rest === '' || rest.includes('/')) return undefined;
  return { id: rest, suffix };
}

/**
 * The route for `method` and `path` (the part after the agent's URL, without the query): a
 * match, a 405 naming the methods the path takes, or undefined when the path is not the
 * binding's. The id is returned as sent (percent-encoded): the decoder decodes and checks it.
 *
 * @example
 * ```ts
 * matchHttpJsonRoute('POST', '/tasks/t-1:subscribe'); // { kind: 'route', op: 'subscribe', taskId: 't-1', body: 'optional' }
 * ```
 */
export function matchHttpJsonRoute(
  method: string | undefined,
  path: string,
): HttpJsonRoute | HttpJsonMethodMiss | undefined {
  const task = taskPath(path);
  for (const row of ROUTES) {
    const matches = typeof row.path === 'string' ? row.path === path : task?.suffix === row.path.taskSuffix;
    if (!matches) continue;
    const entry = method === undefined ? undefined : row.methods[method];
    if (entry === undefined || !Object.hasOwn(row.methods, method ?? '')) {
      return { kind: 'method-not-allowed', allow: Object.keys(row.methods).join(', ') };
    }
    const route: HttpJsonRoute = { kind: 'route', op: entry.op, body: entry.body };
    if (entry.push !== undefined) route.push = entry.push;
    if (task !== undefined && typeof row.path !== 'string') {
      route.taskId = task.id;
      if (task.configId !== undefined) route.configId = task.configId;
    }
    return route;
  }
  return undefined;
}
