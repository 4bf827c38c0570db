import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { escapeArb, taskArb, taskWithStrings } from './arbitraries.test.js';
import { taskJson } from './model-json.js';
import type { Task } from './model.js';

/** The same value with every object's keys in reverse order: what a task built another way holds. */
function reversedKeys<T>(value: T): T {
  if (Array.isArray(value)) return value.map(reversedKeys) as T;
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([key, item]) => [key, reversedKeys(item)]),
  ) as T;
}

describe('taskJson', () => {
  it('writes exactly JSON.stringify of a task whose keys are in the model order', () => {
    fc.assert(
      fc.property(taskArb, (task) => {
        assert.equal(taskJson(task), JSON.stringify(task));
      }),
      { numRuns: 500 },
    );
  });

  it('escapes what JSON escapes, in every field', () => {
    fc.assert(
      fc.property(escapeArb, (text) => {
        const task = taskWithStrings(text);
        assert.equal(taskJson(task), JSON.stringify(task));
      }),
    );
  });

  it('parses to the same task whatever the order of its keys', () => {
    fc.assert(
      fc.property(taskArb, (task) => {
        assert.deepEqual(JSON.parse(taskJson(reversedKeys(task))), JSON.parse(JSON.stringify(task)));
      }),
      { numRuns: 300 },
    );
  });

  it('keeps long text in any script as it is, and escapes it where JSON must', () => {
    const prose = 'Привет, как дела? café — 这是一个测试 😀 "quoted" \\ \n\u2028 '.repeat(200);
    const task: Task = {
      id: 't',
      contextId: 'c',
      status: { state: 'completed', timestamp: '2026-12-05T12:00:00.000Z' },
      artifacts: [{ artifactId: 'a', name: 'reply', parts: [{ kind: 'text', text: prose }] }],
      history: [{ messageId: 'm', role: 'user', parts: [{ kind: 'text', text: `${prose}\ud800` }] }],
    };
    assert.equal(taskJson(task), JSON.stringify(task));
  });

  it('writes no key the model does not declare', () => {
    const task = {
      id: 't',
      contextId: 'c',
      kind: 'task',
      status: { state: 'working', timestamp: '2026-12-05T12:00:00.000Z', extra: 1 },
      artifacts: [],
      history: [{ messageId: 'm', role: 'user', parts: [{ kind: 'text', text: 'hi', extra: 2 }], extra: 3 }],
    } as unknown as Task;
    assert.doesNotMatch(taskJson(task), /extra|"kind":"task"/);
  });
});
