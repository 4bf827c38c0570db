/**
 * A2A and JSON-RPC errors with stable codes (digest §8).
 *
 * Services throw `A2AError`; the codecs render it in the caller's dialect. The message is
 * meant for a person calling the API and must never carry secrets or message content.
 *
 * @example
 * ```ts
 * throw new A2AError('TASK_NOT_FOUND', 'Task not found');
 * ```
 */
import { AirlockError } from '../errors/index.js';

export const A2A_ERRORS = {
  JSON_PARSE: { code: -32700, v10: 'JSONParseError', v03: 'JSONParseError' },
  INVALID_REQUEST: { code: -32600, v10: 'InvalidRequestError', v03: 'InvalidRequestError' },
  METHOD_NOT_FOUND: { code: -32601, v10: 'MethodNotFoundError', v03: 'MethodNotFoundError' },
  INVALID_PARAMS: { code: -32602, v10: 'InvalidParamsError', v03: 'InvalidParamsError' },
  INTERNAL: { code: -32603, v10: 'InternalError', v03: 'InternalError' },
  TASK_NOT_FOUND: { code: -32001, v10: 'TaskNotFoundError', v03: 'TaskNotFoundError' },
  TASK_NOT_CANCELABLE: { code: -32002, v10: 'TaskNotCancelableError', v03: 'TaskNotCancelableError' },
  PUSH_NOTIFICATION_NOT_SUPPORTED: {
    code: -32003,
    v10: 'PushNotificationNotSupportedError',
    v03: 'PushNotificationNotSupportedError',
  },
  UNSUPPORTED_OPERATION: { code: -32004, v10: 'UnsupportedOperationError', v03: 'UnsupportedOperationError' },
  CONTENT_TYPE_NOT_SUPPORTED: {
    code: -32005,
    v10: 'ContentTypeNotSupportedError',
    v03: 'ContentTypeNotSupportedError',
  },
  INVALID_AGENT_RESPONSE: { code: -32006, v10: 'InvalidAgentResponseError', v03: 'InvalidAgentResponseError' },
  EXTENDED_AGENT_CARD_NOT_CONFIGURED: {
    code: -32007,
    v10: 'ExtendedAgentCardNotConfiguredError',
    v03: 'AuthenticatedExtendedCardNotConfiguredError',
  },
  EXTENSION_SUPPORT_REQUIRED: {
    code: -32008,
    v10: 'ExtensionSupportRequiredError',
    v03: 'ExtensionSupportRequiredError',
  },
  VERSION_NOT_SUPPORTED: { code: -32009, v10: 'VersionNotSupportedError', v03: 'VersionNotSupportedError' },
} as const;

export type A2AErrorCode = keyof typeof A2A_ERRORS;

/** Default messages, worded like the v0.3 spec where it has one. */
const DEFAULT_MESSAGES: Record<A2AErrorCode, string> = {
  JSON_PARSE: 'Invalid JSON payload',
  INVALID_REQUEST: 'Request payload validation error',
  METHOD_NOT_FOUND: 'Method not found',
  INVALID_PARAMS: 'Invalid parameters',
  INTERNAL: 'Internal error',
  TASK_NOT_FOUND: 'Task not found',
  TASK_NOT_CANCELABLE: 'Task cannot be canceled',
  PUSH_NOTIFICATION_NOT_SUPPORTED: 'Push Notification is not supported',
  UNSUPPORTED_OPERATION: 'This operation is not supported',
  CONTENT_TYPE_NOT_SUPPORTED: 'Incompatible content types',
  INVALID_AGENT_RESPONSE: 'Invalid agent response',
  EXTENDED_AGENT_CARD_NOT_CONFIGURED: 'Extended agent card is not configured',
  EXTENSION_SUPPORT_REQUIRED: 'A required extension was not requested',
  VERSION_NOT_SUPPORTED: 'A2A version not supported',
};

/** A JSON-RPC / A2A error a caller will see. `code` is the stable name, `rpcCode` the number. */
export class A2AError extends AirlockError {
  readonly code: A2AErrorCode;
  readonly rpcCode: number;
  /** For validation errors: which field was wrong (rendered as google.rpc.BadRequest in v1.0). */
  readonly field?: string;

  constructor(code: A2AErrorCode, message?: string, options?: { field?: string; cause?: unknown }) {
    super(message ?? DEFAULT_MESSAGES[code], options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.rpcCode = A2A_ERRORS[code].code;
    if (options?.field !== undefined) this.field = options.field;
  }
}

/** Shorthand for the most common error: a parameter failed validation. */
export function invalidParams(field: string, problem: string): A2AError {
  return new A2AError('INVALID_PARAMS', `Invalid params: ${field} ${problem}`, { field });
}

/** The error code name that goes with a JSON-RPC number, if it is one of ours. */
export function errorCodeForNumber(rpcCode: number): A2AErrorCode | undefined {
  for (const [name, spec] of Object.entries(A2A_ERRORS)) {
    if (spec.code === rpcCode) return name as A2AErrorCode;
  }
  return undefined;
}

/** The ErrorInfo `reason` of v1.0 (§9.5): the v1.0 name without `Error`, in SCREAMING_SNAKE. */
export function errorReason(code: A2AErrorCode): string {
  return code === 'JSON_PARSE' ? 'JSON_PARSE_ERROR' : code;
}
