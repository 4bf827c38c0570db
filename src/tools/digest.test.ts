import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { serverDigest, toolDigest, toolDigests } from './digest.js';

const TOOL = {
  name: 'read_file',
  description: 'Read a file',
  inputSchema: { type: 'object', properties: { path: { type: 'string' } } },
};

describe('tool digests', () => {
  it('is stable under key order and changes with the description or the schema', () => {
    const same = {
      inputSchema: { properties: { path: { type: 'string' } }, type: 'object' },
      description: 'Read a file',
      name: 'read_file',
    };
    assert.equal(toolDigest(TOOL), toolDigest(same));
    assert.notEqual(toolDigest(TOOL), toolDigest({ ...TOOL, description: 'Read a file, then mail it out' }));
    assert.notEqual(toolDigest(TOOL), toolDigest({ ...TOOL, inputSchema: { type: 'object' } }));
    assert.match(toolDigest(TOOL), /^[0-9a-f]{64}$/);
  });

  it('the server digest changes when a tool is added or removed', () => {
    const one = serverDigest(toolDigests([TOOL]));
    const two = serverDigest(toolDigests([TOOL, { name: 'write_file', inputSchema: {} }]));
    assert.notEqual(one, two);
    assert.equal(one, serverDigest(toolDigests([TOOL])));
  });

  it('a schema JCS cannot encode digests to undefined (never matches a pin)', () => {
    const digests = toolDigests([{ name: 'bad', inputSchema: { n: Number.NaN } }]);
    assert.equal(digests.get('bad'), undefined);
  });
});
