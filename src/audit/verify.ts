/**
 * Checks an audit file's hash chain (format in `chain.ts`) and reports the first broken row.
 * The file is streamed in 64 KiB chunks and split on raw bytes, so memory stays bounded by the
 * longest allowed line (64 KiB) whatever the file's size, and hashes are computed over the
 * exact bytes on disk (no decoding and re-encoding on the way).
 *
 * Reasons, checked in this order for each line:
 * - `line_too_long`: more than 64 KiB without a newline.
 * - `truncated`: the file's last line has no terminating newline (a cut-off row).
 * - `bad_format`: not `{…,"hash":"<64 hex>"}`, or no integer `seq` / string `prev`.
 * - `bad_hash`: the row's bytes do not hash to its `hash` (the row was edited).
 * - `bad_json`: the row hashes correctly but is not a JSON object.
 * - `bad_seq`: `seq` is not the previous row's plus 1 (1 on line 1): rows were removed,
 *   inserted or reordered.
 * - `bad_prev`: `prev` is not the previous row's `hash` (64 zeros on line 1).
 *
 * I/O errors (a missing or unreadable file) reject with the system error; they are not a
 * verdict on the chain.
 *
 * An empty file is `ok` with `rows: 0` (an empty chain holds trivially): callers that report
 * to a person should say "empty" rather than "ok" (`airlock audit verify` exits 3), because a
 * file emptied after rows were written looks exactly like a new one. Only an anchored
 * `lastHash` kept elsewhere tells the two apart.
 *
 * @example
 * ```ts
 * const result = await verifyAuditFile('audit.jsonl');
 * if (!result.ok) console.error(`broken at line ${result.firstBrokenLine}: ${result.reason}`);
 * ```
 */
import { createReadStream } from 'node:fs';
import { checkLine, GENESIS_HEAD, MAX_LINE_BYTES, type ChainHead, type LineProblem } from './chain.js';

export type AuditVerifyReason = 'line_too_long' | 'truncated' | LineProblem | 'bad_seq' | 'bad_prev';

export type AuditVerifyResult =
  | {
      ok: true;
      /**
       * 0 for an empty file, which the file alone cannot tell from one emptied after rows were
       * written: report it as empty, not as ok.
       */
      rows: number;
      /** The last row's `hash` (64 zeros for an empty file): anchor it elsewhere to detect rows cut from the end. */
      lastHash: string;
    }
  | {
      ok: false;
      /** Rows that verified, all before `firstBrokenLine`. */
      rows: number;
      /** 1-based. */
      firstBrokenLine: number;
      reason: AuditVerifyReason;
    };

type Broken = Extract<AuditVerifyResult, { ok: false }>;

/** Streams `path` and checks its chain. Rejects only for I/O errors. */
export async function verifyAuditFile(path: string): Promise<AuditVerifyResult> {
  const verifier = new ChainVerifier();
  const stream = createReadStream(path, { highWaterMark: 64 * 1024 });
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      const broken = verifier.feed(chunk);
      if (broken !== undefined) return broken;
    }
  } finally {
    stream.destroy();
  }
  return verifier.end();
}

/** Checks a whole audit text held in memory (e.g. `MemoryAuditSink.text()`). */
export function verifyAuditBuffer(data: Buffer | string): AuditVerifyResult {
  const verifier = new ChainVerifier();
  return verifier.feed(typeof data === 'string' ? Buffer.from(data, 'utf8') : data) ?? verifier.end();
}

/**
 * The incremental checker behind both: feed it the file's bytes in chunks of any size, then
 * call `end()`. `feed` returns the verdict as soon as a row is broken; feed nothing after that.
 */
export class ChainVerifier {
  #head: ChainHead = { ...GENESIS_HEAD };
  #rows = 0;
  /** Pieces of a line that is not finished yet, and their total length. */
  #pending: Buffer[] = [];
  #pendingLength = 0;

  feed(chunk: Buffer): Broken | undefined {
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(0x0a, start);
      if (newline === -1) break;
      let line = chunk.subarray(start, newline);
      if (this.#pendingLength > 0) {
        const length = this.#pendingLength + line.length;
        if (length > MAX_LINE_BYTES) return this.#broken('line_too_long');
        line = Buffer.concat([...this.#pending, line], length);
        this.#pending = [];
        this.#pendingLength = 0;
      }
      const broken = this.#line(line);
      if (broken !== undefined) return broken;
      start = newline + 1;
    }
    if (start < chunk.length) {
      this.#pendingLength += chunk.length - start;
      if (this.#pendingLength > MAX_LINE_BYTES) return this.#broken('line_too_long');
      // A copy, so a stream's chunk is not kept alive for one short remainder.
      this.#pending.push(Buffer.from(chunk.subarray(start)));
    }
    return undefined;
  }

  end(): AuditVerifyResult {
    if (this.#pendingLength > 0) return this.#broken('truncated');
    return { ok: true, rows: this.#rows, lastHash: this.#head.hash };
  }

  #line(line: Buffer): Broken | undefined {
    if (line.length > MAX_LINE_BYTES) return this.#broken('line_too_long');
    const check = checkLine(line);
    if (!check.ok) return this.#broken(check.reason);
    if (check.seq !== this.#head.seq + 1) return this.#broken('bad_seq');
    if (check.prev !== this.#head.hash) return this.#broken('bad_prev');
    this.#head = { seq: check.seq, hash: check.hash };
    this.#rows += 1;
    return undefined;
  }

  #broken(reason: AuditVerifyReason): Broken {
    return { ok: false, rows: this.#rows, firstBrokenLine: this.#rows + 1, reason };
  }
}
