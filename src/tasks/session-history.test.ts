import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { SessionEntry } from '../agents/backend.js';
import type { Message, Task } from '../protocol/model.js';
import { boundSessionHistory, readSessionHistory, sessionEntries } from './session-history.js';
import { MemoryTaskStore } from './stores/memory.js';

function message(role: 'user' | 'agent', text: string, id = `${role}-${text}`): Message {
  return { messageId: id, role, parts: [{ kind: 'text', text }] };
}

function task(id: string, history: Message[], reply?: string, contextId = 'ctx', at = 0): Task {
  return {
    id,
    contextId,
    status: { state: 'completed', timestamp: new Date(1_800_000_000_000 + at).toISOString() },
    artifacts:
      reply === undefined ? [] : [{ artifactId: `${id}-a`, name: 'reply', parts: [{ kind: 'text', text: reply }] }],
    history,
  };
}

describe('sessionEntries', () => {
  it('puts each earlier task as user text, then its reply artifact, then a closing status message', () => {
    const prior = [task('t1', [message('user', 'q1'), message('agent', 'done')], 'a1')];
    const current = task('t2', [message('user', 'q2')]);
    assert.deepEqual(sessionEntries(prior, current), [
      { role: 'user', text: 'q1' },
      { role: 'agent', text: 'a1' },
      { role: 'agent', text: 'done' },
    ]);
  });

  it('includes the current task’s earlier messages (an input-required exchange), not its newest', () => {
    const current = task('t', [message('user', 'book'), message('agent', 'Which day?'), message('user', 'Monday')]);
    current.status.state = 'working';
    assert.deepEqual(sessionEntries([], current), [
      { role: 'user', text: 'book' },
      { role: 'agent', text: 'Which day?' },
    ]);
  });

  it('keeps text parts only and skips messages with none', () => {
    const data: Message = { messageId: 'd', role: 'user', parts: [{ kind: 'data', data: { a: 1 } }] };
    const current = task('t', [data, message('user', 'now')]);
    assert.deepEqual(sessionEntries([], current), []);
  });
});

describe('boundSessionHistory', () => {
  const entries: SessionEntry[] = [
    { role: 'user', text: 'one' },
    { role: 'agent', text: 'uno' },
    { role: 'user', text: 'two' },
    { role: 'agent', text: 'dos' },
    { role: 'user', text: 'three' },
    { role: 'agent', text: 'tres' },
  ];

  it('keeps the newest turns', () => {
    assert.deepEqual(boundSessionHistory(entries, { maxTurns: 2, maxChars: 1000 }), entries.slice(2));
    assert.deepEqual(boundSessionHistory(entries, { maxTurns: 0, maxChars: 1000 }), []);
  });

  it('keeps the newest characters, the tail of the oldest entry kept, and opens with the user', () => {
    assert.deepEqual(boundSessionHistory(entries, { maxTurns: 10, maxChars: 7 }), [
      { role: 'user', text: 'ree' },
      { role: 'agent', text: 'tres' },
    ]);
    // 'tres' + 'three' = 9, then 2 characters of 'dos': an agent entry first, so it goes.
    assert.deepEqual(boundSessionHistory(entries, { maxTurns: 10, maxChars: 11 }), entries.slice(4));
  });

  it('never exceeds either limit, and always opens with a user entry (property)', () => {
    const entry = fc.record({
      role: fc.constantFrom<'user' | 'agent'>('user', 'agent'),
      text: fc.string({ minLength: 1, maxLength: 40 }),
    });
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 40 }), fc.nat(12), fc.nat(400), (list, maxTurns, maxChars) => {
        const bounded = boundSessionHistory(list, { maxTurns, maxChars });
        const chars = bounded.reduce((sum, item) => sum + item.text.length, 0);
        assert.ok(chars <= maxChars);
        assert.ok(bounded.filter((item) => item.role === 'user').length <= maxTurns);
        if (bounded.length > 0) assert.equal(bounded[0]!.role, 'user');
        // What is kept is the end of the conversation: the last entry is the input's last entry.
        if (bounded.length > 1) assert.deepEqual(bounded.at(-1), list.at(-1));
      }),
      { numRuns: 500 },
    );
  });
});

describe('readSessionHistory', () => {
  it('reads only the owner’s tasks in the same context, oldest first', async () => {
    const store = new MemoryTaskStore({ maxTasks: 100, taskTtlMs: 60_000 });
    try {
      await store.put('alice', task('a1', [message('user', 'first')], 'reply one', 'ctx', 1));
      await store.put('alice', task('a2', [message('user', 'second')], 'reply two', 'ctx', 2));
      await store.put('alice', task('other', [message('user', 'elsewhere')], 'x', 'ctx-2', 3));
      await store.put('bob', task('b1', [message('user', 'bob’s')], 'y', 'ctx', 4));
      const current = task('a3', [message('user', 'third')], undefined, 'ctx', 5);
      await store.put('alice', current);
      const history = await readSessionHistory(store, 'alice', current, { maxTurns: 10, maxChars: 10_000 });
      assert.deepEqual(history, [
        { role: 'user', text: 'first' },
        { role: 'agent', text: 'reply one' },
        { role: 'user', text: 'second' },
        { role: 'agent', text: 'reply two' },
      ]);
      const one = await readSessionHistory(store, 'alice', current, { maxTurns: 1, maxChars: 10_000 });
      assert.deepEqual(one, history.slice(2));
      assert.deepEqual(await readSessionHistory(store, 'bob', current, { maxTurns: 10, maxChars: 10_000 }), [
        { role: 'user', text: 'bob’s' },
        { role: 'agent', text: 'y' },
      ]);
    } finally {
      await store.close();
    }
  });
});
