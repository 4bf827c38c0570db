/**
 * The contract's page tokens and keyset paging: malformed tokens are INVALID_PARAMS, any string
 * is a token or INVALID_PARAMS, and paging to the end returns exactly the filtered, sorted tasks
 * of a reference model, also with puts between pages (fast-check properties).
 *
 * @example
 * ```ts
 * describe('list', () => pagingCases({ open, numRuns }));
 * ```
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import fc from 'fast-check';
import type { A2AError } from '../../../protocol/errors.js';
import type { Task } from '../../../protocol/model.js';
import { assertA2AError, HOUR_MS, ids, makeTask, type ContractHarness } from './harness.js';
import { applyPuts, expectedList, listOrder, putArbitrary, queryArbitrary, scopedPut, type Model } from './model.js';

/**
 * Registers the page-token and paging cases in the current `describe`.
 *
 * @example
 * ```ts
 * pagingCases({ open, numRuns: 100 });
 * ```
 */
export function pagingCases({ open, numRuns }: ContractHarness): void {
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
}
