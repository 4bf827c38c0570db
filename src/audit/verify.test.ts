import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { encodeRow, GENESIS_HEAD, GENESIS_PREV, MAX_LINE_BYTES, type ChainHead } from './chain.js';
import { auditTime, type AuditEvent } from './events.js';
import { ChainVerifier, verifyAuditBuffer, verifyAuditFile, type AuditVerifyResult } from './verify.js';

const time = auditTime(new Date('2025-06-01T12:00:00.000Z'));

function event(i: number): AuditEvent {
  switch (i % 4) {
    case 0:
      return {
        type: 'a2a.task.submitted',
        time,
        outcome: 'ok',
        client: 'partner',
        agent: 'helpdesk',
        taskId: `t-${i}`,
        contextId: `c-${i % 7}`,
        inputChars: i,
      };
    case 1:
      return {
        type: 'a2a.task.completed',
        time,
        outcome: 'ok',
        client: 'partner',
        agent: 'helpdesk',
        taskId: `t-${i}`,
        contextId: `c-${i % 7}`,
        outputChars: i * 3,
      };
    case 2:
      return {
        type: 'a2a.server.auth_failed',
        time,
        outcome: 'denied',
        reason: 'invalid_credentials',
        remote: '203.0.113.7',
      };
    default:
      return {
        type: 'a2a.task.suspicious_input',
        time,
        outcome: 'ok',
        client: 'partner',
        agent: 'helpdesk',
        counts: { instruction_override: i },
      };
  }
}

/** The lines (without newlines) of a valid chain of `n` rows. */
function chain(n: number): Buffer[] {
  const lines: Buffer[] = [];
  let head: ChainHead = GENESIS_HEAD;
  for (let i = 0; i < n; i += 1) {
    const row = encodeRow(head, event(i));
    lines.push(row.bytes.subarray(0, -1));
    head = row;
  }
  return lines;
}

const join_ = (lines: Buffer[]): Buffer => Buffer.concat(lines.flatMap((line) => [line, Buffer.from('\n')]));

/** Splits bytes into records that keep their terminating newline (the last may lack one). */
function records(data: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let start = 0;
  while (start < data.length) {
    const newline = data.indexOf(0x0a, start);
    const end = newline === -1 ? data.length : newline + 1;
    out.push(data.subarray(start, end));
    start = end;
  }
  return out;
}

/**
 * The oracle: the first line (1-based) at which the tampered bytes differ from the original
 * file, or undefined when the tampered file is a prefix of whole original rows (rows cut from
 * the end, which a hash chain cannot show).
 */
function firstDifference(original: Buffer[], tampered: Buffer): number | undefined {
  const ours = records(tampered);
  const theirs = original.map((line) => Buffer.concat([line, Buffer.from('\n')]));
  for (let i = 0; i < ours.length; i += 1) {
    const expected = theirs[i];
    if (expected === undefined || !ours[i]!.equals(expected)) return i + 1;
  }
  return undefined;
}

type Tamper =
  | { kind: 'flip'; row: number; offset: number; mask: number }
  | { kind: 'delete'; row: number }
  | { kind: 'insert-copy'; at: number; from: number }
  | { kind: 'insert-garbage'; at: number; garbage: string }
  | { kind: 'swap'; a: number; b: number }
  | { kind: 'truncate'; bytes: number };

/** A tampering of a chain of `n` rows; indexes are fractions, scaled to the row's size. */
function tamperArb(n: number): fc.Arbitrary<Tamper> {
  const row = fc.integer({ min: 0, max: n - 1 });
  // Two distinct rows (none when there is only one row to move).
  const swaps: fc.Arbitrary<Tamper>[] =
    n < 2
      ? []
      : [
          fc
            .tuple(row, fc.integer({ min: 1, max: n - 1 }))
            .map(([a, step]) => ({ kind: 'swap' as const, a, b: (a + step) % n })),
        ];
  return fc.oneof(
    fc.record({
      kind: fc.constant('flip' as const),
      row,
      offset: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
      mask: fc.integer({ min: 1, max: 255 }),
    }),
    fc.record({ kind: fc.constant('delete' as const), row }),
    fc.record({ kind: fc.constant('insert-copy' as const), at: fc.integer({ min: 0, max: n }), from: row }),
    fc.record({
      kind: fc.constant('insert-garbage' as const),
      at: fc.integer({ min: 0, max: n }),
      garbage: fc.oneof(fc.string({ maxLength: 200 }), fc.json()),
    }),
    ...swaps,
    fc.record({ kind: fc.constant('truncate' as const), bytes: fc.integer({ min: 1, max: 400 }) }),
  );
}

function apply(lines: Buffer[], tamper: Tamper): Buffer {
  const copy = lines.map((line) => Buffer.from(line));
  switch (tamper.kind) {
    case 'flip': {
      const data = join_(copy);
      let start = 0;
      for (let i = 0; i < tamper.row; i += 1) start += copy[i]!.length + 1;
      const length = copy[tamper.row]!.length + 1; // the newline may be flipped too
      const at = start + Math.floor(tamper.offset * length);
      data[at] = data[at]! ^ tamper.mask;
      return data;
    }
    case 'delete':
      copy.splice(tamper.row, 1);
      return join_(copy);
    case 'insert-copy':
      copy.splice(tamper.at, 0, Buffer.from(lines[tamper.from]!));
      return join_(copy);
    case 'insert-garbage':
      copy.splice(tamper.at, 0, Buffer.from(tamper.garbage, 'utf8'));
      return join_(copy);
    case 'swap': {
      const a = copy[tamper.a]!;
      copy[tamper.a] = copy[tamper.b]!;
      copy[tamper.b] = a;
      return join_(copy);
    }
    case 'truncate': {
      const data = join_(copy);
      const last = copy[copy.length - 1]!.length + 1;
      return data.subarray(0, data.length - Math.min(tamper.bytes, last));
    }
  }
}

function assertDetected(result: AuditVerifyResult, expected: number | undefined, rows: number): void {
  if (expected === undefined) {
    assert.equal(result.ok, true, `expected a valid prefix, got ${JSON.stringify(result)}`);
    assert.ok(result.rows < rows);
    return;
  }
  assert.equal(result.ok, false, `tampering at line ${expected} was not detected`);
  assert.equal(!result.ok && result.firstBrokenLine, expected, JSON.stringify(result));
  assert.equal(result.rows, expected - 1);
}

describe('verify', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'airlock-audit-verify-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('accepts a valid chain and an empty file', async () => {
    const lines = chain(25);
    const path = join(dir, 'valid.jsonl');
    writeFileSync(path, join_(lines));
    const lastHash = JSON.parse(lines[24]!.toString()).hash;
    assert.deepEqual(await verifyAuditFile(path), { ok: true, rows: 25, lastHash });
    writeFileSync(path, '');
    assert.deepEqual(await verifyAuditFile(path), { ok: true, rows: 0, lastHash: GENESIS_PREV });
  });

  it('pins the row format: seq, prev, fields, then SHA-256 of the body as the last key', () => {
    const first = encodeRow(GENESIS_HEAD, event(0));
    const body = `{"seq":1,"prev":"${'0'.repeat(64)}","type":"a2a.task.submitted","time":"2025-06-01T12:00:00.000Z","outcome":"ok","client":"partner","agent":"helpdesk","taskId":"t-0","contextId":"c-0","inputChars":0}`;
    const hash = createHash('sha256').update(body).digest('hex');
    assert.equal(first.line, `${body.slice(0, -1)},"hash":"${hash}"}`);
    assert.equal(first.hash, hash);
    const second = encodeRow(first, event(1));
    assert.ok(second.line.startsWith(`{"seq":2,"prev":"${hash}","type":"a2a.task.completed"`));
    assert.ok(second.bytes.toString().endsWith('"}\n'));
  });

  it('property: any tampering is reported at the first line that differs', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 30 }).chain((n) => fc.tuple(fc.constant(chain(n)), tamperArb(n))),
        ([lines, tamper]) => {
          const tampered = apply(lines, tamper);
          assertDetected(verifyAuditBuffer(tampered), firstDifference(lines, tampered), lines.length);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('property: every byte flip in every row is caught at that row (exhaustive on a small chain)', () => {
    const lines = chain(4);
    const data = join_(lines);
    let line = 1;
    for (let at = 0; at < data.length; at += 1) {
      const tampered = Buffer.from(data);
      tampered[at] = tampered[at]! ^ 0x01;
      const result = verifyAuditBuffer(tampered);
      assert.equal(result.ok, false);
      assert.equal(!result.ok && result.firstBrokenLine, line, `byte ${at}`);
      if (data[at] === 0x0a) line += 1;
    }
  });

  it('property: the verdict does not depend on how the bytes are chunked', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 12 }).chain((n) => fc.tuple(fc.constant(chain(n)), fc.option(tamperArb(n)))),
        fc.array(fc.integer({ min: 1, max: 700 }), { minLength: 1, maxLength: 40 }),
        ([lines, tamper], sizes) => {
          const data = tamper === null ? join_(lines) : apply(lines, tamper);
          const verifier = new ChainVerifier();
          let result: AuditVerifyResult | undefined;
          for (let at = 0, i = 0; at < data.length && result === undefined; i += 1) {
            const size = sizes[i % sizes.length]!;
            result = verifier.feed(data.subarray(at, at + size));
            at += size;
          }
          assert.deepEqual(result ?? verifier.end(), verifyAuditBuffer(data));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('property: the same holds through a file', async () => {
    const path = join(dir, 'tampered.jsonl');
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 20 }).chain((n) => fc.tuple(fc.constant(chain(n)), tamperArb(n))),
        async ([lines, tamper]) => {
          const tampered = apply(lines, tamper);
          writeFileSync(path, tampered);
          assertDetected(await verifyAuditFile(path), firstDifference(lines, tampered), lines.length);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('names the reasons: bad_seq for moved rows, bad_prev for a re-hashed row, truncated for a cut row', () => {
    const lines = chain(5);
    const swapped = verifyAuditBuffer(apply(lines, { kind: 'swap', a: 1, b: 3 }));
    assert.deepEqual(swapped, { ok: false, rows: 1, firstBrokenLine: 2, reason: 'bad_seq' });
    const flipped = verifyAuditBuffer(apply(lines, { kind: 'flip', row: 2, offset: 0.5, mask: 1 }));
    assert.equal(!flipped.ok && flipped.reason, 'bad_hash');
    // A forged row with a correct hash of its own but the wrong `prev`.
    const forged = encodeRow({ seq: 2, hash: 'f'.repeat(64) }, event(2)).bytes.subarray(0, -1);
    const rehashed = verifyAuditBuffer(join_([lines[0]!, lines[1]!, forged, ...lines.slice(3)]));
    assert.deepEqual(rehashed, { ok: false, rows: 2, firstBrokenLine: 3, reason: 'bad_prev' });
    const cut = verifyAuditBuffer(join_(lines).subarray(0, -1));
    assert.deepEqual(cut, { ok: false, rows: 4, firstBrokenLine: 5, reason: 'truncated' });
    const blank = verifyAuditBuffer(Buffer.concat([join_(lines.slice(0, 2)), Buffer.from('\n')]));
    assert.deepEqual(blank, { ok: false, rows: 2, firstBrokenLine: 3, reason: 'bad_format' });
  });

  it('cannot see whole rows cut from the end, but lastHash changes (anchor it)', () => {
    const lines = chain(5);
    const full = verifyAuditBuffer(join_(lines));
    const short = verifyAuditBuffer(join_(lines.slice(0, 4)));
    assert.equal(short.ok && short.rows, 4);
    assert.ok(full.ok && short.ok && full.lastHash !== short.lastHash);
  });

  it('reports line_too_long without holding the line: a 20 MiB line and an over-long row after valid ones', async () => {
    const huge = join(dir, 'huge.jsonl');
    writeFileSync(huge, Buffer.alloc(20 * 1024 * 1024, 'x'));
    assert.deepEqual(await verifyAuditFile(huge), { ok: false, rows: 0, firstBrokenLine: 1, reason: 'line_too_long' });
    const lines = chain(3);
    const long = Buffer.concat([join_(lines), Buffer.alloc(MAX_LINE_BYTES + 1, 'y'), Buffer.from('\n')]);
    assert.deepEqual(verifyAuditBuffer(long), { ok: false, rows: 3, firstBrokenLine: 4, reason: 'line_too_long' });
  });

  it('rejects with the system error for a missing file', async () => {
    await assert.rejects(verifyAuditFile(join(dir, 'missing.jsonl')), { code: 'ENOENT' });
  });

  it('verifies 100k rows in under 2 s, and within a heap smaller than the file', async () => {
    const path = join(dir, 'big.jsonl');
    const parts: Buffer[] = [];
    let head: ChainHead = GENESIS_HEAD;
    for (let i = 0; i < 100_000; i += 1) {
      const row = encodeRow(head, event(i));
      parts.push(row.bytes);
      head = row;
    }
    writeFileSync(path, Buffer.concat(parts));
    const started = performance.now();
    const result = await verifyAuditFile(path);
    const elapsed = performance.now() - started;
    assert.deepEqual(result, { ok: true, rows: 100_000, lastHash: head.hash });
    assert.ok(elapsed < 2000, `took ${Math.round(elapsed)} ms`);
    // Bounded memory: the same check in a process whose heap (16 MB) is smaller than the file
    // (~32 MB); reading the file whole and splitting it aborts there (tried: signal 6).
    assert.ok(statSync(path).size > 20 * 1024 * 1024, `${statSync(path).size}`);
    const child = spawnSync(
      process.execPath,
      [
        '--max-old-space-size=16',
        '--max-semi-space-size=1',
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        'const { verifyAuditFile } = await import(process.argv[1]); process.stdout.write(JSON.stringify(await verifyAuditFile(process.argv[2])));',
        fileURLToPath(new URL('./verify.ts', import.meta.url)),
        path,
      ],
      { encoding: 'utf8', timeout: 30_000 },
    );
    assert.equal(child.status, 0, child.stderr);
    assert.deepEqual(JSON.parse(child.stdout), { ok: true, rows: 100_000, lastHash: head.hash });
  });
});
