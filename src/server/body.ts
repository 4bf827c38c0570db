/**
 * Reads a request body while counting bytes, so an oversized body is refused at the cap,
 * not after it has been buffered (a Content-Length over the cap is refused before reading).
 *
 * @example
 * ```ts
 * const result = await readBody(req, 1_048_576);
 * if (!result.ok) respond413();
 * ```
 */
import type { IncomingMessage } from 'node:http';

export type BodyResult = { ok: true; body: Buffer } | { ok: false; reason: 'too_large' | 'aborted' };

const TOO_LARGE: BodyResult = Object.freeze({ ok: false, reason: 'too_large' });
const ABORTED: BodyResult = Object.freeze({ ok: false, reason: 'aborted' });

export function readBody(req: IncomingMessage, maxBytes: number): Promise<BodyResult> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > maxBytes) return Promise.resolve(TOO_LARGE);
  // The first outcome settles the promise and later ones are no-ops, so the listeners are left
  // in place rather than removed one by one: the request object is done with after this.
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onError = (): void => resolve(ABORTED);
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        // Stop buffering; the caller answers 413 and closes the connection.
        if (chunks.length > 0) chunks.length = 0;
        req.pause();
        resolve(TOO_LARGE);
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      // A body over the cap has already settled the promise: this resolve is a no-op.
      resolve({ ok: true, body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size) });
    });
    req.on('error', onError);
    req.on('aborted', onError);
  });
}
