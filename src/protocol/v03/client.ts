/**
 * The client half of the v0.3 codec, used for outbound calls: renders canonical requests as
 * v0.3 methods and params, and validates a remote agent's results and stream events (which
 * fail with -32006 INVALID_AGENT_RESPONSE naming the field). A result whose `kind` a lenient
 * server left out is recognised by its shape.
 *
 * @example
 * ```ts
 * encodeRequest({ method: 'get', params: { id: 't-1' } }); // { method: 'tasks/get', params: { id: 't-1' } }
 * ```
 */
import { A2AError } from '../errors.js';
import type { EncodedRequest } from '../dialect.js';
import type {
  A2ARequest,
  SendParams,
  SendResult,
  StreamEvent,
  Task,
  TaskArtifactUpdateEvent,
  TaskStatusUpdateEvent,
} from '../model.js';
import { isTerminalState } from '../model.js';
import { RESPONSE, guard } from '../validation/guard.js';
import { checkRecord, isAbsent, optBool } from '../validation/primitives.js';
import type { Rec } from '../validation/primitives.js';
import {
  decodeArtifact,
  decodeEventHead,
  decodeMessage,
  decodeStatus,
  decodeTaskWith,
} from '../validation/structures.js';
import { V03_WIRE, encodeMessage } from './mapping.js';
import { unsupportedList } from './wire.js';

// ---------------------------------------------------------------------------------------------
// Request encoders

/**
 * `blocking` is always sent explicitly: a2a-js reads "configuration present, blocking absent"
 * as non-blocking, unlike 0.3 servers, so leaving it out would be ambiguous.
 */
function encodeSendParams(params: SendParams): Record<string, unknown> {
  const config = params.configuration;
  const wireConfig: Record<string, unknown> = { blocking: !config.returnImmediately };
  if (config.acceptedOutputModes !== undefined) wireConfig.acceptedOutputModes = config.acceptedOutputModes;
  if (config.historyLength !== undefined) wireConfig.historyLength = config.historyLength;
  const out: Record<string, unknown> = { message: encodeMessage(params.message), configuration: wireConfig };
  if (params.metadata !== undefined) out.metadata = params.metadata;
  return out;
}

/**
 * A canonical request as a v0.3 method and params. ListTasks and push-config requests cannot
 * be encoded (UNSUPPORTED_OPERATION); `tenant` is dropped.
 *
 * @example
 * ```ts
 * encodeRequest({ method: 'subscribe', params: { id: 't-1' } }); // { method: 'tasks/resubscribe', … }
 * ```
 */
export function encodeRequest(request: A2ARequest): EncodedRequest {
  switch (request.method) {
    case 'send':
      return { method: 'message/send', params: encodeSendParams(request.params) };
    case 'stream':
      return { method: 'message/stream', params: encodeSendParams(request.params) };
    case 'get': {
      const out: Record<string, unknown> = { id: request.params.id };
      if (request.params.historyLength !== undefined) out.historyLength = request.params.historyLength;
      return { method: 'tasks/get', params: out };
    }
    case 'cancel': {
      const out: Record<string, unknown> = { id: request.params.id };
      if (request.params.metadata !== undefined) out.metadata = request.params.metadata;
      return { method: 'tasks/cancel', params: out };
    }
    case 'subscribe':
      return { method: 'tasks/resubscribe', params: { id: request.params.id } };
    case 'extended-card':
      return { method: 'agent/getAuthenticatedExtendedCard', params: {} };
    case 'list':
      return unsupportedList();
    case 'push-config':
      throw new A2AError('UNSUPPORTED_OPERATION', 'Push notification config requests cannot be encoded');
  }
}

// ---------------------------------------------------------------------------------------------
// Result decoders

/**
 * A remote's tasks/get / tasks/cancel result.
 *
 * @example
 * ```ts
 * decodeTask({ kind: 'task', id: 't-1', contextId: 'c-1', status: { state: 'working' } }).id; // 't-1'
 * ```
 */
export function decodeTask(result: unknown): Task {
  return guard(RESPONSE, () => decodeTaskWith(V03_WIRE, result, 'result', RESPONSE));
}

/** The `kind` of a bare result; inferred from its shape when a lenient server leaves it out. */
function resultKind(rec: Rec): unknown {
  if (!isAbsent(rec.kind)) return rec.kind;
  if (!isAbsent(rec.messageId)) return 'message';
  if (!isAbsent(rec.artifact)) return 'artifact-update';
  if (!isAbsent(rec.taskId) && !isAbsent(rec.status)) return 'status-update';
  if (!isAbsent(rec.id) && !isAbsent(rec.status)) return 'task';
  return undefined;
}

/**
 * A remote's message/send result: a bare Task or Message.
 *
 * @example
 * ```ts
 * decodeSendResult({ kind: 'message', messageId: 'm', role: 'agent', parts: [] }).kind; // 'message'
 * ```
 */
export function decodeSendResult(result: unknown): SendResult {
  return guard(RESPONSE, () => {
    const ctx = RESPONSE;
    const rec = checkRecord(result, 'result', ctx);
    const kind = resultKind(rec);
    if (kind === 'task') return { kind: 'task', task: decodeTaskWith(V03_WIRE, rec, 'result', ctx) };
    if (kind === 'message') return { kind: 'message', message: decodeMessage(V03_WIRE, rec, 'result', ctx) };
    throw ctx.fail('result.kind', 'must be "task" or "message"');
  });
}

/**
 * One SSE result of a remote's stream. A status update without `final` is read as final on
 * terminal states.
 *
 * @example
 * ```ts
 * decodeStreamEvent({ kind: 'status-update', taskId: 't', contextId: 'c', status: { state: 'completed' } }).final; // true
 * ```
 */
export function decodeStreamEvent(result: unknown): StreamEvent {
  return guard(RESPONSE, () => {
    const ctx = RESPONSE;
    const rec = checkRecord(result, 'result', ctx);
    switch (resultKind(rec)) {
      case 'task':
        return { kind: 'task', task: decodeTaskWith(V03_WIRE, rec, 'result', ctx) };
      case 'message':
        return { kind: 'message', message: decodeMessage(V03_WIRE, rec, 'result', ctx) };
      case 'status-update': {
        const head = decodeEventHead(rec, 'result', ctx);
        const status = decodeStatus(V03_WIRE, rec.status, 'result.status', ctx);
        const event: TaskStatusUpdateEvent = {
          kind: 'status-update',
          taskId: head.taskId,
          contextId: head.contextId,
          status,
          // Required in v0.3; a server that leaves it out is read as ending on terminal states.
          final: optBool(rec.final, 'result.final', ctx) ?? isTerminalState(status.state),
        };
        if (head.metadata !== undefined) event.metadata = head.metadata;
        return event;
      }
      case 'artifact-update': {
        const head = decodeEventHead(rec, 'result', ctx);
        const event: TaskArtifactUpdateEvent = {
          kind: 'artifact-update',
          taskId: head.taskId,
          contextId: head.contextId,
          artifact: decodeArtifact(V03_WIRE, rec.artifact, 'result.artifact', ctx),
        };
        const append = optBool(rec.append, 'result.append', ctx);
        if (append !== undefined) event.append = append;
        const lastChunk = optBool(rec.lastChunk, 'result.lastChunk', ctx);
        if (lastChunk !== undefined) event.lastChunk = lastChunk;
        if (head.metadata !== undefined) event.metadata = head.metadata;
        return event;
      }
      default:
        throw ctx.fail('result.kind', 'must be "task", "message", "status-update" or "artifact-update"');
    }
  });
}
