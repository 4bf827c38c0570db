/**
 * What a caller asks the outbound client for (a send, a task read) and the checks a send must
 * pass before anything is contacted.
 *
 * @example
 * ```ts
 * const request: SendRequest = { agent: 'shop', message: 'Order 2 more', confirm: true };
 * const refusal = checkSend(request, registry.get('shop')); // undefined: it may go
 * ```
 */
import type { RegistryEntry } from './registry.js';
import { STRICT_ID_PATTERN, errorResult, type CallResult } from './result.js';

/**
 * Longest message sent, in UTF-16 code units (what `String.length` counts).
 *
 * @example
 * ```ts
 * if (text.length > MAX_MESSAGE_CHARS) shorten(text);
 * ```
 */
export const MAX_MESSAGE_CHARS = 8192;

/**
 * The principal key used when a caller names none (the local CLI user).
 *
 * @example
 * ```ts
 * await caller.send({ agent: 'travel', message: 'hi' }); // owned by DEFAULT_PRINCIPAL_KEY
 * ```
 */
export const DEFAULT_PRINCIPAL_KEY = 'client:local::';

/**
 * One outbound message.
 *
 * @example
 * ```ts
 * const request: SendRequest = { agent: 'shop', message: 'Order 2 more', confirm: true };
 * ```
 */
export interface SendRequest {
  /** A registry name; never a URL. */
  agent: string;
  /** Text only, 1..8192 characters. */
  message: string;
  /**
   * Answer an interrupted task (input-required / auth-required) on that same task. Only a
   * task this principal started is accepted; any other is `task_not_found`.
   */
  taskId?: string;
  contextId?: string;
  /** Required (true) for entries with `effect: acting`. */
  confirm?: boolean;
  /** Who is calling; owns the mirror task. */
  principalKey?: string;
  /**
   * Read the answer as a stream (SendStreamingMessage / message/stream) when the remote's card
   * declares `capabilities.streaming`; otherwise the call is sent and polled as usual. The
   * same caps apply: `max_response_bytes` over the whole stream, `max_wait_s` in total.
   */
  stream?: boolean;
}

/**
 * A one-shot read of a remote task.
 *
 * @example
 * ```ts
 * const request: GetTaskRequest = { agent: 'travel', taskId: 't-1' };
 * ```
 */
export interface GetTaskRequest {
  agent: string;
  /** A task this principal started through this client; any other is `task_not_found`. */
  taskId: string;
  principalKey?: string;
}

const PRINCIPAL_KEY = /^[\x20-\x7e]{1,512}$/;

/**
 * The refusals made before any request: empty or oversized text, malformed ids or principal
 * key, an acting entry without explicit confirmation. Undefined when the send may go.
 *
 * @example
 * ```ts
 * const refusal = checkSend(request, registry.get('shop'));
 * if (refusal !== undefined) return refusal; // e.g. confirmation_required
 * ```
 */
export function checkSend(request: SendRequest, entry: RegistryEntry): CallResult | undefined {
  const text = request.message;
  if (typeof text !== 'string' || text.trim().length === 0) {
    return errorResult('invalid_params', { message: 'the message must be non-empty text' });
  }
  if (text.length > MAX_MESSAGE_CHARS) return errorResult('message_too_long', {});
  for (const key of ['taskId', 'contextId'] as const) {
    const value = request[key];
    if (value !== undefined && (typeof value !== 'string' || !STRICT_ID_PATTERN.test(value))) {
      return errorResult('invalid_params', { message: `${key} must be 1..128 characters of A-Z a-z 0-9 . _ : -` });
    }
  }
  if (request.principalKey !== undefined && !isPrincipalKey(request.principalKey)) {
    return errorResult('invalid_params', { message: 'principalKey must be 1..512 printable ASCII characters' });
  }
  if (entry.effect === 'acting' && request.confirm !== true) {
    return errorResult('confirmation_required', {
      message: `agent "${entry.name}" acts on your behalf (effect: acting): repeat the call with explicit confirmation (--confirm)`,
    });
  }
  return undefined;
}

/**
 * Whether a caller-supplied principal key has the allowed shape (1..512 printable ASCII).
 *
 * @example
 * ```ts
 * isPrincipalKey('client:web::alice'); // true
 * ```
 */
export function isPrincipalKey(key: unknown): boolean {
  return typeof key === 'string' && PRINCIPAL_KEY.test(key);
}

/**
 * The principal a call is made for: the caller's key, or the local CLI user's.
 *
 * @example
 * ```ts
 * principalOf(undefined); // DEFAULT_PRINCIPAL_KEY
 * ```
 */
export function principalOf(key: string | undefined): string {
  return key ?? DEFAULT_PRINCIPAL_KEY;
}
