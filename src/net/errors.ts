/**
 * The one error type the guarded transport throws for anything a remote, the network or the
 * request's own URL did wrong. `code` is stable and meant for programs (audit rows, result
 * shaping); `message` is one line a person can act on. Messages name origins (scheme, host,
 * port), addresses and limits, never a path, query, header value or credential: a URL's query
 * may hold a token, and error text ends up in logs and model-visible results.
 *
 * @example
 * ```ts
 * try {
 *   await client.request({ method: 'GET', url, maxResponseBytes: 65536, timeouts });
 * } catch (error) {
 *   if (error instanceof OutboundError && error.code === 'address_blocked') console.warn(error.message);
 * }
 * ```
 */
import { AirlockError } from '../errors/index.js';
export type OutboundErrorCode =
  | 'insecure_url'
  | 'url_has_credentials'
  | 'address_blocked'
  | 'redirect_refused'
  | 'response_too_large'
  | 'request_timeout'
  | 'network_error'
  | 'invalid_response'
  | 'proxy_refused';

/**
 * A refused or failed outbound request. See {@link OutboundErrorCode} for the codes.
 *
 * @example
 * ```ts
 * throw new OutboundError('redirect_refused', 'https://agent.example answered 302; redirects are never followed');
 * ```
 */
export class OutboundError extends AirlockError {
  readonly code: OutboundErrorCode;
  /** A short description safe to show a caller (no origin, address or secret), when there is one. */
  readonly detail?: string;

  constructor(code: OutboundErrorCode, message: string, options?: { cause?: unknown; detail?: string }) {
    super(message, options);
    this.code = code;
    if (options?.detail !== undefined) this.detail = options.detail;
  }
}

/**
 * True when `error` is an {@link OutboundError}, optionally with one of the given codes.
 *
 * @example
 * ```ts
 * if (isOutboundError(error, 'request_timeout')) retryLater();
 * ```
 */
export function isOutboundError(error: unknown, ...codes: OutboundErrorCode[]): error is OutboundError {
  return error instanceof OutboundError && (codes.length === 0 || codes.includes(error.code));
}
