/**
 * The client half of the v1.0 codec, used for outbound calls: renders canonical requests as
 * v1.0 methods and params, and validates a remote agent's results and stream events (which
 * fail with -32006 INVALID_AGENT_RESPONSE naming the field). Readers are lenient where real
 * servers differ: a bare Task or Message is accepted where the spec wraps it, and proto enum
 * numbers are accepted for states and roles.
 *
 * @example
 * ```ts
 * encodeRequest({ method: 'get', params: { id: 't-1' } }); // { method: 'GetTask', params: { id: 't-1' } }
 * ```
 */
import { A2AError } from '../errors.js';
import type { EncodedRequest } from '../dialect.js';
import type {
  A2ARequest,
  ListTasksParams,
  ListTasksResult,
  SendParams,
  SendResult,
  StreamEvent,
  Task,
  TaskArtifactUpdateEvent,
  TaskStatusUpdateEvent,
} from '../model.js';
import { isTerminalState } from '../model.js';
import { RESPONSE, guard } from '../validation/guard.js';
import { LIMITS, checkRecord, isAbsent, optBool, optInt, optString } from '../validation/primitives.js';
import type { Rec } from '../validation/primitives.js';
import {
  decodeArtifact,
  decodeEventHead,
  decodeMessage,
  decodeStatus,
  decodeTaskList,
  decodeTaskWith,
} from '../validation/structures.js';
import { V10_WIRE, encodeMessage } from './mapping.js';
import { STATE_TO_WIRE } from './wire.js';

// ---------------------------------------------------------------------------------------------
// Request encoders

function encodeSendParams(params: SendParams): Record<string, unknown> {
  const out: Record<string, unknown> = { message: encodeMessage(params.message) };
  const config = params.configuration;
  const wireConfig: Record<string, unknown> = {};
  if (config.acceptedOutputModes !== undefined) wireConfig.acceptedOutputModes = config.acceptedOutputModes;
  if (config.historyLength !== undefined) wireConfig.historyLength = config.historyLength;
  if (config.returnImmediately) wireConfig.returnImmediately = true;
  if (Object.keys(wireConfig).length > 0) out.configuration = wireConfig;
  if (params.metadata !== undefined) out.metadata = params.metadata;
  if (params.tenant !== undefined) out.tenant = params.tenant;
  return out;
}

function encodeListParams(params: ListTasksParams): Record<string, unknown> {
  const out: Record<string, unknown> = { pageSize: params.pageSize };
  if (params.contextId !== undefined) out.contextId = params.contextId;
  if (params.status !== undefined) out.status = STATE_TO_WIRE[params.status];
  if (params.pageToken !== undefined) out.pageToken = params.pageToken;
  if (params.historyLength !== undefined) out.historyLength = params.historyLength;
  if (params.statusTimestampAfter !== undefined) {
    out.statusTimestampAfter = new Date(params.statusTimestampAfter).toISOString();
  }
  if (params.includeArtifacts) out.includeArtifacts = true;
  if (params.tenant !== undefined) out.tenant = params.tenant;
  return out;
}

function withTenant(out: Record<string, unknown>, tenant: string | undefined): Record<string, unknown> {
  if (tenant !== undefined) out.tenant = tenant;
  return out;
}

/**
 * A canonical request as a v1.0 method and params. Push-config requests cannot be encoded
 * (UNSUPPORTED_OPERATION): Airlock never sends them.
 *
 * @example
 * ```ts
 * encodeRequest({ method: 'cancel', params: { id: 't-1' } }); // { method: 'CancelTask', params: { id: 't-1' } }
 * ```
 */
export function encodeRequest(request: A2ARequest): EncodedRequest {
  switch (request.method) {
    case 'send':
      return { method: 'SendMessage', params: encodeSendParams(request.params) };
    case 'stream':
      return { method: 'SendStreamingMessage', params: encodeSendParams(request.params) };
    case 'get': {
      const out: Record<string, unknown> = { id: request.params.id };
      if (request.params.historyLength !== undefined) out.historyLength = request.params.historyLength;
      return { method: 'GetTask', params: withTenant(out, request.params.tenant) };
    }
    case 'list':
      return { method: 'ListTasks', params: encodeListParams(request.params) };
    case 'cancel': {
      const out: Record<string, unknown> = { id: request.params.id };
      if (request.params.metadata !== undefined) out.metadata = request.params.metadata;
      return { method: 'CancelTask', params: withTenant(out, request.params.tenant) };
    }
    case 'subscribe':
      return { method: 'SubscribeToTask', params: withTenant({ id: request.params.id }, request.params.tenant) };
    case 'extended-card':
      return { method: 'GetExtendedAgentCard', params: withTenant({}, request.params.tenant) };
    case 'push-config':
      throw new A2AError('UNSUPPORTED_OPERATION', 'Push notification config requests cannot be encoded');
  }
}

// ---------------------------------------------------------------------------------------------
// Result decoders

/**
 * A remote's GetTask / CancelTask result.
 *
 * @example
 * ```ts
 * decodeTask({ id: 't-1', status: { state: 'TASK_STATE_WORKING' } }).status.state; // 'working'
 * ```
 */
export function decodeTask(result: unknown): Task {
  return guard(RESPONSE, () => decodeTaskWith(V10_WIRE, result, 'result', RESPONSE));
}

/** True when a bare object looks like a Task rather than a Message (lenient fallback). */
function looksLikeTask(rec: Rec): boolean {
  return !isAbsent(rec.status) && !isAbsent(rec.id);
}

/**
 * A remote's SendMessage result: `{task}` or `{message}`, or (leniently) the bare object.
 *
 * @example
 * ```ts
 * decodeSendResult({ task: { id: 't-1', status: { state: 'TASK_STATE_COMPLETED' } } }).kind; // 'task'
 * ```
 */
export function decodeSendResult(result: unknown): SendResult {
  return guard(RESPONSE, () => {
    const ctx = RESPONSE;
    const rec = checkRecord(result, 'result', ctx);
    const hasTask = !isAbsent(rec.task);
    const hasMessage = !isAbsent(rec.message);
    if (hasTask && hasMessage) throw ctx.fail('result', 'must hold either a task or a message');
    if (hasTask) return { kind: 'task', task: decodeTaskWith(V10_WIRE, rec.task, 'result.task', ctx) };
    if (hasMessage) return { kind: 'message', message: decodeMessage(V10_WIRE, rec.message, 'result.message', ctx) };
    // Some servers return the bare object (the a2a-python#1192 reading of §9.4.1); accept it.
    if (looksLikeTask(rec)) return { kind: 'task', task: decodeTaskWith(V10_WIRE, rec, 'result', ctx) };
    if (!isAbsent(rec.messageId)) return { kind: 'message', message: decodeMessage(V10_WIRE, rec, 'result', ctx) };
    throw ctx.fail('result', 'must hold a task or a message');
  });
}

const STREAM_MEMBERS = ['task', 'message', 'statusUpdate', 'artifactUpdate'] as const;

/**
 * A StreamResponse. v1.0 has no `final`: the canonical `final` is set for terminal states,
 * which a v1.0 server must close the stream after; callers should still treat the stream's
 * end as the end.
 *
 * @example
 * ```ts
 * decodeStreamEvent({ statusUpdate: { taskId: 't', contextId: 'c', status: { state: 'TASK_STATE_COMPLETED' } } }).final; // true
 * ```
 */
export function decodeStreamEvent(result: unknown): StreamEvent {
  return guard(RESPONSE, () => {
    const ctx = RESPONSE;
    const rec = checkRecord(result, 'result', ctx);
    let member: (typeof STREAM_MEMBERS)[number] | undefined;
    for (const name of STREAM_MEMBERS) {
      if (isAbsent(rec[name])) continue;
      if (member !== undefined)
        throw ctx.fail('result', 'must hold exactly one of task, message, statusUpdate or artifactUpdate');
      member = name;
    }
    switch (member) {
      case 'task':
        return { kind: 'task', task: decodeTaskWith(V10_WIRE, rec.task, 'result.task', ctx) };
      case 'message':
        return { kind: 'message', message: decodeMessage(V10_WIRE, rec.message, 'result.message', ctx) };
      case 'statusUpdate': {
        const path = 'result.statusUpdate';
        const body = checkRecord(rec.statusUpdate, path, ctx);
        const head = decodeEventHead(body, path, ctx);
        const status = decodeStatus(V10_WIRE, body.status, `${path}.status`, ctx);
        const event: TaskStatusUpdateEvent = {
          kind: 'status-update',
          taskId: head.taskId,
          contextId: head.contextId,
          status,
          final: isTerminalState(status.state),
        };
        if (head.metadata !== undefined) event.metadata = head.metadata;
        return event;
      }
      case 'artifactUpdate': {
        const path = 'result.artifactUpdate';
        const body = checkRecord(rec.artifactUpdate, path, ctx);
        const head = decodeEventHead(body, path, ctx);
        const event: TaskArtifactUpdateEvent = {
          kind: 'artifact-update',
          taskId: head.taskId,
          contextId: head.contextId,
          artifact: decodeArtifact(V10_WIRE, body.artifact, `${path}.artifact`, ctx),
        };
        const append = optBool(body.append, `${path}.append`, ctx);
        if (append !== undefined) event.append = append;
        const lastChunk = optBool(body.lastChunk, `${path}.lastChunk`, ctx);
        if (lastChunk !== undefined) event.lastChunk = lastChunk;
        if (head.metadata !== undefined) event.metadata = head.metadata;
        return event;
      }
      case undefined:
        throw ctx.fail('result', 'must hold one of task, message, statusUpdate or artifactUpdate');
    }
  });
}

/**
 * ListTasksResponse. ProtoJSON omits defaults, so absent counts mean 0 and an absent token ''.
 *
 * @example
 * ```ts
 * decodeListResult({ tasks: [] }); // { tasks: [], nextPageToken: '', pageSize: 0, totalSize: 0 }
 * ```
 */
export function decodeListResult(result: unknown): ListTasksResult {
  return guard(RESPONSE, () => {
    const ctx = RESPONSE;
    const rec = checkRecord(result, 'result', ctx);
    return {
      tasks: decodeTaskList(V10_WIRE, rec.tasks, 'result.tasks', ctx),
      // A remote's token is opaque and only ever sent back to it; bound it like a URL.
      nextPageToken: optString(rec.nextPageToken, 'result.nextPageToken', ctx, LIMITS.urlLength) ?? '',
      pageSize: optInt(rec.pageSize, 'result.pageSize', ctx, 0, LIMITS.int32Max) ?? 0,
      totalSize: optInt(rec.totalSize, 'result.totalSize', ctx, 0, LIMITS.int32Max) ?? 0,
    };
  });
}
