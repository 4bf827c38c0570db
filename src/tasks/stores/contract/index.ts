/**
 * The TaskStore contract as a test suite, run against every store (memory, SQLite, PostgreSQL)
 * by `contract.test.ts`: whatever passes it can back the task service. It checks what callers
 * rely on and nothing engine-specific: owner isolation, replacement, the list order and its
 * ties, every filter combination, keyset paging (against a reference model, with fast-check),
 * `totalSize`, page-token validation, idle TTL, `maxTasks` retention after a sweep, exact
 * round trips of unusual text, and concurrent puts.
 *
 * Stores are compared by value (`deepEqual`), not identity: durable stores return parsed copies.
 * Retention is checked after the store's own sweep has run (the memory store evicts at put time,
 * the durable ones in their sweep; after a sweep both hold the same tasks). Property runs share
 * one store and keep apart by giving every run its own owners and ids, so that a database store
 * needs no fresh schema per run.
 *
 * @example
 * ```ts
 * runTaskStoreContract('MemoryTaskStore', async ({ now, ...retention }) => {
 *   const store = new MemoryTaskStore({ now, ...retention });
 *   return { store, sweep: async () => void store.sweep(), cleanup: () => store.close() };
 * });
 * ```
 */
import { afterEach, describe } from 'node:test';
import type { TaskStore } from '../../store.js';
import { describeGetAndPut } from './get-put.js';
import {
  CLOCK_START_MS,
  type MakeTaskStore,
  type TaskStoreContractSettings,
  type TaskStoreTestOptions,
  type TaskStoreUnderTest,
} from './harness.js';
import { describeList } from './list.js';
import { describeRetention } from './retention.js';
import { describeShares } from './shares.js';

export type { MakeTaskStore, TaskStoreContractSettings, TaskStoreTestOptions, TaskStoreUnderTest } from './harness.js';

// ---------------------------------------------------------------------------------------------

/**
 * Registers the contract suite (node:test `describe`/`it`) for one store implementation.
 *
 * @example
 * ```ts
 * runTaskStoreContract('SqliteTaskStore', makeSqliteStore, { numRuns: 100 });
 * ```
 */
export function runTaskStoreContract(
  name: string,
  makeStore: MakeTaskStore,
  settings: TaskStoreContractSettings = {},
): void {
  const numRuns = settings.numRuns ?? 100;
  // `void`: node:test's describe/it return promises that the runner itself waits for.

  void describe(`${name} satisfies the TaskStore contract`, () => {
    const opened: TaskStoreUnderTest[] = [];

    /** A fresh store with a hand-moved clock; closed and removed after the test. */
    async function open(
      options: Omit<TaskStoreTestOptions, 'now'> = {},
    ): Promise<{ store: TaskStore; clock: { ms: number }; sweep: () => Promise<void> }> {
      const clock = { ms: CLOCK_START_MS };
      const underTest = await makeStore({ ...options, now: () => clock.ms });
      opened.push(underTest);
      const sweep = async (): Promise<void> => {
        for (let rounds = 0; rounds < 100; rounds++) {
          const dropped = await underTest.sweep();
          if (typeof dropped !== 'number' || dropped === 0) return;
        }
      };
      return { store: underTest.store, clock, sweep };
    }

    afterEach(async () => {
      await Promise.all(opened.splice(0).map((underTest) => underTest.cleanup()));
    });

    const harness = { open, numRuns };
    describeGetAndPut(harness);
    describeList(harness);
    describeRetention(harness);
    describeShares(harness);
  });
}
