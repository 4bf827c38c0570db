/**
 * The outbound auth error: why no token could be had for a call, with a stable `code`, the
 * result's `error_type` it maps to, and Airlock's own one-line explanation (never a token, a
 * secret or text the token endpoint chose).
 *
 * @example
 * ```ts
 * throw new OutboundAuthError('token_endpoint_refused', 'remote_auth_failed', 'the token endpoint refused the client (HTTP 401)');
 * ```
 */
import { AirlockError } from '../../errors/index.js';
import type { CallErrorType } from '../result.js';

/**
 * The stable codes of {@link OutboundAuthError}.
 *
 * @example
 * ```ts
 * const code: OutboundAuthCode = 'outbound_auth_unsupported_scheme';
 * ```
 */
export type OutboundAuthCode =
  /** The card asks for a scheme (or scopes) the entry cannot supply. */
  | 'outbound_auth_unsupported_scheme'
  /** The card names a token endpoint on another origin than the entry's. */
  | 'token_endpoint_origin'
  /** The token endpoint answered with an error status. */
  | 'token_endpoint_refused'
  /** The token endpoint's answer is not a usable token response. */
  | 'token_response_invalid'
  /** The token endpoint could not be reached (the transport's refusal or failure). */
  | 'token_endpoint_unreachable'
  /** A token exchange has no subject token: no delegated caller and no configured subject token. */
  | 'token_exchange_no_subject'
  /** The client assertion could not be signed. */
  | 'client_assertion_failed';

/**
 * Why no token could be had. `errorType` is the result's `error_type` (the fixed vocabulary of
 * src/client/result.ts); the message is Airlock's own words.
 *
 * @example
 * ```ts
 * if (error instanceof OutboundAuthError) console.error(error.code, error.errorType);
 * ```
 */
export class OutboundAuthError extends AirlockError {
  readonly code: OutboundAuthCode;
  readonly errorType: CallErrorType;

  constructor(code: OutboundAuthCode, errorType: CallErrorType, message: string) {
    super(message);
    this.code = code;
    this.errorType = errorType;
  }
}
