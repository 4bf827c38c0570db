/**
 * The contract's get and put: owner isolation, replacement (also with an unchanged status, and
 * into another context), refused puts that change nothing, exact round trips of unusual text,
 * ties between unicode ids, concurrent puts, and keys no column can hold.
 *
 * @example
 * ```ts
 * describeGetAndPut({ open, numRuns });
 * ```
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { A2AError } from '../../../protocol/errors.js';
import type { Task } from '../../../protocol/model.js';
import { ids, makeTask, walk, type ContractHarness } from './harness.js';

/**
 * Registers the contract's "get and put" cases.
 *
 * @example
 * ```ts
 * describeGetAndPut({ open, numRuns: 100 });
 * ```
 */
export function describeGetAndPut({ open }: ContractHarness): void {
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
}
