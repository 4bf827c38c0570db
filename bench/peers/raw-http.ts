/**
 * The ceiling: plain `node:http` answering every POST with one fixed JSON-RPC reply. It reads
 * the request body to the end before replying (as any JSON-RPC server must) but does nothing
 * else: no parsing, no auth, no task. The reply is a completed v0.3 task of the same shape and
 * about the same size as Airlock's echo reply, so the bytes on the wire are comparable.
 *
 * Run by bench/inbound.ts; prints `listening on http://127.0.0.1:PORT` as its first line.
 * Env: PORT (default 0 = any free port).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const HOST = '127.0.0.1';

const REPLY = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  result: {
    kind: 'task',
    id: '6fdaa4ff-4066-4500-8a23-70a6e0129754',
    contextId: '7436f4a4-8433-44a6-bbc4-123288135ec9',
    status: { state: 'completed', timestamp: '2026-01-01T00:00:00.000Z' },
    artifacts: [
      { artifactId: '7269abfa-072a-4d1d-bc1b-96cccf9a2436', parts: [{ kind: 'text', text: 'hello' }], name: 'reply' },
    ],
    history: [
      {
        kind: 'message',
        messageId: 'm-1',
        role: 'user',
        parts: [{ kind: 'text', text: 'hello' }],
        contextId: '7436f4a4-8433-44a6-bbc4-123288135ec9',
        taskId: '6fdaa4ff-4066-4500-8a23-70a6e0129754',
      },
    ],
  },
});
const REPLY_HEADERS = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(REPLY) };

function handle(req: IncomingMessage, res: ServerResponse): void {
  if (req.method !== 'POST') {
    res.writeHead(405, { allow: 'POST' });
    res.end();
    return;
  }
  req.on('data', ignore);
  req.on('end', () => {
    res.writeHead(200, REPLY_HEADERS);
    res.end(REPLY);
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
