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
 * - One writer per file: the sink holds no lock, so give each process (replica) its own file.
 * - `close()` fsyncs and closes. `syncEveryWrite: true` fsyncs after every row too (durable
 *   across power loss, at the cost of a disk flush per row).
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
  readSync,
  writeSync,
} from 'node:fs';
import { dirname, resolve } from 'node:path';
import { checkLine, encodeRow, GENESIS_HEAD, MAX_LINE_BYTES, type ChainHead } from './chain.js';
import type { AuditEvent } from './events.js';
import { AuditWriteError, errnoOf, type AuditSink } from './sink.js';

export interface JsonlAuditSinkOptions {
  /** fsync after every row, not only on close. Default false. */
  syncEveryWrite?: boolean;
}

export class JsonlAuditSink implements AuditSink {
  readonly path: string;
  readonly #syncEveryWrite: boolean;
  /** Regular files can be cut back after a partial write; devices and pipes cannot. */
  readonly #regular: boolean;
  #fd: number | undefined;
  #head: ChainHead;
  /** Bytes in the file that belong to whole rows (regular files). */
  #size: number;
  #unusable: AuditWriteError | undefined;

  /** @throws AuditWriteError (operation `open`) */
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
      if (this.#regular && (stat.mode & 0o077) !== 0) fchmodSync(fd, 0o600);
      this.#size = this.#regular ? stat.size : 0;
      this.#head = this.#regular && stat.size > 0 ? readHead(fd, stat.size, this.path) : { ...GENESIS_HEAD };
    } catch (error) {
      closeSync(fd);
      if (error instanceof AuditWriteError) throw error;
      throw ioError('open', `cannot prepare ${this.path}`, error);
    }
    this.#fd = fd;
  }

  /** The last row's `seq` and `hash` (found in the file on open, or written since). */
  get head(): ChainHead {
    return { ...this.#head };
  }

  write(event: AuditEvent): void {
    const fd = this.#fd;
    if (fd === undefined) throw new AuditWriteError('write', 'closed', `${this.path} is closed`);
    if (this.#unusable !== undefined) {
      throw new AuditWriteError('write', 'unusable', `${this.path} is unusable after a failed write`, {
        cause: this.#unusable,
      });
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
  }

  close(): void {
    const fd = this.#fd;
    if (fd === undefined) return;
    this.#fd = undefined;
    try {
      if (this.#regular) fsyncSync(fd);
    } catch (error) {
      throw ioError('sync', `cannot flush ${this.path}`, error);
    } finally {
      closeSync(fd);
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

function ioError(operation: 'open' | 'write' | 'sync', message: string, cause: unknown): AuditWriteError {
  const errno = errnoOf(cause);
  return new AuditWriteError(operation, 'io', errno === undefined ? message : `${message}: ${errno}`, { cause });
}
