import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  APPROVAL_THRESHOLD,
  AUTONOMY_LEVEL_INFO,
  AUTONOMY_LEVELS,
  decideProposal,
  isAutonomyLevel,
  levelRank,
  minLevel,
  parseLevel,
  SERVICE_LEVEL_CEILING,
  type ProposalDecision,
} from './ladder.js';

const level = fc.constantFrom(...AUTONOMY_LEVELS);
const kind = fc.constantFrom('client' as const, 'service' as const, 'delegated' as const);
const severity = (decision: ProposalDecision): number => ['allow', 'needs_approval', 'refuse'].indexOf(decision.kind);

describe('autonomy levels', () => {
  it('ranks L1..L4 in order', () => {
    assert.deepEqual(AUTONOMY_LEVELS.map(levelRank), [1, 2, 3, 4]);
    assert.equal(minLevel('L4', 'L2'), 'L2');
    assert.equal(minLevel('L1', 'L3'), 'L1');
    assert.equal(APPROVAL_THRESHOLD, 'L3');
    assert.equal(SERVICE_LEVEL_CEILING, 'L2');
  });

  it('documents every level with a distinct name', () => {
    const names = AUTONOMY_LEVELS.map((l) => AUTONOMY_LEVEL_INFO[l].name);
    assert.equal(new Set(names).size, 4);
    for (const l of AUTONOMY_LEVELS) assert.ok(AUTONOMY_LEVEL_INFO[l].meaning.length > 10);
    assert.ok(Object.isFrozen(AUTONOMY_LEVEL_INFO));
  });

  it('isAutonomyLevel accepts exactly the four levels', () => {
    for (const l of AUTONOMY_LEVELS) assert.equal(isAutonomyLevel(l), true);
    for (const v of ['l1', 'L0', 'L5', '', ' L1', 3, null, undefined, {}]) assert.equal(isAutonomyLevel(v), false);
  });
});

describe('parseLevel', () => {
  it('reads levels, lower case, spaces, names and integers', () => {
    assert.equal(parseLevel('L1'), 'L1');
    assert.equal(parseLevel(' l3 '), 'L3');
    assert.equal(parseLevel('L4'), 'L4');
    assert.equal(parseLevel(2), 'L2');
    assert.equal(parseLevel('reversible_acting'), 'L3');
    assert.equal(parseLevel('READ_ONLY'), 'L1');
    assert.equal(parseLevel('irreversible_acting'), 'L4');
  });

  it('refuses anything else rather than guessing', () => {
    for (const v of [
      'L0',
      'L5',
      'L',
      '3',
      'LL3',
      'L3.0',
      '',
      0,
      5,
      2.5,
      -1,
      NaN,
      Infinity,
      null,
      undefined,
      true,
      {},
      [],
    ]) {
      assert.equal(parseLevel(v), undefined, JSON.stringify(v) ?? typeof v);
    }
  });

  it('round-trips every level and its name (property: never throws)', () => {
    for (const l of AUTONOMY_LEVELS) {
      assert.equal(parseLevel(l), l);
      assert.equal(parseLevel(AUTONOMY_LEVEL_INFO[l].name), l);
      assert.equal(parseLevel(levelRank(l)), l);
    }
    fc.assert(
      fc.property(fc.anything(), (v) => {
        const parsed = parseLevel(v);
        return parsed === undefined || isAutonomyLevel(parsed);
      }),
    );
  });
});

describe('decideProposal', () => {
  it('allows read-only levels and asks for approval at acting levels', () => {
    for (const principalKind of ['client', 'delegated'] as const) {
      assert.deepEqual(decideProposal({ level: 'L1', agentMaxLevel: 'L4', principalKind }), { kind: 'allow' });
      assert.deepEqual(decideProposal({ level: 'L2', agentMaxLevel: 'L4', principalKind }), { kind: 'allow' });
      assert.deepEqual(decideProposal({ level: 'L3', agentMaxLevel: 'L4', principalKind }), { kind: 'needs_approval' });
      assert.deepEqual(decideProposal({ level: 'L4', agentMaxLevel: 'L4', principalKind }), { kind: 'needs_approval' });
    }
  });

  it("refuses a level above the agent's maximum, for everyone", () => {
    for (const principalKind of ['client', 'delegated', 'service'] as const) {
      const decision = decideProposal({ level: 'L4', agentMaxLevel: 'L3', principalKind });
      assert.equal(decision.kind, 'refuse');
      assert.equal(decision.kind === 'refuse' && decision.reason, 'level_above_agent_max');
      assert.match(decision.kind === 'refuse' ? decision.message : '', /L4.*L3/);
    }
    assert.equal(decideProposal({ level: 'L2', agentMaxLevel: 'L1', principalKind: 'client' }).kind, 'refuse');
  });

  it('refuses acting levels for service principals with a clear reason, even if configured higher', () => {
    for (const serviceMaxLevel of [undefined, 'L2', 'L3', 'L4'] as const) {
      for (const l of ['L3', 'L4'] as const) {
        const decision = decideProposal({ level: l, agentMaxLevel: 'L4', principalKind: 'service', serviceMaxLevel });
        assert.equal(decision.kind, 'refuse');
        assert.equal(decision.kind === 'refuse' && decision.reason, 'service_principal_capped');
        assert.match(decision.kind === 'refuse' ? decision.message : '', /service principals are capped at L2/);
      }
    }
    assert.deepEqual(decideProposal({ level: 'L2', agentMaxLevel: 'L4', principalKind: 'service' }), {
      kind: 'allow',
    });
  });

  it('honours a lower service cap', () => {
    const decision = decideProposal({
      level: 'L2',
      agentMaxLevel: 'L4',
      principalKind: 'service',
      serviceMaxLevel: 'L1',
    });
    assert.equal(decision.kind === 'refuse' && decision.reason, 'service_principal_capped');
    assert.deepEqual(
      decideProposal({ level: 'L1', agentMaxLevel: 'L4', principalKind: 'service', serviceMaxLevel: 'L1' }),
      {
        kind: 'allow',
      },
    );
  });

  it('property: a service principal never reaches needs_approval', () => {
    fc.assert(
      fc.property(level, level, fc.option(level, { nil: undefined }), (l, agentMaxLevel, serviceMaxLevel) => {
        const decision = decideProposal({ level: l, agentMaxLevel, principalKind: 'service', serviceMaxLevel });
        return decision.kind !== 'needs_approval';
      }),
    );
  });

  it('property: monotonic in level (a higher level is never treated more leniently)', () => {
    fc.assert(
      fc.property(
        level,
        level,
        level,
        kind,
        fc.option(level, { nil: undefined }),
        (a, b, agentMaxLevel, principalKind, serviceMaxLevel) => {
          const [low, high] = levelRank(a) <= levelRank(b) ? [a, b] : [b, a];
          const lowDecision = decideProposal({ level: low, agentMaxLevel, principalKind, serviceMaxLevel });
          const highDecision = decideProposal({ level: high, agentMaxLevel, principalKind, serviceMaxLevel });
          return severity(lowDecision) <= severity(highDecision);
        },
      ),
    );
  });

  it('property: never allows an acting level, never exceeds the agent maximum', () => {
    fc.assert(
      fc.property(
        level,
        level,
        kind,
        fc.option(level, { nil: undefined }),
        (l, agentMaxLevel, principalKind, serviceMaxLevel) => {
          const decision = decideProposal({ level: l, agentMaxLevel, principalKind, serviceMaxLevel });
          if (levelRank(l) > levelRank(agentMaxLevel)) return decision.kind === 'refuse';
          if (levelRank(l) >= levelRank(APPROVAL_THRESHOLD)) return decision.kind !== 'allow';
          return true;
        },
      ),
    );
  });
});
