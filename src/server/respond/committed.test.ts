import assert from 'node:assert/strict';
import { createServer, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { releaseBatch } from '../../tasks/stores/batch-release.js';
import { committedResponses, endOfTurn } from './committed.js';

let server: Server;
let port = 0;
/** The test's handler; what it finds is checked after the answer arrives. */
let answer: (res: ServerResponse) => Promise<void> | void = () => undefined;
let pendingRows: Promise<void> | undefined;

before(async () => {
  const ServerResponse = committedResponses(
    () => pendingRows,
    () => undefined,
  );
  server = createServer({ ServerResponse }, (_req, res) => void answer(res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

function get(): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ port, host: '127.0.0.1', path: '/' }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Bytes the response's socket took while `act` ran (0: its output was held). */
function bytesSentDuring(res: ServerResponse, act: () => void): number {
  const before = res.socket?.bytesWritten ?? 0;
  act();
  return (res.socket?.bytesWritten ?? 0) - before;
}

/** Opens an event stream and lets its first output go out (released at the end of the turn). */
async function openStream(res: ServerResponse): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write('first\n');
  await nextTurn();
  await nextTurn();
}

describe('responses released at the end of the turn', () => {
  it('endOfTurn: one promise per turn, settled after the turn', async () => {
    const first = endOfTurn();
    assert.equal(endOfTurn(), first, 'every caller in a turn shares one promise');
    let settled = false;
    void first.then(() => (settled = true));
    await Promise.resolve();
    assert.equal(settled, false, 'not within the turn');
    await first;
    assert.notEqual(endOfTurn(), first, 'the next turn has its own');
  });

  it('endOfTurn among the callers a group commit releases: settled once they have run, before the next turn', async () => {
    const order: string[] = [];
    let resolve!: () => void;
    const put = new Promise<void>((settle) => (resolve = settle));
    const callers = [0, 1, 2].map(async (index) => {
      await put;
      for (let hop = 0; hop < index * 3; hop++) await Promise.resolve();
      const ending = endOfTurn();
      order.push(`answered ${index}`);
      await ending;
      order.push(`released ${index}`);
    });
    setImmediate(() => {
      releaseBatch(resolve);
      setImmediate(() => order.push('next turn'));
    });
    await Promise.all(callers);
    await nextTurn();
    await nextTurn();
    assert.deepEqual(order, [
      'answered 0',
      'answered 1',
      'answered 2',
      'released 0',
      'released 1',
      'released 2',
      'next turn',
    ]);
  });

  it("a response's output leaves at the end of the turn, not when end() is called", async () => {
    let bytesAtOnce: number | undefined;
    let bytesAfterTurn: number | undefined;
    answer = async (res) => {
      const before = res.socket?.bytesWritten ?? 0;
      bytesAtOnce = bytesSentDuring(res, () => res.end('answer'));
      await endOfTurn();
      bytesAfterTurn = (res.socket?.bytesWritten ?? 0) - before;
    };
    assert.deepEqual(await get(), { status: 200, body: 'answer' });
    assert.equal(bytesAtOnce, 0, 'held');
    assert.ok((bytesAfterTurn ?? 0) > 0, 'released with the turn');
  });

  it('held output counts as sent: a handler that checks headersSent does not start a second answer', async () => {
    const seen: { headersSent: boolean; writableEnded: boolean }[] = [];
    answer = (res) => {
      seen.push({ headersSent: res.headersSent, writableEnded: res.writableEnded });
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first ');
      seen.push({ headersSent: res.headersSent, writableEnded: res.writableEnded });
      res.end('answer');
      seen.push({ headersSent: res.headersSent, writableEnded: res.writableEnded });
      // As http.ts's requestFailed does after a route that answered and then threw.
      if (!res.headersSent) {
        res.writeHead(500);
        res.end('second answer');
      }
    };
    assert.deepEqual(await get(), { status: 200, body: 'first answer' });
    assert.deepEqual(seen, [
      { headersSent: false, writableEnded: false },
      { headersSent: true, writableEnded: false },
      { headersSent: true, writableEnded: true },
    ]);
  });

  it('a stream: only its first output is held; later writes go straight out', async () => {
    let laterBytesAtOnce: number | undefined;
    answer = async (res) => {
      await openStream(res);
      laterBytesAtOnce = bytesSentDuring(res, () => res.end('last\n'));
    };
    assert.deepEqual(await get(), { status: 200, body: 'first\nlast\n' });
    assert.ok((laterBytesAtOnce ?? 0) > 0);
  });

  it('held writes past the high-water mark answer false, and drain follows the release', async () => {
    const answers: boolean[] = [];
    let drained = false;
    answer = async (res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.on('drain', () => (drained = true));
      const chunk = 'x'.repeat(Math.ceil(res.writableHighWaterMark / 2));
      for (let i = 0; i < 3; i++) answers.push(res.write(chunk));
      await endOfTurn();
      await nextTurn();
      res.end();
    };
    const reply = await get();
    assert.equal(reply.status, 200);
    assert.deepEqual(answers, [true, false, false], 'back-pressure is reported while the output waits');
    assert.equal(drained, true, 'a writer that stopped is told to go on');
  });

  it('pending audit rows hold every output of a response, a stream too, until they are written', async () => {
    let release!: () => void;
    let heldWhilePending: boolean | undefined;
    answer = async (res) => {
      await openStream(res);
      pendingRows = new Promise<void>((resolve) => (release = resolve));
      heldWhilePending = bytesSentDuring(res, () => res.end('last\n')) === 0;
      pendingRows = undefined;
      release();
    };
    assert.deepEqual(await get(), { status: 200, body: 'first\nlast\n' });
    assert.equal(heldWhilePending, true);
  });
});
