/**
 * Audit rows on a file descriptor (default 1, stdout) or a writable stream, for containers
 * whose log collector keeps what the process prints. The rows are the same hash-chained JSONL
 * as the file sink's (`chain.ts`); each sink instance starts its own chain at `seq` 1, so one
 * process's rows verify on their own once separated from other output.
 *
 * - A descriptor is written with `fs.writeSync`: synchronous, in call order, and a failure
 *   throws `AuditWriteError`. A non-blocking pipe that is full (`EAGAIN`) is retried for up to
 *   `blockedTimeoutMs` (default 2000) before giving up.
 * - A stream is written with `stream.write`, which cannot fail synchronously: an `error` the
 *   stream emits is kept, and every later `write` throws `AuditWriteError`.
 * - `close()` stops the sink; it does not close the descriptor or end the stream it was given.
 * - A row split by a failed partial write cannot be taken back from a pipe: the sink then
 *   refuses every further write (reason `unusable`).
 *
 * @example
 * ```ts
 * const sink = new StdoutAuditSink();                 // fd 1
 * const other = new StdoutAuditSink(process.stderr);  // a stream
 * ```
 */
import { writeSync } from 'node:fs';
import type { Writable } from 'node:stream';
import { appendRow, GENESIS_HEAD, type ChainHead } from './chain.js';
import type { AuditEvent } from './events.js';
import { RowBuffer } from './row-buffer.js';
import { AuditWriteError, errnoOf, type AuditSink } from './sink.js';

export interface StdoutAuditSinkOptions {
  /** How long a full non-blocking pipe may block a write before it fails. Default 2000 ms. */
  blockedTimeoutMs?: number;
}

export class StdoutAuditSink implements AuditSink {
  readonly #target: number | Writable;
  readonly #blockedTimeoutMs: number;
  #head: ChainHead = { ...GENESIS_HEAD };
  /** The row being written: encoded in place, written from there (a stream gets a copy). */
  readonly #row = new RowBuffer();
  #closed = false;
  #failure: AuditWriteError | undefined;

  constructor(target: number | Writable = 1, options: StdoutAuditSinkOptions = {}) {
    this.#target = target;
    this.#blockedTimeoutMs = options.blockedTimeoutMs ?? 2000;
    if (typeof target !== 'number') {
      target.on('error', (error: unknown) => {
        this.#failure ??= failed('the audit stream failed', error);
      });
    }
  }

  get head(): ChainHead {
    return { ...this.#head };
  }

  write(event: AuditEvent): void {
    if (this.#closed) throw new AuditWriteError('write', 'closed', 'the audit sink is closed');
    if (this.#failure !== undefined) {
      throw new AuditWriteError('write', 'unusable', 'the audit output failed earlier', { cause: this.#failure });
    }
    try {
      const next = appendRow(this.#row, this.#head, event);
      if (typeof this.#target === 'number') this.#writeFd(this.#target, this.#row.bytes());
      else this.#writeStream(this.#target, Buffer.from(this.#row.bytes()));
      this.#head = next;
    } finally {
      this.#row.clear();
    }
  }

  close(): void {
    this.#closed = true;
  }

  #writeFd(fd: number, bytes: Buffer): void {
    let written = 0;
    const deadline = Date.now() + this.#blockedTimeoutMs;
    while (written < bytes.length) {
      try {
        written += writeSync(fd, bytes, written, bytes.length - written);
      } catch (error) {
        if (errnoOf(error) === 'EAGAIN' && Date.now() < deadline) {
          sleep(1);
          continue;
        }
        const failure = failed(`cannot write to file descriptor ${fd}`, error);
        if (written > 0) this.#failure = failure;
        throw failure;
      }
    }
  }

  #writeStream(stream: Writable, bytes: Buffer): void {
    if (stream.destroyed || stream.writableEnded) {
      throw new AuditWriteError('write', 'io', 'the audit stream is closed');
    }
    stream.write(bytes, (error) => {
      if (error) this.#failure ??= failed('the audit stream failed', error);
    });
  }
}

function failed(message: string, cause: unknown): AuditWriteError {
  const errno = errnoOf(cause);
  return new AuditWriteError('write', 'io', errno === undefined ? message : `${message}: ${errno}`, { cause });
}

const SLEEPER = new Int32Array(new SharedArrayBuffer(4));

/** Blocks the thread: an audit write is synchronous by contract. */
function sleep(ms: number): void {
  Atomics.wait(SLEEPER, 0, 0, ms);
}
