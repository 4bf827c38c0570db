import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { encodeRow, GENESIS_PREV, MAX_LINE_BYTES } from './chain.js';
import { auditTime, type AuditEvent } from './events.js';
import { AuditUnsafeEventError } from './safety.js';
import { JsonlAuditSink } from './jsonl.js';
import { AuditWriteError } from './sink.js';
import { verifyAuditFile } from './verify.js';

function submitted(taskId: string): AuditEvent {
  return {
    type: 'a2a.task.submitted',
    time: auditTime(),
    outcome: 'ok',
    client: 'partner',
    agent: 'helpdesk',
    taskId,
    contextId: 'c-1',
    inputChars: 5,
  };
}

function rows(path: string): Record<string, unknown>[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

function assertWriteError(fn: () => unknown, expected: Partial<AuditWriteError>): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof AuditWriteError, String(error));
    assert.equal(error.code, 'AUDIT_WRITE_FAILED');
    for (const [key, value] of Object.entries(expected)) assert.equal(error[key as keyof AuditWriteError], value, key);
    return true;
  });
}

describe('JsonlAuditSink', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'airlock-audit-jsonl-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('creates the directory 0700 and the file 0600, and chains the rows', async () => {
    const path = join(dir, 'logs', 'audit', 'audit.jsonl');
    const sink = new JsonlAuditSink(path);
    for (let i = 1; i <= 3; i += 1) sink.write(submitted(`t-${i}`));
    sink.close();
    assert.equal(statSync(join(dir, 'logs', 'audit')).mode & 0o777, 0o700);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    const lines = readFileSync(path, 'utf8').split('\n');
    assert.equal(lines.pop(), '');
    const parsed = rows(path);
    assert.deepEqual(
      parsed.map((row) => [row.seq, row.taskId]),
      [
        [1, 't-1'],
        [2, 't-2'],
        [3, 't-3'],
      ],
    );
    assert.equal(parsed[0]!.prev, GENESIS_PREV);
    lines.forEach((line, i) => {
      const body = `${line.slice(0, line.lastIndexOf(',"hash":"'))}}`;
      assert.equal(parsed[i]!.hash, sha256(body), `row ${i + 1} hash`);
      if (i > 0) assert.equal(parsed[i]!.prev, parsed[i - 1]!.hash, `row ${i + 1} prev`);
    });
    assert.deepEqual(await verifyAuditFile(path), { ok: true, rows: 3, lastHash: parsed[2]!.hash });
  });

  it('continues the chain across reopening', async () => {
    const path = join(dir, 'audit.jsonl');
    const first = new JsonlAuditSink(path);
    first.write(submitted('t-1'));
    first.write(submitted('t-2'));
    const head = first.head;
    first.close();
    const second = new JsonlAuditSink(path);
    assert.deepEqual(second.head, head);
    second.write(submitted('t-3'));
    second.close();
    const third = new JsonlAuditSink(path);
    third.write(submitted('t-4'));
    third.close();
    const parsed = rows(path);
    assert.deepEqual(
      parsed.map((row) => row.seq),
      [1, 2, 3, 4],
    );
    assert.equal(parsed[2]!.prev, head.hash);
    assert.equal((await verifyAuditFile(path)).ok, true);
    assert.equal((await verifyAuditFile(path)).rows, 4);
  });

  it('reads only the tail when reopening: a file whose earlier bytes are not rows still opens', () => {
    const path = join(dir, 'audit.jsonl');
    const last = encodeRow({ seq: 40, hash: 'a'.repeat(64) }, submitted('t-41'));
    writeFileSync(
      path,
      Buffer.concat([Buffer.alloc(10 * 1024 * 1024, 'junk\n') /* 10 MiB of whole lines */, last.bytes]),
    );
    const started = performance.now();
    const sink = new JsonlAuditSink(path);
    const elapsed = performance.now() - started;
    assert.deepEqual(sink.head, { seq: 41, hash: last.hash });
    sink.write(submitted('t-42'));
    sink.close();
    const appended = JSON.parse(readFileSync(path, 'utf8').trimEnd().split('\n').at(-1)!);
    assert.equal(appended.seq, 42);
    assert.equal(appended.prev, last.hash);
    assert.ok(elapsed < 200, `open took ${Math.round(elapsed)} ms`);
  });

  it('refuses to continue a file that ends with a partial, damaged or over-long row', () => {
    const path = join(dir, 'audit.jsonl');
    const sink = new JsonlAuditSink(path);
    sink.write(submitted('t-1'));
    sink.close();
    const good = readFileSync(path);
    const cases: Buffer[] = [
      good.subarray(0, -1), // cut newline
      good.subarray(0, 40), // cut mid-row
      Buffer.from(good.toString().replace('t-1', 't-X')), // edited
      Buffer.concat([good, Buffer.from('\n')]), // blank line
      Buffer.concat([good, Buffer.alloc(MAX_LINE_BYTES + 10, 'x'), Buffer.from('\n')]), // too long
    ];
    for (const content of cases) {
      writeFileSync(path, content);
      assertWriteError(() => new JsonlAuditSink(path), { operation: 'open', reason: 'bad_tail' });
      assert.ok(readFileSync(path).equals(content), 'the file is left as it was');
    }
  });

  it('tightens an existing file that others can read to 0600', () => {
    const path = join(dir, 'audit.jsonl');
    writeFileSync(path, '', { mode: 0o644 });
    chmodSync(path, 0o644);
    new JsonlAuditSink(path).close();
    assert.equal(statSync(path).mode & 0o777, 0o600);
  });

  it('throws AuditWriteError when the disk is full (/dev/full)', { skip: !existsSync('/dev/full') }, () => {
    const sink = new JsonlAuditSink('/dev/full');
    assertWriteError(() => sink.write(submitted('t-1')), { operation: 'write', reason: 'io', errno: 'ENOSPC' });
    assertWriteError(() => sink.write(submitted('t-2')), { operation: 'write', errno: 'ENOSPC' });
    assert.equal(sink.head.seq, 0, 'a failed row does not advance the chain');
    sink.close();
  });

  it('throws AuditWriteError when the file cannot be opened', () => {
    const file = join(dir, 'plain-file');
    writeFileSync(file, '');
    assertWriteError(() => new JsonlAuditSink(join(file, 'audit.jsonl')), { operation: 'open', reason: 'io' });
    assertWriteError(() => new JsonlAuditSink(dir), { operation: 'open', errno: 'EISDIR' });
  });

  it(
    'throws AuditWriteError for a path under a read-only directory',
    { skip: process.getuid?.() === 0 ? 'root ignores directory permissions' : false },
    () => {
      const readOnly = join(dir, 'ro');
      mkdirSync(readOnly, { mode: 0o500 });
      try {
        assertWriteError(() => new JsonlAuditSink(join(readOnly, 'audit.jsonl')), {
          operation: 'open',
          errno: 'EACCES',
        });
      } finally {
        chmodSync(readOnly, 0o700);
      }
    },
  );

  it(
    'cuts a partial row back off when a write fails half-way (file size limit), so the chain holds',
    {
      skip: process.platform !== 'linux',
    },
    () => {
      const path = join(dir, 'limited.jsonl');
      const script = `
      const { JsonlAuditSink } = await import(process.argv[1]);
      const sink = new JsonlAuditSink(process.argv[2]);
      const event = { type: 'a2a.server.auth_failed', time: new Date().toISOString(), outcome: 'denied', reason: 'invalid_credentials', remote: '127.0.0.1' };
      let written = 0;
      let failure;
      try { for (;;) { sink.write(event); written += 1; } } catch (error) { failure = error; }
      sink.close();
      process.stdout.write(JSON.stringify({ written, code: failure.code, errno: failure.errno }));
    `;
      const root = fileURLToPath(new URL('../../', import.meta.url));
      // RLIMIT_FSIZE of 1 KiB: the row that crosses it is written in part, then EFBIG.
      const child = spawnSync(
        'bash',
        [
          '-c',
          'ulimit -f 1 && exec "$0" "$@"',
          process.execPath,
          '--import',
          'tsx',
          '--input-type=module',
          '-e',
          script,
          fileURLToPath(new URL('./jsonl.ts', import.meta.url)),
          path,
        ],
        { cwd: root, encoding: 'utf8', timeout: 30_000, env: { ...process.env, TSX_DISABLE_CACHE: '1' } },
      );
      assert.equal(child.status, 0, child.stderr);
      const result = JSON.parse(child.stdout);
      assert.equal(result.code, 'AUDIT_WRITE_FAILED');
      assert.equal(result.errno, 'EFBIG');
      const size = statSync(path).size;
      assert.ok(size < 1024 && size > 0, `size ${size}`);
      assert.equal(rows(path).length, result.written);
      assert.ok(readFileSync(path).at(-1) === 0x0a, 'no partial row left behind');
    },
  );

  it('runs the guard: an unsafe event is refused and nothing is written', async () => {
    const path = join(dir, 'audit.jsonl');
    const sink = new JsonlAuditSink(path);
    const withToken = { ...submitted('t-1'), token: 'abc' } as unknown as AuditEvent;
    const longId = { ...submitted('t-1'), contextId: 'c'.repeat(300) };
    assert.throws(() => sink.write(withToken), AuditUnsafeEventError);
    assert.throws(() => sink.write(longId), AuditUnsafeEventError);
    assert.equal(statSync(path).size, 0);
    sink.write(submitted('t-2'));
    sink.close();
    assert.deepEqual(
      rows(path).map((row) => row.seq),
      [1],
    );
    assert.equal((await verifyAuditFile(path)).ok, true);
  });

  it('refuses writes after close; close is idempotent', () => {
    const sink = new JsonlAuditSink(join(dir, 'audit.jsonl'));
    sink.close();
    sink.close();
    assertWriteError(() => sink.write(submitted('t-1')), { operation: 'write', reason: 'closed' });
  });

  it('keeps the call order of interleaved async writers, with seq strictly increasing', async () => {
    const path = join(dir, 'audit.jsonl');
    const sink = new JsonlAuditSink(path);
    const order: string[] = [];
    const writer = async (id: number): Promise<void> => {
      for (let i = 0; i < 20; i += 1) {
        await new Promise((resolve) => setImmediate(resolve));
        if ((id + i) % 3 === 0) await Promise.resolve();
        const taskId = `w${id}-${i}`;
        order.push(taskId);
        sink.write(submitted(taskId));
      }
    };
    await Promise.all(Array.from({ length: 25 }, (_, id) => writer(id)));
    sink.close();
    const written = rows(path);
    assert.deepEqual(
      written.map((row) => row.taskId),
      order,
    );
    assert.deepEqual(
      written.map((row) => row.seq),
      order.map((_, i) => i + 1),
    );
    assert.deepEqual(await verifyAuditFile(path), { ok: true, rows: 500, lastHash: written.at(-1)!.hash });
  });
});
