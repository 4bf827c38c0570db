/**
 * UTF-8 at the edges: request and reply bodies decoded to text, response bodies encoded to
 * bytes. V8 converts between UTF-8 and its strings one character at a time, ~3 ns a byte for
 * text in other scripts (a 4 KB message in Cyrillic took 22 µs to decode, in Chinese 43); Node's
 * ICU converter does the same work in a fraction of that. ASCII, and short text, where the
 * converter's fixed cost outweighs what it saves, keep V8's own conversion. Both give the same
 * text for the same bytes: the converter is used only on valid UTF-8, and refuses a string with a
 * lone surrogate (then V8 encodes it), so the two agree byte for byte.
 *
 * @example
 * ```ts
 * const frame: unknown = JSON.parse(decodeUtf8(body));
 * res.end(utf8ToWrite(reply, Buffer.byteLength(reply)));
 * ```
 */
import { Buffer, isAscii, isUtf8, transcode } from 'node:buffer';

/** Below this many bytes V8's decoder costs less than a call of the converter (measured: ~500). */
const CONVERTER_DECODE_BYTES = 512;
/** Below this many characters V8's encoder costs less than a call of the converter (~1,500 in Cyrillic). */
const CONVERTER_ENCODE_CHARS = 2048;

/** False where Node is built without ICU (no `transcode`): V8's conversion everywhere. */
const HAS_CONVERTER = typeof transcode === 'function';

/**
 * The text of UTF-8 `bytes`: what `bytes.toString('utf8')` gives (invalid sequences as U+FFFD),
 * decoded by the faster converter where that gives the same.
 *
 * @example
 * ```ts
 * decodeUtf8(Buffer.from('Привет')); // 'Привет'
 * decodeUtf8(Buffer.from([0xff]));   // '\ufffd'
 * ```
 */
export function decodeUtf8(bytes: Buffer): string {
  if (bytes.length < CONVERTER_DECODE_BYTES || !HAS_CONVERTER || isAscii(bytes) || !isUtf8(bytes)) {
    return bytes.toString('utf8');
  }
  return transcode(bytes, 'utf8', 'utf16le').toString('utf16le');
}

/**
 * What to hand a socket for `text`, whose UTF-8 is `byteLength` bytes: the string itself (Node
 * encodes it as it writes, fastest for ASCII and for text mostly in ASCII), or, for long text
 * mostly outside ASCII (at least 1.25 bytes a character: Cyrillic, Greek, CJK, …), its UTF-8
 * from the converter, which Node copies as it is. A lone surrogate, which the converter refuses,
 * leaves the string (Node writes it as U+FFFD).
 *
 * @example
 * ```ts
 * const length = Buffer.byteLength(body);
 * res.writeHead(200, ['content-length', length]);
 * res.end(utf8ToWrite(body, length));
 * ```
 */
export function utf8ToWrite(text: string, byteLength: number): string | Buffer {
  if (text.length < CONVERTER_ENCODE_CHARS || byteLength * 4 < text.length * 5 || !HAS_CONVERTER) return text;
  try {
    return transcode(Buffer.from(text, 'utf16le'), 'utf16le', 'utf8');
  } catch {
    return text;
  }
}
