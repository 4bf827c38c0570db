import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { resumeStep } from './resume.js';
import type { StoredApprovalState } from './store.js';

const NOW = 1_000_000;
const action = (state: StoredApprovalState, expiresAt = NOW + 1000) => ({ actionId: 'a1', state, expiresAt });

describe('resumeStep', () => {
  it('re-parks before a decision', () => {
    assert.deepEqual(resumeStep(action('pending'), NOW), { kind: 'repark', actionId: 'a1' });
  });

  it('resumes after approval', () => {
    assert.deepEqual(resumeStep(action('approved'), NOW), { kind: 'resume', actionId: 'a1' });
  });

  it('fails on denial with a clear message', () => {
    const step = resumeStep(action('denied'), NOW);
    assert.equal(step.kind, 'fail');
    assert.equal(step.kind === 'fail' && step.reason, 'action_denied');
    assert.match(step.kind === 'fail' ? step.message : '', /denied/);
    // A denial stays a denial after the deadline.
    assert.equal(resumeStep(action('denied', NOW - 1), NOW).kind, 'fail');
  });

  it('fails on expiry, pending or approved-but-unused', () => {
    for (const state of ['pending', 'approved'] as const) {
      const step = resumeStep(action(state, NOW), NOW);
      assert.equal(step.kind === 'fail' && step.reason, 'action_expired');
      assert.match(step.kind === 'fail' ? step.message : '', /expired/);
    }
  });

  it('a consumed action or no action means the task is not parked', () => {
    assert.deepEqual(resumeStep(action('consumed'), NOW), { kind: 'not_parked' });
    assert.deepEqual(resumeStep(undefined, NOW), { kind: 'not_parked' });
  });

  it('a parked task whose action is gone fails as expired (never resumes unapproved)', () => {
    const step = resumeStep(undefined, NOW, { parked: true });
    assert.equal(step.kind === 'fail' && step.reason, 'action_expired');
  });

  it('a broken clock never resumes', () => {
    assert.equal(resumeStep(action('approved'), NaN).kind, 'fail');
    assert.equal(resumeStep(action('pending'), NaN).kind, 'fail');
    const denied = resumeStep(action('denied'), NaN);
    assert.equal(denied.kind === 'fail' && denied.reason, 'action_denied');
  });

  it('property: only an approved, unexpired action resumes', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<StoredApprovalState>('pending', 'approved', 'denied', 'consumed'),
        fc.integer(),
        fc.integer(),
        (state, expiresAt, now) => {
          const step = resumeStep(action(state, expiresAt), now);
          return step.kind !== 'resume' || (state === 'approved' && now < expiresAt);
        },
      ),
    );
  });
});
