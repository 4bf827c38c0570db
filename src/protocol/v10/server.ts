/**
 * The server half of the v1.0 codec: decodes a caller's requests (PascalCase methods,
 * ProtoJSON params) and encodes what goes back (results, stream events, errors with
 * google.rpc ErrorInfo / BadRequest details). SendMessage results are wrapped as
 * `{task}`/`{message}`; stream events are `{task}|{message}|{statusUpdate}|{artifactUpdate}`
 * (no `kind`, no `final`).
 *
 * ProtoJSON reading rules applied by the decoders: unknown fields are ignored, `null` and
 * (for strings) `""` mean unset. Encoders emit only fields that are set.
 *
 * @example
 * ```ts
 * const request = decodeRequest('SendMessage', {
 *   message: { messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: 'hello' }] },
 * });
 * // { method: 'send', params: { message: { messageId: 'm-1', role: 'user', parts: [{ kind: 'text', text: 'hello' }] },
 * //                             configuration: { returnImmediately: false } } }
 * ```
 */
import { A2AError, errorReason } from '../errors.js';
import type { JsonRpcErrorObject } from '../dialect.js';
import type {
  A2AOperation,
  A2ARequest,
  Artifact,
  JsonObject,
  ListTasksParams,
  ListTasksResult,
  Message,
  SendConfiguration,
  SendParams,
  SendResult,
  StreamEvent,
  Task,
  TaskArtifactUpdateEvent,
  TaskState,
  TaskStatus,
  TaskStatusUpdateEvent,
} from '../model.js';
import { REQUEST, guard } from '../validation/guard.js';
import type { Ctx } from '../validation/guard.js';
import {
  LIMITS,
  checkRecord,
  isAbsent,
  optBool,
  optHistoryLength,
  optId,
  optInt,
  optJsonObject,
  optString,
  optStringList,
} from '../validation/primitives.js';
import type { Rec } from '../validation/primitives.js';
import { A2A_ERROR_DOMAIN, ERROR_DETAIL_TYPES } from '../validation/remote-errors.js';
import { checkTimestamp } from '../validation/timestamps.js';
import { decodeMessage } from '../validation/structures.js';
import { V10_WIRE, encodeMessage, encodeParts } from './mapping.js';
import { decodePushConfigInput, decodePushRequest } from './push.js';
import { METHODS, STATE_FROM_WIRE, STATE_TO_WIRE } from './wire.js';
import type {
  V10Artifact,
  V10ArtifactUpdate,
  V10ListTasksResponse,
  V10Message,
  V10SendMessageResponse,
  V10StatusUpdate,
  V10StreamResponse,
  V10Task,
  V10TaskStatus,
} from './wire.js';

// ---------------------------------------------------------------------------------------------
// Encoders (hot path: object literals and loops, data and metadata passed by reference)

function encodeStatus(status: TaskStatus): V10TaskStatus {
  const out: V10TaskStatus = { state: STATE_TO_WIRE[status.state] };
  if (status.message !== undefined) out.message = encodeMessage(status.message);
  out.timestamp = status.timestamp;
  return out;
}

function encodeArtifact(artifact: Artifact): V10Artifact {
  const out: V10Artifact = { artifactId: artifact.artifactId, parts: encodeParts(artifact.parts) };
  if (artifact.name !== undefined) out.name = artifact.name;
  if (artifact.description !== undefined) out.description = artifact.description;
  if (artifact.metadata !== undefined) out.metadata = artifact.metadata;
  if (artifact.extensions !== undefined) out.extensions = artifact.extensions;
  return out;
}

/**
 * A task; empty `artifacts`/`history` are omitted, as ProtoJSON does.
 *
 * @example
 * ```ts
 * encodeTask(task).status.state; // 'TASK_STATE_WORKING'
 * ```
 */
export function encodeTask(task: Task): V10Task {
  const out: V10Task = { id: task.id, contextId: task.contextId, status: encodeStatus(task.status) };
  if (task.artifacts.length > 0) {
    const artifacts: V10Artifact[] = [];
    for (let i = 0; i < task.artifacts.length; i++) artifacts.push(encodeArtifact(task.artifacts[i] as Artifact));
    out.artifacts = artifacts;
  }
  if (task.history.length > 0) {
    const history: V10Message[] = [];
    for (let i = 0; i < task.history.length; i++) history.push(encodeMessage(task.history[i] as Message));
    out.history = history;
  }
  if (task.metadata !== undefined) out.metadata = task.metadata;
  return out;
}

/**
 * The SendMessage result, wrapped (§9.4.1).
 *
 * @example
 * ```ts
 * encodeSendResult({ kind: 'task', task }); // { task: {...} }
 * ```
 */
export function encodeSendResult(result: SendResult): V10SendMessageResponse {
  return result.kind === 'task' ? { task: encodeTask(result.task) } : { message: encodeMessage(result.message) };
}

function encodeStatusUpdate(event: TaskStatusUpdateEvent): V10StatusUpdate {
  const out: V10StatusUpdate = {
    taskId: event.taskId,
    contextId: event.contextId,
    status: encodeStatus(event.status),
  };
  if (event.metadata !== undefined) out.metadata = event.metadata;
  return out;
}

function encodeArtifactUpdate(event: TaskArtifactUpdateEvent): V10ArtifactUpdate {
  const out: V10ArtifactUpdate = {
    taskId: event.taskId,
    contextId: event.contextId,
    artifact: encodeArtifact(event.artifact),
  };
  if (event.append !== undefined) out.append = event.append;
  if (event.lastChunk !== undefined) out.lastChunk = event.lastChunk;
  if (event.metadata !== undefined) out.metadata = event.metadata;
  return out;
}

/**
 * One StreamResponse. `final` is dropped: a v1.0 stream ends when the server closes it.
 *
 * @example
 * ```ts
 * encodeStreamEvent(statusEvent); // { statusUpdate: { taskId, contextId, status } }
 * ```
 */
export function encodeStreamEvent(event: StreamEvent): V10StreamResponse {
  switch (event.kind) {
    case 'task':
      return { task: encodeTask(event.task) };
    case 'message':
      return { message: encodeMessage(event.message) };
    case 'status-update':
      return { statusUpdate: encodeStatusUpdate(event) };
    case 'artifact-update':
      return { artifactUpdate: encodeArtifactUpdate(event) };
  }
}

/**
 * The ListTasks result.
 *
 * @example
 * ```ts
 * encodeListResult({ tasks: [], nextPageToken: '', pageSize: 50, totalSize: 0 }).tasks; // []
 * ```
 */
export function encodeListResult(result: ListTasksResult): V10ListTasksResponse {
  const tasks: V10Task[] = [];
  for (let i = 0; i < result.tasks.length; i++) tasks.push(encodeTask(result.tasks[i] as Task));
  return {
    tasks,
    nextPageToken: result.nextPageToken,
    pageSize: result.pageSize,
    totalSize: result.totalSize,
  };
}

/**
 * JSON-RPC error with the v1.0 details (§9.5): always an ErrorInfo; a BadRequest field
 * violation when the error names a field.
 *
 * @example
 * ```ts
 * encodeError(new A2AError('TASK_NOT_FOUND')).data; // [{ '@type': '…ErrorInfo', reason: 'TASK_NOT_FOUND', … }]
 * ```
 */
export function encodeError(error: A2AError): JsonRpcErrorObject {
  const data: Rec[] = [
    { '@type': ERROR_DETAIL_TYPES.errorInfo, reason: errorReason(error.code), domain: A2A_ERROR_DOMAIN },
  ];
  if (error.field !== undefined) {
    data.push({
      '@type': ERROR_DETAIL_TYPES.badRequest,
      fieldViolations: [{ field: error.field, description: error.message }],
    });
  }
  return { code: error.rpcCode, message: error.message, data };
}

// ---------------------------------------------------------------------------------------------
// Request decoders

function decodeTenant(rec: Rec, ctx: Ctx): string | undefined {
  return optId(rec.tenant, 'tenant', ctx, true);
}

function decodeSendConfiguration(value: unknown, ctx: Ctx): SendConfiguration {
  if (isAbsent(value)) return { returnImmediately: false };
  const rec = checkRecord(value, 'configuration', ctx);
  const config: SendConfiguration = {
    returnImmediately: optBool(rec.returnImmediately, 'configuration.returnImmediately', ctx) ?? false,
  };
  const historyLength = optHistoryLength(rec.historyLength, 'configuration.historyLength', ctx);
  if (historyLength !== undefined) config.historyLength = historyLength;
  const modes = optStringList(rec.acceptedOutputModes, 'configuration.acceptedOutputModes', ctx);
  if (modes !== undefined) config.acceptedOutputModes = modes;
  if (!isAbsent(rec.taskPushNotificationConfig)) {
    config.pushConfig = decodePushConfigInput(
      rec.taskPushNotificationConfig,
      'configuration.taskPushNotificationConfig',
      ctx,
    );
  }
  return config;
}

function decodeSendParams(rec: Rec, ctx: Ctx): SendParams {
  const params: SendParams = {
    message: decodeMessage(V10_WIRE, rec.message, 'message', ctx),
    configuration: decodeSendConfiguration(rec.configuration, ctx),
  };
  const metadata = optJsonObject(rec.metadata, 'metadata', ctx);
  if (metadata !== undefined) params.metadata = metadata;
  const tenant = decodeTenant(rec, ctx);
  if (tenant !== undefined) params.tenant = tenant;
  return params;
}

const PAGE_SIZE_DEFAULT = 50;
const PAGE_SIZE_MAX = 100;

function decodeListStatus(value: unknown, ctx: Ctx): TaskState | undefined {
  if (isAbsent(value)) return undefined;
  const state = STATE_FROM_WIRE.get(value);
  if (state === undefined || state === 'unknown') {
    throw ctx.fail('status', 'must be a TASK_STATE_* name other than TASK_STATE_UNSPECIFIED');
  }
  return state;
}

function decodeListParams(rec: Rec, ctx: Ctx): ListTasksParams {
  const params: ListTasksParams = {
    pageSize: optInt(rec.pageSize, 'pageSize', ctx, 1, PAGE_SIZE_MAX) ?? PAGE_SIZE_DEFAULT,
    includeArtifacts: optBool(rec.includeArtifacts, 'includeArtifacts', ctx) ?? false,
  };
  const contextId = optId(rec.contextId, 'contextId', ctx, true);
  if (contextId !== undefined) params.contextId = contextId;
  const status = decodeListStatus(rec.status, ctx);
  if (status !== undefined) params.status = status;
  const pageToken = optString(rec.pageToken, 'pageToken', ctx, LIMITS.pageToken, true);
  if (pageToken !== undefined) params.pageToken = pageToken;
  const historyLength = optHistoryLength(rec.historyLength, 'historyLength', ctx);
  if (historyLength !== undefined) params.historyLength = historyLength;
  if (!isAbsent(rec.statusTimestampAfter)) {
    params.statusTimestampAfter = checkTimestamp(rec.statusTimestampAfter, 'statusTimestampAfter', ctx);
  }
  const tenant = decodeTenant(rec, ctx);
  if (tenant !== undefined) params.tenant = tenant;
  return params;
}

function decodeParams(op: A2AOperation, method: string, params: unknown): A2ARequest {
  const ctx = REQUEST;
  const rec = params === undefined ? {} : checkRecord(params, 'params', ctx);
  switch (op) {
    case 'send':
      return { method: 'send', params: decodeSendParams(rec, ctx) };
    case 'stream':
      return { method: 'stream', params: decodeSendParams(rec, ctx) };
    case 'get': {
      const out: { id: string; historyLength?: number; tenant?: string } = { id: decodeTaskRef(rec, ctx) };
      const historyLength = optHistoryLength(rec.historyLength, 'historyLength', ctx);
      if (historyLength !== undefined) out.historyLength = historyLength;
      const tenant = decodeTenant(rec, ctx);
      if (tenant !== undefined) out.tenant = tenant;
      return { method: 'get', params: out };
    }
    case 'list':
      return { method: 'list', params: decodeListParams(rec, ctx) };
    case 'cancel': {
      const out: { id: string; metadata?: JsonObject; tenant?: string } = { id: decodeTaskRef(rec, ctx) };
      const metadata = optJsonObject(rec.metadata, 'metadata', ctx);
      if (metadata !== undefined) out.metadata = metadata;
      const tenant = decodeTenant(rec, ctx);
      if (tenant !== undefined) out.tenant = tenant;
      return { method: 'cancel', params: out };
    }
    case 'subscribe': {
      const out: { id: string; tenant?: string } = { id: decodeTaskRef(rec, ctx) };
      const tenant = decodeTenant(rec, ctx);
      if (tenant !== undefined) out.tenant = tenant;
      return { method: 'subscribe', params: out };
    }
    case 'extended-card': {
      const tenant = decodeTenant(rec, ctx);
      return { method: 'extended-card', params: tenant === undefined ? {} : { tenant } };
    }
    case 'push-config':
      return { method: 'push-config', params: decodePushRequest(method, rec, ctx) };
  }
}

/** `id` of GetTask / CancelTask / SubscribeToTask: a required task identifier. */
function decodeTaskRef(rec: Rec, ctx: Ctx): string {
  return optIdRequired(rec.id, 'id', ctx);
}

function optIdRequired(value: unknown, path: string, ctx: Ctx): string {
  const id = optId(value, path, ctx, true);
  if (id === undefined) throw ctx.fail(path, 'is required');
  return id;
}

/**
 * Validates and converts the params of one of the v1.0 methods. Throws `A2AError`:
 * METHOD_NOT_FOUND for another name, INVALID_PARAMS (with the field) for bad params.
 *
 * @example
 * ```ts
 * decodeRequest('GetTask', { id: 't-1' }); // { method: 'get', params: { id: 't-1' } }
 * ```
 */
export function decodeRequest(method: string, params: unknown): A2ARequest {
  const op = METHODS.get(method);
  if (op === undefined) throw new A2AError('METHOD_NOT_FOUND');
  return guard(REQUEST, () => decodeParams(op, method, params));
}
