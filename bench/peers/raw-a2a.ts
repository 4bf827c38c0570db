/**
 * A minimal A2A v1.0 agent on plain `node:http`, the remote for the outbound benchmark: it
 * serves a v1.0 card at `GET /.well-known/agent-card.json` (one JSON-RPC interface at
 * `POST /rpc`, streaming declared) and answers every JSON-RPC POST with one completed task
 * echoing "hello". It parses the body only to echo the request's `id` (clients check it); the
 * reply is otherwise fixed: no auth, no task store.
 *
 * Run by bench/outbound.ts; prints `listening on http://127.0.0.1:PORT` as its first line.
 * Env: PORT (default 0 = any free port).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const HOST = '127.0.0.1';

/** The result member; the id is spliced in per request. */
const RESULT = JSON.stringify({
  task: {
    id: '6fdaa4ff-4066-4500-8a23-70a6e0129754',
    contextId: '7436f4a4-8433-44a6-bbc4-123288135ec9',
    status: { state: 'TASK_STATE_COMPLETED', timestamp: '2026-01-01T00:00:00.000Z' },
    artifacts: [{ artifactId: '7269abfa-072a-4d1d-bc1b-96cccf9a2436', name: 'reply', parts: [{ text: 'hello' }] }],
    history: [
      {
        messageId: 'm-1',
        role: 'ROLE_USER',
        parts: [{ text: 'hello' }],
        contextId: '7436f4a4-8433-44a6-bbc4-123288135ec9',
        taskId: '6fdaa4ff-4066-4500-8a23-70a6e0129754',
      },
    ],
  },
});

function card(baseUrl: string): string {
  return JSON.stringify({
    name: 'raw-a2a',
    description: 'A fixed-reply A2A agent on node:http (benchmark peer).',
    version: '1.0.0',
    supportedInterfaces: [{ url: `${baseUrl}/rpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    capabilities: { streaming: true },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'echo', name: 'Echo', description: 'Says hello.', tags: ['echo'] }],
  });
}

let cardBody = '';

function handle(req: IncomingMessage, res: ServerResponse): void {
  if (req.method === 'GET' && req.url === '/.well-known/agent-card.json') {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(cardBody) });
    res.end(cardBody);
    return;
  }
  if (req.method !== 'POST') {
    res.writeHead(405, { allow: 'GET, POST' });
    res.end();
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    let id: unknown = null;
    try {
      id = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: unknown }).id ?? null;
    } catch {
      // A body that is not JSON still gets the fixed reply, with a null id.
    }
    const reply = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${RESULT}}`;
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(reply) });
    res.end(reply);
  });
}

const server = createServer(handle);
server.listen(Number(process.env.PORT ?? 0), HOST, () => {
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://${HOST}:${port}`;
  cardBody = card(baseUrl);
  process.stdout.write(`listening on ${baseUrl}\n`);
});

function stop(): void {
  server.close(() => process.exit(0));
  server.closeAllConnections();
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
