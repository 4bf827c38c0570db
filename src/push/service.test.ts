import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AgentBackend } from '../agents/backend.js';
import { A2AError } from '../protocol/errors.js';
import type { Task } from '../protocol/model.js';
import type { CallContext } from '../tasks/call-context.js';
import { DEFAULT_PUSH_SETTINGS } from './config.js';
import { MemoryPushConfigs } from './memory.js';
import { PushService } from './service.js';

const backend = {} as AgentBackend;
const alice: CallContext = { principalKey: 'client:a::a', agentSlug: 'echo', backend };
const bob: CallContext = { principalKey: 'client:b::b', agentSlug: 'echo', backend };
const url = 'https://hooks.example/a2a';

/** A task as the task service answers it; `t-…-done` tasks are finished. */
function taskOf(id: string): Task {
  const state = id.endsWith('-done') ? 'completed' : 'working';
  return { id, contextId: 'c', status: { state, timestamp: '2026-01-01T00:00:00.000Z' }, artifacts: [], history: [] };
}

/** Tasks t-a* belong to alice, t-b* to bob; anything else is missing. */
const watched: string[] = [];

function service(settings = DEFAULT_PUSH_SETTINGS): PushService {
  let n = 0;
  return new PushService({
    settings,
    records: new MemoryPushConfigs(),
    checkTask: (ctx, taskId) => {
      const owner = taskId.startsWith('t-a') ? alice : taskId.startsWith('t-b') ? bob : undefined;
      if (owner?.principalKey !== ctx.principalKey) return Promise.reject(new A2AError('TASK_NOT_FOUND'));
      return Promise.resolve(taskOf(taskId));
    },
    watch: (_ctx, taskId) => watched.push(taskId),
    newId: () => `c-${++n}`,
  });
}

async function code(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof A2AError);
    return error.code;
  }
  return 'ok';
}

describe('push-config service', () => {
  it('creates, gets, lists and deletes for the task owner', async () => {
    const push = service();
    const created = await push.handle(alice, { op: 'create', taskId: 't-a1', config: { url, token: 'tok' } }, '1.0');
    assert.deepEqual(created, { op: 'create', config: { url, token: 'tok', id: 'c-1', taskId: 't-a1' } });
    assert.deepEqual(await push.handle(alice, { op: 'get', taskId: 't-a1', id: 'c-1' }, '1.0'), {
      op: 'get',
      config: { url, token: 'tok', id: 'c-1', taskId: 't-a1' },
    });
    // v0.3 get without a config id: the task's first.
    assert.equal((await push.handle(alice, { op: 'get', taskId: 't-a1' }, '0.3')).op, 'get');
    const listed = await push.handle(alice, { op: 'list', taskId: 't-a1' }, '1.0');
    assert.ok(listed.op === 'list');
    assert.deepEqual(
      listed.configs.map((c) => c.id),
      ['c-1'],
    );
    assert.deepEqual(await push.handle(alice, { op: 'delete', taskId: 't-a1', id: 'c-1' }, '1.0'), { op: 'delete' });
    assert.equal(await code(push.handle(alice, { op: 'get', taskId: 't-a1', id: 'c-1' }, '1.0')), 'TASK_NOT_FOUND');
    // Deleting again succeeds (idempotent).
    assert.deepEqual(await push.handle(alice, { op: 'delete', taskId: 't-a1', id: 'c-1' }, '1.0'), { op: 'delete' });
  });

  it("answers another caller's task as not found, before judging its input", async () => {
    const push = service();
    await push.handle(alice, { op: 'create', taskId: 't-a1', config: { url } }, '1.0');
    for (const request of [
      { op: 'create', taskId: 't-a1', config: { url: 'https://169.254.169.254/' } },
      { op: 'get', taskId: 't-a1', id: 'c-1' },
      { op: 'list', taskId: 't-a1' },
      { op: 'delete', taskId: 't-a1', id: 'c-1' },
    ] as const) {
      assert.equal(await code(push.handle(bob, request, '1.0')), 'TASK_NOT_FOUND', request.op);
    }
    // Alice's config is still there.
    assert.equal((await push.handle(alice, { op: 'get', taskId: 't-a1', id: 'c-1' }, '1.0')).op, 'get');
  });

  it('refuses a forbidden webhook with -32602 and stores nothing', async () => {
    const push = service();
    assert.equal(
      await code(push.handle(alice, { op: 'create', taskId: 't-a1', config: { url: 'https://10.0.0.1/' } }, '1.0')),
      'INVALID_PARAMS',
    );
    const listed = await push.handle(alice, { op: 'list', taskId: 't-a1' }, '1.0');
    assert.ok(listed.op === 'list' && listed.configs.length === 0);
  });

  it('caps configs per task and per principal; replacing an id does not count twice', async () => {
    const push = service({ ...DEFAULT_PUSH_SETTINGS, maxConfigsPerTask: 2, maxConfigsPerPrincipal: 3 });
    await push.handle(alice, { op: 'create', taskId: 't-a1', config: { url, id: 'x' } }, '1.0');
    await push.handle(alice, { op: 'create', taskId: 't-a1', config: { url, id: 'x', token: 'new' } }, '1.0');
    await push.handle(alice, { op: 'create', taskId: 't-a1', config: { url, id: 'y' } }, '1.0');
    assert.equal(
      await code(push.handle(alice, { op: 'create', taskId: 't-a1', config: { url, id: 'z' } }, '1.0')),
      'INVALID_PARAMS',
    );
    assert.equal((await push.handle(alice, { op: 'get', taskId: 't-a1', id: 'x' }, '1.0')).op, 'get');
    await push.handle(alice, { op: 'create', taskId: 't-a2', config: { url } }, '1.0');
    assert.equal(
      await code(push.handle(alice, { op: 'create', taskId: 't-a3', config: { url } }, '1.0')),
      'INVALID_PARAMS',
    );
    // Bob's share is his own.
    await push.handle(bob, { op: 'create', taskId: 't-b1', config: { url } }, '1.0');
    // A delete frees room.
    await push.handle(alice, { op: 'delete', taskId: 't-a2', id: 'c-1' }, '1.0');
    await push.handle(alice, { op: 'create', taskId: 't-a3', config: { url } }, '1.0');
  });

  it('pages a list with opaque tokens and refuses a forged one', async () => {
    const push = service();
    for (let i = 0; i < 5; i++) await push.handle(alice, { op: 'create', taskId: 't-a1', config: { url } }, '1.0');
    const ids: string[] = [];
    let pageToken: string | undefined;
    do {
      const page = await push.handle(
        alice,
        { op: 'list', taskId: 't-a1', pageSize: 2, ...(pageToken !== undefined && { pageToken }) },
        '1.0',
      );
      assert.ok(page.op === 'list');
      ids.push(...page.configs.map((c) => c.id));
      pageToken = page.nextPageToken === '' ? undefined : page.nextPageToken;
    } while (pageToken !== undefined);
    assert.deepEqual(ids, ['c-1', 'c-2', 'c-3', 'c-4', 'c-5']);
    assert.equal(
      await code(push.handle(alice, { op: 'list', taskId: 't-a1', pageToken: '99' }, '1.0')),
      'INVALID_PARAMS',
    );
    assert.equal(
      await code(push.handle(alice, { op: 'list', taskId: 't-a1', pageToken: 'x' }, '1.0')),
      'INVALID_PARAMS',
    );
  });

  it('watches the events of an unfinished task only', async () => {
    const push = service();
    watched.length = 0;
    await push.handle(alice, { op: 'create', taskId: 't-a-live', config: { url } }, '1.0');
    await push.handle(alice, { op: 'create', taskId: 't-a-done', config: { url } }, '1.0');
    assert.deepEqual(watched, ['t-a-live']);
    const listed = await push.handle(alice, { op: 'list', taskId: 't-a-done' }, '1.0');
    assert.ok(listed.op === 'list' && listed.configs.length === 1);
  });

  it('stores the dialect a config was made in, for delivery', async () => {
    const records = new MemoryPushConfigs();
    const push = new PushService({
      settings: DEFAULT_PUSH_SETTINGS,
      records,
      checkTask: (_ctx, id) => Promise.resolve(taskOf(id)),
    });
    await push.handle(alice, { op: 'create', taskId: 't-a1', config: { url } }, '0.3');
    await push.registerInline(alice, 't-a1', { url }, '1.0');
    assert.deepEqual(
      (await records.forTask('t-a1')).map((r) => r.dialect),
      ['0.3', '1.0'],
    );
  });
});
