/**
 * The approval rules every store holds (memory, and the record store over SQLite and
 * PostgreSQL), then what only the durable ones do: outlive the process (a store opened again on
 * the same file or schema) and stay exact across replicas (two stores on one schema racing to
 * decide and to use one action: exactly one wins each time).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { PostgresTaskStore } from '../tasks/stores/postgres.js';
import { SqliteTaskStore } from '../tasks/stores/sqlite.js';
import type { DecisionActor, Decider } from './decider.js';
import { MemoryApprovalStore } from './memory-store.js';
import { RecordApprovalStore } from './records-store.js';
import { isApprovalError, type ApprovalErrorCode, type ApprovalStore, type PendingActionInput } from './store.js';

const POSTGRES_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const NOW = Date.parse('2026-06-01T00:00:00.000Z');
const TTL = 15 * 60_000;
const alice: DecisionActor = { kind: 'user', userId: 'person:alice' };
const mallory: DecisionActor = { kind: 'user', userId: 'person:mallory' };
const aliceDecides: Decider = { kind: 'user', userId: 'person:alice', via: 'client_owner' };

function input(overrides: Partial<PendingActionInput> = {}): PendingActionInput {
  return {
    taskId: 'task-1',
    owner: 'client:app::app@ops',
    decider: aliceDecides,
    tool: 'fs.write_file',
    args: { path: 'notes.txt', content: '[secret redacted]' },
    level: 'L4',
    expiresAt: NOW + TTL,
    origin: {
      agent: 'ops',
      client: 'app',
      contextId: 'ctx-1',
      caller: { clientId: 'app', kind: 'client' },
      request: 'write the notes',
    },
    kept: { args: { path: 'notes.txt', content: 'sk-live-1234' }, continuation: { round: 2, calls: ['c1'] } },
    ...overrides,
  };
}

async function refusedWith(run: () => unknown, code: ApprovalErrorCode): Promise<void> {
  await assert.rejects((async () => run())(), (error: unknown) => {
    assert.ok(isApprovalError(error, code), `expected ${code}, got ${String(error)}`);
    return true;
  });
}

interface Opened {
  /** Two stores on the same data (a second process / replica); the memory store has one. */
  readonly stores: readonly [ApprovalStore, ApprovalStore?];
  readonly reopen?: () => Promise<ApprovalStore>;
  readonly close: () => Promise<void>;
}

type Open = (limits?: { maxActions?: number; maxPendingPerPrincipal?: number }) => Promise<Opened>;

const openMemory: Open = async (limits = {}) => ({
  stores: [new MemoryApprovalStore(limits)],
  close: async () => undefined,
});

const openSqlite: Open = async (limits = {}) => {
  const dir = mkdtempSync(join(tmpdir(), 'airlock-approvals-'));
  const path = join(dir, 'airlock.db');
  const opened: SqliteTaskStore[] = [await SqliteTaskStore.open({ path })];
  const storeOf = (tasks: SqliteTaskStore): ApprovalStore => new RecordApprovalStore(tasks.approvals, limits);
  return {
    stores: [storeOf(opened[0] as SqliteTaskStore)],
    reopen: async () => {
      await opened[0]?.close();
      const again = await SqliteTaskStore.open({ path });
      opened.push(again);
      return storeOf(again);
    },
    close: async () => {
      for (const store of opened) await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
};

const openPostgres: Open = async (limits = {}) => {
  const schema = `airlock_test_${Math.random().toString(16).slice(2, 10)}`;
  const open = (): Promise<PostgresTaskStore> => PostgresTaskStore.open({ url: POSTGRES_URL, schema, poolSize: 4 });
  const opened = [await open(), await open()];
  const storeOf = (tasks: PostgresTaskStore): ApprovalStore => new RecordApprovalStore(tasks.approvals, limits);
  return {
    stores: [storeOf(opened[0] as PostgresTaskStore), storeOf(opened[1] as PostgresTaskStore)],
    reopen: async () => {
      await opened[0]?.close();
      const again = await open();
      opened.push(again);
      return storeOf(again);
    },
    close: async () => {
      for (const store of opened) await store.close().catch(() => undefined);
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    },
  };
};

const closers: (() => Promise<void>)[] = [];
after(async () => {
  for (const close of closers) await close();
});

async function opened(open: Open, limits?: Parameters<Open>[0]): Promise<Opened> {
  const result = await open(limits);
  closers.push(result.close);
  return result;
}

for (const [name, open] of [
  ['memory', openMemory],
  ['SQLite records', openSqlite],
  ['PostgreSQL records', openPostgres],
] as const) {
  describe(`approval store rules: ${name}`, () => {
    it('creates a pending action with its origin; lists it for its person only; owner-scoped reads', async () => {
      const { stores } = await opened(open);
      const [store] = stores;
      const action = await store.create(input(), NOW);
      assert.match(action.actionId, /^[A-Za-z0-9_-]{43}$/);
      assert.equal(action.state, 'pending');
      assert.deepEqual(action.origin, input().origin);
      assert.deepEqual(action.args, input().args);
      assert.deepEqual(
        (await store.listForDecider('person:alice', NOW)).map((a) => a.actionId),
        [action.actionId],
      );
      assert.deepEqual(await store.listForDecider('person:mallory', NOW), []);
      assert.equal((await store.get('client:other::other@ops', action.actionId)) === undefined, true);
      assert.equal((await store.get(action.owner, action.actionId))?.actionId, action.actionId);
      assert.equal((await store.findByTask(action.owner, 'task-1'))?.actionId, action.actionId);
      assert.equal(await store.findByTask('client:other::other@ops', 'task-1'), undefined);
    });

    it('decides once, by its person, before it expires; uses an approval once, by its task', async () => {
      const { stores } = await opened(open);
      const [store] = stores;
      const action = await store.create(input(), NOW);
      await refusedWith(() => store.consume(action.actionId, 'task-1', NOW + 1), 'not_approved');
      await refusedWith(() => store.decide(action.actionId, mallory, 'approve', NOW + 1), 'not_decider');
      await refusedWith(() => store.decide('no-such-action', alice, 'approve', NOW + 1), 'not_found');
      const approved = await store.decide(action.actionId, alice, 'approve', NOW + 1);
      assert.equal(approved.state, 'approved');
      assert.equal(approved.decidedBy, 'person:alice');
      await refusedWith(() => store.decide(action.actionId, alice, 'deny', NOW + 2), 'already_decided');
      await refusedWith(() => store.consume(action.actionId, 'task-2', NOW + 2), 'not_found');
      const consumed = await store.consume(action.actionId, 'task-1', NOW + 2);
      assert.equal(consumed.state, 'consumed');
      await refusedWith(() => store.consume(action.actionId, 'task-1', NOW + 3), 'already_consumed');
    });

    it('refuses a decision or a use after the action expired, and a denied action is never used', async () => {
      const { stores } = await opened(open);
      const [store] = stores;
      const late = await store.create(input(), NOW);
      await refusedWith(() => store.decide(late.actionId, alice, 'approve', NOW + TTL), 'expired');
      const denied = await store.create(input({ taskId: 'task-2' }), NOW);
      await store.decide(denied.actionId, alice, 'deny', NOW + 1);
      await refusedWith(() => store.consume(denied.actionId, 'task-2', NOW + 2), 'denied');
      const unused = await store.create(input({ taskId: 'task-3' }), NOW);
      await store.decide(unused.actionId, alice, 'approve', NOW + 1);
      await refusedWith(() => store.consume(unused.actionId, 'task-3', NOW + TTL), 'expired');
    });

    it('hands back what it kept hidden exactly once', async () => {
      const { stores } = await opened(open);
      const [store] = stores;
      const action = await store.create(input(), NOW);
      assert.deepEqual(await store.take(action.actionId), input().kept);
      assert.equal(await store.take(action.actionId), undefined);
    });

    it('holds one open action per task, the principal quota and the total; withdrawing frees room', async () => {
      const { stores } = await opened(open, { maxActions: 3, maxPendingPerPrincipal: 2 });
      const [store] = stores;
      const first = await store.create(input(), NOW);
      await refusedWith(() => store.create(input(), NOW), 'task_has_open_action');
      await store.create(input({ taskId: 'task-2', owner: 'client:app::app@other' }), NOW);
      await refusedWith(() => store.create(input({ taskId: 'task-3' }), NOW), 'principal_quota');
      const other = await store.create(input({ taskId: 'task-1', owner: 'client:b::b@ops' }), NOW);
      await refusedWith(() => store.create(input({ taskId: 'task-9', owner: 'client:c::c@ops' }), NOW), 'store_full');
      assert.equal(await store.withdraw(first.owner, 'task-1', NOW), true);
      assert.equal(await store.withdraw(first.owner, 'task-1', NOW), false);
      await store.create(input({ taskId: 'task-3' }), NOW);
      assert.equal((await store.findByTask(other.owner, 'task-1'))?.actionId, other.actionId);
    });

    it("replaces a task's finished action with its next one", async () => {
      const { stores } = await opened(open);
      const [store] = stores;
      const first = await store.create(input(), NOW);
      await store.decide(first.actionId, alice, 'deny', NOW);
      const next = await store.create(input(), NOW + 1);
      assert.equal((await store.findByTask(first.owner, 'task-1'))?.actionId, next.actionId);
      assert.equal(await store.find(first.actionId), undefined);
    });

    it('lists the decided actions not used yet (what a restart resumes), oldest decision first', async () => {
      const { stores } = await opened(open);
      const [store] = stores;
      const a = await store.create(input({ taskId: 'a' }), NOW);
      const b = await store.create(input({ taskId: 'b' }), NOW);
      const c = await store.create(input({ taskId: 'c' }), NOW);
      await store.decide(b.actionId, alice, 'approve', NOW + 1);
      await store.decide(a.actionId, alice, 'deny', NOW + 2);
      await store.decide(c.actionId, alice, 'approve', NOW + 3);
      await store.consume(c.actionId, 'c', NOW + 4);
      assert.deepEqual(
        (await store.decidedWaiting(NOW + 5, 10)).map((action) => action.taskId),
        ['b', 'a'],
      );
      assert.deepEqual(await store.decidedWaiting(NOW + TTL, 10), []);
      assert.ok((await store.sweep(NOW + TTL)) >= 3);
      assert.equal(await store.find(b.actionId), undefined);
    });

    if (open !== openMemory) {
      it('outlives the process: a store opened again lists, decides and uses what the first recorded', async () => {
        const { stores, reopen } = await opened(open);
        const action = await stores[0].create(input(), NOW);
        const again = await (reopen as () => Promise<ApprovalStore>)();
        assert.deepEqual(
          (await again.listForDecider('person:alice', NOW)).map((a) => a.actionId),
          [action.actionId],
        );
        await again.decide(action.actionId, alice, 'approve', NOW + 1);
        assert.deepEqual(await again.take(action.actionId), input().kept);
        assert.equal((await again.consume(action.actionId, 'task-1', NOW + 2)).state, 'consumed');
      });
    }

    if (open === openPostgres) {
      it('two replicas racing: exactly one decision and exactly one use win', async () => {
        const { stores } = await opened(open);
        const [a, b] = stores as [ApprovalStore, ApprovalStore];
        for (let round = 0; round < 20; round++) {
          const action = await a.create(input({ taskId: `race-${round}` }), NOW);
          const decisions = await Promise.allSettled([
            a.decide(action.actionId, alice, 'approve', NOW + 1),
            b.decide(action.actionId, alice, 'deny', NOW + 1),
          ]);
          assert.equal(decisions.filter((result) => result.status === 'fulfilled').length, 1);
          const lost = decisions.find((result) => result.status === 'rejected');
          assert.ok(isApprovalError(lost?.reason, 'already_decided'), String(lost?.reason));
          if ((await a.find(action.actionId))?.state !== 'approved') continue;
          const uses = await Promise.allSettled([
            a.consume(action.actionId, `race-${round}`, NOW + 2),
            b.consume(action.actionId, `race-${round}`, NOW + 2),
          ]);
          assert.equal(uses.filter((result) => result.status === 'fulfilled').length, 1);
          const takes = await Promise.all([a.take(action.actionId), b.take(action.actionId)]);
          assert.equal(takes.filter((kept) => kept !== undefined).length, 1);
        }
      });

      it('two replicas creating for one principal at once hold its quota exactly', async () => {
        const { stores } = await opened(open, { maxPendingPerPrincipal: 3 });
        const [a, b] = stores as [ApprovalStore, ApprovalStore];
        const results = await Promise.allSettled(
          Array.from({ length: 10 }, async (_, index) =>
            (index % 2 === 0 ? a : b).create(input({ taskId: `quota-${index}` }), NOW),
          ),
        );
        assert.equal(results.filter((result) => result.status === 'fulfilled').length, 3);
      });
    }
  });
}
