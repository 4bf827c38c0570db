import assert from 'node:assert/strict';
import { closeSync, existsSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { auditTime, type AuditEvent } from './events.js';
import { AuditUnsafeEventError } from './safety.js';
import { AuditWriteError } from './sink.js';
import { StdoutAuditSink } from './stdout.js';
import { verifyAuditBuffer, verifyAuditFile } from './verify.js';

function denied(i: number): AuditEvent {
  return {
    type: 'a2a.server.auth_failed',
    time: auditTime(),
    outcome: 'denied',
    reason: i % 2 === 0 ? 'invalid_credentials' : 'missing_credentials',
    remote: '198.51.100.4',
  };
}

describe('StdoutAuditSink', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'airlock-audit-stdout-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writes chained rows to a file descriptor, synchronously', async () => {
    const path = join(dir, 'out.jsonl');
    const fd = openSync(path, 'w');
    const sink = new StdoutAuditSink(fd);
    for (let i = 0; i < 10; i += 1) sink.write(denied(i));
    sink.close();
    // Written before the descriptor is closed: nothing was buffered in the sink.
    const result = await verifyAuditFile(path);
    closeSync(fd);
    assert.equal(result.ok && result.rows, 10);
    assert.equal(result.ok && result.lastHash, sink.head.hash);
  });

  it('writes the same rows to a stream', () => {
    const stream = new PassThrough();
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    const sink = new StdoutAuditSink(stream);
    for (let i = 0; i < 5; i += 1) sink.write(denied(i));
    sink.close();
    const result = verifyAuditBuffer(Buffer.concat(chunks));
    assert.equal(result.ok && result.rows, 5);
    assert.equal(stream.writableEnded, false, 'close() leaves the stream to its owner');
  });

  it('throws AuditWriteError after the stream failed', async () => {
    const stream = new Writable({
      write(_chunk, _encoding, callback) {
        callback(Object.assign(new Error('pipe closed'), { code: 'EPIPE' }));
      },
    });
    const sink = new StdoutAuditSink(stream);
    sink.write(denied(0));
    await new Promise((resolve) => setImmediate(resolve));
    assert.throws(
      () => sink.write(denied(1)),
      (error: unknown) => error instanceof AuditWriteError && error.reason === 'unusable',
    );
  });

  it('throws AuditWriteError on a full device', { skip: !existsSync('/dev/full') }, () => {
    const fd = openSync('/dev/full', 'w');
    try {
      const sink = new StdoutAuditSink(fd);
      assert.throws(
        () => sink.write(denied(0)),
        (error: unknown) => error instanceof AuditWriteError && error.errno === 'ENOSPC',
      );
      // Nothing reached the device: the chain does not count the row.
      assert.deepEqual(sink.head, { seq: 0, hash: '0'.repeat(64) });
    } finally {
      closeSync(fd);
    }
  });

  it('runs the guard and refuses writes after close', () => {
    const stream = new PassThrough();
    const sink = new StdoutAuditSink(stream);
    const unsafe = { ...denied(0), authorization: 'Bearer x' } as unknown as AuditEvent;
    assert.throws(() => sink.write(unsafe), AuditUnsafeEventError);
    assert.equal(stream.readableLength, 0);
    sink.close();
    assert.throws(
      () => sink.write(denied(0)),
      (error: unknown) => error instanceof AuditWriteError && error.reason === 'closed',
    );
  });
});
