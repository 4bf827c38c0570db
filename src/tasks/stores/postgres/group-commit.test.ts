/**
 * The PostgreSQL group commit's bookkeeping for the shares, with an injected writer (no
 * database): admitted new tasks count as unwritten until their batch is over, committed or
 * failed, and a share count runs with no batch in flight.
 *
 * @example
 * ```sh
 * node --import tsx --test src/tasks/stores/postgres/group-commit.test.ts
 * ```
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GroupCommit, type PendingRow } from './group-commit.js';

function row(id: string, owner = 'client:a@echo'): PendingRow {
  return { id, owner, contextId: 'c', state: 'working', terminal: false, statusMs: 1, body: '{}' };
}

/** A writer whose batches wait until released, failing when told to. */
function heldWriter(): {
  write: (rows: readonly PendingRow[]) => Promise<ReadonlySet<string>>;
  batches: PendingRow[][];
  release: (fail?: boolean) => void;
} {
  const batches: PendingRow[][] = [];
  const waiting: Array<(fail: boolean) => void> = [];
  return {
    batches,
    write: (rows) =>
      new Promise((resolve, reject) => {
        batches.push([...rows]);
        waiting.push((fail) => (fail ? reject(new Error('write failed')) : resolve(new Set(rows.map((r) => r.id)))));
      }),
    release: (fail = false) => waiting.shift()?.(fail),
  };
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('GroupCommit and the shares', () => {
  it('counts admitted new tasks as unwritten until their batch is over, committed or failed', async () => {
    const writer = heldWriter();
    const commits = new GroupCommit(writer.write, 'test');
    const unwritten = (principal: string): Promise<number> => commits.exclusive(principal, async (n) => n);
    commits.admitted('client:a');
    const first = commits.enqueue(row('t1'), true);
    commits.admitted('client:a');
    const second = commits.enqueue(row('t2'), true);
    const update = commits.enqueue(row('t1'));
    await turn();
    assert.equal(writer.batches.length, 1, 'one batch in flight');
    writer.release();
    await Promise.all([first, second, update]);
    assert.equal(await unwritten('client:a'), 0, 'written: no longer counted');

    commits.admitted('client:a');
    const failed = commits.enqueue(row('t3'), true);
    await turn();
    writer.release(true);
    await assert.rejects(failed, /write failed/);
    assert.equal(await unwritten('client:a'), 0, 'a failed batch leaves nothing counted');
  });

  it('a count runs with no batch in flight, and no batch starts until it ends', async () => {
    const writer = heldWriter();
    const commits = new GroupCommit(writer.write, 'test');
    commits.admitted('client:a');
    const inFlight = commits.enqueue(row('t1'), true);
    await turn();
    let counted: number | undefined;
    let endCount = (): void => undefined;
    const count = commits.exclusive('client:a', async (n) => {
      counted = n;
      await new Promise<void>((resolve) => (endCount = resolve));
    });
    await turn();
    assert.equal(counted, undefined, 'waits for the batch in flight');
    writer.release();
    await inFlight;
    await turn();
    assert.equal(counted, 0, 'then sees the written task in the table only');
    commits.admitted('client:a');
    const queued = commits.enqueue(row('t2'), true);
    await turn();
    assert.equal(writer.batches.length, 1, 'no batch while the count runs');
    endCount();
    await count;
    await turn();
    assert.equal(writer.batches.length, 2, 'the queue goes out after it');
    writer.release();
    await queued;
  });

  it('a batch already scheduled when a count starts waits for the count too', async () => {
    const writer = heldWriter();
    const commits = new GroupCommit(writer.write, 'test');
    commits.admitted('client:a');
    const queued = commits.enqueue(row('t1'), true); // its flush is scheduled for the next turn
    let endCount = (): void => undefined;
    let counted: number | undefined;
    const count = commits.exclusive('client:a', async (n) => {
      counted = n;
      await new Promise<void>((resolve) => (endCount = resolve));
    });
    await turn();
    await turn();
    assert.equal(counted, 1, 'the queued new task is counted, not yet in the table');
    assert.equal(writer.batches.length, 0, 'and is not written while the count reads');
    endCount();
    await count;
    await turn();
    assert.equal(writer.batches.length, 1);
    writer.release();
    await queued;
  });

  it('writes up to 500 rows a batch, oldest first, and a put queued during a batch goes in the next', async () => {
    const writer = heldWriter();
    const commits = new GroupCommit(writer.write, 'test');
    const puts = Array.from({ length: 501 }, (_, index) => commits.enqueue(row(`t${index}`)));
    await turn();
    assert.deepEqual(
      writer.batches.map((batch) => batch.length),
      [500],
    );
    assert.equal(writer.batches[0]?.[0]?.id, 't0');
    const late = commits.enqueue(row('late'));
    writer.release();
    await Promise.all(puts.slice(0, 500));
    await turn();
    assert.deepEqual(
      writer.batches[1]?.map((r) => r.id),
      ['t500', 'late'],
    );
    writer.release();
    await Promise.all([puts[500], late]);
    // The whole queue went into the next batch: the one after it starts empty.
    const again = commits.enqueue(row('t0'));
    await turn();
    assert.deepEqual(
      writer.batches[2]?.map((r) => r.id),
      ['t0'],
    );
    writer.release();
    await again;
  });
});
