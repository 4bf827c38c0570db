/**
 * Server-sent events for JSON-RPC streams: one `data:` line per JSON-RPC response object.
 * Closing the stream (client gone) never cancels the task; it only stops listening.
 *
 * @example
 * ```ts
 * await pipeEventsAsSse(res, events, (event) => JSON.stringify(jsonRpcResult(id, encode(event))));
 * ```
 */
import type { ServerResponse } from 'node:http';

const HEARTBEAT_MS = 15_000;
const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
} as const;

export async function pipeEventsAsSse<T>(
  res: ServerResponse,
  events: AsyncIterable<T>,
  frame: (event: T) => string,
): Promise<void> {
  res.writeHead(200, SSE_HEADERS);
  res.flushHeaders();
  const iterator = events[Symbol.asyncIterator]();
  let closed = false;
  const onClose = (): void => {
    closed = true;
    void iterator.return?.();
  };
  res.on('close', onClose);
  // Comments keep proxies from timing out a quiet stream.
  const heartbeat = setInterval(() => {
    if (!closed) res.write(': keep-alive\n\n');
  }, HEARTBEAT_MS);
  heartbeat.unref();
  try {
    for (;;) {
      const next = await iterator.next();
      if (next.done === true || closed) break;
      res.write(`data: ${frame(next.value)}\n\n`);
    }
  } finally {
    clearInterval(heartbeat);
    res.off('close', onClose);
    if (!closed) res.end();
  }
}

/** An error as an SSE frame (a2a-js style `event: error`), then close; opens the stream if needed. */
export function writeSseError(res: ServerResponse, payload: string): void {
  if (res.writableEnded) return;
  if (!res.headersSent) res.writeHead(200, SSE_HEADERS);
  res.write(`event: error\ndata: ${payload}\n\n`);
  res.end();
}
