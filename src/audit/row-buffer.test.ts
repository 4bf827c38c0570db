/**
 * Rows written in place (`appendRow` into a `RowBuffer`, what group commit does, and what
 * `encodeRow` copies out) are the rows the format in chain.ts defines, computed here the plain
 * way, row after row, whatever the event holds; a refused event adds nothing.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { appendRow, checkLine, encodeRow, GENESIS_HEAD, type ChainHead } from './chain.js';
import type { AuditEvent } from './events.js';
import { RowBuffer } from './row-buffer.js';
import { AuditUnsafeEventError } from './safety.js';

/** Printable ASCII without spaces: what ids may hold, quotes and backslashes included. */
const id = fc.stringMatching(/^[!-~]{1,40}$/);

const completed = fc.record(
  {
    type: fc.constant('a2a.task.completed'),
    time: fc.integer({ min: 0, max: 4_102_444_800_000 }).map((ms) => new Date(ms).toISOString()),
    outcome: fc.constant('ok'),
    client: id,
    agent: id,
    taskId: id,
    contextId: id,
    inputChars: fc.nat(),
    outputChars: fc.nat(),
    principalKind: fc.constantFrom('client', 'service', 'delegated'),
  },
  { requiredKeys: ['type', 'time', 'outcome', 'client', 'agent', 'taskId', 'contextId', 'outputChars'] },
) as fc.Arbitrary<AuditEvent>;

/** The row the format defines: body = JSON of { seq, prev, ...event }, its SHA-256 before the closing brace. */
function specifiedRow(head: ChainHead, event: AuditEvent): { head: ChainHead; bytes: Buffer } {
  const seq = head.seq + 1;
  const body = JSON.stringify({ seq, prev: head.hash, ...event });
  const hash = createHash('sha256').update(body, 'utf8').digest('hex');
  return { head: { seq, hash }, bytes: Buffer.from(`${body.slice(0, -1)},"hash":"${hash}"}\n`, 'utf8') };
}

describe('appendRow', () => {
  it('writes the rows the format defines, chained row after row, across the buffer growing; encodeRow gives each alone', () => {
    fc.assert(
      fc.property(fc.array(completed, { minLength: 1, maxLength: 120 }), fc.nat({ max: 1e9 }), (events, seq0) => {
        const rows = new RowBuffer();
        let head: ChainHead = seq0 === 0 ? GENESIS_HEAD : { seq: seq0, hash: 'ab'.repeat(32) };
        let expected = head;
        const parts: Buffer[] = [];
        for (const event of events) {
          const alone = encodeRow(expected, event);
          const row = specifiedRow(expected, event);
          assert.ok(alone.bytes.equals(row.bytes));
          assert.equal(`${alone.line}\n`, row.bytes.toString('utf8'));
          parts.push(row.bytes);
          expected = row.head;
          head = appendRow(rows, head, event);
          assert.deepEqual(head, expected);
        }
        assert.ok(rows.bytes().equals(Buffer.concat(parts)));
        assert.equal(rows.rows, events.length);
        assert.deepEqual(
          rows.lines(),
          parts.map((bytes) => bytes.toString('utf8', 0, bytes.length - 1)),
        );
      }),
      { numRuns: 60 },
    );
  });

  it('each row checks on its own (checkLine), and a cleared buffer starts again from empty', () => {
    const rows = new RowBuffer();
    let head: ChainHead = GENESIS_HEAD;
    const event: AuditEvent = {
      type: 'a2a.task.submitted',
      time: '2026-01-01T00:00:00.000Z',
      outcome: 'ok',
      client: 'c"\\1',
      agent: 'echo',
      taskId: 't-1',
      contextId: 'ctx',
      inputChars: 5,
    };
    // Far past the initial 16 KiB and past the size kept after a clear.
    for (let i = 0; i < 5_000; i++) head = appendRow(rows, head, event);
    const lines = rows.lines();
    assert.equal(lines.length, 5_000);
    for (const line of [lines[0]!, lines[4_999]!]) assert.equal(checkLine(Buffer.from(line)).ok, true);
    rows.clear();
    assert.equal(rows.length, 0);
    assert.deepEqual(rows.lines(), []);
    appendRow(rows, GENESIS_HEAD, event);
    assert.ok(rows.bytes().equals(specifiedRow(GENESIS_HEAD, event).bytes));
  });

  it('an unsafe event is refused and adds nothing', () => {
    const rows = new RowBuffer();
    const event: AuditEvent = {
      type: 'a2a.task.submitted',
      time: '2026-01-01T00:00:00.000Z',
      outcome: 'ok',
      client: 'c',
      agent: 'echo',
      taskId: 't-1',
      contextId: 'ctx',
      inputChars: 5,
    };
    const head = appendRow(rows, GENESIS_HEAD, event);
    const before = Buffer.from(rows.bytes());
    assert.throws(
      () => appendRow(rows, head, { ...event, token: 'x' } as unknown as AuditEvent),
      AuditUnsafeEventError,
    );
    assert.throws(() => appendRow(rows, head, { ...event, taskId: 'x'.repeat(300) }), AuditUnsafeEventError);
    assert.ok(rows.bytes().equals(before));
    assert.equal(rows.rows, 1);
  });
});
