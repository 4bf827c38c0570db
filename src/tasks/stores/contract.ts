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
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import fc from 'fast-check';
import { A2AError } from '../../protocol/errors.js';
import { TASK_STATES } from '../../protocol/model.js';
import type { Task, TaskState } from '../../protocol/model.js';
import type { TaskQuery, TaskStore } from '../store.js';

/**
 * What a store factory gets: retention settings and the clock the test moves by hand.
 *
 * @example
 * ```ts
 * const options: TaskStoreTestOptions = { now: () => clock.ms, maxTasks: 3 };
 * ```
 */
export interface TaskStoreTestOptions {
  /** Clock for the idle TTL (and `updated_at`), in ms; the suite starts it at a 2026 wall-clock time. */
  now: () => number;
  maxTasks?: number;
  taskTtlMs?: number;
}

/**
 * A store under test and how to drive it.
 *
 * @example
 * ```ts
 * const underTest: TaskStoreUnderTest = { store, sweep: async () => void (await store.sweep()), cleanup: () => store.close() };
 * ```
 */
export interface TaskStoreUnderTest {
  store: TaskStore;
  /** Runs one retention sweep now (the suite calls it until it reports nothing more to do). */
  sweep: () => Promise<number | void>;
  /** Closes the store and removes whatever it left behind (files, schemas). */
  cleanup: () => Promise<void>;
}

/**
 * Makes a fresh, empty store for one test.
 *
 * @example
 * ```ts
 * const make: MakeTaskStore = async (options) => ({ store: new MemoryTaskStore(options), sweep: async () => 0, cleanup: async () => {} });
 * ```
 */
export type MakeTaskStore = (options: TaskStoreTestOptions) => Promise<TaskStoreUnderTest>;

/**
 * How hard the properties try. A database store pays a round trip per call, so its suite may
 * run fewer cases than the memory store's.
 *
 * @example
 * ```ts
 * const settings: TaskStoreContractSettings = { numRuns: 100 };
 * ```
 */
export interface TaskStoreContractSettings {
  /** fast-check runs per property. Default 100. */
  numRuns?: number;
}

const BASE_MS = Date.parse('2026-01-01T00:00:00.000Z');
/** Where the hand-moved clock starts: a plausible wall-clock time, as durable stores keep it. */
const CLOCK_START_MS = Date.parse('2026-06-01T00:00:00.000Z');
const HOUR_MS = 60 * 60_000;

interface TaskSpec {
  id: string;
  contextId?: string;
  state?: TaskState;
  /** Status timestamp, as an offset in ms from BASE_MS. */
  at?: number;
}

function makeTask({ id, contextId = 'ctx-1', state = 'working', at = 0 }: TaskSpec): Task {
  return {
    id,
    contextId,
    status: { state, timestamp: new Date(BASE_MS + at).toISOString() },
    artifacts: [],
    history: [],
  };
}

function ids(tasks: readonly Task[]): string[] {
  return tasks.map((task) => task.id);
}

async function walk(store: TaskStore, owner: string, query: TaskQuery): Promise<Task[]> {
  const seen: Task[] = [];
  let pageToken: string | undefined;
  for (let pages = 0; ; pages++) {
    assert.ok(pages <= 1_000, 'a walk must end');
    const page = await store.list(owner, { ...query, pageToken });
    seen.push(...page.tasks);
    if (page.nextPageToken === '') return seen;
    pageToken = page.nextPageToken;
  }
}

function assertA2AError(error: unknown, code: string, field?: string): true {
  assert.ok(error instanceof A2AError, `expected an A2AError, got ${String(error)}`);
  assert.equal(error.code, code);
  if (field !== undefined) assert.equal(error.field, field);
  return true;
}

// ---------------------------------------------------------------------------------------------
// Reference model: the obvious O(n log n) ListTasks.

type Model = Map<string, { owner: string; task: Task }>;

function statusMs(task: Task): number {
  return Date.parse(task.status.timestamp);
}

/** Negative if a comes first in list order (newest first, then id descending). */
function listOrder(a: Task, b: Task): number {
  const aMs = statusMs(a);
  const bMs = statusMs(b);
  if (aMs !== bMs) return bMs - aMs;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

function expectedList(model: Model, owner: string, query: Omit<TaskQuery, 'pageSize'>): Task[] {
  return [...model.values()]
    .filter((row) => row.owner === owner)
    .map((row) => row.task)
    .filter((task) => query.contextId === undefined || task.contextId === query.contextId)
    .filter((task) => query.status === undefined || task.status.state === query.status)
    .filter((task) => query.statusTimestampAfter === undefined || statusMs(task) >= query.statusTimestampAfter)
    .sort(listOrder);
}

type Put = { owner: string; task: Task };

/**
 * A put against small pools of owners, ids, contexts and timestamps, so that ties and
 * replacements are common. `run` keeps property runs apart in one shared store.
 */
function putArbitrary(): fc.Arbitrary<{ owner: string; n: number; contextId: string; state: TaskState; at: number }> {
  return fc.record({
    owner: fc.constantFrom('alice', 'bob'),
    n: fc.integer({ min: 0, max: 11 }),
    contextId: fc.constantFrom('c1', 'c2', 'c3'),
    state: fc.constantFrom(...TASK_STATES),
    at: fc.integer({ min: 0, max: 15 }).map((step) => step * 1000),
  });
}

function scopedPut(
  run: number,
  put: { owner: string; n: number; contextId: string; state: TaskState; at: number },
): Put {
  const owner = `r${run}:${put.owner}`;
  // The id encodes the owner: the same id is never put by two owners, which would be a bug.
  return { owner, task: makeTask({ id: `${owner}-${put.n}`, contextId: put.contextId, state: put.state, at: put.at }) };
}

const queryArbitrary = fc.record(
  {
    owner: fc.constantFrom('alice', 'bob', 'carol'),
    contextId: fc.constantFrom('c1', 'c2', 'c3'),
    status: fc.constantFrom(...TASK_STATES),
    statusTimestampAfter: fc.integer({ min: -1, max: 16 }).map((step) => BASE_MS + step * 1000),
    pageSize: fc.integer({ min: 1, max: 7 }),
  },
  { requiredKeys: ['owner', 'pageSize'] },
);

async function applyPuts(store: TaskStore, model: Model, puts: readonly Put[]): Promise<void> {
  for (const { owner, task } of puts) {
    await store.put(owner, task);
    model.set(task.id, { owner, task });
  }
}

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

    void describe('get and put', () => {
      void it('get returns a task to its owner only; another owner and a missing id read as missing', async () => {
        const { store } = await open();
        const task = makeTask({ id: 't1' });
        await store.put('alice', task);
        assert.deepEqual(await store.get('alice', 't1'), task);
        assert.equal(await store.get('bob', 't1'), undefined);
        assert.equal(await store.get('alice', 'missing'), undefined);
      });

      void it('put replaces the same owner’s task, in get and in every listing', async () => {
        const { store } = await open();
        await store.put('alice', makeTask({ id: 't1', state: 'working', at: 1 }));
        const done = makeTask({ id: 't1', state: 'completed', at: 5 });
        await store.put('alice', done);
        assert.deepEqual(await store.get('alice', 't1'), done);
        assert.deepEqual(await store.list('alice', { pageSize: 10 }), {
          tasks: [done],
          nextPageToken: '',
          totalSize: 1,
        });
        assert.equal((await store.list('alice', { pageSize: 10, status: 'working' })).totalSize, 0);
        assert.deepEqual((await store.list('alice', { pageSize: 10, status: 'completed' })).tasks, [done]);
      });

      void it('a replacement with an unchanged status (a new artifact) is what get and every filter return', async () => {
        const { store } = await open();
        await store.put('alice', makeTask({ id: 't1', at: 7 }));
        const withArtifact: Task = {
          ...makeTask({ id: 't1', at: 7 }),
          artifacts: [{ artifactId: 'a1', parts: [{ kind: 'text', text: 'chunk' }] }],
        };
        await store.put('alice', withArtifact);
        assert.deepEqual(await store.get('alice', 't1'), withArtifact);
        for (const query of [
          {},
          { status: 'working' as const },
          { contextId: 'ctx-1' },
          { contextId: 'ctx-1', status: 'working' as const },
        ]) {
          const page = await store.list('alice', { pageSize: 10, ...query });
          assert.deepEqual(page.tasks, [withArtifact]);
          assert.equal(page.totalSize, 1);
        }
      });

      void it('a task put again under another context moves to that context’s listings', async () => {
        const { store } = await open();
        await store.put('alice', makeTask({ id: 't1', contextId: 'c1', at: 1 }));
        await store.put('alice', makeTask({ id: 't1', contextId: 'c2', at: 1 }));
        assert.deepEqual(await store.list('alice', { pageSize: 10, contextId: 'c1' }), {
          tasks: [],
          nextPageToken: '',
          totalSize: 0,
        });
        assert.deepEqual(ids((await store.list('alice', { pageSize: 10, contextId: 'c2', status: 'working' })).tasks), [
          't1',
        ]);
      });

      void it('a put of another owner’s live task id is refused (not an A2AError) and changes nothing', async () => {
        const { store } = await open();
        const task = makeTask({ id: 't1' });
        await store.put('alice', task);
        await assert.rejects(store.put('bob', makeTask({ id: 't1', state: 'completed', at: 9 })), (error: unknown) => {
          assert.ok(error instanceof Error && !(error instanceof A2AError), String(error));
          assert.doesNotMatch(error.message, /alice|bob/, 'the message names no owner');
          return true;
        });
        assert.deepEqual(await store.get('alice', 't1'), task);
        assert.equal(await store.get('bob', 't1'), undefined);
        assert.equal((await store.list('bob', { pageSize: 10 })).totalSize, 0);
      });

      void it('a task whose status timestamp is not a date is refused and the stored one kept', async () => {
        const { store } = await open();
        const task = makeTask({ id: 't1' });
        await store.put('alice', task);
        const bad = { ...task, status: { state: 'completed' as const, timestamp: 'yesterday-ish' } };
        await assert.rejects(store.put('alice', bad), /timestamp/);
        assert.deepEqual(await store.get('alice', 't1'), task);
      });

      void it('long ids and unicode (emoji, CJK, RTL, NUL, lone surrogates in text) round-trip exactly', async () => {
        const { store } = await open();
        const owner = 'delegated:app:bot:Zoë 🙂 مرحبا';
        const longId = `t-${'x'.repeat(250)}-${'é'.repeat(100)}`;
        const contextId = 'ctx-上下文-🙂';
        const task: Task = {
          id: longId,
          contextId,
          status: {
            state: 'input-required',
            timestamp: '2026-03-04T05:06:07.089Z',
            message: {
              messageId: 'm-☃',
              role: 'agent',
              parts: [
                {
                  kind: 'text',
                  text: 'nul:\u0000 lone:\ud800 \udfff pair:\ud83d\ude00 sep:\u2028\u2029 rtl:\u202e quote:" \\ ',
                },
              ],
            },
          },
          artifacts: [
            {
              artifactId: 'a-1',
              name: 'Résumé',
              parts: [
                {
                  kind: 'data',
                  data: { nested: [1, 2.5, -3, 1e21, null, true, { '': 'empty key', ключ: 'значение' }] },
                },
                { kind: 'raw', raw: 'AAEC/w==', mediaType: 'application/octet-stream', filename: 'x.bin' },
              ],
            },
          ],
          history: [{ messageId: 'm-1', role: 'user', parts: [{ kind: 'text', text: '😀'.repeat(1000) }] }],
          metadata: { ünïcödé: 'ok', big: 'y'.repeat(100_000) },
        };
        await store.put(owner, task);
        assert.deepEqual(await store.get(owner, longId), task);
        const page = await store.list(owner, { pageSize: 1, contextId, status: 'input-required' });
        assert.deepEqual(page, { tasks: [task], nextPageToken: '', totalSize: 1 });
        assert.equal(await store.get('delegated:app:bot:Zoe 🙂 مرحبا', longId), undefined, 'owners compare exactly');
      });

      void it('ties between unicode ids are broken by id, descending, across pages', async () => {
        const { store } = await open();
        const unicodeIds = ['a', 'b', 'z', 'é', 'ñ-1', 'Ω', 'タ', '上', '🙂', '😀-2', 'A'];
        for (const id of unicodeIds) await store.put('alice', makeTask({ id, at: 500 }));
        const expected = [...unicodeIds].sort().reverse();
        assert.deepEqual(ids(await walk(store, 'alice', { pageSize: 3 })), expected);
      });

      void it('concurrent puts of the same task keep the last; concurrent puts of different tasks keep all', async () => {
        const { store } = await open();
        const versions = Array.from({ length: 20 }, (_, version) => ({
          ...makeTask({ id: 'busy', state: version === 19 ? 'completed' : 'working', at: version }),
          metadata: { version },
        }));
        await Promise.all(versions.map((task) => store.put('alice', task)));
        assert.deepEqual(await store.get('alice', 'busy'), versions[19]);
        const others = Array.from({ length: 20 }, (_, n) => makeTask({ id: `other-${n}`, at: 100 + n }));
        await Promise.all(others.map((task) => store.put('alice', task)));
        const all = await walk(store, 'alice', { pageSize: 7 });
        assert.equal(all.length, 21);
        assert.deepEqual(all[all.length - 1], versions[19]);
      });

      void it('ids no text column can hold read as missing instead of failing', async () => {
        const { store } = await open();
        await store.put('alice', makeTask({ id: 't1' }));
        assert.equal(await store.get('alice', 't1\u0000'), undefined);
        assert.equal(await store.get('alice', 't\ud8001'), undefined);
        assert.equal(await store.get('al\u0000ice', 't1'), undefined);
        assert.deepEqual(await store.list('alice', { pageSize: 5, contextId: 'c\u0000' }), {
          tasks: [],
          nextPageToken: '',
          totalSize: 0,
        });
      });
    });

    void describe('list', () => {
      void it('lists only the caller’s tasks, and totalSize does not reveal anyone else’s', async () => {
        const { store } = await open();
        for (let i = 0; i < 3; i++) await store.put('alice', makeTask({ id: `a${i}`, at: i }));
        for (let i = 0; i < 5; i++) await store.put('bob', makeTask({ id: `b${i}`, at: i }));
        const alice = await store.list('alice', { pageSize: 100 });
        assert.deepEqual(ids(alice.tasks), ['a2', 'a1', 'a0']);
        assert.equal(alice.totalSize, 3);
        assert.equal((await store.list('alice', { pageSize: 100, contextId: 'ctx-1' })).totalSize, 3);
        assert.deepEqual(await store.list('carol', { pageSize: 100 }), { tasks: [], nextPageToken: '', totalSize: 0 });
      });

      void it('totalSize is exact right after a write, on every page and filter (a counted total is never stale)', async () => {
        const { store, clock } = await open({ taskTtlMs: 10_000 });
        for (let i = 0; i < 5; i++) await store.put('alice', makeTask({ id: `t${i}`, at: i }));
        const first = await store.list('alice', { pageSize: 2 });
        assert.equal(first.totalSize, 5);
        const second = await store.list('alice', { pageSize: 2, pageToken: first.nextPageToken });
        assert.equal(second.totalSize, 5);
        await store.put('alice', makeTask({ id: 't5', at: 5 }));
        assert.equal((await store.list('alice', { pageSize: 2 })).totalSize, 6);
        assert.equal((await store.list('alice', { pageSize: 2, pageToken: first.nextPageToken })).totalSize, 6);
        await store.put('alice', makeTask({ id: 't0', at: 6, state: 'completed' }));
        assert.equal((await store.list('alice', { pageSize: 2, status: 'working' })).totalSize, 5);
        assert.equal((await store.list('alice', { pageSize: 2, status: 'completed' })).totalSize, 1);
        await store.put('bob', makeTask({ id: 'b0', at: 1 }));
        assert.equal((await store.list('alice', { pageSize: 2 })).totalSize, 6);
        clock.ms += 10_000;
        assert.equal((await store.list('alice', { pageSize: 2 })).totalSize, 0);
      });

      void it('a page token from one owner cannot reach another owner’s tasks', async () => {
        const { store } = await open();
        await store.put('bob', makeTask({ id: 'b1', at: 1 }));
        await store.put('bob', makeTask({ id: 'b2', at: 2 }));
        await store.put('alice', makeTask({ id: 'a1', at: 0 }));
        const bobPage = await store.list('bob', { pageSize: 1 });
        const alicePage = await store.list('alice', { pageSize: 10, pageToken: bobPage.nextPageToken });
        assert.deepEqual(ids(alicePage.tasks), ['a1']);
        assert.equal(alicePage.totalSize, 1);
      });

      void it('newest status first, ties broken by id descending; the last page has an empty token', async () => {
        const { store } = await open();
        await store.put('alice', makeTask({ id: 'x', at: 1000 }));
        await store.put('alice', makeTask({ id: 'a', at: 2000 }));
        await store.put('alice', makeTask({ id: 'b', at: 2000 }));
        await store.put('alice', makeTask({ id: 'c', at: 0 }));
        const first = await store.list('alice', { pageSize: 2 });
        assert.deepEqual(ids(first.tasks), ['b', 'a']);
        assert.notEqual(first.nextPageToken, '');
        assert.equal(first.totalSize, 4);
        const second = await store.list('alice', { pageSize: 2, pageToken: first.nextPageToken });
        assert.deepEqual(ids(second.tasks), ['x', 'c']);
        assert.equal(second.nextPageToken, '', 'no token that would only lead to an empty page');
        assert.equal(second.totalSize, 4);
      });

      void it('an empty pageToken means the first page', async () => {
        const { store } = await open();
        await store.put('alice', makeTask({ id: 't1' }));
        assert.deepEqual(ids((await store.list('alice', { pageSize: 5, pageToken: '' })).tasks), ['t1']);
      });

      void it('filters by contextId, status and statusTimestampAfter (inclusive), alone and combined', async () => {
        const { store } = await open();
        await store.put('alice', makeTask({ id: 't1', contextId: 'c1', state: 'working', at: 1000 }));
        await store.put('alice', makeTask({ id: 't2', contextId: 'c1', state: 'completed', at: 2000 }));
        await store.put('alice', makeTask({ id: 't3', contextId: 'c2', state: 'completed', at: 3000 }));
        await store.put('alice', makeTask({ id: 't4', contextId: 'c2', state: 'working', at: 4000 }));
        const list = async (query: Omit<TaskQuery, 'pageSize'>): Promise<[string[], number]> => {
          const page = await store.list('alice', { pageSize: 100, ...query });
          return [ids(page.tasks), page.totalSize];
        };
        assert.deepEqual(await list({}), [['t4', 't3', 't2', 't1'], 4]);
        assert.deepEqual(await list({ contextId: 'c1' }), [['t2', 't1'], 2]);
        assert.deepEqual(await list({ status: 'completed' }), [['t3', 't2'], 2]);
        assert.deepEqual(await list({ statusTimestampAfter: BASE_MS + 2000 }), [['t4', 't3', 't2'], 3]);
        assert.deepEqual(await list({ statusTimestampAfter: BASE_MS + 2001 }), [['t4', 't3'], 2]);
        assert.deepEqual(await list({ contextId: 'c2', status: 'working' }), [['t4'], 1]);
        assert.deepEqual(await list({ contextId: 'c2', statusTimestampAfter: BASE_MS + 3500 }), [['t4'], 1]);
        assert.deepEqual(await list({ status: 'working', statusTimestampAfter: BASE_MS + 1000 }), [['t4', 't1'], 2]);
        assert.deepEqual(await list({ contextId: 'c1', status: 'completed', statusTimestampAfter: BASE_MS + 2000 }), [
          ['t2'],
          1,
        ]);
        assert.deepEqual(await list({ contextId: 'c3' }), [[], 0]);
        assert.deepEqual(await list({ status: 'rejected' }), [[], 0]);
      });

      void it('statusTimestampAfter may be fractional, negative or far out of any date range', async () => {
        const { store } = await open();
        await store.put('alice', makeTask({ id: 't1', at: 0 }));
        await store.put('alice', makeTask({ id: 't2', at: 1 }));
        const count = async (statusTimestampAfter: number): Promise<number> =>
          (await store.list('alice', { pageSize: 10, statusTimestampAfter })).totalSize;
        assert.equal(await count(BASE_MS + 0.5), 1);
        assert.equal(await count(BASE_MS - 0.5), 2);
        assert.equal(await count(-1e300), 2);
        assert.equal(await count(1e300), 0);
        assert.equal(await count(-Number.MAX_VALUE), 2);
        assert.equal(await count(Number.MAX_SAFE_INTEGER), 0);
      });

      void it('pageSize and statusTimestampAfter out of range are INVALID_PARAMS', async () => {
        const { store } = await open();
        for (const pageSize of [0, 101, 1.5, Number.NaN, -1]) {
          await assert.rejects(store.list('alice', { pageSize }), (error) =>
            assertA2AError(error, 'INVALID_PARAMS', 'pageSize'),
          );
        }
        for (const statusTimestampAfter of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
          await assert.rejects(store.list('alice', { pageSize: 1, statusTimestampAfter }), (error) =>
            assertA2AError(error, 'INVALID_PARAMS', 'statusTimestampAfter'),
          );
        }
      });

      void it('malformed page tokens are INVALID_PARAMS on pageToken, even for an owner with no tasks', async () => {
        const { store } = await open();
        await store.put('alice', makeTask({ id: 't1' }));
        const base64url = (text: string): string => Buffer.from(text, 'utf8').toString('base64url');
        const bad = [
          'not a token',
          'abc=',
          'a+b/',
          '!!!!',
          'x'.repeat(10_000),
          base64url('[1]'),
          base64url('[1,"a",3]'),
          base64url('["1","a"]'),
          base64url('[1.5,"a"]'),
          base64url('[1e300,"a"]'),
          base64url('{"statusMs":1,"id":"a"}'),
          base64url('null'),
          base64url('[1,"a"'),
          `${base64url('[1,"a"]')}=`,
          Buffer.from([0xff, 0xfe, 0x5b]).toString('base64url'),
        ];
        for (const owner of ['alice', 'nobody']) {
          for (const pageToken of bad) {
            await assert.rejects(store.list(owner, { pageSize: 10, pageToken }), (error) => {
              assertA2AError(error, 'INVALID_PARAMS', 'pageToken');
              assert.equal((error as A2AError).message, 'Invalid params: pageToken is not valid');
              return true;
            });
          }
        }
      });

      void it('property: any string either works as a page token or is INVALID_PARAMS, never another error', async () => {
        const { store } = await open();
        for (let i = 0; i < 20; i++) await store.put('alice', makeTask({ id: `t${i}`, at: i * 10 }));
        const base64url = (text: string): string => Buffer.from(text, 'utf8').toString('base64url');
        const tokens = fc.oneof(
          fc.string({ unit: 'binary', maxLength: 64 }),
          fc.string({ unit: fc.constantFrom(...'ABCabc019-_=+/'), maxLength: 64 }),
          fc.uint8Array({ maxLength: 48 }).map((bytes) => Buffer.from(bytes).toString('base64url')),
          fc.jsonValue({ maxDepth: 2 }).map((value) => base64url(JSON.stringify(value))),
          fc.tuple(fc.double(), fc.string({ unit: 'binary' })).map((key) => base64url(JSON.stringify(key))),
          fc
            .tuple(fc.maxSafeInteger(), fc.string({ unit: 'binary', maxLength: 32 }))
            .map((key) => base64url(JSON.stringify(key))),
        );
        await fc.assert(
          fc.asyncProperty(tokens, async (pageToken) => {
            try {
              const page = await store.list('alice', { pageSize: 5, pageToken });
              assert.ok(page.tasks.length <= 5);
              assert.equal(page.totalSize, 20);
            } catch (error) {
              assertA2AError(error, 'INVALID_PARAMS', 'pageToken');
              assert.equal((error as A2AError).message, 'Invalid params: pageToken is not valid');
            }
          }),
          { numRuns: numRuns * 3 },
        );
      });

      void it('property: for every filter combination, paging to the end returns exactly the filtered, sorted tasks', async () => {
        const { store } = await open({ taskTtlMs: 24 * HOUR_MS, maxTasks: 1_000_000 });
        let run = 0;
        await fc.assert(
          fc.asyncProperty(
            fc.array(putArbitrary(), { maxLength: 50, size: 'max' }),
            queryArbitrary,
            async (rawPuts, { owner: rawOwner, ...query }) => {
              run++;
              const owner = `r${run}:${rawOwner}`;
              const model: Model = new Map();
              await applyPuts(
                store,
                model,
                rawPuts.map((put) => scopedPut(run, put)),
              );
              const expected = expectedList(model, owner, query);
              const seen: Task[] = [];
              let pageToken: string | undefined;
              do {
                const page = await store.list(owner, { ...query, pageToken });
                const rest = expected.slice(seen.length);
                assert.deepEqual(page.tasks, rest.slice(0, query.pageSize), 'each page is the next slice, by value');
                assert.equal(page.totalSize, expected.length);
                assert.equal(page.nextPageToken === '', rest.length <= query.pageSize);
                seen.push(...page.tasks);
                pageToken = page.nextPageToken;
              } while (pageToken !== '');
              assert.deepEqual(ids(seen), ids(expected), 'no duplicates, no misses');
            },
          ),
          { numRuns },
        );
      });

      void it('property: with puts between pages, the order never goes backwards and untouched tasks are seen once', async () => {
        const { store } = await open({ taskTtlMs: 24 * HOUR_MS, maxTasks: 1_000_000 });
        let run = 0;
        await fc.assert(
          fc.asyncProperty(
            fc.array(putArbitrary(), { maxLength: 40, size: 'max' }),
            queryArbitrary,
            fc.array(fc.array(putArbitrary(), { maxLength: 3 }), { maxLength: 20, size: 'max' }),
            async (initialPuts, { owner: rawOwner, ...query }, interleavedPuts) => {
              run++;
              const owner = `r${run}:${rawOwner}`;
              const model: Model = new Map();
              await applyPuts(
                store,
                model,
                initialPuts.map((put) => scopedPut(run, put)),
              );
              const atStart = expectedList(model, owner, query);
              const changed = new Set<string>();
              const seen: Task[] = [];
              let cursor: Task | undefined;
              let pageToken: string | undefined;
              for (let pageNo = 0; ; pageNo++) {
                const page = await store.list(owner, { ...query, pageToken });
                const expected = expectedList(model, owner, query);
                const rest = cursor === undefined ? expected : expected.filter((task) => listOrder(cursor!, task) < 0);
                assert.deepEqual(ids(page.tasks), ids(rest.slice(0, query.pageSize)));
                assert.equal(page.totalSize, expected.length);
                assert.equal(page.nextPageToken === '', rest.length <= query.pageSize);
                seen.push(...page.tasks);
                if (page.nextPageToken === '') break;
                cursor = page.tasks[page.tasks.length - 1];
                pageToken = page.nextPageToken;
                const puts = (interleavedPuts[pageNo] ?? []).map((put) => scopedPut(run, put));
                await applyPuts(store, model, puts);
                puts.forEach(({ task }) => changed.add(task.id));
              }
              for (let i = 1; i < seen.length; i++) assert.ok(listOrder(seen[i - 1]!, seen[i]!) < 0);
              const seenIds = ids(seen);
              for (const task of atStart) {
                if (changed.has(task.id)) continue;
                assert.equal(seenIds.filter((id) => id === task.id).length, 1, `${task.id} seen once`);
              }
            },
          ),
          { numRuns },
        );
      });
    });

    void describe('retention', () => {
      void it('a task idle for the TTL is gone from get and list; an update restarts its TTL', async () => {
        const { store, clock } = await open({ taskTtlMs: 1000 });
        const start = clock.ms;
        await store.put('alice', makeTask({ id: 'idle' }));
        await store.put('alice', makeTask({ id: 'busy' }));
        clock.ms = start + 900;
        await store.put('alice', makeTask({ id: 'busy', at: 1 }));
        clock.ms = start + 999;
        assert.ok(await store.get('alice', 'idle'));
        assert.equal((await store.list('alice', { pageSize: 10 })).totalSize, 2);
        clock.ms = start + 1000;
        assert.equal(await store.get('alice', 'idle'), undefined);
        const page = await store.list('alice', { pageSize: 10 });
        assert.deepEqual(ids(page.tasks), ['busy']);
        assert.equal(page.totalSize, 1);
        assert.equal((await store.list('alice', { pageSize: 10, contextId: 'ctx-1', status: 'working' })).totalSize, 1);
        clock.ms = start + 1900;
        assert.deepEqual(await store.list('alice', { pageSize: 10 }), { tasks: [], nextPageToken: '', totalSize: 0 });
        assert.equal(await store.get('alice', 'busy'), undefined);
      });

      void it('an expired task is gone, so its id can be put again, even by another owner', async () => {
        const { store, clock } = await open({ taskTtlMs: 1000 });
        await store.put('alice', makeTask({ id: 't1' }));
        clock.ms += 1000;
        const bobs = makeTask({ id: 't1', state: 'submitted', at: 3 });
        await store.put('bob', bobs);
        assert.deepEqual(await store.get('bob', 't1'), bobs);
        assert.equal(await store.get('alice', 't1'), undefined);
        assert.equal((await store.list('alice', { pageSize: 10 })).totalSize, 0);
      });

      void it('a sweep drops expired tasks and leaves live ones readable', async () => {
        const { store, clock, sweep } = await open({ taskTtlMs: 1000 });
        const start = clock.ms;
        for (let i = 0; i < 10; i++) {
          clock.ms = start + i;
          await store.put('alice', makeTask({ id: `t${i}`, at: i }));
        }
        clock.ms = start + 1004;
        await sweep();
        assert.deepEqual(ids(await walk(store, 'alice', { pageSize: 3 })), ['t9', 't8', 't7', 't6', 't5']);
        clock.ms = start + 1005;
        await sweep();
        assert.deepEqual(ids(await walk(store, 'alice', { pageSize: 3 })), ['t9', 't8', 't7', 't6']);
      });

      void it('above maxTasks, a sweep leaves the newest tasks: finished ones least recently updated go first, running ones stay', async () => {
        const { store, clock, sweep } = await open({ maxTasks: 3 });
        const put = async (owner: string, task: Task): Promise<void> => {
          clock.ms += 1;
          await store.put(owner, task);
          await sweep();
        };
        await put('alice', makeTask({ id: 'done-old', state: 'completed', at: 1 }));
        await put('alice', makeTask({ id: 'running', state: 'working', at: 2 }));
        await put('bob', makeTask({ id: 'done-new', state: 'failed', at: 3 }));
        await put('alice', makeTask({ id: 'n1', state: 'submitted', at: 4 }));
        assert.equal(await store.get('alice', 'done-old'), undefined);
        assert.ok(await store.get('bob', 'done-new'));
        await put('alice', makeTask({ id: 'n2', state: 'submitted', at: 5 }));
        assert.equal(await store.get('bob', 'done-new'), undefined);
        assert.equal((await store.list('bob', { pageSize: 10 })).totalSize, 0, 'evicted tasks leave every listing');
        assert.deepEqual(ids((await store.list('alice', { pageSize: 10 })).tasks), ['n2', 'n1', 'running']);
      });

      void it('updating a finished task makes it the most recently updated one', async () => {
        const { store, clock, sweep } = await open({ maxTasks: 2 });
        const put = async (task: Task): Promise<void> => {
          clock.ms += 1;
          await store.put('alice', task);
          await sweep();
        };
        await put(makeTask({ id: 'a', state: 'completed', at: 1 }));
        await put(makeTask({ id: 'b', state: 'canceled', at: 2 }));
        await put(makeTask({ id: 'a', state: 'completed', at: 3 }));
        await put(makeTask({ id: 'c', state: 'working', at: 4 }));
        assert.ok(await store.get('alice', 'a'));
        assert.equal(await store.get('alice', 'b'), undefined);
        assert.ok(await store.get('alice', 'c'));
      });
    });
  });
}
