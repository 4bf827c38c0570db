/**
 * Group commit of the file sink (commit.ts, `groupCommit: true`): one write per event-loop turn,
 * the commit point callers wait on, and what a failed batch leaves behind.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { encodeLine, GENESIS_HEAD } from './chain.js';
import { auditTime, type AuditEvent } from './events.js';
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

function taskIds(path: string): string[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => (JSON.parse(line) as { taskId: string }).taskId);
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('JsonlAuditSink with group commit', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'airlock-audit-commit-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writes the rows of one turn, from concurrent callers, in one write, and only then settles committed()', async () => {
    const path = join(dir, 'audit.jsonl');
    const sink = new JsonlAuditSink(path, { groupCommit: true });
    assert.equal(sink.committed(), undefined, 'nothing pending: no promise to wait on');
    // Fifty "requests" of one turn, each writing after its own chain of microtasks.
    const callers = Array.from({ length: 50 }, async (_, index) => {
      await Promise.resolve();
      sink.write(submitted(`t-${index}`));
      await Promise.resolve();
      return { commit: sink.committed() };
    });
    const commits = (await Promise.all(callers)).map((caller) => caller.commit);
    assert.equal(statSync(path).size, 0, 'nothing is written before the end of the turn');
    assert.ok(
      commits.every((commit) => commit === commits[0]),
      'one promise per batch, not per row',
    );
    await commits[0];
    assert.deepEqual(sink.commitStats, { batches: 1, rows: 50 });
    assert.equal(taskIds(path).length, 50);
    assert.equal(sink.committed(), undefined);

    // The next turn is the next batch, continuing the chain.
    sink.write(submitted('t-50'));
    await nextTurn();
    sink.write(submitted('t-51'));
    await sink.committed();
    assert.deepEqual(sink.commitStats, { batches: 3, rows: 52 });
    sink.close();
    const verified = await verifyAuditFile(path);
    assert.deepEqual(verified.ok && verified.rows, 52);
    assert.deepEqual(
      taskIds(path),
      Array.from({ length: 52 }, (_, index) => `t-${index}`),
    );
  });

  it('close() writes the open batch and settles its waiters', async () => {
    const path = join(dir, 'audit.jsonl');
    const sink = new JsonlAuditSink(path, { groupCommit: true });
    sink.write(submitted('t-1'));
    sink.write(submitted('t-2'));
    const commit = sink.committed();
    sink.close();
    await commit;
    assert.deepEqual(taskIds(path), ['t-1', 't-2']);
    assert.throws(() => sink.write(submitted('t-3')), AuditWriteError);
  });

  it(
    'a batch that cannot be written rejects its waiters, is reported, and the head goes back',
    { skip: !existsSync('/dev/full') },
    async () => {
      const reported: AuditWriteError[] = [];
      const lost: string[][] = [];
      const sink = new JsonlAuditSink('/dev/full', {
        groupCommit: true,
        onCommitError: (error, lines) => {
          reported.push(error);
          lost.push([...lines]);
        },
      });
      const first = submitted('t-1');
      sink.write(first);
      assert.equal(sink.head.seq, 1, 'chained at once');
      await assert.rejects(sink.committed()!, (error: unknown) => {
        assert.ok(error instanceof AuditWriteError);
        assert.equal(error.errno, 'ENOSPC');
        return true;
      });
      assert.equal(reported.length, 1);
      // The lost rows are reported as the lines they were: whole, chained, without newlines.
      assert.deepEqual(lost[0], [encodeLine(GENESIS_HEAD, first).line]);
      assert.equal(sink.head.seq, 0, 'the row that never reached the file is not in the chain');
      // Nobody waiting: still no unhandled rejection, still reported.
      sink.write(submitted('t-2'));
      await nextTurn();
      assert.equal(reported.length, 2);
      sink.close();
    },
  );

  it(
    'a batch cut short (file size limit) is cut back off the file, and the chain goes on from the last written row',
    { skip: process.platform !== 'linux' },
    async () => {
      const path = join(dir, 'limited.jsonl');
      // Turn 1: two rows (< 1 KiB). Turn 2: ten rows, over the 1 KiB limit: EFBIG after a part.
      // Turn 3: one row, which fits again once the failed batch is gone.
      // SIGXFSZ comes with EFBIG: handled, so that the process lives on to the third batch.
      const script = `
      process.on('SIGXFSZ', () => {});
      const { JsonlAuditSink } = await import(process.argv[1]);
      const sink = new JsonlAuditSink(process.argv[2], { groupCommit: true });
      const row = (taskId) => ({ type: 'a2a.task.submitted', time: new Date().toISOString(), outcome: 'ok', client: 'c', agent: 'a', taskId, contextId: 'x', inputChars: 1 });
      const outcome = [];
      sink.write(row('t-1')); sink.write(row('t-2'));
      await sink.committed().then(() => outcome.push('ok'), (e) => outcome.push(e.errno));
      for (let i = 0; i < 10; i++) sink.write(row('lost-' + i));
      await sink.committed().then(() => outcome.push('ok'), (e) => outcome.push(e.errno));
      sink.write(row('t-3'));
      await sink.committed().then(() => outcome.push('ok'), (e) => outcome.push(e.errno));
      sink.close();
      process.stdout.write(JSON.stringify(outcome));
    `;
      const root = fileURLToPath(new URL('../../', import.meta.url));
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
      assert.equal(child.status, 0, `${child.signal} ${child.stderr}`);
      assert.deepEqual(JSON.parse(child.stdout), ['ok', 'EFBIG', 'ok']);
      assert.deepEqual(taskIds(path), ['t-1', 't-2', 't-3']);
      const verified = await verifyAuditFile(path);
      assert.ok(verified.ok, JSON.stringify(verified));
    },
  );
});
