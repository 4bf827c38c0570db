/**
 * The streaming ceiling: plain `node:http` answering every POST with a fixed SSE stream. The
 * events are the exact `data:` payloads of one stream captured from Airlock's writer agent
 * (file named by BENCH_SSE_EVENTS, a JSON array of strings), written one `write()` each, then
 * the response ends. It reads the request body to the end first, and does nothing else: no
 * parsing, no auth, no task.
 *
 * `POST /hold` writes only the first event and keeps the stream open until the client goes
 * (for the memory bench's held streams).
 *
 * Run by bench/stream.ts and bench/memory.ts; prints `listening on http://127.0.0.1:PORT` first.
 * Env: PORT (default 0), BENCH_SSE_EVENTS (required).
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const HOST = '127.0.0.1';
const eventsFile = process.env.BENCH_SSE_EVENTS;
if (eventsFile === undefined) throw new Error('BENCH_SSE_EVENTS is not set');
const EVENTS = (JSON.parse(readFileSync(eventsFile, 'utf8')) as string[]).map((data) => `data: ${data}\n\n`);
const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
};

function handle(req: IncomingMessage, res: ServerResponse): void {
  if (req.method !== 'POST') {
    res.writeHead(405, { allow: 'POST' });
    res.end();
    return;
  }
  req.on('data', ignore);
  req.on('end', () => {
    res.writeHead(200, SSE_HEADERS);
    if (req.url === '/hold') {
      res.write(EVENTS[0]);
      return;
    }
    for (const event of EVENTS) res.write(event);
    res.end();
  });
}

function ignore(): void {}

const server = createServer(handle);
server.listen(Number(process.env.PORT ?? 0), HOST, () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`listening on http://${HOST}:${port}\n`);
});

function stop(): void {
  server.close(() => process.exit(0));
  server.closeAllConnections();
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
