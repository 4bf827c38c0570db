/**
 * Errors of the durable task stores (SQLite, PostgreSQL), each with a stable `code` for
 * programs and a one-line message for people. Messages never carry owner keys, task content,
 * connection strings or passwords: they end up in logs.
 *
 * - {@link StoreUnavailableError}: the database cannot be reached or did not answer in time.
 *   Retryable: the server answers 503 / JSON-RPC -32603 and the caller may try again.
 * - {@link StoreSchemaError}: the database's schema is not one this build can use (written by a
 *   newer Airlock, or an applied migration was edited). Not retryable: an operator must act.
 * - {@link TaskStoreInputError}: the caller handed the store something it must never hand it
 *   (a task id owned by someone else, a status timestamp that is not a date, a key a database
 *   column cannot hold). A bug in the caller, not a client error.
 *
 * @example
 * ```ts
 * try {
 *   await store.put(owner, task);
 * } catch (error) {
 *   if (isStoreUnavailable(error)) return reply503(error.message);
 *   throw error;
 * }
 * ```
 */
import { AirlockError } from '../../errors/index.js';

/**
 * The database is down, unreachable, overloaded or too slow. Nothing was decided: the same call
 * may succeed later, so `retryable` is always true.
 *
 * @example
 * ```ts
 * throw new StoreUnavailableError('PostgreSQL did not answer in time', { cause: error });
 * ```
 */
export class StoreUnavailableError extends AirlockError {
  readonly code = 'store_unavailable';
  readonly retryable = true;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * Why a schema cannot be used:
 * - `schema_too_new`: the database has migrations this build does not know (a newer Airlock
 *   wrote it); running on would misread its rows.
 * - `schema_mismatch`: an applied migration differs from this build's migration of the same
 *   version (edited after release, or a foreign table of the same name).
 *
 * @example
 * ```ts
 * const code: StoreSchemaErrorCode = 'schema_too_new';
 * ```
 */
export type StoreSchemaErrorCode = 'schema_too_new' | 'schema_mismatch';

/**
 * The database's schema cannot be used by this build. See {@link StoreSchemaErrorCode}.
 *
 * @example
 * ```ts
 * throw new StoreSchemaError('schema_too_new', 'the database is at schema version 3; this build knows up to 2');
 * ```
 */
export class StoreSchemaError extends AirlockError {
  readonly code: StoreSchemaErrorCode;
  readonly retryable = false;

  constructor(code: StoreSchemaErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

/**
 * What a caller did wrong:
 * - `owner_conflict`: the task id belongs to another owner (ids are minted server-side and never
 *   shared, so this is a bug, never a client's doing).
 * - `invalid_timestamp`: `task.status.timestamp` is not a date.
 * - `unstorable_key`: an owner, task id or context id holds NUL or a lone surrogate (no database
 *   text column keeps them exactly) or is longer than the store's index entries allow.
 *
 * @example
 * ```ts
 * const code: TaskStoreInputErrorCode = 'owner_conflict';
 * ```
 */
export type TaskStoreInputErrorCode = 'owner_conflict' | 'invalid_timestamp' | 'unstorable_key';

/**
 * A put the store refuses because of what it was given. See {@link TaskStoreInputErrorCode}.
 *
 * @example
 * ```ts
 * throw new TaskStoreInputError('invalid_timestamp', 'SqliteTaskStore: task.status.timestamp is not a date');
 * ```
 */
export class TaskStoreInputError extends AirlockError {
  readonly code: TaskStoreInputErrorCode;
  readonly retryable = false;

  constructor(code: TaskStoreInputErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

/**
 * True when `error` is a {@link StoreUnavailableError}: answer 503 and let the caller retry.
 *
 * @example
 * ```ts
 * if (isStoreUnavailable(error)) response.setHeader('Retry-After', '1');
 * ```
 */
export function isStoreUnavailable(error: unknown): error is StoreUnavailableError {
  return error instanceof StoreUnavailableError;
}
