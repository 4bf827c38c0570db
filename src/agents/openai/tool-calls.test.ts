/**
 * Putting streamed tool calls together: pieces joined per index, calls in index order, ids kept
 * when usable and made up otherwise, the per-answer cap; and reading their arguments.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_CALLS_PER_ANSWER, parseArguments, ToolCallAssembly } from './tool-calls.js';

describe('ToolCallAssembly', () => {
  it('joins argument pieces per index, and returns the calls in index order', () => {
    const assembly = new ToolCallAssembly(1);
    assembly.add({ type: 'tool-call', index: 1, id: 'b', name: 'fs_list' });
    assembly.add({ type: 'tool-call', index: 0, id: 'a', name: 'fs_read', arguments: '{"pa' });
    assembly.add({ type: 'tool-call', index: 1, arguments: '{}' });
    assembly.add({ type: 'tool-call', index: 0, arguments: 'th":"x"}' });
    assert.deepEqual(assembly.calls(), [
      { id: 'a', name: 'fs_read', arguments: '{"path":"x"}' },
      { id: 'b', name: 'fs_list', arguments: '{}' },
    ]);
  });

  it('sets a repeated name instead of doubling it', () => {
    const assembly = new ToolCallAssembly(1);
    assembly.add({ type: 'tool-call', index: 0, id: 'a', name: 'fs_read' });
    assembly.add({ type: 'tool-call', index: 0, name: 'fs_read', arguments: '{}' });
    assert.equal(assembly.calls()[0]?.name, 'fs_read');
  });

  it('makes up ids that are missing, repeated, too long or odd, unique per round', () => {
    const assembly = new ToolCallAssembly(3);
    assembly.add({ type: 'tool-call', index: 0, name: 'f' });
    assembly.add({ type: 'tool-call', index: 1, id: 'same', name: 'f' });
    assembly.add({ type: 'tool-call', index: 2, id: 'same', name: 'f' });
    assembly.add({ type: 'tool-call', index: 3, id: 'x'.repeat(500), name: 'f' });
    assembly.add({ type: 'tool-call', index: 4, id: 'with space', name: 'f' });
    const ids = assembly.calls().map((call) => call.id);
    assert.deepEqual(ids, ['call_airlock_3_0', 'same', 'call_airlock_3_2', 'call_airlock_3_3', 'call_airlock_3_4']);
  });

  it(`takes at most ${MAX_CALLS_PER_ANSWER} calls per answer`, () => {
    const assembly = new ToolCallAssembly(1);
    for (let i = 0; i < MAX_CALLS_PER_ANSWER; i++)
      assert.equal(assembly.add({ type: 'tool-call', index: i, name: 'f' }), true);
    assert.equal(assembly.add({ type: 'tool-call', index: 0, arguments: '{}' }), true);
    assert.equal(assembly.add({ type: 'tool-call', index: MAX_CALLS_PER_ANSWER, name: 'f' }), false);
    assert.equal(assembly.size, MAX_CALLS_PER_ANSWER);
  });
});

describe('parseArguments', () => {
  it('reads JSON, takes an empty text as no arguments, and refuses anything else', () => {
    assert.deepEqual(parseArguments('{"a":[1]}'), { ok: true, value: { a: [1] } });
    assert.deepEqual(parseArguments('  '), { ok: true, value: {} });
    assert.deepEqual(parseArguments('{"a":'), { ok: false });
    assert.deepEqual(parseArguments("{'a':1}"), { ok: false });
  });
});
