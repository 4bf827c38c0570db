import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
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

describe('JsonlAuditSink: one writer per file (the lock)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'airlock-audit-lock-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

  /** A child process holding a sink on `path` (stale after 2 s), once it said it holds it. */
  async function holder(path: string): Promise<{ pid: number; kill: (signal: NodeJS.Signals) => Promise<void> }> {
    const script = `
      const { JsonlAuditSink } = await import(process.argv[1]);
      const sink = new JsonlAuditSink(process.argv[2], { lockStaleMs: 2000 });
      sink.write({ type: 'a2a.server.rate_limited', time: new Date().toISOString(), outcome: 'denied', reason: 'client_rate_limit' });
      process.on('SIGTERM', () => { sink.close(); process.exit(0); });
      process.stdout.write('holding\\n');
      setInterval(() => undefined, 1000);
    `;
    const root = fileURLToPath(new URL('../../', import.meta.url));
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        script,
        fileURLToPath(new URL('./jsonl.ts', import.meta.url)),
        path,
      ],
      { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await new Promise<void>((ready, fail) => {
      const timer = setTimeout(() => fail(new Error(`the child did not take the lock: ${stderr}`)), 20_000);
      child.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('holding')) {
          clearTimeout(timer);
          ready();
        }
      });
      child.once('exit', () => fail(new Error(`the child exited: ${stderr}`)));
    });
    const exited = new Promise<void>((done) => child.once('exit', () => done()));
    return {
      pid: child.pid!,
      kill: async (signal) => {
        child.kill(signal);
        await exited;
      },
    };
  }

  it('refuses a second sink on the same file, by any name, naming the file and the holder; free again after close', () => {
    const path = join(dir, 'audit.jsonl');
    const first = new JsonlAuditSink(path);
    first.write(submitted('t-1'));
    const link = join(dir, 'link.jsonl');
    symlinkSync(path, link);
    for (const name of [path, link, join(dir, '.', 'audit.jsonl')]) {
      assertWriteError(() => new JsonlAuditSink(name), { operation: 'open', reason: 'locked' });
      assert.throws(
        () => new JsonlAuditSink(name),
        (error: Error) => error.message.includes(`is in use by this process (pid ${process.pid})`),
      );
    }
    assert.throws(
      () => new JsonlAuditSink(path),
      new RegExp(`audit file ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is in use`),
    );
    first.write(submitted('t-2'));
    first.close();
    assert.equal(existsSync(`${path}.lock`), false, 'the lock is released on close');
    const second = new JsonlAuditSink(path);
    second.write(submitted('t-3'));
    second.close();
    assert.deepEqual(
      rows(path).map((row) => row.seq),
      [1, 2, 3],
    );
  });

  it('refuses while another process holds the file; after SIGKILL on this host, takes its lock over at once', async () => {
    const path = join(dir, 'audit.jsonl');
    const child = await holder(path);
    assertWriteError(() => new JsonlAuditSink(path, { lockStaleMs: 2000 }), { operation: 'open', reason: 'locked' });
    assert.throws(
      () => new JsonlAuditSink(path, { lockStaleMs: 2000 }),
      new RegExp(`another process \\(pid ${child.pid}\\)`),
    );
    assert.equal(readFileSync(`${path}.lock.pid`, 'utf8'), `${child.pid} ${hostname()}\n`);
    await child.kill('SIGKILL');
    // Killed without a chance to release: the lock is still there, but its holder is gone.
    assert.equal(existsSync(`${path}.lock`), true);
    const sink = new JsonlAuditSink(path, { lockStaleMs: 2000 });
    assert.equal(readFileSync(`${path}.lock.pid`, 'utf8'), `${process.pid} ${hostname()}\n`);
    sink.write(submitted('t-after'));
    sink.close();
    assert.deepEqual(
      rows(path).map((row) => row.seq),
      [1, 2],
    );
  });

  it('a lock left by an earlier process with our own pid (a container restarted as pid 1) is taken over at once', () => {
    const path = join(dir, 'audit.jsonl');
    writeFileSync(path, '');
    mkdirSync(`${path}.lock`);
    writeFileSync(`${path}.lock.pid`, `${process.pid} ${hostname()}\n`);
    const sink = new JsonlAuditSink(path);
    // Now it is ours, and a second sink here is refused as held by this process.
    assert.throws(() => new JsonlAuditSink(path), /in use by this process/);
    sink.close();
  });

  it('a lock whose holder cannot be checked from here (another host) is taken over once stale by its mtime', async () => {
    const path = join(dir, 'audit.jsonl');
    const child = await holder(path);
    await child.kill('SIGKILL');
    // As a holder on another machine sharing the disk would have written it.
    writeFileSync(`${path}.lock.pid`, `${child.pid} some-other-host\n`);
    assert.throws(
      () => new JsonlAuditSink(path, { lockStaleMs: 2000 }),
      new RegExp(`another process \\(pid ${child.pid} on some-other-host\\)`),
    );
    const deadline = Date.now() + 10_000;
    let sink: JsonlAuditSink | undefined;
    while (sink === undefined) {
      try {
        sink = new JsonlAuditSink(path, { lockStaleMs: 2000 });
      } catch (error) {
        if (!(error instanceof AuditWriteError) || error.reason !== 'locked' || Date.now() > deadline) throw error;
        await sleep(200);
      }
    }
    const age = Date.now() - statSync(`${path}.lock`).mtimeMs;
    assert.ok(age < 1000, 'the lock is ours now (fresh mtime)');
    sink.write(submitted('t-after'));
    sink.close();
    assert.deepEqual(
      rows(path).map((row) => row.seq),
      [1, 2],
    );
    assert.equal((await verifyAuditFile(path)).ok, true);
  });

  it('a holder that exits normally (SIGTERM, close) frees the file at once', async () => {
    const path = join(dir, 'audit.jsonl');
    const child = await holder(path);
    await child.kill('SIGTERM');
    const sink = new JsonlAuditSink(path);
    sink.close();
  });

  it('a sink that loses its lock refuses every further write', async () => {
    const path = join(dir, 'audit.jsonl');
    const sink = new JsonlAuditSink(path, { lockStaleMs: 2000 });
    sink.write(submitted('t-1'));
    // Removed by hand (or taken over by another process): the next refresh (every 1 s) sees it.
    rmSync(`${path}.lock`, { recursive: true });
    await sleep(1500);
    assertWriteError(() => sink.write(submitted('t-2')), { operation: 'write', reason: 'locked' });
    assert.throws(() => sink.write(submitted('t-3')), /lost the lock on/);
    sink.close();
    assert.equal(rows(path).length, 1);
  });
});
