/**
 * How the PostgreSQL store tells "the database cannot answer now" (retryable, 503) from every
 * other driver error. The PostgreSQL task bus and the shared rate limits use it too.
 *
 * @example
 * ```ts
 * try { await pool.query(sql); } catch (error) { throw asStoreError(error); }
 * ```
 */
import { StoreUnavailableError, TaskStoreInputError } from '../errors.js';
import { STORE_NAME } from './options.js';

/** Node socket errors that mean the server cannot be reached. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNABORTED',
]);

/**
 * SQLSTATEs that mean "not now": connection exceptions (class 08), the server shutting down or
 * starting (57P01–57P03), too many connections (53300), a statement or lock timeout (57014,
 * 55P03), and serialization failures or deadlocks (40001, 40P01).
 */
const UNAVAILABLE_SQLSTATES = /^(08...|57P0[1-3]|53300|57014|55P03|40001|40P01)$/;

/** pg's own errors for a lost or unobtainable connection, which carry no code. */
const UNAVAILABLE_MESSAGES =
  /timeout exceeded when trying to connect|Connection terminated|Query read timeout|Client has encountered a connection error|Client was closed|Cannot use a pool after calling end/;

/**
 * The store's error for a driver error: {@link StoreUnavailableError} for anything that means the
 * database cannot answer now (its message names no host, user or password), the error itself
 * otherwise (a bug, or a schema error).
 *
 * @example
 * ```ts
 * throw asStoreError(error);
 * ```
 */
export function asStoreError(error: unknown): unknown {
  if (error instanceof StoreUnavailableError || error instanceof TaskStoreInputError) return error;
  if (!(error instanceof Error)) return error;
  const code = (error as { code?: unknown }).code;
  const nested = error instanceof AggregateError ? error.errors : [];
  const networkCode = [code, ...nested.map((inner: unknown) => (inner as { code?: unknown } | null)?.code)].find(
    (candidate): candidate is string => typeof candidate === 'string' && NETWORK_CODES.has(candidate),
  );
  if (networkCode !== undefined) {
    return new StoreUnavailableError(`${STORE_NAME}: cannot reach the database (${networkCode})`, { cause: error });
  }
  if (typeof code === 'string' && UNAVAILABLE_SQLSTATES.test(code)) {
    return new StoreUnavailableError(`${STORE_NAME}: the database is unavailable (SQLSTATE ${code})`, {
      cause: error,
    });
  }
  if (UNAVAILABLE_MESSAGES.test(error.message)) {
    return new StoreUnavailableError(`${STORE_NAME}: the database connection failed`, { cause: error });
  }
  return error;
}
