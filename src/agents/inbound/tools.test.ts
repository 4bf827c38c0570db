import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';

import { toolsForInboundTurn, type AvailableTool, type InboundToolPolicy } from './tools.js';

const AVAILABLE: readonly AvailableTool[] = [
  { name: 'search' },
  { name: 'calendar.read' },
  { name: 'notes:write', outboundA2A: false },
  { name: 'a2a_send', outboundA2A: true },
  { name: 'a2a_get_task', outboundA2A: true },
];

function policy(allowTools: boolean, allow?: readonly string[]): InboundToolPolicy {
  return allow === undefined ? { allowTools } : { allowTools, tools: { allow } };
}

describe('toolsForInboundTurn', () => {
  it('gives no tools when allowTools is off, whatever the allow list says', () => {
    assert.deepEqual(toolsForInboundTurn(policy(false, ['search', 'calendar.read']), AVAILABLE), []);
  });

  it('gives no tools when allowTools is on but there is no allow list', () => {
    assert.deepEqual(toolsForInboundTurn(policy(true), AVAILABLE), []);
  });

  it('gives no tools for an empty allow list', () => {
    assert.deepEqual(toolsForInboundTurn(policy(true, []), AVAILABLE), []);
  });

  it('gives no tools when nothing is available', () => {
    assert.deepEqual(toolsForInboundTurn(policy(true, ['search']), []), []);
  });

  it('gives the allowed tools that exist, in allow-list order', () => {
    assert.deepEqual(toolsForInboundTurn(policy(true, ['notes:write', 'search']), AVAILABLE), [
      'notes:write',
      'search',
    ]);
  });

  it('leaves out allowed names that are not available', () => {
    assert.deepEqual(toolsForInboundTurn(policy(true, ['search', 'shell', 'fs.write']), AVAILABLE), ['search']);
  });

  it('leaves out available tools that are not allowed', () => {
    assert.deepEqual(toolsForInboundTurn(policy(true, ['calendar.read']), AVAILABLE), ['calendar.read']);
  });

  it('never gives an outbound A2A tool, even when it is allow-listed', () => {
    const tools = toolsForInboundTurn(policy(true, ['a2a_send', 'search', 'a2a_get_task']), AVAILABLE);
    assert.deepEqual(tools, ['search']);
  });

  it('never gives an outbound A2A tool registered twice, once without the flag', () => {
    const available: AvailableTool[] = [{ name: 'relay' }, { name: 'relay', outboundA2A: true }, { name: 'relay' }];
    assert.deepEqual(toolsForInboundTurn(policy(true, ['relay']), available), []);
  });

  it('gives a tool once when the allow list repeats it', () => {
    assert.deepEqual(toolsForInboundTurn(policy(true, ['search', 'search']), AVAILABLE), ['search']);
  });

  it('matches names exactly (case, no wildcards, no prefixes)', () => {
    for (const name of ['Search', 'SEARCH', 'search ', 'sear', '*', 'search*', 'calendar', 'calendar.*']) {
      assert.deepEqual(toolsForInboundTurn(policy(true, [name]), AVAILABLE), [], name);
    }
  });

  it('fails closed on an allowTools that is not literally true', () => {
    const loose = { allowTools: 'true', tools: { allow: ['search'] } } as unknown as InboundToolPolicy;
    assert.deepEqual(toolsForInboundTurn(loose, AVAILABLE), []);
  });

  it('returns a fresh array the caller may keep', () => {
    const a = toolsForInboundTurn(policy(true, ['search']), AVAILABLE);
    a.push('a2a_send');
    assert.deepEqual(toolsForInboundTurn(policy(true, ['search']), AVAILABLE), ['search']);
  });

  it('gives a subset of allow ∩ available \\ outbound, and nothing when allowTools is off', () => {
    const name: fc.Arbitrary<string> = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'a2a_send', 'A', 'a.b');
    const tool = fc.record({ name, outboundA2A: fc.option(fc.boolean(), { nil: undefined }) });
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.option(fc.array(name, { maxLength: 8 }), { nil: undefined }),
        fc.array(tool, { maxLength: 8 }),
        (allowTools, allow, available) => {
          const result = toolsForInboundTurn(policy(allowTools, allow), available);
          if (!allowTools) {
            assert.deepEqual(result, []);
            return;
          }
          const outbound = new Set(available.filter((t) => t.outboundA2A === true).map((t) => t.name));
          const offered = new Set(available.map((t) => t.name));
          for (const r of result) {
            assert.ok(allow?.includes(r), `${r} is allowed`);
            assert.ok(offered.has(r), `${r} is available`);
            assert.ok(!outbound.has(r), `${r} is not outbound A2A`);
          }
          assert.equal(new Set(result).size, result.length, 'no duplicates');
          // And nothing that qualifies is dropped.
          const expected = new Set((allow ?? []).filter((n) => offered.has(n) && !outbound.has(n)));
          assert.deepEqual(new Set(result), expected);
        },
      ),
      { numRuns: 1000 },
    );
  });
});
