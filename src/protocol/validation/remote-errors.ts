/**
 * JSON-RPC errors from a remote, read into an `A2AError` whatever dialect the remote speaks,
 * and the google.rpc detail names of v1.0 errors (which the v1.0 encoder writes too).
 *
 * @example
 * ```ts
 * decodeRpcError({ code: -32001, message: 'Task not found' }).code; // 'TASK_NOT_FOUND'
 * ```
 */
import { A2A_ERRORS, A2AError, errorCodeForNumber } from '../errors.js';
import type { A2AErrorCode } from '../errors.js';
import { LIMITS, asRecord } from './primitives.js';

const ERROR_INFO_TYPE = 'type.googleapis.com/google.rpc.ErrorInfo';
const BAD_REQUEST_TYPE = 'type.googleapis.com/google.rpc.BadRequest';

/**
 * Type URLs of the v1.0 error details.
 *
 * @example
 * ```ts
 * data.push({ '@type': ERROR_DETAIL_TYPES.errorInfo, reason, domain: A2A_ERROR_DOMAIN });
 * ```
 */
export const ERROR_DETAIL_TYPES = { errorInfo: ERROR_INFO_TYPE, badRequest: BAD_REQUEST_TYPE } as const;

/**
 * The ErrorInfo `domain` of A2A errors (§9.5).
 *
 * @example
 * ```ts
 * { '@type': ERROR_DETAIL_TYPES.errorInfo, reason: 'TASK_NOT_FOUND', domain: A2A_ERROR_DOMAIN }
 * ```
 */
export const A2A_ERROR_DOMAIN = 'a2a-protocol.org';

/** Reason → code (the inverse of `errorReason`), for remote errors whose number is not ours. */
function codeForReason(reason: string): A2AErrorCode | undefined {
  if (reason === 'JSON_PARSE_ERROR') return 'JSON_PARSE';
  return Object.hasOwn(A2A_ERRORS, reason) ? (reason as A2AErrorCode) : undefined;
}

/** Drops control characters and caps the length of text a remote chose. */
function cleanRemoteText(text: string): string {
  // eslint-disable-next-line no-control-regex
  const clean = text.replace(/[\u0000-\u001f\u007f]+/g, ' ');
  return clean.length > LIMITS.errorMessageLength ? `${clean.slice(0, LIMITS.errorMessageLength)}…` : clean;
}

/**
 * A remote's JSON-RPC `error` member as an `A2AError`. Known numbers map to their code, an
 * unknown number falls back on a v1.0 ErrorInfo `reason` and then on INTERNAL; a malformed
 * error object becomes INVALID_AGENT_RESPONSE. A BadRequest field violation becomes `field`.
 * The remote's message is kept (cleaned and truncated) because it is what explains the failure.
 * Never throws.
 *
 * @example
 * ```ts
 * decodeRpcError({ code: -32001, message: 'Task not found' }).code; // 'TASK_NOT_FOUND'
 * ```
 */
export function decodeRpcError(error: unknown): A2AError {
  const rec = asRecord(error);
  if (rec === undefined || typeof rec.code !== 'number' || !Number.isInteger(rec.code)) {
    return new A2AError('INVALID_AGENT_RESPONSE', 'The agent sent a malformed JSON-RPC error');
  }
  let code = errorCodeForNumber(rec.code);
  let field: string | undefined;
  if (Array.isArray(rec.data)) {
    for (const detail of rec.data) {
      const d = asRecord(detail);
      if (d === undefined) continue;
      if (d['@type'] === ERROR_INFO_TYPE && code === undefined && typeof d.reason === 'string') {
        code = codeForReason(d.reason);
      } else if (d['@type'] === BAD_REQUEST_TYPE && field === undefined && Array.isArray(d.fieldViolations)) {
        const first = asRecord(d.fieldViolations[0]);
        if (first !== undefined && typeof first.field === 'string' && first.field.length <= LIMITS.listItemLength) {
          field = cleanRemoteText(first.field);
        }
      }
    }
  }
  const message = typeof rec.message === 'string' && rec.message.length > 0 ? cleanRemoteText(rec.message) : undefined;
  return new A2AError(code ?? 'INTERNAL', message, field === undefined ? undefined : { field });
}
