import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { EventQueue } from '../tasks/queue.js';
import { pipeEventsAsSse, type SseEnd } from './sse.js';

const BIG = 'y'.repeat(64 * 1024);

/** A server that pipes `queue` to the first request, and reports how the pipe ended. */
async function serve(queue: EventQueue<string>, maxBufferedBytes: number) {
  let ended!: (end: SseEnd) => void;
  const end = new Promise<SseEnd>((resolve) => {
    ended = resolve;
  });
  const server: Server = createServer((_req, res) => {
    void pipeEventsAsSse(res, queue, (text) => text, {
      maxBufferedBytes,
      flushGraceMs: 500,
      behind: () => '{"error":"behind"}',
    }).then(ended);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, end, server };
}

describe('pipeEventsAsSse', () => {
  it('a reader that keeps up gets every frame in order, and the stream ends when the events do', async () => {
    const queue = new EventQueue<string>();
    const { port, end, server } = await serve(queue, 1 << 20);
    const response = fetch(`http://127.0.0.1:${port}/`);
    for (let n = 0; n < 200; n++) queue.push(`{"n":${n},"pad":"${BIG.slice(0, 4096)}"}`);
    queue.end();
    const text = await (await response).text();
    const frames = text.split('\n\n').filter((frame) => frame.startsWith('data: '));
    assert.equal(frames.length, 200);
    assert.ok(frames.every((frame, n) => frame.startsWith(`data: {"n":${n},`)));
    assert.equal(await end, 'done');
    server.close();
  });

  it('a reader that stops reading is cut off past the buffer: a last error event, the socket let go', async () => {
    const queue = new EventQueue<string>({ maxItems: 100_000 });
    const { port, end, server } = await serve(queue, 64 * 1024);
    const socket = connect(port, '127.0.0.1');
    socket.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n');
    await new Promise((resolve) => socket.once('data', resolve));
    socket.pause();
    // 12 MiB: more than the kernel's socket buffers and the stream's 64 KiB together.
    let settled = false;
    void end.then(() => (settled = true));
    for (let n = 0; n < 192 && !settled; n++) {
      queue.push(`"${BIG}"`);
      await new Promise((resolve) => setImmediate(resolve));
    }
    assert.equal(await end, 'behind');
    socket.destroy();
    server.close();
  });
});
