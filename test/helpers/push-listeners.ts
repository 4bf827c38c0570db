/**
 * What the push tests listen with: a webhook receiver that records each delivery, and a trap
 * that counts the connections made to it (a refused webhook URL must make none).
 *
 * @example
 * ```ts
 * const listeners = await startPushListeners();
 * const url = `http://127.0.0.1:${listeners.receiverPort}/hook`;
 * assert.equal(listeners.trapConnections(), 0);
 * await listeners.close();
 * ```
 */
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';

/** One delivery the receiver got. */
export interface ReceivedPush {
  path: string;
  // The webhook body, as the test reads it.
  body: any;
  headers: Record<string, unknown>;
}

export interface PushListeners {
  readonly received: ReceivedPush[];
  readonly receiverPort: number;
  readonly trapPort: number;
  trapConnections(): number;
  close(): Promise<void>;
}

/** Starts both on loopback ports of their own. */
export async function startPushListeners(): Promise<PushListeners> {
  const received: ReceivedPush[] = [];
  const receiver = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString()) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  let connections = 0;
  const trap = createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => trap.listen(0, '127.0.0.1', resolve));
  return {
    received,
    receiverPort: (receiver.address() as { port: number }).port,
    trapPort: (trap.address() as { port: number }).port,
    trapConnections: () => connections,
    close: async () => {
      await new Promise((resolve) => trap.close(resolve));
      receiver.closeAllConnections();
      await new Promise((resolve) => receiver.close(resolve));
    },
  };
}
