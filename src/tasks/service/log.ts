/**
 * The task service's log sink: backend failures and store trouble go here, never to callers.
 *
 * @example
 * ```ts
 * const log: ServiceLogger = (level, event, fields) => console[level](event, fields);
 * log('error', 'agent_backend_failed', { error: describe(new Error('boom')) });
 * ```
 */

/**
 * Structured log sink; the service reports backend failures here, never to callers.
 *
 * @example
 * ```ts
 * const logger: ServiceLogger = (level, event, fields) => console.log(level, event, fields);
 * ```
 */
export type ServiceLogger = (level: 'warn' | 'error', event: string, fields: Record<string, unknown>) => void;

/**
 * An error as one log field: its name and message (never a stack, never a secret-bearing cause).
 *
 * @example
 * ```ts
 * describe(new TypeError('bad')); // 'TypeError: bad'
 * ```
 */
export function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
