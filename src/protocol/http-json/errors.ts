/**
 * Errors over HTTP+JSON (v1.0.1 §11.6): the HTTP status of each A2A error and a
 * `google.rpc.Status`-shaped body, `{"error": {code, status, message, details}}`, whose details
 * carry the same ErrorInfo (and BadRequest for a named field) as a v1.0 JSON-RPC error.
 *
 * @example
 * ```ts
 * const { status, body } = httpJsonError(new A2AError('TASK_NOT_FOUND'));
 * // 404, '{"error":{"code":404,"status":"NOT_FOUND","message":"Task not found","details":[…]}}'
 * ```
 */
import type { A2AError, A2AErrorCode } from '../errors.js';
import { v10 } from '../v10/index.js';

/**
 * HTTP status and google.rpc code name per A2A error, as v1.0.1 maps them: TaskNotCancelable
 * 400 (409 in 1.0.0), ContentTypeNotSupported 400 (415), InvalidAgentResponse 500 (502).
 *
 * @example
 * ```ts
 * HTTP_JSON_STATUS.TASK_NOT_CANCELABLE; // [400, 'FAILED_PRECONDITION']
 * ```
 */
export const HTTP_JSON_STATUS: Readonly<Record<A2AErrorCode, readonly [number, string]>> = {
  JSON_PARSE: [400, 'INVALID_ARGUMENT'],
  INVALID_REQUEST: [400, 'INVALID_ARGUMENT'],
  METHOD_NOT_FOUND: [404, 'NOT_FOUND'],
  INVALID_PARAMS: [400, 'INVALID_ARGUMENT'],
  INTERNAL: [500, 'INTERNAL'],
  TASK_NOT_FOUND: [404, 'NOT_FOUND'],
  TASK_NOT_CANCELABLE: [400, 'FAILED_PRECONDITION'],
  PUSH_NOTIFICATION_NOT_SUPPORTED: [400, 'FAILED_PRECONDITION'],
  UNSUPPORTED_OPERATION: [400, 'FAILED_PRECONDITION'],
  CONTENT_TYPE_NOT_SUPPORTED: [400, 'INVALID_ARGUMENT'],
  INVALID_AGENT_RESPONSE: [500, 'INTERNAL'],
  EXTENDED_AGENT_CARD_NOT_CONFIGURED: [400, 'FAILED_PRECONDITION'],
  EXTENSION_SUPPORT_REQUIRED: [400, 'FAILED_PRECONDITION'],
  VERSION_NOT_SUPPORTED: [400, 'FAILED_PRECONDITION'],
};

/**
 * An error as the binding answers it. `status` overrides the mapped HTTP status (a body over
 * the size limit keeps 413, a slow one 408) while the body still names the A2A error.
 *
 * @example
 * ```ts
 * httpJsonError(new A2AError('INVALID_REQUEST', 'Request body is larger than 1024 bytes'), 413).status; // 413
 * ```
 */
export function httpJsonError(error: A2AError, status?: number): { status: number; body: string } {
  const [mapped, name] = HTTP_JSON_STATUS[error.code];
  const code = status ?? mapped;
  const details = v10.encodeError(error).data;
  return { status: code, body: JSON.stringify({ error: { code, status: name, message: error.message, details } }) };
}
