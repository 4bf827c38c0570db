import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Type from 'typebox';
import { Compile } from 'typebox/compile';
import { firstSchemaProblem, pointerSegments, pointerToKey } from './check.js';

const validator = Compile(
  Type.Object(
    {
      server: Type.Object({ port: Type.Integer(), host: Type.String() }, { additionalProperties: false }),
    },
    { additionalProperties: false },
  ),
);

describe('first schema problem', () => {
  it('is undefined for a valid value', () => {
    assert.equal(firstSchemaProblem(validator, { server: { port: 1, host: 'h' } }), undefined);
  });

  it('names an unknown key as such', () => {
    const problem = firstSchemaProblem(validator, { server: { port: 1, host: 'h', prot: 2 } });
    assert.equal(problem?.pointer, '/server/prot');
    assert.equal(problem?.problem, 'is not a known setting');
  });

  it('prefers the deepest error', () => {
    const problem = firstSchemaProblem(validator, { server: { port: 'x', host: 'h' } });
    assert.equal(problem?.pointer, '/server/port');
  });

  it('names a missing key only when asked to', () => {
    const value = { server: { port: 1 } };
    assert.equal(firstSchemaProblem(validator, value)?.pointer, '/server');
    const named = firstSchemaProblem(validator, value, { namesMissingKey: true });
    assert.deepEqual(named, { pointer: '/server/host', problem: 'is required', keyword: 'required' });
  });

  it('turns pointers into keys', () => {
    assert.equal(pointerToKey('/agents/0/slug'), 'agents[0].slug');
    assert.deepEqual(pointerSegments('/a~1b/c~0d'), ['a/b', 'c~d']);
  });
});
