/**
 * A nesting-depth check run on the raw body bytes before `JSON.parse`, so a deeply nested body
 * never reaches the parser or the recursive code after it (validators, codecs, loggers), where
 * thousands of levels cost stack and time out of all proportion to the bytes sent.
 *
 * Depth counts arrays and objects: a scalar is depth 0, `[]` and `{}` are 1, `[{}]` is 2. The
 * scan tracks only whether it is inside a string (honouring `\"` and `\\`) and the current
 * depth; it does not validate JSON — the parser does that afterwards. On invalid input the
 * count may be off, and that is harmless: the parser rejects such a body at the first error,
 * before descending past it. A closer never takes the count below zero, so stray `]` bytes
 * cannot buy extra depth.
 *
 * UTF-8 needs no special care: every byte of a multi-byte sequence is ≥ 0x80 and so never
 * equals `"`, `\`, or a bracket.
 *
 * @example
 * ```ts
 * if (exceedsJsonDepth(body, limits.maxJsonDepth)) return invalidRequest('JSON nesting too deep');
 * const value: unknown = JSON.parse(body.toString('utf8'));
 * ```
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/**
 * Whether `body` nests arrays and objects deeper than `maxDepth`. Stops at the first byte that
 * goes over, so an attack body costs only as much as its first `maxDepth + 1` openers.
 *
 * @example
 * ```ts
 * exceedsJsonDepth(Buffer.from('[[1]]'), 2);        // false
 * exceedsJsonDepth(Buffer.from('[[[1]]]'), 2);      // true
 * exceedsJsonDepth(Buffer.from('{"a":"[[[["}'), 1); // false: brackets in a string do not count
 * ```
 */
export function exceedsJsonDepth(body: Buffer | Uint8Array, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  const length = body.length;
  for (let i = 0; i < length; i++) {
    const byte = body[i] as number;
    if (inString) {
      // Skipping the byte after a backslash covers `\"` and `\\` alike (and `\u` harmlessly).
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) {
      inString = true;
    } else if (byte === OPEN_BRACKET || byte === OPEN_BRACE) {
      if (++depth > maxDepth) return true;
    } else if ((byte === CLOSE_BRACKET || byte === CLOSE_BRACE) && depth > 0) {
      depth--;
    }
  }
  return false;
}
