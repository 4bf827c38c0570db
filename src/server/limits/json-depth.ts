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

/**
 * What each byte means to the scan: 0 nothing, 1 a quote, 2 an opener, 3 a closer. One table
 * load and one compare per ordinary byte, instead of a chain of five compares.
 */
const KIND = new Uint8Array(256);
KIND[QUOTE] = 1;
KIND[0x5b] = 2; // [
KIND[0x7b] = 2; // {
KIND[0x5d] = 3; // ]
KIND[0x7d] = 3; // }

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
  const length = body.length;
  for (let i = 0; i < length; i++) {
    const kind = KIND[body[i] as number] as number;
    if (kind === 0) continue;
    if (kind === 1) {
      i = closingQuote(body, i + 1, length);
    } else if (kind === 2) {
      if (++depth > maxDepth) return true;
    } else if (depth > 0) {
      depth--;
    }
  }
  return false;
}

/** Strings up to this long are read byte by byte; a longer one is searched for its quotes. */
const SHORT_STRING = 16;

/**
 * Where the string that starts at `from` (after its opening quote) ends: its closing quote, or
 * `length` when it is never closed (nothing after it counts). Skipping the byte after a
 * backslash covers `\"` and `\\` alike (and `\u` harmlessly). Past its first bytes a string
 * (a message's text, most of a body) is searched with the buffer's own `indexOf`, tens of times
 * faster than a loop over its bytes: a quote found ends the string unless an odd run of
 * backslashes, counted back to where the search began, escapes it.
 */
function closingQuote(body: Buffer | Uint8Array, from: number, length: number): number {
  const stop = Math.min(length, from + SHORT_STRING);
  let i = from;
  for (; i < stop; i++) {
    const byte = body[i] as number;
    if (byte === QUOTE) return i;
    if (byte === BACKSLASH) i++;
  }
  // Every byte before `i` is read, a backslash with the byte it escapes: pairs start again at `i`.
  while (i < length) {
    const quote = body.indexOf(QUOTE, i);
    if (quote === -1) return length;
    let before = quote - 1;
    while (before >= i && body[before] === BACKSLASH) before--;
    if ((quote - 1 - before) % 2 === 0) return quote;
    i = quote + 1;
  }
  return length;
}
