/**
 * The v1.0 push-config methods (§9.4.7–§9.4.10): decode `Create|Get|Delete
 * TaskPushNotificationConfig` and `ListTaskPushNotificationConfigs` params, and encode what they
 * answer (the flat TaskPushNotificationConfig; `{configs, nextPageToken}`; `{}` for delete).
 * ProtoJSON rules as in `server.ts`: `null` and `""` are unset, proto field names accepted.
 *
 * @example
 * ```ts
 * decodePushRequest('GetTaskPushNotificationConfig', { taskId: 't-1', id: 'c-1' }, REQUEST);
 * // { op: 'get', taskId: 't-1', id: 'c-1' }
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
import {
  LIMITS,
  checkRecord,
  isAbsent,
  optId,
  optInt,
  optString,
  withProtoFieldNames,
} from '../validation/primitives.js';
import type { Rec } from '../validation/primitives.js';

/** Generous wire caps: the push service applies the operator's stricter ones. */
const WIRE = { token: 4096, scheme: 256, credentials: 8192 } as const;

/** The v1.0 TaskPushNotificationConfig as it travels. */
export interface V10TaskPushConfig {
  id: string;
  taskId: string;
  url: string;
  token?: string;
  authentication?: { scheme: string; credentials?: string };
}

function requiredId(rec: Rec, key: string, ctx: Ctx): string {
  const id = optId(rec[key], key, ctx, true);
  if (id === undefined) throw ctx.fail(key, 'is required');
  return id;
}

function decodeAuthentication(value: unknown, path: string, ctx: Ctx): PushAuthentication | undefined {
  if (isAbsent(value)) return undefined;
  const rec = checkRecord(value, path, ctx);
  const scheme = optString(rec.scheme, `${path}.scheme`, ctx, WIRE.scheme, true);
  if (scheme === undefined) throw ctx.fail(`${path}.scheme`, 'is required');
  const credentials = optString(rec.credentials, `${path}.credentials`, ctx, WIRE.credentials, true);
  return credentials === undefined ? { scheme } : { scheme, credentials };
}

/**
 * The config fields of a v1.0 TaskPushNotificationConfig (`taskId` and `tenant` are read by
 * the caller): also the inline `configuration.taskPushNotificationConfig` of SendMessage.
 *
 * @example
 * ```ts
 * decodePushConfigInput({ url: 'https://hook.example/a2a' }, 'params', REQUEST); // { url: 'https://hook.example/a2a' }
 * ```
 */
export function decodePushConfigInput(value: unknown, path: string, ctx: Ctx): PushConfigInput {
  const rec = withProtoFieldNames(checkRecord(value, path, ctx));
  const prefix = path === 'params' ? '' : `${path}.`;
  const url = optString(rec.url, `${prefix}url`, ctx, LIMITS.urlLength, true);
  if (url === undefined) throw ctx.fail(`${prefix}url`, 'is required');
  const config: PushConfigInput = { url };
  const id = optId(rec.id, `${prefix}id`, ctx, true);
  if (id !== undefined) config.id = id;
  const token = optString(rec.token, `${prefix}token`, ctx, WIRE.token, true);
  if (token !== undefined) config.token = token;
  const authentication = decodeAuthentication(rec.authentication, `${prefix}authentication`, ctx);
  if (authentication !== undefined) config.authentication = authentication;
  return config;
}

/**
 * Decodes the params of one of the four v1.0 push-config methods.
 *
 * @example
 * ```ts
 * decodePushRequest('DeleteTaskPushNotificationConfig', { taskId: 't-1', id: 'c-1' }, REQUEST).op; // 'delete'
 * ```
 */
export function decodePushRequest(method: string, params: Rec, ctx: Ctx): PushConfigRequest {
  const rec = withProtoFieldNames(params);
  const taskId = requiredId(rec, 'taskId', ctx);
  const tenant = optId(rec.tenant, 'tenant', ctx, true);
  const withTenant = <T extends PushConfigRequest>(request: T): T =>
    tenant === undefined ? request : { ...request, tenant };
  switch (method) {
    case 'CreateTaskPushNotificationConfig':
      return withTenant({ op: 'create', taskId, config: decodePushConfigInput(params, 'params', ctx) });
    case 'GetTaskPushNotificationConfig':
      return withTenant({ op: 'get', taskId, id: requiredId(rec, 'id', ctx) });
    case 'DeleteTaskPushNotificationConfig':
      return withTenant({ op: 'delete', taskId, id: requiredId(rec, 'id', ctx) });
    default: {
      const out: PushConfigRequest = { op: 'list', taskId };
      const pageSize = optInt(rec.pageSize, 'pageSize', ctx, 0, 100);
      // 0 is ProtoJSON's unset.
      if (pageSize !== undefined && pageSize > 0) out.pageSize = pageSize;
      const pageToken = optString(rec.pageToken, 'pageToken', ctx, LIMITS.pageToken, true);
      if (pageToken !== undefined) out.pageToken = pageToken;
      return withTenant(out);
    }
  }
}

function encodeConfig(config: TaskPushConfig): V10TaskPushConfig {
  const out: V10TaskPushConfig = { id: config.id, taskId: config.taskId, url: config.url };
  if (config.token !== undefined) out.token = config.token;
  if (config.authentication !== undefined) out.authentication = { ...config.authentication };
  return out;
}

/**
 * A push-config result in the v1.0 shape.
 *
 * @example
 * ```ts
 * encodePushResult({ op: 'delete' }); // {}
 * ```
 */
export function encodePushResult(result: PushConfigResult): unknown {
  switch (result.op) {
    case 'create':
    case 'get':
      return encodeConfig(result.config);
    case 'list':
      return { configs: result.configs.map(encodeConfig), nextPageToken: result.nextPageToken };
    case 'delete':
      return {};
  }
}
