/**
 * The one root of every error Airlock throws on purpose. Each subclass carries a stable
 * `code` (a string that never changes between releases), so callers sort errors by code
 * instead of by `instanceof` chains across modules, as jose's `JOSEError` does.
 *
 * The message is for a person: one line they can act on, never a secret or message content.
 *
 * @example
 * ```ts
 * class QuotaError extends AirlockError {
 *   readonly code = 'quota_exceeded';
 * }
 * try {
 *   await gateway.start();
 * } catch (error) {
 *   if (isAirlockError(error)) console.error(`${error.code}: ${error.message}`);
 * }
 * ```
 */
export abstract class AirlockError extends Error {
  /** The stable name of what went wrong; subclasses fix it per class or per instance. */
  abstract readonly code: string;

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    // The concrete class's name, so a stack or a log line says which error it was.
    this.name = new.target.name;
  }
}

/**
 * True for any error thrown through the `AirlockError` root, from any module.
 *
 * @example
 * ```ts
 * if (isAirlockError(error) && error.code === 'store_unavailable') retryLater();
 * ```
 */
export function isAirlockError(error: unknown): error is AirlockError {
  return error instanceof AirlockError;
}

/**
 * The stable code of an Airlock error, or `undefined` for anything else (a `TypeError`, a
 * library's own error).
 *
 * @example
 * ```ts
 * log.warn({ code: errorCode(error) ?? 'unexpected' }, 'call failed');
 * ```
 */
export function errorCode(error: unknown): string | undefined {
  return error instanceof AirlockError ? error.code : undefined;
}
