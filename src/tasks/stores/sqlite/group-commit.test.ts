/**
 * The SQLite group commit with an injected writer: a turn's evictions run first inside its
 * batch's transaction; when the batch fails they run alone, and one that fails there is
 * reported, so the shares count that principal again rather than trust a bound that is too low.
 *
 * @example
 * ```sh
 * node --import tsx --test src/tasks/stores/sqlite/group-commit.test.ts
 * ```
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SqliteGroupCommit, type SqliteRowWriter } from './group-commit.js';

type Row = Record<string, string | number>;

/**
 * A writer that logs what it is asked to do; `failBatch` makes every batch throw, `refuse` names
 * rows written as another owner's (0 changes), `failAlone` rows that fail when written alone.
 */
function writer(options: { failBatch?: boolean; open?: boolean; refuse?: string[]; failAlone?: string[] } = {}) {
  const log: string[] = [];
  const lost: string[] = [];
  const finished: string[] = [];
  const createdLost: string[] = [];
  const rows: SqliteRowWriter = {
    isOpen: () => options.open ?? true,
    writeBatch: (params: Row[], first?: () => void) => {
      log.push('begin');
      first?.();
      if (options.failBatch === true) {
        log.push('rollback');
        throw new Error('batch failed');
      }
      for (const row of params) log.push(`write ${String(row.id)}`);
      log.push('commit');
      return params.map((row) => (options.refuse?.includes(String(row.id)) ? 0 : 1));
    },
    writeOne: (row: Row) => {
      if (options.failAlone?.includes(String(row.id))) throw new Error('disk full');
      log.push(`alone ${String(row.id)}`);
      return 1;
    },
    changed: () => undefined,
    evicted: () => log.push('evicted'),
    evictionLost: (principal) => lost.push(principal),
    createdFinished: (principal) => finished.push(principal),
    createdLost: (principal) => createdLost.push(principal),
  };
  return { rows, log, lost, finished, createdLost };
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('SqliteGroupCommit: evictions', () => {
  it('runs the turn’s evictions first, inside its batch, and tells the store once', async () => {
    const { rows, log } = writer();
    const commits = new SqliteGroupCommit(rows);
    commits.evict('alice', 3, () => (log.push('evict alice'), 3));
    const put = commits.enqueue('alice@echo', { id: 't1', created: 1 });
    assert.equal(commits.evictingPending('alice'), 3);
    assert.equal(commits.createdPending('alice'), 1);
    await put;
    assert.deepEqual(log, ['begin', 'evict alice', 'write t1', 'commit', 'evicted']);
    assert.equal(commits.evictingPending('alice'), 0);
  });

  it('an eviction alone is written at the end of the turn too', async () => {
    const { rows, log } = writer();
    const commits = new SqliteGroupCommit(rows);
    commits.evict('alice', 1, () => (log.push('evict alice'), 1));
    await turn();
    assert.deepEqual(log, ['begin', 'evict alice', 'commit', 'evicted']);
  });

  it('a failed batch: each eviction alone, the puts one by one; an eviction that fails is reported', async () => {
    const { rows, log, lost } = writer({ failBatch: true });
    const commits = new SqliteGroupCommit(rows);
    let attempts = 0;
    commits.evict('alice', 1, () => (log.push('evict alice'), 1));
    commits.evict('bob', 1, () => {
      attempts += 1;
      if (attempts > 1) throw new Error('disk full');
      log.push('evict bob');
      return 1;
    });
    await commits.enqueue('alice@echo', { id: 't1', created: 1 });
    assert.deepEqual(log, ['begin', 'evict alice', 'evict bob', 'rollback', 'evict alice', 'evicted', 'alone t1']);
    assert.deepEqual(lost, ['bob']);
  });

  it('a closed store: the puts are refused and every eviction reported lost', async () => {
    const { rows, lost } = writer({ open: false });
    const commits = new SqliteGroupCommit(rows);
    commits.evict('alice', 2, () => 2);
    await assert.rejects(commits.enqueue('alice@echo', { id: 't1', created: 1 }), /closed/);
    assert.deepEqual(lost, ['alice']);
  });
});

describe('SqliteGroupCommit: what the shares hear of new tasks', () => {
  it('a new task written finished is reported for its principal; a rewrite or an unfinished one is not', async () => {
    const { rows, finished, createdLost } = writer();
    const commits = new SqliteGroupCommit(rows);
    await Promise.all([
      commits.enqueue('alice@echo', { id: 't1', created: 1, terminal: 1 }),
      commits.enqueue('alice@echo', { id: 't2', created: 1, terminal: 0 }),
      commits.enqueue('bob@echo', { id: 't3', terminal: 1 }),
    ]);
    assert.deepEqual(finished, ['alice']);
    assert.deepEqual(createdLost, []);
  });

  it('a new task that is not written is reported lost: another owner’s id, a failed row, a closed store', async () => {
    const refused = writer({ refuse: ['t1'] });
    await assert.rejects(
      new SqliteGroupCommit(refused.rows).enqueue('alice@echo', { id: 't1', created: 1, terminal: 1 }),
    );
    assert.deepEqual([refused.createdLost, refused.finished], [['alice'], []]);

    const failed = writer({ failBatch: true, failAlone: ['t2'] });
    await assert.rejects(new SqliteGroupCommit(failed.rows).enqueue('bob@echo', { id: 't2', created: 1, terminal: 1 }));
    assert.deepEqual([failed.createdLost, failed.finished], [['bob'], []]);

    const closed = writer({ open: false });
    await assert.rejects(new SqliteGroupCommit(closed.rows).enqueue('carol@echo', { id: 't3', created: 1 }));
    assert.deepEqual(closed.createdLost, ['carol']);
  });
});

describe('SqliteGroupCommit: how long a batch stays open', () => {
  it('a put alone is written at the end of its turn', async () => {
    const { rows, log } = writer();
    const commits = new SqliteGroupCommit(rows);
    void commits.enqueue('alice@echo', { id: 't1' });
    await turn();
    assert.deepEqual(log, ['begin', 'write t1', 'commit']);
  });

  it('a turn that queued two puts waits a turn longer and takes in the puts of that turn: one commit', async () => {
    const { rows, log } = writer();
    const commits = new SqliteGroupCommit(rows);
    const first = [commits.enqueue('alice@echo', { id: 't1' }), commits.enqueue('bob@echo', { id: 't2' })];
    await turn();
    assert.deepEqual(log, [], 'still open after its first turn');
    const late = commits.enqueue('carol@echo', { id: 't3' });
    await Promise.all([...first, late]);
    assert.deepEqual(log, ['begin', 'write t1', 'write t2', 'write t3', 'commit']);
  });

  it('flush (the store closing) writes an open batch at once', () => {
    const { rows, log } = writer();
    const commits = new SqliteGroupCommit(rows);
    void commits.enqueue('alice@echo', { id: 't1' });
    void commits.enqueue('bob@echo', { id: 't2' });
    commits.flush();
    assert.deepEqual(log, ['begin', 'write t1', 'write t2', 'commit']);
  });
});
