/**
 * The v0.3 push-config methods (`tasks/pushNotificationConfig/set|get|list|delete`, 0.3 §7.5–
 * §7.8): decode their params and encode what they answer — `{taskId, pushNotificationConfig}`,
 * a bare array for list, `null` for delete. v0.3's `authentication.schemes[]` is read as its
 * first scheme and written back as a one-item list.
 *
 * @example
 * ```ts
 * decodePushRequest('tasks/pushNotificationConfig/get', { id: 't-1' }, REQUEST); // { op: 'get', taskId: 't-1' }
 * ```
 */
import type {
  PushAuthentication,
  PushConfigInput,
  PushConfigRequest,
  PushConfigResult,
  TaskPushConfig,
} from '../model.js';
import type { Ctx } from '../validation/guard.js';
import { LIMITS, checkRecord, checkString, isAbsent, optId, optString } from '../validation/primitives.js';
import type { Rec } from '../validation/primitives.js';

/** Generous wire caps: the push service applies the operator's stricter ones. */
const WIRE = { token: 4096, scheme: 256, schemes: 16, credentials: 8192 } as const;

/** The v0.3 TaskPushNotificationConfig as it travels. */
export interface V03TaskPushConfig {
  taskId: string;
  pushNotificationConfig: {
    id: string;
    url: string;
    token?: string;
    authentication?: { schemes: string[]; credentials?: string };
  };
}

function requiredId(rec: Rec, key: string, ctx: Ctx): string {
  const id = optId(rec[key], key, ctx);
  if (id === undefined) throw ctx.fail(key, 'is required');
  return id;
}

function decodeAuthentication(value: unknown, path: string, ctx: Ctx): PushAuthentication | undefined {
  if (isAbsent(value)) return undefined;
  const rec = checkRecord(value, path, ctx);
  const schemes = rec.schemes;
  if (!Array.isArray(schemes) || schemes.length === 0) throw ctx.fail(`${path}.schemes`, 'must be a non-empty list');
  if (schemes.length > WIRE.schemes) throw ctx.fail(`${path}.schemes`, `must have at most ${WIRE.schemes} items`);
  for (let i = 0; i < schemes.length; i++) checkString(schemes[i], `${path}.schemes[${i}]`, ctx, WIRE.scheme, 1);
  const scheme = schemes[0] as string;
  const credentials = optString(rec.credentials, `${path}.credentials`, ctx, WIRE.credentials);
  return credentials === undefined ? { scheme } : { scheme, credentials };
}

/**
 * A v0.3 PushNotificationConfig: the body of `set` and the inline
 * `configuration.pushNotificationConfig` of message/send.
 *
 * @example
 * ```ts
 * decodePushConfigInput({ url: 'https://hook.example/a2a', token: 't' }, 'pushNotificationConfig', REQUEST);
 * ```
 */
export function decodePushConfigInput(value: unknown, path: string, ctx: Ctx): PushConfigInput {
  const rec = checkRecord(value, path, ctx);
  const url = checkString(rec.url, `${path}.url`, ctx, LIMITS.urlLength, 1);
  const config: PushConfigInput = { url };
  const id = optId(rec.id, `${path}.id`, ctx);
  if (id !== undefined) config.id = id;
  const token = optString(rec.token, `${path}.token`, ctx, WIRE.token);
  if (token !== undefined) config.token = token;
  const authentication = decodeAuthentication(rec.authentication, `${path}.authentication`, ctx);
  if (authentication !== undefined) config.authentication = authentication;
  return config;
}

/**
 * Decodes the params of one of the four v0.3 push-config methods. `set` names the task
 * `taskId`; the others name it `id`.
 *
 * @example
 * ```ts
 * decodePushRequest('tasks/pushNotificationConfig/delete', { id: 't-1', pushNotificationConfigId: 'c-1' }, REQUEST);
 * // { op: 'delete', taskId: 't-1', id: 'c-1' }
 * ```
 */
export function decodePushRequest(method: string, rec: Rec, ctx: Ctx): PushConfigRequest {
  switch (method) {
    case 'tasks/pushNotificationConfig/set':
      return {
        op: 'create',
        taskId: requiredId(rec, 'taskId', ctx),
        config: decodePushConfigInput(rec.pushNotificationConfig, 'pushNotificationConfig', ctx),
      };
    case 'tasks/pushNotificationConfig/get': {
      const taskId = requiredId(rec, 'id', ctx);
      const id = optId(rec.pushNotificationConfigId, 'pushNotificationConfigId', ctx);
      return id === undefined ? { op: 'get', taskId } : { op: 'get', taskId, id };
    }
    case 'tasks/pushNotificationConfig/delete':
      return {
        op: 'delete',
        taskId: requiredId(rec, 'id', ctx),
        id: requiredId(rec, 'pushNotificationConfigId', ctx),
      };
    default:
      return { op: 'list', taskId: requiredId(rec, 'id', ctx) };
  }
}

function encodeConfig(config: TaskPushConfig): V03TaskPushConfig {
  const inner: V03TaskPushConfig['pushNotificationConfig'] = { id: config.id, url: config.url };
  if (config.token !== undefined) inner.token = config.token;
  if (config.authentication !== undefined) {
    const { scheme, credentials } = config.authentication;
    inner.authentication = credentials === undefined ? { schemes: [scheme] } : { schemes: [scheme], credentials };
  }
  return { taskId: config.taskId, pushNotificationConfig: inner };
}

/**
 * A push-config result in the v0.3 shape (list: every config as a bare array, no paging).
 *
 * @example
 * ```ts
 * encodePushResult({ op: 'delete' }); // null
 * ```
 */
export function encodePushResult(result: PushConfigResult): unknown {
  switch (result.op) {
    case 'create':
    case 'get':
      return encodeConfig(result.config);
    case 'list':
      return result.configs.map(encodeConfig);
    case 'delete':
      return null;
  }
}
