/**
 * The one error of JWT authentication: unusable key material, raised at startup only. Every
 * per-request failure is a typed `JwtFailure` instead (callers always answer a plain 401).
 *
 * @example
 * ```ts
 * throw new JwtConfigError('auth.jwt: the JWKS is malformed', { cause });
 * ```
 */
import { AirlockError } from '../../../errors/index.js';

/**
 * The configured key material is unusable: a malformed JWKS, an unreadable PEM, or a key that
 * cannot verify any allowed algorithm. Raised at startup (construction), never per request.
 *
 * @example
 * ```ts
 * try {
 *   new JwtAuthenticator(settings);
 * } catch (error) {
 *   if (error instanceof JwtConfigError) exitWithConfigError(error.message);
 * }
 * ```
 */
export class JwtConfigError extends AirlockError {
  readonly code = 'jwt_config';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}
