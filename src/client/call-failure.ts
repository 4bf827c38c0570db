/**
 * How an outbound exchange fails: {@link CallFailure}, with an error type from the fixed
 * vocabulary (result.ts), and the mapping of transport, trust, JSON-RPC and stream errors onto
 * it. The remote's own words only ever travel in `remoteText`, for framing.
 *
 * @example
 * ```ts
 * throw new CallFailure('request_timeout', { detail: 'the remote did not answer' }).about(task);
 * ```
 */
import { AUDIT_EVENT_SPEC } from '../audit/events.js';
import { AirlockError } from '../errors/index.js';
import { isOutboundError } from '../net/errors.js';
import type { A2AError } from '../protocol/errors.js';
import type { Task, TaskState } from '../protocol/model.js';
import type { RegistryEntry } from './registry.js';
import type { CallErrorType } from './result.js';
import { SseTooLargeError } from './sse-reader.js';

/**
 * A failed exchange with everything known at that point: its error type, the remote's own
 * text (for framing, never shown bare), a local explanation, and the task's ids and state once
 * a task exists.
 *
 * @example
 * ```ts
 * throw new CallFailure('invalid_response', { detail: 'the remote answered about another task' }).about(task);
 * ```
 */
export class CallFailure extends AirlockError {
  /** The stable code is the error type the result reports. */
  readonly code: CallErrorType;
  readonly errorType: CallErrorType;
  taskId?: string;
  contextId?: string;
  taskState?: TaskState;
  readonly remoteText?: string;
  readonly detail?: string;
  /**
   * The remote answered with a JSON-RPC error: it ended its side of the exchange itself, so a
   * task it runs need not be canceled.
   */
  readonly fromRpcError: boolean;

  constructor(
    errorType: CallErrorType,
    options: { remoteText?: string; detail?: string; fromRpcError?: boolean } = {},
  ) {
    super(errorType);
    this.code = errorType;
    this.errorType = errorType;
    if (options.remoteText !== undefined) this.remoteText = options.remoteText;
    if (options.detail !== undefined) this.detail = options.detail;
    this.fromRpcError = options.fromRpcError === true;
  }

  /** Attaches a task's ids and state, once a task exists. */
  about(task: Pick<Task, 'id' | 'contextId'> & { state?: TaskState }): this {
    this.taskId = task.id;
    this.contextId = task.contextId;
    if (task.state !== undefined) this.taskState = task.state;
    return this;
  }
}

/** Every call error type is an audit reason of a2a.client.* rows (see src/audit/events.ts). */
const CLIENT_REASONS: ReadonlySet<string> = new Set(AUDIT_EVENT_SPEC['a2a.client.send'].reasons);

/**
 * A thrown transport or trust error as an error type: its `code` when that is in the
 * vocabulary (`proxy_refused` included), else `fallback`.
 *
 * @example
 * ```ts
 * errorTypeOf(new OutboundError('address_blocked', '…'), 'network_error'); // 'address_blocked'
 * errorTypeOf(new TypeError('x'), 'card_invalid');                        // 'card_invalid'
 * ```
 */
export function errorTypeOf(error: unknown, fallback: CallErrorType): CallErrorType {
  const code = error !== null && typeof error === 'object' ? (error as { code?: unknown }).code : undefined;
  if (typeof code === 'string' && CLIENT_REASONS.has(code)) return code as CallErrorType;
  if (code === 'proxy_refused') return 'network_error';
  return fallback;
}

/**
 * A remote's JSON-RPC error as a failure: TaskNotFound and InvalidAgentResponse keep their
 * meaning; anything else is `remote_error`, with the remote's words as text to frame.
 *
 * @example
 * ```ts
 * throw failureFromRpcError(endpoint.dialect.decodeError(frame.error));
 * ```
 */
export function failureFromRpcError(error: A2AError): CallFailure {
  if (error.code === 'TASK_NOT_FOUND') return new CallFailure('task_not_found', { fromRpcError: true });
  if (error.code === 'INVALID_AGENT_RESPONSE') return new CallFailure('invalid_response', { fromRpcError: true });
  // The remote's own words go back framed; the code number is ours to show.
  return new CallFailure('remote_error', {
    remoteText: `JSON-RPC error ${error.rpcCode}: ${error.message}`,
    fromRpcError: true,
  });
}

/**
 * A failure while reading a stream, with transport and SSE-parser errors given their types;
 * `undefined` for anything else (a bug: the caller logs it by name and reports
 * `invalid_response`).
 *
 * @example
 * ```ts
 * const failure = streamFailure(error, entry) ?? new CallFailure('invalid_response');
 * ```
 */
export function streamFailure(error: unknown, entry: RegistryEntry): CallFailure | undefined {
  if (error instanceof CallFailure) return error;
  if (error instanceof SseTooLargeError) {
    return new CallFailure('response_too_large', {
      detail: `a stream event is larger than max_response_bytes (${entry.maxResponseBytes})`,
    });
  }
  const type = errorTypeOf(error, 'invalid_response');
  if (type !== 'invalid_response') return new CallFailure(type);
  return isOutboundError(error) && error.detail !== undefined ? transportFailure(error, type) : undefined;
}

/**
 * A transport error as a failure, with its caller-safe detail when it has one.
 *
 * @example
 * ```ts
 * catch (error) { throw transportFailure(error, 'card_invalid'); }
 * ```
 */
export function transportFailure(error: unknown, fallback: CallErrorType): CallFailure {
  const detail = isOutboundError(error) ? error.detail : undefined;
  return new CallFailure(errorTypeOf(error, fallback), detail === undefined ? {} : { detail });
}
