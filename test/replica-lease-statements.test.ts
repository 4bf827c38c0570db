/**
 * Turn leases in PostgreSQL (`tasks/stores/postgres/leases.ts`), on a real server, each suite in
 * its own schema (dropped after): take, renew (one statement, reporting leases no longer held),
 * release (only the holder's), and the sweep: only lapsed leases, each claimed once however many
 * sweepers race, a claimed lease not lapsed for the others, a sweeper that dies leaving its claim
 * to lapse again.
 *
 * @example
 * ```sh
 * node --import tsx --test test/replica-lease-statements.test.ts
 * ```
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PostgresTaskStore } from '../src/tasks/stores/postgres.js';
import type { TurnLeases } from '../src/tasks/stores/leases.js';
import { dropSchema, postgresSkip, POSTGRES_URL, uniqueName, withPostgres } from './helpers/backing-services.js';

const pgSkip = await postgresSkip();

describe('turn lease statements (PostgreSQL)', { skip: pgSkip }, () => {
  const schema = uniqueName('airlock_test');
  let store: PostgresTaskStore;
  let leases: TurnLeases;
  /** The database's clock, plus `ms`: sweeps judged at a chosen moment. */
  const dbNowPlus = async (ms: number): Promise<Date> =>
    withPostgres(async (client) => {
      const result = await client.query<{ now: Date }>('SELECT now() AS now');
      return new Date(result.rows[0]!.now.getTime() + ms);
    });
  const rows = async (): Promise<{ task_id: string; replica_id: string }[]> =>
    withPostgres(async (client) => {
      const result = await client.query<{ task_id: string; replica_id: string }>(
        `SELECT task_id, replica_id FROM "${schema}".turn_leases ORDER BY task_id`,
      );
      return result.rows;
    });

  before(async () => {
    store = await PostgresTaskStore.open({ url: POSTGRES_URL, schema, poolSize: 8 });
    leases = store.leases;
  });
  after(async () => {
    await store?.close();
    await dropSchema(schema);
  });

  it('takes, renews in one statement, and reports the leases no longer held', async () => {
    await leases.take('t-renew-1', 'o1', 'r-a', 60_000);
    await leases.take('t-renew-2', 'o2', 'r-a', 60_000);
    // A second take hands the lease over (a later turn of the task runs elsewhere).
    await leases.take('t-renew-2', 'o2', 'r-b', 60_000);
    const lost = await leases.renew('r-a', ['t-renew-1', 't-renew-2', 't-never'], 60_000);
    assert.deepEqual(lost, ['t-renew-2', 't-never']);
    assert.deepEqual(await leases.renew('r-a', [], 60_000), []);
    await leases.release('t-renew-1', 'r-a');
    await leases.release('t-renew-2', 'r-b');
  });

  it('release drops only the holder’s lease', async () => {
    await leases.take('t-release', 'o', 'r-a', 60_000);
    await leases.release('t-release', 'r-b');
    assert.deepEqual(
      (await rows()).filter((row) => row.task_id === 't-release'),
      [{ task_id: 't-release', replica_id: 'r-a' }],
    );
    await leases.release('t-release', 'r-a');
    assert.equal((await rows()).filter((row) => row.task_id === 't-release').length, 0);
  });

  it('sweeps only lapsed leases, hands them to the sweeper, and a renewal keeps a lease alive', async () => {
    await leases.take('t-short', 'owner-short', 'r-dead', 100);
    await leases.take('t-long', 'owner-long', 'r-live', 60_000);
    await leases.take('t-renewed', 'owner-renewed', 'r-live', 100);
    assert.deepEqual(await leases.renew('r-live', ['t-renewed'], 60_000), []);
    const at = await dbNowPlus(1_000);
    const claimed = await leases.sweepLapsed('r-sweeper', 60_000, 100, at);
    assert.deepEqual(claimed, [{ taskId: 't-short', owner: 'owner-short', replicaId: 'r-dead' }]);
    // Claimed: now the sweeper's, and not lapsed for anyone else at that moment.
    assert.deepEqual(await leases.sweepLapsed('r-other', 60_000, 100, at), []);
    assert.deepEqual(
      (await rows()).filter((row) => row.task_id === 't-short'),
      [{ task_id: 't-short', replica_id: 'r-sweeper' }],
    );
    // The dead replica's renewal (it was only slow) finds it claimed: reported lost.
    assert.deepEqual(await leases.renew('r-dead', ['t-short'], 60_000), ['t-short']);
    // Judged by the database's clock without `now`: nothing has lapsed.
    assert.deepEqual(await leases.sweepLapsed('r-other', 60_000, 100), []);
    for (const [id, holder] of [
      ['t-short', 'r-sweeper'],
      ['t-long', 'r-live'],
      ['t-renewed', 'r-live'],
    ] as const) {
      await leases.release(id, holder);
    }
  });

  it('a sweeper that dies leaves its claim to lapse again for another', async () => {
    await leases.take('t-claimed', 'o', 'r-dead', 100);
    const first = await leases.sweepLapsed('r-sweeper-1', 500, 100, await dbNowPlus(1_000));
    assert.deepEqual(
      first.map((lease) => lease.taskId),
      ['t-claimed'],
    );
    // r-sweeper-1 died before settling it: its claim lapses too.
    const again = await leases.sweepLapsed('r-sweeper-2', 60_000, 100, await dbNowPlus(5_000));
    assert.deepEqual(again, [{ taskId: 't-claimed', owner: 'o', replicaId: 'r-sweeper-1' }]);
    await leases.release('t-claimed', 'r-sweeper-2');
  });

  it('sweepers racing claim each lapsed lease exactly once', async () => {
    const ids = Array.from({ length: 60 }, (_, index) => `t-race-${String(index).padStart(2, '0')}`);
    await Promise.all(ids.map((id) => leases.take(id, `owner-${id}`, 'r-dead', 100)));
    const at = await dbNowPlus(1_000);
    // Eight sweepers at once, each claiming small batches until nothing is left.
    const sweeper = async (name: string): Promise<string[]> => {
      const mine: string[] = [];
      for (;;) {
        const claimed = await leases.sweepLapsed(name, 60_000, 7, at);
        if (claimed.length === 0) return mine;
        mine.push(...claimed.map((lease) => lease.taskId));
      }
    };
    const results = await Promise.all(Array.from({ length: 8 }, (_, index) => sweeper(`r-sweeper-${index}`)));
    const all = results.flat().sort();
    assert.deepEqual(all, ids, 'every lapsed lease claimed, none twice');
    assert.ok(results.filter((claimed) => claimed.length > 0).length >= 2, 'the sweepers did race');
    const held = (await rows()).filter((row) => row.task_id.startsWith('t-race-'));
    for (const row of held) {
      const owner = results.findIndex((claimed) => claimed.includes(row.task_id));
      assert.equal(row.replica_id, `r-sweeper-${owner}`);
    }
  });
});
