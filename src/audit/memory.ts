/**
 * An in-memory audit sink for tests. It runs the same guard and encoding as the file sink, so a
 * test that writes an unsafe event fails here just as production would, and `text()` is a file
 * `verifyAuditBuffer` accepts.
 *
 * @example
 * ```ts
 * const audit = new MemoryAuditSink();
 * // … run a request with `audit` as the sink …
 * assert.deepEqual(audit.ofType('a2a.task.completed').map((e) => e.outputChars), [11]);
 * ```
 */
import { encodeRow, GENESIS_HEAD, type ChainHead } from './chain.js';
import type { AuditEvent, AuditEventOf, AuditEventType } from './events.js';
import { AuditWriteError, type AuditSink } from './sink.js';

export class MemoryAuditSink implements AuditSink {
  /** The events as a file would hold them (a JSON copy: keys set to `undefined` are gone). */
  readonly events: AuditEvent[] = [];
  /** The encoded rows, without newlines. */
  readonly lines: string[] = [];
  #head: ChainHead = { ...GENESIS_HEAD };
  #closed = false;

  get head(): ChainHead {
    return { ...this.#head };
  }

  get closed(): boolean {
    return this.#closed;
  }

  write(event: AuditEvent): void {
    if (this.#closed) throw new AuditWriteError('write', 'closed', 'the audit sink is closed');
    const row = encodeRow(this.#head, event);
    this.events.push(JSON.parse(JSON.stringify(event)) as AuditEvent);
    this.lines.push(row.line);
    this.#head = { seq: row.seq, hash: row.hash };
  }

  /** The events of one type, in order. */
  ofType<T extends AuditEventType>(type: T): AuditEventOf<T>[] {
    return this.events.filter((event): event is AuditEvent & AuditEventOf<T> => event.type === type);
  }

  /** All rows as the file sink would have written them. */
  text(): string {
    return this.lines.map((line) => `${line}\n`).join('');
  }

  close(): void {
    this.#closed = true;
  }
}
