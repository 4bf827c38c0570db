import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { MAX_MODEL_TOOL_NAME, modelToolName, modelToolNames } from './names.js';

describe('model-safe tool names', () => {
  it('derives [a-z0-9_] names from server.tool', () => {
    assert.equal(modelToolName('files.read_file'), 'files__read_file');
    assert.equal(modelToolName('git.log-Tree.v2'), 'git__log_tree_v2');
  });

  it('keeps long names within 64 characters and apart', () => {
    const a = modelToolName(`s.${'a'.repeat(100)}x`);
    const b = modelToolName(`s.${'a'.repeat(100)}y`);
    assert.ok(a.length <= MAX_MODEL_TOOL_NAME && b.length <= MAX_MODEL_TOOL_NAME);
    assert.notEqual(a, b);
  });

  it('property: every name is model-safe and the list has no duplicate', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.stringMatching(/^[a-z0-9_-]{1,32}$/), fc.stringMatching(/^[A-Za-z0-9_.-]{1,128}$/)), {
          maxLength: 30,
        }),
        (pairs) => {
          const names = modelToolNames(pairs.map(([server, tool]) => `${server}.${tool}`));
          for (const name of names) assert.match(name, /^[a-z0-9_]{1,64}$/);
          assert.equal(new Set(names).size, names.length);
        },
      ),
    );
  });
});
