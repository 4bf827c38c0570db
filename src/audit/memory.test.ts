import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { auditTime } from './events.js';
import { AuditUnsafeEventError } from './safety.js';
import { MemoryAuditSink } from './memory.js';
import { AuditWriteError } from './sink.js';
import { verifyAuditBuffer } from './verify.js';

const time = auditTime(new Date('2025-06-01T12:00:00.000Z'));
const ids = { client: 'partner', agent: 'helpdesk', taskId: 't-1', contextId: 'c-1' } as const;

describe('MemoryAuditSink', () => {
  it('keeps the events as written, and rows that verify', () => {
    const sink = new MemoryAuditSink();
    sink.write({ type: 'a2a.task.submitted', time, outcome: 'ok', ...ids, inputChars: 5, principalKind: undefined });
    sink.write({ type: 'a2a.task.completed', time, outcome: 'ok', ...ids, outputChars: 11 });
    assert.deepEqual(sink.events, [
      { type: 'a2a.task.submitted', time, outcome: 'ok', ...ids, inputChars: 5 },
      { type: 'a2a.task.completed', time, outcome: 'ok', ...ids, outputChars: 11 },
    ]);
    assert.deepEqual(
      sink.ofType('a2a.task.completed').map((event) => event.outputChars),
      [11],
    );
    const result = verifyAuditBuffer(sink.text());
    assert.deepEqual(result, { ok: true, rows: 2, lastHash: sink.head.hash });
  });

  it('runs the guard, and refuses writes after close', () => {
    const sink = new MemoryAuditSink();
    assert.throws(
      () =>
        sink.write({ type: 'a2a.task.submitted', time, outcome: 'ok', ...ids, inputChars: 5, ...{ message: 'hi' } }),
      AuditUnsafeEventError,
    );
    assert.equal(sink.events.length, 0);
    sink.close();
    assert.equal(sink.closed, true);
    assert.throws(
      () => sink.write({ type: 'a2a.task.completed', time, outcome: 'ok', ...ids, outputChars: 1 }),
      AuditWriteError,
    );
  });
});
