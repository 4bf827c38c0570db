/**
 * The server half of the v0.3 codec: decodes a caller's requests (`category/action`
 * methods, `kind`-tagged params, the inverted `blocking` flag) and encodes what goes back:
 * bare Task/Message results, stream events with `final` on status updates, errors with code
 * and message only.
 *
 * What v0.3 cannot carry: `tenant` (dropped), ListTasks (no such method:
 * UNSUPPORTED_OPERATION).
 *
 * @example
 * ```ts
 * const request = decodeRequest('message/send', {
 *   message: { kind: 'message', messageId: 'm-1', role: 'user', parts: [{ kind: 'text', text: 'hi' }] },
 * });
 * request.params.configuration.returnImmediately; // false: `blocking` absent means blocking
 * ```
 */
import { A2AError } from '../errors.js';
import type { JsonRpcErrorObject } from '../dialect.js';
import type {
  A2AOperation,
  A2ARequest,
  Artifact,
  JsonObject,
  Message,
  SendConfiguration,
  SendParams,
  SendResult,
  StreamEvent,
  Task,
  TaskStatus,
} from '../model.js';
import { REQUEST, guard } from '../validation/guard.js';
import type { Ctx } from '../validation/guard.js';
import {
  checkRecord,
  isAbsent,
  optBool,
  optHistoryLength,
  optId,
  optJsonObject,
  optStringList,
} from '../validation/primitives.js';
import type { Rec } from '../validation/primitives.js';
import { decodeMessage } from '../validation/structures.js';
import { V03_WIRE, encodeMessage, encodeParts } from './mapping.js';
import { METHODS, unsupportedList } from './wire.js';
import type {
  V03Artifact,
  V03ArtifactUpdate,
  V03Message,
  V03StatusUpdate,
  V03StreamResult,
  V03Task,
  V03TaskStatus,
} from './wire.js';
import { decodePushConfigInput, decodePushRequest } from './push.js';

// ---------------------------------------------------------------------------------------------
// Encoders (hot path)

function encodeStatus(status: TaskStatus): V03TaskStatus {
  const out: V03TaskStatus = { state: status.state };
  if (status.message !== undefined) out.message = encodeMessage(status.message);
  out.timestamp = status.timestamp;
  return out;
}

function encodeArtifact(artifact: Artifact): V03Artifact {
  const out: V03Artifact = { artifactId: artifact.artifactId, parts: encodeParts(artifact.parts) };
  if (artifact.name !== undefined) out.name = artifact.name;
  if (artifact.description !== undefined) out.description = artifact.description;
  if (artifact.metadata !== undefined) out.metadata = artifact.metadata;
  if (artifact.extensions !== undefined) out.extensions = artifact.extensions;
  return out;
}

/**
 * A bare task, tagged `kind: 'task'`; empty `artifacts`/`history` are omitted.
 *
 * @example
 * ```ts
 * encodeTask(task).kind; // 'task'
 * ```
 */
export function encodeTask(task: Task): V03Task {
  const out: V03Task = { kind: 'task', id: task.id, contextId: task.contextId, status: encodeStatus(task.status) };
  if (task.artifacts.length > 0) {
    const artifacts: V03Artifact[] = [];
    for (let i = 0; i < task.artifacts.length; i++) artifacts.push(encodeArtifact(task.artifacts[i] as Artifact));
    out.artifacts = artifacts;
  }
  if (task.history.length > 0) {
    const history: V03Message[] = [];
    for (let i = 0; i < task.history.length; i++) history.push(encodeMessage(task.history[i] as Message));
    out.history = history;
  }
  if (task.metadata !== undefined) out.metadata = task.metadata;
  return out;
}

/**
 * The message/send result: the bare Task or Message (v0.3 does not wrap it).
 *
 * @example
 * ```ts
 * encodeSendResult({ kind: 'message', message }).kind; // 'message'
 * ```
 */
export function encodeSendResult(result: SendResult): V03Task | V03Message {
  return result.kind === 'task' ? encodeTask(result.task) : encodeMessage(result.message);
}

/**
 * One SSE result. `final` comes from the canonical event: the stream's owner decides which
 * event is last.
 *
 * @example
 * ```ts
 * encodeStreamEvent({ ...statusEvent, final: true }); // { kind: 'status-update', …, final: true }
 * ```
 */
export function encodeStreamEvent(event: StreamEvent): V03StreamResult {
  switch (event.kind) {
    case 'task':
      return encodeTask(event.task);
    case 'message':
      return encodeMessage(event.message);
    case 'status-update': {
      const out: V03StatusUpdate = {
        kind: 'status-update',
        taskId: event.taskId,
        contextId: event.contextId,
        status: encodeStatus(event.status),
        final: event.final,
      };
      if (event.metadata !== undefined) out.metadata = event.metadata;
      return out;
    }
    case 'artifact-update': {
      const out: V03ArtifactUpdate = {
        kind: 'artifact-update',
        taskId: event.taskId,
        contextId: event.contextId,
        artifact: encodeArtifact(event.artifact),
      };
      if (event.append !== undefined) out.append = event.append;
      if (event.lastChunk !== undefined) out.lastChunk = event.lastChunk;
      if (event.metadata !== undefined) out.metadata = event.metadata;
      return out;
    }
  }
}

/**
 * A JSON-RPC error. v0.3 error `data` is free-form; the code and message carry everything a
 * caller needs.
 *
 * @example
 * ```ts
 * encodeError(new A2AError('TASK_NOT_FOUND')); // { code: -32001, message: 'Task not found' }
 * ```
 */
export function encodeError(error: A2AError): JsonRpcErrorObject {
  return { code: error.rpcCode, message: error.message };
}

// ---------------------------------------------------------------------------------------------
// Request decoders

/** `blocking` absent means blocking: 0.3 servers blocked by default (digest item 10.6). */
function decodeSendConfiguration(value: unknown, ctx: Ctx): SendConfiguration {
  if (isAbsent(value)) return { returnImmediately: false };
  const rec = checkRecord(value, 'configuration', ctx);
  const config: SendConfiguration = {
    returnImmediately: optBool(rec.blocking, 'configuration.blocking', ctx) === false,
  };
  const historyLength = optHistoryLength(rec.historyLength, 'configuration.historyLength', ctx);
  if (historyLength !== undefined) config.historyLength = historyLength;
  const modes = optStringList(rec.acceptedOutputModes, 'configuration.acceptedOutputModes', ctx);
  if (modes !== undefined) config.acceptedOutputModes = modes;
  if (!isAbsent(rec.pushNotificationConfig)) {
    config.pushConfig = decodePushConfigInput(rec.pushNotificationConfig, 'configuration.pushNotificationConfig', ctx);
  }
  return config;
}

function decodeSendParams(rec: Rec, ctx: Ctx): SendParams {
  const params: SendParams = {
    message: decodeMessage(V03_WIRE, rec.message, 'message', ctx),
    configuration: decodeSendConfiguration(rec.configuration, ctx),
  };
  const metadata = optJsonObject(rec.metadata, 'metadata', ctx);
  if (metadata !== undefined) params.metadata = metadata;
  return params;
}

/** `{id, metadata?}` of tasks/get, tasks/cancel and tasks/resubscribe. */
function decodeTaskIdParams(rec: Rec, ctx: Ctx): { id: string; metadata?: JsonObject } {
  const id = optId(rec.id, 'id', ctx);
  if (id === undefined) throw ctx.fail('id', 'is required');
  const out: { id: string; metadata?: JsonObject } = { id };
  const metadata = optJsonObject(rec.metadata, 'metadata', ctx);
  if (metadata !== undefined) out.metadata = metadata;
  return out;
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
      const { id } = decodeTaskIdParams(rec, ctx);
      const historyLength = optHistoryLength(rec.historyLength, 'historyLength', ctx);
      return { method: 'get', params: historyLength === undefined ? { id } : { id, historyLength } };
    }
    case 'cancel':
      return { method: 'cancel', params: decodeTaskIdParams(rec, ctx) };
    case 'subscribe': {
      const { id } = decodeTaskIdParams(rec, ctx);
      return { method: 'subscribe', params: { id } };
    }
    case 'extended-card':
      return { method: 'extended-card', params: {} };
    case 'push-config':
      return { method: 'push-config', params: decodePushRequest(method, rec, ctx) };
    case 'list':
      // Not in METHODS; kept for exhaustiveness.
      return unsupportedList();
  }
}

/**
 * Validates and converts the params of one of the v0.3 methods. Throws `A2AError`:
 * METHOD_NOT_FOUND for another name, INVALID_PARAMS (with the field) for bad params.
 *
 * @example
 * ```ts
 * decodeRequest('tasks/get', { id: 't-1' }); // { method: 'get', params: { id: 't-1' } }
 * ```
 */
export function decodeRequest(method: string, params: unknown): A2ARequest {
  const op = METHODS.get(method);
  if (op === undefined) throw new A2AError('METHOD_NOT_FOUND');
  return guard(REQUEST, () => decodeParams(op, method, params));
}
