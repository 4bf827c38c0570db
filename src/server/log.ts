/**
 * Structured JSON logs on stderr (stdout is kept for what a person reads). Callers pass
 * ids, counts and outcomes; message content and credentials are never logged, and the
 * usual credential-bearing keys are redacted in case one slips into a field.
 *
 * @example
 * ```ts
 * const logger = createLogger('info');
 * logger.info({ event: 'listening', url });
 * ```
 */
import { pino } from 'pino';

export interface Logger {
  info(fields: Record<string, unknown>): void;
  warn(fields: Record<string, unknown>): void;
  error(fields: Record<string, unknown>): void;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

export function createLogger(level: LogLevel = 'info'): Logger {
  const base = pino(
    {
      level,
      base: { service: 'airlock' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: ['token', 'authorization', 'headers.authorization', 'apiKey', '*.token', '*.authorization'],
        censor: '[redacted]',
      },
      formatters: { level: (label) => ({ level: label }) },
    },
    pino.destination({ fd: 2, sync: true }),
  );
  return {
    info: (fields) => base.info(fields),
    warn: (fields) => base.warn(fields),
    error: (fields) => base.error(fields),
  };
}

/** A logger that drops everything (tests, benchmarks). */
export const silentLogger: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };
