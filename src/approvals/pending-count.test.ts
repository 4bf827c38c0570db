/**
 * `countPending`: the approval stores' count of actions awaiting a person, by agent, behind
 * `airlock_approvals_pending`. The durable stores answer from their rows, so the count holds
 * across a reopen (a restart); decided and expired actions are not pending.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { dropSchema, postgresSkip, POSTGRES_URL, uniqueName } from '../../test/helpers/backing-services.js';
import { PostgresTaskStore } from '../tasks/stores/postgres.js';
import { SqliteTaskStore } from '../tasks/stores/sqlite.js';
import { MemoryApprovalStore } from './memory-store.js';
import { RecordApprovalStore } from './records-store.js';
import type { ApprovalStore, PendingActionInput } from './store.js';

const NOW = Date.parse('2026-06-01T00:00:00.000Z');
const pgSkip = await postgresSkip();

function input(taskId: string, agent: string | undefined, expiresAt = NOW + 60_000): PendingActionInput {
  return {
    taskId,
    owner: `client:app::${taskId}`,
    decider: { kind: 'user', userId: 'person:alice', via: 'client_owner' },
    tool: 'fs.write_file',
    args: { path: 'notes.txt' },
    level: 'L4',
    expiresAt,
    ...(agent !== undefined && {
      origin: { agent, client: 'app', contextId: 'c', caller: { clientId: 'app', kind: 'client' as const } },
    }),
  };
}

/** Four actions: ops ×2 (one then approved), ops expiring, billing, one with no origin. */
async function fill(store: ApprovalStore): Promise<void> {
  await store.create(input('t-1', 'ops'), NOW);
  const decided = await store.create(input('t-2', 'ops'), NOW);
  await store.decide(decided.actionId, { kind: 'user', userId: 'person:alice' }, 'approve', NOW + 1);
  await store.create(input('t-3', 'ops', NOW + 5), NOW);
  await store.create(input('t-4', 'billing'), NOW);
  await store.create(input('t-5', undefined), NOW);
}

const EXPECTED = new Map([
  ['ops', 1],
  ['billing', 1],
  ['', 1],
]);

function sorted(counts: ReadonlyMap<string, number> | undefined): [string, number][] {
  return [...(counts ?? [])].sort(([a], [b]) => a.localeCompare(b));
}

describe('approval stores count pending actions by agent', () => {
  it('memory', async () => {
    const store = new MemoryApprovalStore();
    await fill(store);
    assert.deepEqual(sorted(await store.countPending(NOW + 10)), sorted(EXPECTED));
  });

  it('SQLite, also after a reopen', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'airlock-pending-'));
    const path = join(dir, 'airlock.db');
    try {
      const first = await SqliteTaskStore.open({ path });
      await fill(new RecordApprovalStore(first.approvals));
      await first.close();
      const again = await SqliteTaskStore.open({ path });
      assert.deepEqual(sorted(await new RecordApprovalStore(again.approvals).countPending(NOW + 10)), sorted(EXPECTED));
      await again.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('PostgreSQL, seen from a second store on the same schema', { skip: pgSkip }, async () => {
    const schema = uniqueName('airlock_pending');
    const a = await PostgresTaskStore.open({ url: POSTGRES_URL, schema, poolSize: 2 });
    const b = await PostgresTaskStore.open({ url: POSTGRES_URL, schema, poolSize: 2 });
    try {
      await fill(new RecordApprovalStore(a.approvals));
      assert.deepEqual(sorted(await new RecordApprovalStore(b.approvals).countPending(NOW + 10)), sorted(EXPECTED));
    } finally {
      await a.close();
      await b.close();
      await dropSchema(schema);
    }
  });
});
