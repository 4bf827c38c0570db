/**
 * Byte-capped body reading: bytes are counted as they arrive and reading stops at the cap, so a
 * remote can never make Airlock buffer (or hand a caller) more than it asked for. A declared
 * Content-Length over the cap is refused before the first byte is read.
 *
 * @example
 * ```ts
 * const capped = capBody(response.body, 1 << 20, 'https://agent.example');
 * for await (const chunk of capped) handle(chunk);
 * ```
 */
import { OutboundError } from './errors.js';

/** Anything a body can be read from: an async iterable of byte chunks that can be destroyed. */
export interface BodySource extends AsyncIterable<Uint8Array> {
  destroy(error?: Error): unknown;
  on?(event: 'error', listener: (error: Error) => void): unknown;
}

/**
 * Destroys a body we stopped reading. undici's body emits "Request aborted" when destroyed
 * early; nobody is listening any more, so that error is swallowed here instead of crashing the
 * process as an uncaught 'error' event.
 *
 * @example
 * ```ts
 * discardBody(response.body);
 * ```
 */
export function discardBody(source: BodySource): void {
  source.on?.('error', () => {});
  source.destroy();
}

/**
 * Refuses a declared `content-length` above `maxBytes` (before reading). Malformed lengths are
 * left to the HTTP parser, which rejects them.
 *
 * @example
 * ```ts
 * checkDeclaredLength({ 'content-length': '2000000' }, 1 << 20, origin); // throws response_too_large
 * ```
 */
export function checkDeclaredLength(headers: Record<string, string>, maxBytes: number, origin: string): void {
  const declared = headers['content-length'];
  if (declared !== undefined && /^\d+$/.test(declared.trim()) && Number(declared.trim()) > maxBytes) {
    throw tooLarge(origin, maxBytes);
  }
}

/**
 * Wraps `source` so that iterating it yields at most `maxBytes` in total; one byte more throws
 * `response_too_large` and destroys the source. `mapError` turns the source's own errors
 * (timeouts, resets) into the caller's error type; `onDone` runs exactly once when iteration
 * ends for any reason. The iterable can be consumed once.
 *
 * @example
 * ```ts
 * const body = capBody(res.body, 65536, origin, (e) => e, () => clearTimeout(timer));
 * ```
 */
export function capBody(
  source: BodySource,
  maxBytes: number,
  origin: string,
  mapError: (error: unknown) => Error = (error) => (error instanceof Error ? error : new Error(String(error))),
  onDone: () => void = () => {},
): AsyncIterable<Buffer> {
  let started = false;
  return {
    [Symbol.asyncIterator](): AsyncIterator<Buffer> {
      if (started) throw new Error('a response body can be read only once');
      started = true;
      return read();
    },
  };

  async function* read(): AsyncGenerator<Buffer, void, undefined> {
    let total = 0;
    let failure: Error | undefined;
    let complete = false;
    try {
      for await (const chunk of source) {
        const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
        total += bytes.length;
        if (total > maxBytes) {
          // Hand on the bytes up to the cap first: a stream reader may find in them what it
          // needs to clean up (the remote task's id, to cancel it).
          const allowed = bytes.length - (total - maxBytes);
          if (allowed > 0) yield bytes.subarray(0, allowed);
          failure = tooLarge(origin, maxBytes);
          throw failure;
        }
        yield bytes;
      }
      complete = true;
    } catch (error) {
      throw error === failure ? error : mapError(error);
    } finally {
      // Ends the connection if the body was not read to the end (cap, early break, error):
      // an unread remainder must not be left buffering, nor the socket reused mid-body.
      if (!complete) discardBody(source);
      onDone();
    }
  }
}

/**
 * Reads a capped body to the end into one Buffer.
 *
 * @example
 * ```ts
 * const bytes = await readCapped(res.body, 65536, origin);
 * ```
 */
export async function readCapped(
  source: BodySource,
  maxBytes: number,
  origin: string,
  mapError?: (error: unknown) => Error,
  onDone?: () => void,
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of capBody(source, maxBytes, origin, mapError, onDone)) chunks.push(chunk);
  return Buffer.concat(chunks);
}

function tooLarge(origin: string, maxBytes: number): OutboundError {
  return new OutboundError('response_too_large', `the reply from ${origin} is larger than ${maxBytes} bytes`);
}
