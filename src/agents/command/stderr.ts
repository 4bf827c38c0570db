/**
 * What the command backend keeps of a program's stderr for the gateway log: the first
 * `maxBytes` bytes of a turn, and how many there were in all. The program is the operator's own,
 * so its stderr may go to the operator's log, but it may hold anything: it is capped, and control
 * characters (terminal escapes, NULs, carriage returns that rewrite a log line) are removed.
 *
 * @example
 * ```ts
 * const capture = new StderrCapture(16);
 * capture.write(Buffer.from('warning: \u001b[31mdisk almost full\n'));
 * capture.summary(); // { bytes: 34, text: 'warning: [31mdis', truncated: true }
 * ```
 */

/**
 * The log-ready summary of a turn's stderr.
 *
 * @example
 * ```ts
 * const summary: StderrSummary = { bytes: 12, text: 'no such key\n', truncated: false };
 * ```
 */
export interface StderrSummary {
  /** Bytes the program wrote to stderr in all. */
  readonly bytes: number;
  /** The kept head, decoded as UTF-8, control characters other than tab and newline removed. */
  readonly text: string;
  /** True when `bytes` exceeded the cap and `text` is only the head. */
  readonly truncated: boolean;
}

/**
 * C0 controls except tab and newline, DEL, C1 controls, and the bidirectional overrides and
 * isolates that can make a log line read differently from what it holds.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNPRINTABLE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Removes the characters that must not reach a log line as they are (see {@link StderrCapture}).
 *
 * @example
 * ```ts
 * printableForLog('ok\u0007\r\n'); // 'ok\n'
 * ```
 */
export function printableForLog(text: string): string {
  return text.replace(UNPRINTABLE, '');
}

/**
 * Collects one turn's stderr up to `maxBytes` (0 keeps none, counting only).
 *
 * @example
 * ```ts
 * const capture = new StderrCapture(8192);
 * child.stderr.on('data', (chunk: Buffer) => capture.write(chunk));
 * // … once the program has exited:
 * if (capture.bytes > 0) log('warn', 'command_stderr', { ...capture.summary() });
 * ```
 */
export class StderrCapture {
  readonly #maxBytes: number;
  readonly #kept: Buffer[] = [];
  #keptBytes = 0;
  #bytes = 0;

  constructor(maxBytes: number) {
    this.#maxBytes = Math.max(0, maxBytes);
  }

  /** Bytes written so far. */
  get bytes(): number {
    return this.#bytes;
  }

  write(chunk: Buffer): void {
    this.#bytes += chunk.length;
    const room = this.#maxBytes - this.#keptBytes;
    if (room <= 0) return;
    const kept = chunk.length <= room ? chunk : chunk.subarray(0, room);
    this.#kept.push(kept);
    this.#keptBytes += kept.length;
  }

  summary(): StderrSummary {
    return {
      bytes: this.#bytes,
      // A multi-byte character cut by the cap decodes as U+FFFD: harmless in a log.
      text: printableForLog(Buffer.concat(this.#kept).toString('utf8')),
      truncated: this.#bytes > this.#keptBytes,
    };
  }
}
