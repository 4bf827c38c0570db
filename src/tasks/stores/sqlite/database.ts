/**
 * Opening the SQLite store's file (owner-only, WAL, the chosen `synchronous`), and the one place
 * SQLite's "not now" failures become {@link StoreUnavailableError}.
 *
 * @example
 * ```ts
 * const db = openDatabase('data/airlock.db', 'full', DEFAULT_BUSY_TIMEOUT_MS);
 * const body = guard(() => selectOne.get(taskId, owner, expiredBefore));
 * ```
 */
import { openSync, closeSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { Database as SqliteDatabase } from 'better-sqlite3';
import { StoreUnavailableError } from '../errors.js';

/** The class name, in every message the store writes. */
export const STORE_NAME = 'SqliteTaskStore';
/** How long a statement waits for another process's write lock, unless the options say otherwise. */
export const DEFAULT_BUSY_TIMEOUT_MS = 1_000;
/** Cap on the WAL file left behind after a checkpoint. */
const JOURNAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

/**
 * Opens (creating, mode 0600, if missing) a database file in WAL mode.
 *
 * @throws StoreUnavailableError if the file cannot be opened or would not switch to WAL.
 * @example
 * ```ts
 * const db = openDatabase(':memory:', 'normal', 1_000);
 * ```
 */
export function openDatabase(path: string, synchronous: 'full' | 'normal', busyTimeoutMs: number): SqliteDatabase {
  if (path !== ':memory:' && path !== '') {
    // Created owner-only before SQLite opens it: tasks hold conversations. SQLite gives the
    // -wal and -shm files the database file's permissions.
    guard(() => closeSync(openSync(path, 'a', 0o600)));
  }
  const db = guard(() => new Database(path, { timeout: busyTimeoutMs }));
  try {
    guard(() => {
      const mode = db.pragma('journal_mode = WAL', { simple: true }) as string;
      if (!db.memory && mode !== 'wal') {
        throw new StoreUnavailableError(`${STORE_NAME}: the database would not switch to WAL mode (it is ${mode})`);
      }
      db.pragma(`synchronous = ${synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
      db.pragma(`journal_size_limit = ${JOURNAL_SIZE_LIMIT_BYTES}`);
      // Statement journals and sorts in memory, not in files under /var/tmp: a write batch's
      // statement journal passed SQLite's 64 KiB spill and wrote about 1.3 KB per task to a
      // temporary file, and each share eviction made, wrote and unlinked another one. Task
      // bodies (conversations) never touch a shared temporary directory either. Both are
      // bounded: a statement's pages, a sort of one principal's entries.
      db.pragma('temp_store = MEMORY');
    });
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

/** SQLite result codes that mean "not now" rather than "never": locked, busy, out of disk, I/O. */
const UNAVAILABLE_CODES = /^SQLITE_(BUSY|LOCKED|FULL|IOERR|CANTOPEN|PROTOCOL|NOMEM)/;

/**
 * Runs a database call, turning SQLite's "not now" failures (and a file that cannot be opened)
 * into {@link StoreUnavailableError}; every other error goes on unchanged.
 *
 * @example
 * ```ts
 * const count = guard(() => readCount.get() ?? 0);
 * ```
 */
export function guard<T>(call: () => T): T {
  try {
    return call();
  } catch (error) {
    if (error instanceof Database.SqliteError && UNAVAILABLE_CODES.test(error.code)) {
      throw new StoreUnavailableError(`${STORE_NAME}: the database is unavailable (${error.code})`, { cause: error });
    }
    const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
    if (typeof code === 'string' && /^E(ACCES|NOENT|NOSPC|ROFS|PERM|IO)$/.test(code)) {
      throw new StoreUnavailableError(`${STORE_NAME}: the database file cannot be opened (${code})`, { cause: error });
    }
    throw error;
  }
}
