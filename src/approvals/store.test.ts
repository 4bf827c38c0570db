import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { DecisionActor, Decider } from './decider.js';
import { MemoryApprovalStore } from './memory-store.js';
import {
  ApprovalError,
  approvalStatus,
  isApprovalError,
  newActionId,
  type ApprovalErrorCode,
  type PendingActionInput,
} from './store.js';

const NOW = 1_700_000_000_000;
const TTL = 15 * 60_000;
const alice: DecisionActor = { kind: 'user', userId: 'alice' };
const mallory: DecisionActor = { kind: 'user', userId: 'mallory' };
const aliceDecides: Decider = { kind: 'user', userId: 'alice', via: 'delegating_user' };

function input(overrides: Partial<PendingActionInput> = {}): PendingActionInput {
  return {
    taskId: 'task-1',
    owner: 'delegated:app:bot:alice',
    decider: aliceDecides,
    tool: 'send_email',
    args: { to: '[email redacted]', body: 'hi' },
    level: 'L4',
    expiresAt: NOW + TTL,
    ...overrides,
  };
}

/** `create` as a promise: the memory store throws at once, and rejects is given a promise. */
async function createLater(store: MemoryApprovalStore, action: PendingActionInput, now: number): Promise<unknown> {
  return store.create(action, now);
}

async function rejectsWith(promise: Promise<unknown>, code: ApprovalErrorCode): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(isApprovalError(error), String(error));
    assert.equal(error.code, code);
    return true;
  });
}

describe('ApprovalError', () => {
  it('has a stable code, a name and a message without details', () => {
    const error = new ApprovalError('not_decider');
    assert.equal(error.code, 'not_decider');
    assert.equal(error.name, 'ApprovalError');
    assert.match(error.message, /Only the person/);
    assert.ok(isApprovalError(error, 'not_decider'));
    assert.ok(!isApprovalError(error, 'expired'));
    assert.ok(!isApprovalError(new Error('x')));
  });
});

describe('newActionId', () => {
  it('is 256 random bits in base64url, never repeating', () => {
    const ids = new Set(Array.from({ length: 1000 }, newActionId));
    assert.equal(ids.size, 1000);
    for (const id of ids) assert.match(id, /^[A-Za-z0-9_-]{43}$/);
  });
});

describe('approvalStatus', () => {
  it('reads expiry from the clock for unfinished actions only', () => {
    assert.equal(approvalStatus({ state: 'pending', expiresAt: 10 }, 9), 'pending');
    assert.equal(approvalStatus({ state: 'pending', expiresAt: 10 }, 10), 'expired');
    assert.equal(approvalStatus({ state: 'approved', expiresAt: 10 }, 11), 'expired');
    assert.equal(approvalStatus({ state: 'denied', expiresAt: 10 }, 11), 'denied');
    assert.equal(approvalStatus({ state: 'consumed', expiresAt: 10 }, 11), 'consumed');
  });
});

describe('MemoryApprovalStore', () => {
  it('creates a frozen pending action with an unguessable id', async () => {
    const store = new MemoryApprovalStore();
    const action = store.create(input(), NOW);
    assert.match(action.actionId, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(action.state, 'pending');
    assert.equal(action.createdAt, NOW);
    assert.deepEqual(action.decider, aliceDecides);
    assert.ok(Object.isFrozen(action));
    assert.ok(Object.isFrozen(action.args));
    assert.throws(() => {
      (action.args as Record<string, unknown>).to = 'x';
    });
    assert.equal(store.size, 1);
  });

  it('copies args so the caller cannot change the stored ones', async () => {
    const store = new MemoryApprovalStore();
    const args = { list: ['a'] };
    const action = store.create(input({ args }), NOW);
    args.list.push('b');
    assert.deepEqual(action.args, { list: ['a'] });
  });

  it('refuses malformed input', async () => {
    const store = new MemoryApprovalStore();
    const bad: Partial<PendingActionInput>[] = [
      { decider: { kind: 'none', reason: 'service_principal' } },
      { decider: { kind: 'user', userId: '', via: 'client_owner' } },
      { taskId: '' },
      { owner: '' },
      { tool: '' },
      { expiresAt: NaN },
      { expiresAt: NOW },
      { expiresAt: NOW - 1 },
    ];
    for (const overrides of bad) await rejectsWith(createLater(store, input(overrides), NOW), 'invalid_action');
    await rejectsWith(createLater(store, input(), NaN), 'invalid_action');
    assert.equal(store.size, 0);
  });

  it('refuses a repeated injected id', async () => {
    const store = new MemoryApprovalStore({ newActionId: () => 'same' });
    store.create(input(), NOW);
    await rejectsWith(createLater(store, input({ taskId: 'task-2' }), NOW), 'invalid_action');
  });

  it('scopes get and findByTask by owner', async () => {
    const store = new MemoryApprovalStore();
    const action = store.create(input(), NOW);
    assert.equal(await store.get(action.owner, action.actionId), action);
    assert.equal(await store.get('client:other::other', action.actionId), undefined);
    assert.equal(await store.get(action.owner, 'nope'), undefined);
    assert.equal(await store.findByTask(action.owner, 'task-1'), action);
    assert.equal(await store.findByTask('client:other::other', 'task-1'), undefined);
    assert.equal(await store.findByTask(action.owner, 'task-2'), undefined);
  });

  it('lists the pending actions of one decider, oldest first, without expired or decided ones', async () => {
    const store = new MemoryApprovalStore();
    const second = store.create(input({ taskId: 't2' }), NOW + 2);
    const first = store.create(input({ taskId: 't1' }), NOW + 1);
    store.create(input({ taskId: 't3', expiresAt: NOW + 10 }), NOW);
    const decided = store.create(input({ taskId: 't4' }), NOW);
    await store.decide(decided.actionId, alice, 'deny', NOW + 3);
    store.create(input({ taskId: 't5', decider: { kind: 'user', userId: 'bob', via: 'client_owner' } }), NOW);
    const listed = await store.listForDecider('alice', NOW + 20);
    assert.deepEqual(
      listed.map((a) => a.actionId),
      [first.actionId, second.actionId],
    );
    assert.equal((await store.listForDecider('bob', NOW + 20)).length, 1);
    assert.equal((await store.listForDecider('carol', NOW + 20)).length, 0);
  });

  it('approve then consume resumes exactly once', async () => {
    const store = new MemoryApprovalStore();
    const action = store.create(input(), NOW);
    const approved = await store.decide(action.actionId, alice, 'approve', NOW + 1);
    assert.equal(approved.state, 'approved');
    assert.equal(approved.decidedBy, 'alice');
    assert.equal(approved.decidedAt, NOW + 1);
    const consumed = await store.consume(action.actionId, 'task-1', NOW + 2);
    assert.equal(consumed.state, 'consumed');
    assert.equal(consumed.consumedAt, NOW + 2);
    await rejectsWith(store.consume(action.actionId, 'task-1', NOW + 3), 'already_consumed');
  });

  it('double consume at once: exactly one wins', async () => {
    const store = new MemoryApprovalStore();
    const action = store.create(input(), NOW);
    await store.decide(action.actionId, alice, 'approve', NOW + 1);
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, () => store.consume(action.actionId, 'task-1', NOW + 2)),
    );
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
    for (const r of results) {
      if (r.status === 'rejected') assert.ok(isApprovalError(r.reason, 'already_consumed'));
    }
  });

  it('two approvals at once: one wins, the other is already_decided', async () => {
    const store = new MemoryApprovalStore();
    const action = store.create(input(), NOW);
    const results = await Promise.allSettled([
      store.decide(action.actionId, alice, 'approve', NOW + 1),
      store.decide(action.actionId, alice, 'approve', NOW + 1),
    ]);
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
    const rejected = results.find((r) => r.status === 'rejected');
    assert.ok(rejected && isApprovalError(rejected.reason, 'already_decided'));
  });

  it('an approve racing a deny: exactly one decision stands', async () => {
    const store = new MemoryApprovalStore();
    const action = store.create(input(), NOW);
    const results = await Promise.allSettled([
      store.decide(action.actionId, alice, 'deny', NOW + 1),
      store.decide(action.actionId, alice, 'approve', NOW + 1),
    ]);
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
    assert.equal((await store.get(action.owner, action.actionId))?.state, 'denied');
    await rejectsWith(store.consume(action.actionId, 'task-1', NOW + 2), 'denied');
  });

  it('refuses the wrong person, before revealing any state', async () => {
    const store = new MemoryApprovalStore();
    const action = store.create(input(), NOW);
    await rejectsWith(store.decide(action.actionId, mallory, 'approve', NOW + 1), 'not_decider');
    await rejectsWith(
      store.decide(action.actionId, { kind: 'user', userId: 'Alice' }, 'approve', NOW + 1),
      'not_decider',
    );
    await store.decide(action.actionId, alice, 'deny', NOW + 1);
    // Already decided and expired, but the wrong person still only learns "not yours".
    await rejectsWith(store.decide(action.actionId, mallory, 'approve', NOW + TTL + 1), 'not_decider');
    assert.equal((await store.get(action.owner, action.actionId))?.state, 'denied');
  });

  it('the caller itself (the agent) can never decide: no principal-shaped actor matches', async () => {
    const store = new MemoryApprovalStore();
    const action = store.create(input(), NOW);
    const agentAsActor = { kind: 'delegated', userId: 'alice' } as unknown as DecisionActor;
    await rejectsWith(store.decide(action.actionId, agentAsActor, 'approve', NOW + 1), 'not_decider');
  });

  it('refuses a second decision', async () => {
    const store = new MemoryApprovalStore();
    const action = store.create(input(), NOW);
    await store.decide(action.actionId, alice, 'deny', NOW + 1);
    await rejectsWith(store.decide(action.actionId, alice, 'approve', NOW + 2), 'already_decided');
    await rejectsWith(store.decide(action.actionId, alice, 'deny', NOW + 2), 'already_decided');
  });

  it('refuses unknown actions and bad decisions', async () => {
    const store = new MemoryApprovalStore();
    await rejectsWith(store.decide('nope', alice, 'approve', NOW), 'not_found');
    await rejectsWith(store.consume('nope', 'task-1', NOW), 'not_found');
    const action = store.create(input(), NOW);
    await rejectsWith(store.decide(action.actionId, alice, 'maybe' as 'approve', NOW + 1), 'invalid_action');
    assert.equal((await store.get(action.owner, action.actionId))?.state, 'pending');
  });

  it('expiry: no decision at or after expiresAt, and no consume of an approval past it', async () => {
    const store = new MemoryApprovalStore();
    const late = store.create(input(), NOW);
    await rejectsWith(store.decide(late.actionId, alice, 'approve', NOW + TTL), 'expired');
    await rejectsWith(store.decide(late.actionId, alice, 'approve', NaN), 'expired');
    const approvedLate = store.create(input({ taskId: 'task-2' }), NOW);
    await store.decide(approvedLate.actionId, alice, 'approve', NOW + TTL - 1);
    await rejectsWith(store.consume(approvedLate.actionId, 'task-2', NOW + TTL), 'expired');
    await rejectsWith(store.consume(late.actionId, 'task-1', NOW + TTL), 'expired');
  });

  it('consume before a decision is not_approved (the gateway re-parks), and leaves the action pending', async () => {
    const store = new MemoryApprovalStore();
    const action = store.create(input(), NOW);
    await rejectsWith(store.consume(action.actionId, 'task-1', NOW + 1), 'not_approved');
    assert.equal((await store.findByTask(action.owner, 'task-1'))?.state, 'pending');
    await store.decide(action.actionId, alice, 'approve', NOW + 2);
    assert.equal((await store.consume(action.actionId, 'task-1', NOW + 3)).state, 'consumed');
  });

  it('consume only on the task the action was proposed on', async () => {
    const store = new MemoryApprovalStore();
    const action = store.create(input(), NOW);
    await store.decide(action.actionId, alice, 'approve', NOW + 1);
    await rejectsWith(store.consume(action.actionId, 'task-2', NOW + 2), 'not_found');
    assert.equal((await store.consume(action.actionId, 'task-1', NOW + 2)).state, 'consumed');
  });

  it('one open action per task; a new one may follow once the last is finished', async () => {
    const store = new MemoryApprovalStore();
    const first = store.create(input(), NOW);
    await rejectsWith(createLater(store, input(), NOW + 1), 'task_has_open_action');
    await store.decide(first.actionId, alice, 'approve', NOW + 1);
    await rejectsWith(createLater(store, input(), NOW + 2), 'task_has_open_action');
    await store.consume(first.actionId, 'task-1', NOW + 2);
    const second = store.create(input(), NOW + 3);
    assert.equal((await store.findByTask(second.owner, 'task-1'))?.actionId, second.actionId);
    // The finished one is replaced, not kept.
    assert.equal(await store.get(first.owner, first.actionId), undefined);
    assert.equal(store.size, 1);
    // Another owner's task with the same id is independent.
    store.create(input({ owner: 'client:partner::partner' }), NOW + 3);
    // An expired open action does not block a new one.
    store.create(input({ taskId: 'task-9', expiresAt: NOW + 10 }), NOW);
    store.create(input({ taskId: 'task-9' }), NOW + 10);
  });

  it('is bounded: sweeps expired and consumed actions, then refuses with store_full', async () => {
    const store = new MemoryApprovalStore({ maxActions: 3 });
    const a = store.create(input({ taskId: 'a', expiresAt: NOW + 10 }), NOW);
    const b = store.create(input({ taskId: 'b' }), NOW);
    await store.decide(b.actionId, alice, 'approve', NOW + 1);
    await store.consume(b.actionId, 'b', NOW + 1);
    const c = store.create(input({ taskId: 'c' }), NOW);
    await store.decide(c.actionId, alice, 'deny', NOW + 1);
    // Full: a expires at NOW + 10 and b is consumed, so both are swept; c (denied) is kept.
    store.create(input({ taskId: 'd' }), NOW + 10);
    assert.equal(store.size, 2);
    assert.equal(await store.findByTask(a.owner, 'a'), undefined);
    assert.equal((await store.findByTask(c.owner, 'c'))?.state, 'denied');
    store.create(input({ taskId: 'e' }), NOW + 10);
    await rejectsWith(createLater(store, input({ taskId: 'f' }), NOW + 10), 'store_full');
    assert.equal(store.size, 3);
  });

  it('sweep drops what can never be used again and reports how many', async () => {
    const store = new MemoryApprovalStore();
    store.create(input({ taskId: 'a', expiresAt: NOW + 10 }), NOW);
    const live = store.create(input({ taskId: 'b' }), NOW);
    assert.equal(await store.sweep(NOW + 5), 0);
    assert.equal(await store.sweep(NOW + 10), 1);
    assert.equal(await store.get(live.owner, live.actionId), live);
    assert.equal(await store.sweep(NOW + TTL), 1);
    assert.equal(store.size, 0);
  });

  it('ignores a bad maxActions: the default bound (10 000) holds, neither the bad value nor none', async () => {
    for (const maxActions of [0, -1, 1.5, NaN, Infinity]) {
      const store = new MemoryApprovalStore({ maxActions });
      // 0 or -1 taken as given would refuse the first action; 1.5 floored, the second.
      for (let i = 0; i < 10_000; i++) store.create(input({ taskId: `task-${i}` }), NOW);
      assert.equal(store.size, 10_000, String(maxActions));
      // And not unbounded: the 10 001st is refused.
      await rejectsWith(createLater(store, input({ taskId: 'one-too-many' }), NOW), 'store_full');
      assert.equal(store.size, 10_000, String(maxActions));
    }
  });

  it('property: any interleaving of operations keeps the invariants', async () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('decide' as const), who: fc.constantFrom(alice, mallory), approve: fc.boolean() }),
      fc.record({ kind: fc.constant('consume' as const), task: fc.constantFrom('task-1', 'task-2') }),
      fc.record({ kind: fc.constant('tick' as const), ms: fc.integer({ min: 0, max: TTL / 2 }) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 20 }), async (ops) => {
        const store = new MemoryApprovalStore();
        const action = store.create(input(), NOW);
        let now = NOW;
        let decisions = 0;
        let consumes = 0;
        let approvedByAlice = false;
        for (const step of ops) {
          try {
            if (step.kind === 'tick') now += step.ms;
            else if (step.kind === 'decide') {
              const result = await store.decide(action.actionId, step.who, step.approve ? 'approve' : 'deny', now);
              decisions++;
              if (step.who.userId !== 'alice') return false; // only the decider may succeed
              approvedByAlice = result.state === 'approved';
            } else {
              await store.consume(action.actionId, step.task, now);
              consumes++;
              if (step.task !== 'task-1' || !approvedByAlice || now >= action.expiresAt) return false;
            }
          } catch (error) {
            if (!isApprovalError(error)) return false;
          }
        }
        return decisions <= 1 && consumes <= 1;
      }),
      { numRuns: 300 },
    );
  });
});

describe('MemoryApprovalStore per principal (issue 16)', () => {
  it('refuses principal_quota over maxPendingPerPrincipal (over all agents); another principal, and a decided or withdrawn action, free room', async () => {
    const store = new MemoryApprovalStore({ maxPendingPerPrincipal: 2 });
    const a1 = store.create(input({ taskId: 't1', owner: 'client:a::a@ops' }), NOW);
    store.create(input({ taskId: 't2', owner: 'client:a::a@other' }), NOW);
    await assert.rejects(
      createLater(store, input({ taskId: 't3', owner: 'client:a::a@ops' }), NOW),
      (error: unknown) => {
        assert.ok(isApprovalError(error, 'principal_quota'));
        assert.match(error.message, /approvals\.maxPendingPerPrincipal/);
        return true;
      },
    );
    store.create(input({ taskId: 't1', owner: 'client:b::b@ops' }), NOW);
    // A denied action no longer waits for anyone: it frees its slot.
    await store.decide(a1.actionId, { kind: 'user', userId: 'alice' }, 'deny', NOW);
    store.create(input({ taskId: 't3', owner: 'client:a::a@ops' }), NOW);
    await assert.rejects(
      createLater(store, input({ taskId: 't4', owner: 'client:a::a@ops' }), NOW),
      /maxPendingPerPrincipal/,
    );
    assert.equal(await store.withdraw('client:a::a@ops', 't3', NOW), true);
    store.create(input({ taskId: 't4', owner: 'client:a::a@ops' }), NOW);
    // Expired actions do not count either.
    store.create(input({ taskId: 't5', owner: 'client:a::a@ops', expiresAt: NOW + 2 * TTL }), NOW + TTL);
  });

  it('is unbounded when the option is unset (the gateway passes approvals.maxPendingPerPrincipal)', async () => {
    const store = new MemoryApprovalStore();
    for (let i = 0; i < 300; i++) store.create(input({ taskId: `t${i}` }), NOW);
    assert.equal(store.size, 300);
  });
});
