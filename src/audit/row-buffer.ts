/**
 * The bytes of a batch of audit rows, written in place: group commit encodes each row straight
 * into one reusable buffer (`appendRow` in `./chain.ts`), hashes it there and writes the batch
 * from it, rather than making a string per row, joining them and encoding the join.
 *
 * @example
 * ```ts
 * const rows = new RowBuffer();
 * const head = appendRow(rows, GENESIS_HEAD, event);
 * writeSync(fd, rows.bytes());
 * rows.clear();
 * ```
 */

/** What a buffer starts with: about forty rows of the usual size. */
const INITIAL_BYTES = 16 * 1024;
/** A buffer grown past this by a burst goes back to the initial size once cleared. */
const KEEP_BYTES = 1024 * 1024;

export class RowBuffer {
  #buffer: Buffer = Buffer.allocUnsafe(INITIAL_BYTES);
  #length = 0;
  #rows = 0;

  /** Rows held. */
  get rows(): number {
    return this.#rows;
  }

  /** Bytes held: whole rows, each with its newline. */
  get length(): number {
    return this.#length;
  }

  /**
   * The buffer to write the next row into, with room for `bytes` more after {@link length};
   * the row is kept by {@link commit}, and dropped if it is never called.
   */
  reserve(bytes: number): Buffer {
    const needed = this.#length + bytes;
    if (needed > this.#buffer.length) {
      const grown = Buffer.allocUnsafe(Math.max(needed, this.#buffer.length * 2));
      this.#buffer.copy(grown, 0, 0, this.#length);
      this.#buffer = grown;
    }
    return this.#buffer;
  }

  /** Keeps one row that ends at `end` (its newline included) in the buffer {@link reserve} gave. */
  commit(end: number): void {
    this.#length = end;
    this.#rows += 1;
  }

  /** The rows' bytes: a view, valid until the next row or {@link clear}. */
  bytes(): Buffer {
    return this.#buffer.subarray(0, this.#length);
  }

  /** The rows as lines without their newline (for reporting a batch that failed). */
  lines(): string[] {
    if (this.#length === 0) return [];
    return this.#buffer.toString('utf8', 0, this.#length - 1).split('\n');
  }

  /** Forgets every row. */
  clear(): void {
    this.#length = 0;
    this.#rows = 0;
    if (this.#buffer.length > KEEP_BYTES) this.#buffer = Buffer.allocUnsafe(INITIAL_BYTES);
  }
}
