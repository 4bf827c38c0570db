import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { CapacityError } from '../policy.js';
import {
  failedByParkedTtl,
  ownerRangeOf,
  PARKED_EXPIRED_TEXT,
  quotaRefusal,
  resolveFairShares,
  shareDecision,
  type TaskStoreEvent,
} from './fair-shares.js';
import { principalOfOwner } from './principal.js';

const LIMITS = { maxTasksPerPrincipal: 10, maxParkedPerPrincipal: 3 };

describe('shareDecision', () => {
  it('admits below both quotas', () => {
    assert.deepEqual(shareDecision({ tasks: 9, parked: 2, finished: 0 }, LIMITS), { kind: 'admit' });
  });
  it('refuses at the parked quota, whatever else holds', () => {
    assert.deepEqual(shareDecision({ tasks: 3, parked: 3, finished: 0 }, LIMITS), {
      kind: 'refuse',
      quota: 'parked_quota',
    });
    assert.deepEqual(shareDecision({ tasks: 10, parked: 3, finished: 7 }, LIMITS), {
      kind: 'refuse',
      quota: 'parked_quota',
    });
  });
  it('at the task quota evicts a tenth of it (at least what it must), never more than is finished', () => {
    assert.deepEqual(shareDecision({ tasks: 10, parked: 0, finished: 5 }, LIMITS), { kind: 'evict', count: 1 });
    assert.deepEqual(shareDecision({ tasks: 12, parked: 0, finished: 5 }, LIMITS), { kind: 'evict', count: 3 });
    const big = { maxTasksPerPrincipal: 1000, maxParkedPerPrincipal: 100 };
    assert.deepEqual(shareDecision({ tasks: 1000, parked: 0, finished: 900 }, big), { kind: 'evict', count: 100 });
    assert.deepEqual(shareDecision({ tasks: 1000, parked: 0, finished: 40 }, big), { kind: 'evict', count: 40 });
  });
  it('refuses at the task quota when too few tasks are finished', () => {
    assert.deepEqual(shareDecision({ tasks: 10, parked: 0, finished: 0 }, LIMITS), {
      kind: 'refuse',
      quota: 'task_quota',
    });
    assert.deepEqual(shareDecision({ tasks: 12, parked: 1, finished: 2 }, LIMITS), {
      kind: 'refuse',
      quota: 'task_quota',
    });
  });
  it('never leaves the principal at or over its quota after an eviction (property)', () => {
    fc.assert(
      fc.property(
        fc.nat(2000),
        fc.nat(200),
        fc.nat(2000),
        fc.integer({ min: 1, max: 1000 }),
        (tasks, parked, finished, max) => {
          const counts = { tasks, parked: Math.min(parked, tasks), finished: Math.min(finished, tasks) };
          const decision = shareDecision(counts, { maxTasksPerPrincipal: max, maxParkedPerPrincipal: 100 });
          if (decision.kind === 'evict') {
            assert.ok(decision.count <= counts.finished);
            assert.ok(counts.tasks - decision.count < max);
          }
          if (decision.kind === 'admit') assert.ok(counts.tasks < max && counts.parked < 100);
        },
      ),
    );
  });
});

describe('ownerRangeOf', () => {
  it('counts the tail in code points, as SQL substr does, so an astral principal keeps its own keys', () => {
    // Found by the property below: with UTF-16 units, '😀' claimed the owner '😀@@a' (principal '😀@').
    assert.equal(ownerRangeOf('😀').tail, 3);
    assert.equal(ownerRangeOf('client:a').tail, 10);
  });

  it('holds exactly the owner keys of its principal, bytewise (property)', () => {
    const part = fc.string({ unit: fc.constantFrom('a', 'b', '@', 'A', '?', 'é', '😀'), maxLength: 6 });
    const slug = fc.string({ unit: fc.constantFrom('a', 'b', 'A', '-'), minLength: 1, maxLength: 4 });
    fc.assert(
      fc.property(part, part, slug, (principal, other, agent) => {
        const owner = `${other}@${agent}`;
        const range = ownerRangeOf(principal);
        const bytes = (text: string): Buffer => Buffer.from(text, 'utf8');
        const inRange =
          Buffer.compare(bytes(owner), bytes(range.low)) >= 0 &&
          Buffer.compare(bytes(owner), bytes(range.high)) < 0 &&
          !Array.from(owner)
            .slice(range.tail - 1)
            .includes('@');
        assert.equal(inRange, principalOfOwner(owner) === principal, `${principal} / ${owner}`);
      }),
      { examples: [['😀', '😀@', 'a']] },
    );
  });
});

describe('quotaRefusal and the parked TTL', () => {
  it('names the caller’s own quota and its setting, with Retry-After, and reports it', () => {
    const events: TaskStoreEvent[] = [];
    const shares = resolveFairShares('X', { maxTasksPerPrincipal: 7, onEvent: (event) => events.push(event) });
    const error = quotaRefusal('task_quota', shares, 'client:a@echo');
    assert.ok(error instanceof CapacityError);
    assert.match(error.message, /You hold 7 tasks .*limits\.maxTasksPerPrincipal/);
    assert.ok(error.retryAfterSeconds >= 1);
    assert.match(quotaRefusal('parked_quota', shares, 'o').message, /limits\.maxParkedTasksPerPrincipal/);
    assert.deepEqual(events[0], { type: 'refused', owner: 'client:a@echo', quota: 'task_quota' });
  });
  it('refuses bad quotas and TTLs', () => {
    assert.throws(
      () => resolveFairShares('X', { maxTasksPerPrincipal: 0 }),
      /maxTasksPerPrincipal must be a positive integer/,
    );
    assert.throws(() => resolveFairShares('X', { parkedTtlMs: 0 }), /parkedTtlMs must be positive/);
  });
  it('a parked task past its TTL becomes failed, saying why, in status and history', () => {
    const task = {
      id: 't',
      contextId: 'c',
      status: { state: 'input-required' as const, timestamp: 'x' },
      artifacts: [],
      history: [],
    };
    const failed = failedByParkedTtl(task, '2026-01-01T00:00:00.000Z');
    assert.equal(failed.status.state, 'failed');
    assert.deepEqual(failed.status.message?.parts, [{ kind: 'text', text: PARKED_EXPIRED_TEXT }]);
    assert.equal(failed.history?.length, 1);
  });
});
