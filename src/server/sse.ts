/**
 * Server-sent events for JSON-RPC streams: one `data:` line per JSON-RPC response object.
 * Closing the stream (client gone) never cancels the task; it only stops listening.
 *
 * Backpressure: once `res.write()` answers false nothing more is written until `drain`; frames
 * made meanwhile wait in a bounded buffer (this stream's own, `maxBufferedBytes` together with
 * what the socket still holds). A reader that falls further behind, or whose event queue
 * overflows, gets a final JSON-RPC error event and the stream is closed (the task goes on).
 * After the last frame the stream waits (at most `flushGraceMs`) for the bytes to go out, then
 * destroys a socket that still does not read, so that a stream's memory ends with it.
 *
 * @example
 * ```ts
 * await pipeEventsAsSse(res, events, (event) => JSON.stringify(jsonRpcResult(id, encode(event))), { behind });
 * ```
 */
import type { ServerResponse } from 'node:http';
import { EventQueueOverflowError } from '../tasks/queue.js';

const HEARTBEAT_MS = 15_000;
const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
} as const;

/** Bytes one stream may have waiting for a reader (its buffer and the socket's) before it is closed. */
export const SSE_MAX_BUFFERED_BYTES = 1 << 20;

/** How long a finished stream waits for its last bytes to go out before the socket is destroyed. */
export const SSE_FLUSH_GRACE_MS = 10_000;

/**
 * How a stream ended: its events ran out (`done`), the client went away (`closed`), or the
 * reader fell too far behind and was cut off (`behind`).
 *
 * @example
 * ```ts
 * const end: SseEnd = await pipeEventsAsSse(res, events, frame);
 * ```
 */
export type SseEnd = 'done' | 'closed' | 'behind';

/**
 * Options of {@link pipeEventsAsSse}.
 *
 * @example
 * ```ts
 * const options: SseOptions = { maxBufferedBytes: 1 << 20, behind: () => errorPayload };
 * ```
 */
export interface SseOptions {
  /** Default {@link SSE_MAX_BUFFERED_BYTES}. */
  maxBufferedBytes?: number;
  /** Default {@link SSE_FLUSH_GRACE_MS}. */
  flushGraceMs?: number;
  /** The JSON-RPC error payload a reader that fell behind gets as its last event. */
  behind?: () => string;
}

export async function pipeEventsAsSse<T>(
  res: ServerResponse,
  events: AsyncIterable<T>,
  frame: (event: T) => string,
  options: SseOptions = {},
): Promise<SseEnd> {
  const maxBuffered = options.maxBufferedBytes ?? SSE_MAX_BUFFERED_BYTES;
  res.writeHead(200, SSE_HEADERS);
  res.flushHeaders();
  const iterator = events[Symbol.asyncIterator]();
  let closed = false;
  // Frames made while the socket is full, in order; written in one go on `drain`.
  let waiting: string[] = [];
  let waitingBytes = 0;
  let blocked = false;
  const onClose = (): void => {
    closed = true;
    void iterator.return?.();
  };
  const onDrain = (): void => {
    blocked = false;
    if (waiting.length === 0 || closed) return;
    const text = waiting.length === 1 ? (waiting[0] as string) : waiting.join('');
    waiting = [];
    waitingBytes = 0;
    if (!res.write(text)) blocked = true;
  };
  res.on('close', onClose);
  res.on('drain', onDrain);
  // Comments keep proxies from timing out a quiet stream (not while the socket is full).
  const heartbeat = setInterval(() => {
    if (!closed && !blocked) res.write(': keep-alive\n\n');
  }, HEARTBEAT_MS);
  heartbeat.unref();
  let end: SseEnd = 'done';
  try {
    for (;;) {
      let next: IteratorResult<T>;
      try {
        next = await iterator.next();
      } catch (error) {
        if (!(error instanceof EventQueueOverflowError)) throw error;
        end = 'behind';
        break;
      }
      if (closed) {
        end = 'closed';
        break;
      }
      if (next.done === true) break;
      const text = `data: ${frame(next.value)}\n\n`;
      if (!blocked) {
        // The common case: the socket takes it; no promise, no buffer of our own.
        if (!res.write(text)) blocked = true;
        continue;
      }
      waiting.push(text);
      waitingBytes += text.length;
      if (waitingBytes + res.writableLength > maxBuffered) {
        end = 'behind';
        break;
      }
    }
  } finally {
    clearInterval(heartbeat);
    res.off('drain', onDrain);
    if (end !== 'done') void iterator.return?.();
  }
  if (closed || res.destroyed) {
    res.off('close', onClose);
    return 'closed';
  }
  if (end === 'behind') {
    waiting = [];
    const payload = options.behind?.();
    if (payload !== undefined) res.write(`event: error\ndata: ${payload}\n\n`);
  } else if (waiting.length > 0) {
    res.write(waiting.join(''));
    waiting = [];
  }
  res.end();
  res.off('close', onClose);
  await finished(res, options.flushGraceMs ?? SSE_FLUSH_GRACE_MS);
  return end;
}

/** Resolves once `res` sent its last byte or closed; destroys it after `graceMs` otherwise. */
function finished(res: ServerResponse, graceMs: number): Promise<void> {
  if (res.writableFinished || res.destroyed) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      res.off('finish', done);
      res.off('close', done);
      resolve();
    };
    const timer = setTimeout(() => {
      // A reader that does not read its last bytes: let go of the socket and what it holds.
      res.destroy();
      done();
    }, graceMs);
    timer.unref();
    res.on('finish', done);
    res.on('close', done);
  });
}

/** An error as an SSE frame (a2a-js style `event: error`), then close; opens the stream if needed. */
export function writeSseError(res: ServerResponse, payload: string): void {
  if (res.writableEnded) return;
  if (!res.headersSent) res.writeHead(200, SSE_HEADERS);
  res.write(`event: error\ndata: ${payload}\n\n`);
  res.end();
}
