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
 * ```
 */
import type { A2AOperation } from '../model.js';

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

/** One row: a path shape and, per HTTP method, the operation it names. */
interface RouteRow {
  /** A fixed path, or a task path: `/tasks/{id}` followed by `suffix` (e.g. `:cancel`). */
  readonly path: string | { readonly taskSuffix: string };
  readonly methods: Readonly<Record<string, { op: A2AOperation; body: HttpJsonBody }>>;
}

/**
 * The v1.0 routes. Push-notification config routes plug in here (`/tasks/{id}/pushNotificationConfigs`
 * and `…/{configId}`) once the canonical push requests exist: a row per path, and a `configId`
 * capture in {@link matchHttpJsonRoute}.
 */
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
];

const TASK_PREFIX = '/tasks/';
const TASK_SUFFIXES = [':cancel', ':subscribe'];

/** Splits `/tasks/{id}[:verb]` into its id and verb; undefined for any other shape. */
function taskPath(path: string): { id: string; suffix: string } | undefined {
  if (!path.startsWith(TASK_PREFIX)) return undefined;
  let rest = path.slice(TASK_PREFIX.length);
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
    if (task !== undefined && typeof row.path !== 'string') route.taskId = task.id;
    return route;
  }
  return undefined;
}
