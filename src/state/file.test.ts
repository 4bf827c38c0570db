import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readStateBody } from './file.js';

const fail = (problem: string): Error => new Error(`state.json: ${problem}`);
const OBJECT = { version: 1, key: 'pins', shape: 'object', maxBytes: 1024 } as const;

describe('readStateBody', () => {
  it('returns the body under the key, in the shape asked for', () => {
    assert.deepEqual(readStateBody('{"version":1,"pins":{"a":1}}', OBJECT, fail), { a: 1 });
    assert.deepEqual(
      readStateBody('{"version":1,"tasks":[1]}', { ...OBJECT, key: 'tasks', shape: 'array' }, fail),
      [1],
    );
  });
  it('refuses, naming the problem, anything else', () => {
    const cases: [string, RegExp][] = [
      ['x'.repeat(2000), /too large/],
      ['{', /not JSON/],
      ['{"version":2,"pins":{}}', /expected \{"version": 1, "pins": \{\.\.\.\}\}/],
      ['{"version":1,"pins":[]}', /expected/],
      ['{"version":1}', /expected/],
      ['[]', /expected/],
      ['null', /expected/],
    ];
    for (const [text, problem] of cases) {
      assert.throws(() => readStateBody(text, OBJECT, fail), problem, text.slice(0, 20));
    }
    assert.throws(
      () => readStateBody('{"version":1,"tasks":{}}', { ...OBJECT, key: 'tasks', shape: 'array' }, fail),
      /\[\.\.\.\]/,
    );
  });
});
