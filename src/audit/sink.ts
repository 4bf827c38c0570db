/**
 * Where audit rows go. A sink writes synchronously: when `write` returns, the row has been
 * handed to the operating system (or to memory), and when it throws, the caller must refuse
 * the work it was about to do rather than run unaudited. A sink with group commit (the file
 * sink in the gateway) hands rows over at the end of the event-loop turn instead, and says when
 * through `committed()`: what waits on it (every response) is sent only after its rows are out.
 *
 * Implementations: `jsonl.ts` (a hash-chained JSONL file), `stdout.ts` (the same rows on a
 * file descriptor or stream, for containers), `memory.ts` (tests). A database sink comes later
 * behind the same interface.
 *
 * @example
 * ```ts
 * try {
 *   sink.write({ type: 'a2a.task.submitted', time: auditTime(), outcome: 'ok', ... });
 * } catch (error) {
 *   // AuditWriteError: do not start the task (the caller gets an internal error, -32603)
 * }
 * ```
 */
import type { AuditEvent } from './events.js';
import { AirlockError } from '../errors/index.js';

export interface AuditSink {
  /**
   * Appends one row.
   *
   * @throws AuditUnsafeEventError if the event could carry content or secrets (a bug in the caller)
   * @throws AuditWriteError if the row could not be written, or the sink is closed
   */
  write(event: AuditEvent): void;
  /**
   * The commit point of a sink that writes rows in groups (`groupCommit`, commit.ts): undefined
   * when every row written so far is out, else a promise settled once they are (rejected with
   * the batch's `AuditWriteError`). The gateway sends no response before it settles. Absent, or
   * always undefined: each `write` is out when it returns.
   */
  committed?(): Promise<void> | undefined;
  /** Flushes (fsync for files) and releases the sink. Idempotent. @throws AuditWriteError */
  close(): void;
}

export type AuditWriteOperation = 'open' | 'write' | 'sync' | 'close';

/**
 * Why a sink could not write. `reason`: `io` (the operating system refused: see `errno`),
 * `bad_tail` (an existing file ends with a partial or damaged row, so the chain cannot be
 * continued), `closed` (written after `close()`), `unusable` (an earlier failure left a partial
 * row that could not be removed; nothing more is written), `locked` (another sink holds the
 * file's lock, or this sink lost it: one writer per file).
 */
export class AuditWriteError extends AirlockError {
  readonly code = 'AUDIT_WRITE_FAILED';
  readonly operation: AuditWriteOperation;
  readonly reason: 'io' | 'bad_tail' | 'closed' | 'unusable' | 'locked';
  /** The system error code, e.g. `ENOSPC`, `EACCES`, when there is one. */
  readonly errno: string | undefined;

  constructor(
    operation: AuditWriteOperation,
    reason: AuditWriteError['reason'],
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(`audit: ${message}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.operation = operation;
    this.reason = reason;
    this.errno = errnoOf(options.cause);
  }
}

/** `ENOSPC` from a Node system error, or undefined. */
export function errnoOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}
