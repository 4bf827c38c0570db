/**
 * The audit file: hash-chained JSONL (format in `chain.ts`), appended synchronously — each
 * `write` is an `fs.writeSync` of one whole row, so rows from one process keep the order of
 * the calls and a throw means the row is not in the file.
 *
 * - The parent directory is created 0700 and the file 0600 (an existing file that others can
 *   read is tightened to 0600).
 * - Reopening an existing file continues its chain from the last row, read from the tail of
 *   the file (at most 64 KiB), never the whole file. A file that ends with a partial or damaged
 *   row is refused (`AuditWriteError` reason `bad_tail`): check it with `airlock audit verify`
 *   and move it aside.
 * - A failed write (disk full, I/O error) throws `AuditWriteError` and cuts any partial row
 *   back off the file, so the chain stays intact and a later write may succeed; if the cut
 *   fails too, the sink refuses every further write (reason `unusable`).
 * - One writer per file, enforced: a regular file is locked at open (`proper-lockfile`: an
 *   atomic `mkdir` of `<file>.lock`, its mtime refreshed every 5 s). A second sink on the same
 *   file, in this process or another, is refused (`AuditWriteError` reason `locked`, naming the
 *   holder's pid from `<file>.lock.pid`, `<pid> <host>`). A lock left by a process that died
 *   without closing (SIGKILL, a crash) is taken over at once when the pid file names this host
 *   and a pid that no longer runs, else (another host on a shared disk, no pid file) once its
 *   mtime is older than 10 s (proper-lockfile's stale rule). A sink whose lock is
 *   lost while it runs (another process took it over after the event loop stalled for 10 s, or
 *   the lock was removed by hand) refuses every further write (reason `locked`): two writers
 *   would break the chain. Give each process (replica) its own file.
 * - `close()` fsyncs, closes and releases the lock.
 * - `syncEveryWrite: true` fsyncs after every row too (durable across power loss, at the cost of
 *   a disk flush per row; with `groupCommit`, per batch).
 * - `groupCommit: true` (the gateway's setting): `write` encodes and chains the row at once but
 *   appends it to a batch, written with one `writeSync` at the end of the event-loop turn
 *   (`commit.ts`); `committed()` is the promise a response waits for. `write` still throws at once
 *   for what is known then (closed, unusable, lost lock, an unsafe event); a batch that fails is
 *   cut back off the file, the chain head goes back to the last row written, and every caller
 *   waiting on the batch gets its `AuditWriteError`.
 *
 * @example
 * ```ts
 * const sink = new JsonlAuditSink('/var/log/airlock/audit.jsonl');
 * sink.write({ type: 'a2a.server.auth_failed', time: auditTime(), outcome: 'denied', reason: 'invalid_credentials', remote: '203.0.113.7' });
 * sink.close();
 * ```
 */
import {
  closeSync,
  fchmodSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  realpathSync,
  rmdirSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { dirname, resolve } from 'node:path';
import lockfile from 'proper-lockfile';
import { GroupCommit } from './commit.js';
import { checkLine, encodeRow, GENESIS_HEAD, MAX_LINE_BYTES, type ChainHead } from './chain.js';
import type { AuditEvent } from './events.js';
import { AuditWriteError, errnoOf, type AuditSink } from './sink.js';

export interface JsonlAuditSinkOptions {
  /** fsync after every row, not only on close. Default false. */
  syncEveryWrite?: boolean;
  /**
   * How old (mtime) another process's lock must be before it is taken over as stale, in ms.
   * Default {@link AUDIT_LOCK_STALE_MS}; at least 2000 (proper-lockfile's floor). For tests.
   */
  lockStaleMs?: number;
  /** Write rows in one batch per event-loop turn (see above). Default false: one write per row. */
  groupCommit?: boolean;
  /** Told of a batch that could not be written (group commit), with its rows, e.g. to log them. */
  onCommitError?: (error: AuditWriteError, lines: readonly string[]) => void;
}

/**
 * After how long (ms without a refresh of its mtime) a lock on an audit file counts as left
 * behind by a dead process and is taken over. The holder refreshes it every half of this.
 *
 * @example
 * ```ts
 * AUDIT_LOCK_STALE_MS; // 10_000
 * ```
 */
export const AUDIT_LOCK_STALE_MS = 10_000;

/** Real paths whose lock a sink of this process holds. */
const HELD = new Set<string>();

export class JsonlAuditSink implements AuditSink {
  readonly path: string;
  readonly #syncEveryWrite: boolean;
  /** Regular files can be cut back after a partial write; devices and pipes cannot. */
  readonly #regular: boolean;
  #fd: number | undefined;
  #head: ChainHead;
  /** The head of the last row in the file (with group commit, `#head` runs ahead of it). */
  #written: ChainHead;
  /** The open batch, with group commit. */
  readonly #commit: GroupCommit | undefined;
  /** Bytes in the file that belong to whole rows (regular files). */
  #size: number;
  #unusable: AuditWriteError | undefined;
  /** Releases the lock on the file (regular files); undefined once released. */
  #release: (() => void) | undefined;
  /** Where the lock holder's pid is written, beside the lock. */
  #pidFile: string | undefined;
  /** The real path locked. */
  #real: string | undefined;

  /** @throws AuditWriteError (operation `open`; reason `locked` when another sink holds the file) */
  constructor(path: string, options: JsonlAuditSinkOptions = {}) {
    this.path = resolve(path);
    this.#syncEveryWrite = options.syncEveryWrite === true;
    try {
      mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    } catch (error) {
      throw ioError('open', `cannot create the directory of ${this.path}`, error);
    }
    let fd: number;
    try {
      // 'a+': O_APPEND for the rows, and read access to find the tail of an existing file
      // through the same descriptor that appends.
      fd = openSync(this.path, 'a+', 0o600);
    } catch (error) {
      throw ioError('open', `cannot open ${this.path}`, error);
    }
    try {
      const stat = fstatSync(fd);
      this.#regular = stat.isFile();
      // Locked before the tail is read: another writer could be halfway through a row.
      if (this.#regular) this.#lock(options.lockStaleMs ?? AUDIT_LOCK_STALE_MS);
      if (this.#regular && (stat.mode & 0o077) !== 0) fchmodSync(fd, 0o600);
      this.#size = this.#regular ? stat.size : 0;
      this.#head = this.#regular && stat.size > 0 ? readHead(fd, stat.size, this.path) : { ...GENESIS_HEAD };
      this.#written = this.#head;
    } catch (error) {
      closeSync(fd);
      this.#unlock();
      if (error instanceof AuditWriteError) throw error;
      throw ioError('open', `cannot prepare ${this.path}`, error);
    }
    this.#fd = fd;
    const onCommitError = options.onCommitError;
    this.#commit =
      options.groupCommit === true
        ? new GroupCommit((bytes) => this.#writeBatch(bytes), onCommitError ?? (() => undefined))
        : undefined;
  }

  /** Takes the file's lock, or throws `AuditWriteError` reason `locked` naming the holder. */
  #lock(staleMs: number): void {
    // The real path, so two names of one file (a symlink, `..`) share one lock.
    const real = realpathSync(this.path);
    const pidFile = `${real}.lock.pid`;
    const take = (): (() => void) =>
      lockfile.lockSync(real, {
        realpath: false,
        stale: staleMs,
        onCompromised: (error) => {
          this.#release = undefined;
          HELD.delete(real);
          this.#unusable = new AuditWriteError(
            'write',
            'locked',
            `lost the lock on ${this.path} (${error.message}); another process may be writing to it, so nothing more is written here`,
            { cause: error },
          );
        },
      });
    try {
      try {
        this.#release = take();
      } catch (error) {
        if (!isLocked(error)) throw error;
        const holder = holderOf(pidFile);
        // A holder on this host that no longer runs (kill -9, a crash) left its lock behind:
        // take it over now rather than after `staleMs` (a restart should not wait for it).
        // Our own pid: held by a sink of this process, or left by an earlier process that had
        // the same pid (a container restarted as pid 1).
        const gone =
          holder !== undefined &&
          holder.host === hostname() &&
          (holder.pid === process.pid ? !HELD.has(real) : !isAlive(holder.pid));
        if (!gone) throw error;
        try {
          rmdirSync(`${real}.lock`);
        } catch (removal) {
          if ((removal as { code?: unknown }).code !== 'ENOENT') throw removal;
        }
        this.#release = take();
      }
    } catch (error) {
      if (!isLocked(error)) throw ioError('open', `cannot lock ${this.path}`, error);
      const holder = holderOf(pidFile);
      const who = HELD.has(real)
        ? `this process (pid ${process.pid})`
        : holder === undefined
          ? 'another process (pid unknown)'
          : `another process (pid ${holder.pid}${holder.host === hostname() ? '' : ` on ${holder.host}`})`;
      throw new AuditWriteError(
        'open',
        'locked',
        `audit file ${this.path} is in use by ${who}; give each gateway its own audit file (audit.file), or stop the other one (a lock whose holder is gone is taken over at once on the same host, else once it is ${Math.round(Math.max(staleMs, 2000) / 1000)} s old)`,
        { cause: error },
      );
    }
    this.#pidFile = pidFile;
    this.#real = real;
    HELD.add(real);
    try {
      writeFileSync(pidFile, `${process.pid} ${hostname()}\n`, { mode: 0o600 });
    } catch {
      // The pid only names the holder and lets a dead one's lock be taken over; the lock is the
      // mkdir. But an earlier holder's pid file left in place would invite that takeover of a
      // live lock: without ours, there must be none.
      try {
        rmSync(pidFile, { force: true });
      } catch (error) {
        this.#unlock();
        throw ioError('open', `cannot write ${pidFile}`, error);
      }
    }
  }

  /** Releases the lock (if held) and removes the pid file. Never throws. */
  #unlock(): void {
    const release = this.#release;
    this.#release = undefined;
    if (release === undefined) return;
    if (this.#real !== undefined) HELD.delete(this.#real);
    if (this.#pidFile !== undefined) rmSync(this.#pidFile, { force: true });
    try {
      release();
    } catch {
      // Already released (compromised) or removed by hand: nothing is held any more.
    }
  }

  /** The last row's `seq` and `hash` (found in the file on open, or written since). */
  get head(): ChainHead {
    return { ...this.#head };
  }

  /**
   * With group commit: undefined when every row written so far is in the file, else the promise
   * of the batch that holds them (rejected with its `AuditWriteError` if it fails). Without:
   * always undefined (each `write` is in the file when it returns).
   */
  committed(): Promise<void> | undefined {
    return this.#commit?.committed();
  }

  /** Batches written by group commit (one `writeSync` each) and the rows in them. */
  get commitStats(): { batches: number; rows: number } {
    return this.#commit?.stats ?? { batches: 0, rows: 0 };
  }

  write(event: AuditEvent): void {
    const fd = this.#fd;
    if (fd === undefined) throw new AuditWriteError('write', 'closed', `${this.path} is closed`);
    if (this.#unusable !== undefined) {
      if (this.#unusable.reason === 'locked') throw this.#unusable;
      throw new AuditWriteError('write', 'unusable', `${this.path} is unusable after a failed write`, {
        cause: this.#unusable,
      });
    }
    if (this.#commit !== undefined) {
      this.#head = this.#commit.append(this.#head, event);
      return;
    }
    const row = encodeRow(this.#head, event);
    let written = 0;
    try {
      while (written < row.bytes.length) written += writeSync(fd, row.bytes, written, row.bytes.length - written);
      if (this.#syncEveryWrite) fsyncSync(fd);
    } catch (error) {
      const failure = ioError('write', `cannot append to ${this.path}`, error);
      this.#rollBack(fd, written, failure);
      throw failure;
    }
    this.#size += row.bytes.length;
    this.#head = { seq: row.seq, hash: row.hash };
    this.#written = this.#head;
  }

  /** One batch, in one write (group commit). A failure is undone and the head goes back. */
  #writeBatch(bytes: Buffer): void {
    const fd = this.#fd;
    if (fd === undefined) throw new AuditWriteError('write', 'closed', `${this.path} is closed`);
    let written = 0;
    try {
      if (this.#unusable !== undefined) throw this.#unusable;
      while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
      if (this.#syncEveryWrite) fsyncSync(fd);
    } catch (error) {
      const failure =
        error instanceof AuditWriteError ? error : ioError('write', `cannot append to ${this.path}`, error);
      this.#rollBack(fd, written, failure);
      // Rows appended after this batch do not exist yet (the write is synchronous), so going
      // back to the last row in the file is all it takes to continue the chain.
      this.#head = this.#written;
      throw failure;
    }
    this.#size += bytes.length;
    this.#written = this.#head;
  }

  close(): void {
    const fd = this.#fd;
    if (fd === undefined) return;
    // The open batch first: close() is how shutdown and drain make every row durable.
    const unwritten = this.#commit?.flush();
    this.#fd = undefined;
    try {
      if (unwritten !== undefined) throw unwritten;
      if (this.#regular) fsyncSync(fd);
    } catch (error) {
      if (error instanceof AuditWriteError) throw error;
      throw ioError('sync', `cannot flush ${this.path}`, error);
    } finally {
      closeSync(fd);
      this.#unlock();
    }
  }

  /** Removes whatever part of the failed row reached the file, or gives the sink up. */
  #rollBack(fd: number, written: number, failure: AuditWriteError): void {
    if (!this.#regular) {
      if (written > 0) this.#unusable = failure;
      return;
    }
    try {
      if (fstatSync(fd).size !== this.#size) ftruncateSync(fd, this.#size);
    } catch {
      this.#unusable = failure;
    }
  }
}

/** The last row of a non-empty file, read from at most the last `MAX_LINE_BYTES + 1` bytes. */
function readHead(fd: number, size: number, path: string): ChainHead {
  const length = Math.min(size, MAX_LINE_BYTES + 1);
  const tail = Buffer.alloc(length);
  let read = 0;
  while (read < length) {
    const n = readSync(fd, tail, read, length - read, size - length + read);
    if (n === 0) break;
    read += n;
  }
  const damaged = (what: string): AuditWriteError =>
    new AuditWriteError(
      'open',
      'bad_tail',
      `${path} ${what}; check it with \`airlock audit verify\` and move it aside before writing to it`,
    );
  if (read !== length || tail[length - 1] !== 0x0a) throw damaged('ends with a partial row');
  const newline = length >= 2 ? tail.lastIndexOf(0x0a, length - 2) : -1;
  if (newline === -1 && length < size) throw damaged(`ends with a row longer than ${MAX_LINE_BYTES} bytes`);
  const check = checkLine(tail.subarray(newline + 1, length - 1));
  if (!check.ok) throw damaged(`has a damaged last row (${check.reason})`);
  return { seq: check.seq, hash: check.hash };
}

/** The pid and host in a lock's pid file (`<pid> <host>`), when it holds them. */
function holderOf(pidFile: string): { pid: number; host: string } | undefined {
  try {
    const [pidText, host] = readFileSync(pidFile, 'utf8').slice(0, 512).trim().split(' ', 2);
    const pid = Number(pidText);
    return Number.isSafeInteger(pid) && pid > 0 && host !== undefined && host.length > 0 ? { pid, host } : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a process with this pid runs on this host (EPERM: it does, as another user). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: unknown }).code === 'EPERM';
  }
}

function isLocked(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'ELOCKED';
}

function ioError(operation: 'open' | 'write' | 'sync', message: string, cause: unknown): AuditWriteError {
  const errno = errnoOf(cause);
  return new AuditWriteError(operation, 'io', errno === undefined ? message : `${message}: ${errno}`, { cause });
}
