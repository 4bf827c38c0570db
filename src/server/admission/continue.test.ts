import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, it } from 'node:test';
import { awaitContinue, continueIfAwaited } from './continue.js';

function pair(expect?: string) {
  const req = { headers: expect === undefined ? {} : { expect } } as unknown as IncomingMessage;
  let continues = 0;
  const res = {
    headersSent: false,
    shouldKeepAlive: true,
    writeContinue: () => continues++,
  } as unknown as ServerResponse;
  return { req, res, continues: () => continues };
}

describe('100 Continue after admission', () => {
  it('sends the 100 once, only for a request marked as waiting for it; the connection closes until then', () => {
    const waiting = pair('100-continue');
    awaitContinue(waiting.req, waiting.res);
    assert.equal(waiting.res.shouldKeepAlive, false, 'refused before the 100: closed after the answer');
    continueIfAwaited(waiting.req, waiting.res);
    assert.equal(waiting.res.shouldKeepAlive, true, 'admitted: keep-alive as the request asked');
    continueIfAwaited(waiting.req, waiting.res);
    assert.equal(waiting.continues(), 1);
    // Expect sent, but Node already answered (no checkContinue listener): nothing more.
    const unmarked = pair('100-continue');
    continueIfAwaited(unmarked.req, unmarked.res);
    assert.equal(unmarked.continues(), 0);
    const plain = pair();
    continueIfAwaited(plain.req, plain.res);
    assert.equal(plain.continues(), 0);
  });
});
