/**
 * Reads a request body while counting bytes, so an oversized body is refused at the cap,
 * not after it has been buffered (a Content-Length over the cap is refused before reading).
 * With a timeout, a body that has not arrived whole in that time is refused too, so a client
 * dribbling a byte at a time cannot hold a connection and its buffers open indefinitely.
 *
 * @example
 * ```ts
 * const result = await readBody(req, 1_048_576, 30_000);
 * if (!result.ok && result.reason === 'too_large') respond413();
 * if (!result.ok && result.reason === 'timeout') respond408();
 * ```
 */
import type { IncomingMessage } from 'node:http';

export type BodyResult = { ok: true; body: Buffer } | { ok: false; reason: 'too_large' | 'aborted' | 'timeout' };

const TOO_LARGE: BodyResult = Object.freeze({ ok: false, reason: 'too_large' });
const ABORTED: BodyResult = Object.freeze({ ok: false, reason: 'aborted' });
const TIMEOUT: BodyResult = Object.freeze({ ok: false, reason: 'timeout' });

/**
 * Reads `req`'s body: at most `maxBytes`, and (when `timeoutMs` is given) all of it within
 * `timeoutMs` of this call. On `too_large` and `timeout` the request is paused and nothing more
 * is buffered; the caller answers 413 or 408 and closes the connection.
 *
 * @example
 * ```ts
 * const body = await readBody(req, config.server.maxBodyBytes, config.server.bodyTimeoutMs);
 * if (body.ok) handle(body.body);
 * ```
 */
export function readBody(req: IncomingMessage, maxBytes: number, timeoutMs?: number): Promise<BodyResult> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > maxBytes) return Promise.resolve(TOO_LARGE);
  // The first outcome settles the promise and clears the timer; later events are ignored via
  // `done` rather than by removing the listeners one by one: the request is done with after this.
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    let timer: NodeJS.Timeout | undefined;
    const settle = (result: BodyResult): void => {
      if (done) return;
      done = true;
      if (timer !== undefined) clearTimeout(timer);
      if (!result.ok) {
        // Stop reading and let go of what was buffered; the caller closes the connection.
        chunks.length = 0;
        req.pause();
      }
      resolve(result);
    };
    const onError = (): void => settle(ABORTED);
    if (timeoutMs !== undefined) {
      timer = setTimeout(() => settle(TIMEOUT), timeoutMs);
      // A pending body must never be what keeps the process alive (e.g. during shutdown).
      timer.unref();
    }
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      // Counted as it arrives: a chunked body (no Content-Length) is refused at the cap.
      if (size > maxBytes) {
        settle(TOO_LARGE);
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (done) return;
      settle({ ok: true, body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size) });
    });
    req.on('error', onError);
    req.on('aborted', onError);
  });
}
