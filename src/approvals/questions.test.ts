import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { Decider } from './decider.js';
import {
  MAX_ANSWER_CHARS,
  MAX_QUESTION_CHARS,
  MemoryQuestionStore,
  QUESTION_CUT_NOTE,
  questionStatus,
  questionView,
  type PendingQuestionInput,
} from './questions.js';
import { isApprovalError, type ApprovalErrorCode } from './store.js';

const NOW = 1_700_000_000_000;
const TTL = 15 * 60_000;
const OWNER = 'delegated:app:bot:alice';
const aliceDecides: Decider = { kind: 'user', userId: 'alice', via: 'delegating_user' };

function input(overrides: Partial<PendingQuestionInput> = {}): PendingQuestionInput {
  return {
    taskId: 'task-1',
    owner: OWNER,
    decider: aliceDecides,
    agent: 'guarded',
    remoteAgent: 'travel',
    remoteTaskId: 'up-task-1',
    remoteContextId: 'up-ctx-1',
    state: 'input-required',
    question: 'Which day?',
    expiresAt: NOW + TTL,
    ...overrides,
  };
}

function throwsWith(run: () => unknown, code: ApprovalErrorCode): void {
  assert.throws(run, (error: unknown) => {
    assert.ok(isApprovalError(error), String(error));
    assert.equal(error.code, code);
    assert.ok(!/action/.test(error.message), `a question's message speaks of a question: ${error.message}`);
    return true;
  });
}

describe('question ids', () => {
  it('are 256 random bits in base64url by default, never repeating', () => {
    const store = new MemoryQuestionStore({ maxQuestions: 2000 });
    const ids = new Set(
      Array.from({ length: 1000 }, (_, i) => store.create(input({ taskId: `t-${i}` }), NOW).questionId),
    );
    assert.equal(ids.size, 1000);
    for (const id of ids) assert.match(id, /^[A-Za-z0-9_-]{43}$/);
  });
});

describe('questionStatus', () => {
  it('reads expiry from the clock until the answer is used', () => {
    assert.equal(questionStatus({ status: 'pending', expiresAt: 10 }, 9), 'pending');
    assert.equal(questionStatus({ status: 'pending', expiresAt: 10 }, 10), 'expired');
    assert.equal(questionStatus({ status: 'answered', expiresAt: 10 }, 9), 'answered');
    assert.equal(questionStatus({ status: 'answered', expiresAt: 10 }, 11), 'expired');
    assert.equal(questionStatus({ status: 'consumed', expiresAt: 10 }, 11), 'consumed');
    assert.equal(questionStatus({ status: 'pending', expiresAt: 10 }, NaN), 'expired');
  });
});

describe('MemoryQuestionStore', () => {
  it('creates a frozen pending question with an unguessable id', () => {
    const store = new MemoryQuestionStore();
    const record = store.create(input(), NOW);
    assert.match(record.questionId, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(record.status, 'pending');
    assert.equal(record.createdAt, NOW);
    assert.equal(record.question, 'Which day?');
    assert.equal(record.remoteTaskId, 'up-task-1');
    assert.deepEqual(record.decider, aliceDecides);
    assert.ok(Object.isFrozen(record) && Object.isFrozen(record.decider));
    assert.throws(() => {
      (record as { status: string }).status = 'answered';
    });
    assert.equal(record.answer, undefined);
    assert.equal(store.size, 1);
  });

  it('caps the question at 8192 characters, with a note, never splitting a surrogate pair', () => {
    const store = new MemoryQuestionStore();
    const long = store.create(input({ question: 'q'.repeat(MAX_QUESTION_CHARS + 100) }), NOW);
    assert.equal(long.question.length, MAX_QUESTION_CHARS);
    assert.ok(long.question.endsWith(QUESTION_CUT_NOTE));
    const exact = store.create(input({ taskId: 't-2', question: 'q'.repeat(MAX_QUESTION_CHARS) }), NOW);
    assert.equal(exact.question, 'q'.repeat(MAX_QUESTION_CHARS));
    const emoji = '😀'.repeat(MAX_QUESTION_CHARS);
    const cut = store.create(input({ taskId: 't-3', question: emoji }), NOW).question;
    assert.ok(cut.length <= MAX_QUESTION_CHARS);
    assert.ok(cut.endsWith(QUESTION_CUT_NOTE));
    assert.equal(cut.slice(0, -QUESTION_CUT_NOTE.length), '😀'.repeat((cut.length - QUESTION_CUT_NOTE.length) / 2));
  });

  it('refuses malformed input', () => {
    const store = new MemoryQuestionStore();
    const bad: Partial<PendingQuestionInput>[] = [
      { decider: { kind: 'none', reason: 'service_principal' } },
      { decider: { kind: 'user', userId: '', via: 'client_owner' } },
      { taskId: '' },
      { owner: '' },
      { agent: '' },
      { remoteAgent: '' },
      { remoteTaskId: '' },
      { remoteContextId: '' },
      { state: 'working' as 'input-required' },
      { question: '' },
      { question: 42 as unknown as string },
      { expiresAt: NaN },
      { expiresAt: NOW },
      { expiresAt: NOW - 1 },
      { expiresAt: 1e16 },
    ];
    for (const overrides of bad) throwsWith(() => store.create(input(overrides), NOW), 'invalid_action');
    throwsWith(() => store.create(input(), NaN), 'invalid_action');
    assert.equal(store.size, 0);
  });

  it('refuses a repeated injected id', () => {
    const store = new MemoryQuestionStore({ newQuestionId: () => 'same' });
    store.create(input(), NOW);
    throwsWith(() => store.create(input({ taskId: 'task-2' }), NOW), 'invalid_action');
  });

  it('scopes get and findByTask by owner', () => {
    const store = new MemoryQuestionStore();
    const record = store.create(input(), NOW);
    assert.equal(store.get(OWNER, record.questionId), record);
    assert.equal(store.get('client:other::other', record.questionId), undefined);
    assert.equal(store.get(OWNER, 'nope'), undefined);
    assert.equal(store.findByTask(OWNER, 'task-1'), record);
    assert.equal(store.findByTask('client:other::other', 'task-1'), undefined);
    assert.equal(store.findByTask(OWNER, 'task-2'), undefined);
    // Another owner's task with the same id is independent.
    const other = store.create(input({ owner: 'client:partner::partner' }), NOW);
    assert.equal(store.findByTask('client:partner::partner', 'task-1'), other);
    assert.equal(store.findByTask(OWNER, 'task-1'), record);
    assert.equal(store.withdraw('client:partner::partner', 'task-2'), undefined);
    assert.equal(store.withdraw('client:nobody::nobody', 'task-1'), undefined);
    assert.equal(store.findByTask(OWNER, 'task-1'), record, "another owner's withdraw leaves it alone");
  });

  it('lists the pending questions of one decider, oldest first, without expired or answered ones', () => {
    const store = new MemoryQuestionStore();
    const second = store.create(input({ taskId: 't2' }), NOW + 2);
    const first = store.create(input({ taskId: 't1' }), NOW + 1);
    store.create(input({ taskId: 't3', expiresAt: NOW + 10 }), NOW);
    const answered = store.create(input({ taskId: 't4' }), NOW);
    store.answer(answered.questionId, 'alice', 'yes', NOW + 3);
    store.create(input({ taskId: 't5', decider: { kind: 'user', userId: 'bob', via: 'client_owner' } }), NOW);
    assert.deepEqual(
      store.listForDecider('alice', NOW + 20).map((q) => q.questionId),
      [first.questionId, second.questionId],
    );
    assert.equal(store.listForDecider('bob', NOW + 20).length, 1);
    assert.equal(store.listForDecider('carol', NOW + 20).length, 0);
  });

  it('answer then consume hands the answer back exactly once', () => {
    const store = new MemoryQuestionStore();
    const record = store.create(input(), NOW);
    const answered = store.answer(record.questionId, 'alice', 'Tuesday', NOW + 1);
    assert.equal(answered.status, 'answered');
    assert.equal(answered.answer, 'Tuesday');
    assert.equal(answered.answeredBy, 'alice');
    assert.equal(answered.answeredAt, NOW + 1);
    assert.ok(Object.isFrozen(answered));
    assert.equal(store.findByTask(OWNER, 'task-1'), answered);
    const consumed = store.consume(record.questionId, 'task-1', NOW + 2);
    assert.equal(consumed.status, 'consumed');
    assert.equal(consumed.answer, 'Tuesday');
    assert.equal(consumed.consumedAt, NOW + 2);
    throwsWith(() => store.consume(record.questionId, 'task-1', NOW + 3), 'already_consumed');
  });

  it('consume at once from five callers: exactly one wins', async () => {
    const store = new MemoryQuestionStore();
    const record = store.create(input(), NOW);
    store.answer(record.questionId, 'alice', 'Tuesday', NOW + 1);
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, async () => {
        await Promise.resolve();
        return store.consume(record.questionId, 'task-1', NOW + 2);
      }),
    );
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
    for (const r of results) {
      if (r.status === 'rejected') assert.ok(isApprovalError(r.reason, 'already_consumed'));
    }
  });

  it('answers once: a second answer is already_decided and leaves the first', () => {
    const store = new MemoryQuestionStore();
    const record = store.create(input(), NOW);
    store.answer(record.questionId, 'alice', 'Tuesday', NOW + 1);
    throwsWith(() => store.answer(record.questionId, 'alice', 'Friday', NOW + 2), 'already_decided');
    assert.equal(store.get(OWNER, record.questionId)?.answer, 'Tuesday');
    store.consume(record.questionId, 'task-1', NOW + 3);
    throwsWith(() => store.answer(record.questionId, 'alice', 'Friday', NOW + 4), 'already_decided');
  });

  it('refuses the wrong person, before revealing any state', () => {
    const store = new MemoryQuestionStore();
    const record = store.create(input(), NOW);
    throwsWith(() => store.answer(record.questionId, 'mallory', 'Friday', NOW + 1), 'not_decider');
    throwsWith(() => store.answer(record.questionId, 'Alice', 'Friday', NOW + 1), 'not_decider');
    throwsWith(() => store.answer(record.questionId, '', 'Friday', NOW + 1), 'not_decider');
    // Even with a bad text, the wrong person only learns "not yours".
    throwsWith(() => store.answer(record.questionId, 'mallory', '', NOW + 1), 'not_decider');
    assert.equal(store.get(OWNER, record.questionId)?.status, 'pending');
    store.answer(record.questionId, 'alice', 'Tuesday', NOW + 1);
    // Answered and expired, but the wrong person still only learns "not yours".
    throwsWith(() => store.answer(record.questionId, 'mallory', 'Friday', NOW + 1), 'not_decider');
    throwsWith(() => store.answer(record.questionId, 'mallory', 'Friday', NOW + TTL + 1), 'not_decider');
    assert.equal(store.get(OWNER, record.questionId)?.answer, 'Tuesday');
  });

  it('property: the wrong person is refused with not_decider whatever the state, and changes nothing', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 0, maxLength: 12 }).filter((id) => id !== 'alice'),
        fc.constantFrom('pending', 'answered', 'consumed', 'expired'),
        fc.string({ maxLength: 20 }),
        (userId, state, text) => {
          const store = new MemoryQuestionStore();
          const record = store.create(input(), NOW);
          let at = NOW + 1;
          if (state !== 'pending' && state !== 'expired') store.answer(record.questionId, 'alice', 'ok', at);
          if (state === 'consumed') store.consume(record.questionId, 'task-1', at);
          if (state === 'expired') at = NOW + TTL;
          const before = store.get(OWNER, record.questionId);
          try {
            store.answer(record.questionId, userId, text, at);
            return false;
          } catch (error) {
            return isApprovalError(error, 'not_decider') && store.get(OWNER, record.questionId) === before;
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('answer text is 1..8192 characters', () => {
    const store = new MemoryQuestionStore();
    const record = store.create(input(), NOW);
    throwsWith(() => store.answer(record.questionId, 'alice', '', NOW + 1), 'invalid_action');
    throwsWith(
      () => store.answer(record.questionId, 'alice', 'x'.repeat(MAX_ANSWER_CHARS + 1), NOW + 1),
      'invalid_action',
    );
    throwsWith(() => store.answer(record.questionId, 'alice', 7 as unknown as string, NOW + 1), 'invalid_action');
    assert.equal(store.get(OWNER, record.questionId)?.status, 'pending');
    const answered = store.answer(record.questionId, 'alice', 'x'.repeat(MAX_ANSWER_CHARS), NOW + 1);
    assert.equal(answered.answer?.length, MAX_ANSWER_CHARS);
  });

  it('refuses unknown questions', () => {
    const store = new MemoryQuestionStore();
    throwsWith(() => store.answer('nope', 'alice', 'x', NOW), 'not_found');
    throwsWith(() => store.consume('nope', 'task-1', NOW), 'not_found');
  });

  it('expiry: no answer at or after expiresAt, and no consume of an answer past it', () => {
    const store = new MemoryQuestionStore();
    const late = store.create(input(), NOW);
    throwsWith(() => store.answer(late.questionId, 'alice', 'x', NOW + TTL), 'expired');
    throwsWith(() => store.answer(late.questionId, 'alice', 'x', NaN), 'expired');
    const answeredLate = store.create(input({ taskId: 'task-2' }), NOW);
    store.answer(answeredLate.questionId, 'alice', 'x', NOW + TTL - 1);
    throwsWith(() => store.consume(answeredLate.questionId, 'task-2', NOW + TTL), 'expired');
    throwsWith(() => store.consume(late.questionId, 'task-1', NOW + TTL), 'expired');
    assert.equal(store.listForDecider('alice', NOW + TTL).length, 0);
  });

  it('consume before an answer is not_approved (the gateway re-parks), and leaves the question pending', () => {
    const store = new MemoryQuestionStore();
    const record = store.create(input(), NOW);
    throwsWith(() => store.consume(record.questionId, 'task-1', NOW + 1), 'not_approved');
    assert.equal(store.findByTask(OWNER, 'task-1')?.status, 'pending');
    store.answer(record.questionId, 'alice', 'Tuesday', NOW + 2);
    assert.equal(store.consume(record.questionId, 'task-1', NOW + 3).status, 'consumed');
  });

  it('consume only on the task the question was asked on', () => {
    const store = new MemoryQuestionStore();
    const record = store.create(input(), NOW);
    store.answer(record.questionId, 'alice', 'Tuesday', NOW + 1);
    throwsWith(() => store.consume(record.questionId, 'task-2', NOW + 2), 'not_found');
    assert.equal(store.consume(record.questionId, 'task-1', NOW + 2).status, 'consumed');
  });

  it('one open question per task; a new one may follow once the last is used or expired', () => {
    const store = new MemoryQuestionStore();
    const first = store.create(input(), NOW);
    throwsWith(() => store.create(input(), NOW + 1), 'task_has_open_action');
    store.answer(first.questionId, 'alice', 'Tuesday', NOW + 1);
    throwsWith(() => store.create(input(), NOW + 2), 'task_has_open_action');
    store.consume(first.questionId, 'task-1', NOW + 2);
    const second = store.create(input({ question: 'Which train?' }), NOW + 3);
    assert.equal(store.findByTask(OWNER, 'task-1')?.questionId, second.questionId);
    assert.equal(store.get(OWNER, first.questionId), undefined, 'the finished one is replaced, not kept');
    assert.equal(store.size, 1);
    // An expired open question does not block a new one.
    store.create(input({ taskId: 'task-9', expiresAt: NOW + 10 }), NOW);
    store.create(input({ taskId: 'task-9' }), NOW + 10);
  });

  it('withdraw drops an open question (pending or answered), never a used one', () => {
    const store = new MemoryQuestionStore();
    const pending = store.create(input(), NOW);
    assert.equal(store.withdraw(OWNER, 'task-1'), pending);
    assert.equal(store.findByTask(OWNER, 'task-1'), undefined);
    throwsWith(() => store.answer(pending.questionId, 'alice', 'x', NOW + 1), 'not_found');
    assert.equal(store.withdraw(OWNER, 'task-1'), undefined);

    const answered = store.create(input(), NOW);
    store.answer(answered.questionId, 'alice', 'x', NOW + 1);
    assert.equal(store.withdraw(OWNER, 'task-1')?.status, 'answered');
    throwsWith(() => store.consume(answered.questionId, 'task-1', NOW + 2), 'not_found');

    const used = store.create(input(), NOW);
    store.answer(used.questionId, 'alice', 'x', NOW + 1);
    store.consume(used.questionId, 'task-1', NOW + 2);
    assert.equal(store.withdraw(OWNER, 'task-1'), undefined);
    assert.equal(store.findByTask(OWNER, 'task-1')?.status, 'consumed');
    assert.equal(store.size, 1);
  });

  it('is bounded: sweeps expired and consumed questions, then refuses with store_full', () => {
    const store = new MemoryQuestionStore({ maxQuestions: 3 });
    const a = store.create(input({ taskId: 'a', expiresAt: NOW + 10 }), NOW);
    const b = store.create(input({ taskId: 'b' }), NOW);
    store.answer(b.questionId, 'alice', 'x', NOW + 1);
    store.consume(b.questionId, 'b', NOW + 1);
    const c = store.create(input({ taskId: 'c' }), NOW);
    store.answer(c.questionId, 'alice', 'x', NOW + 1);
    // Full: a expired at NOW + 10 and b is consumed, so both are swept; c (answered, unused) is kept.
    store.create(input({ taskId: 'd' }), NOW + 10);
    assert.equal(store.size, 2);
    assert.equal(store.findByTask(a.owner, 'a'), undefined);
    assert.equal(store.findByTask(c.owner, 'c')?.status, 'answered');
    store.create(input({ taskId: 'e' }), NOW + 10);
    throwsWith(() => store.create(input({ taskId: 'f' }), NOW + 10), 'store_full');
    assert.equal(store.size, 3);
  });

  it('property: never holds more than maxQuestions, whatever is created', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }),
        fc.array(fc.record({ task: fc.integer({ min: 0, max: 9 }), ms: fc.integer({ min: 0, max: 100 }) }), {
          maxLength: 30,
        }),
        (maxQuestions, creates) => {
          const store = new MemoryQuestionStore({ maxQuestions });
          let now = NOW;
          for (const step of creates) {
            now += step.ms;
            try {
              store.create(input({ taskId: `t-${step.task}`, expiresAt: now + 50 }), now);
            } catch (error) {
              if (!isApprovalError(error, 'store_full') && !isApprovalError(error, 'task_has_open_action'))
                return false;
            }
            if (store.size > maxQuestions) return false;
          }
          return true;
        },
      ),
      { numRuns: 200 },
    );
  });

  it('sweep drops what can never be used again and reports how many', () => {
    const store = new MemoryQuestionStore();
    store.create(input({ taskId: 'a', expiresAt: NOW + 10 }), NOW);
    const live = store.create(input({ taskId: 'b' }), NOW);
    assert.equal(store.sweep(NOW + 5), 0);
    assert.equal(store.sweep(NOW + 10), 1);
    assert.equal(store.get(OWNER, live.questionId), live);
    assert.equal(store.sweep(NOW + TTL), 1);
    assert.equal(store.size, 0);
  });

  it('ignores a bad maxQuestions', () => {
    for (const maxQuestions of [0, -1, 1.5, NaN]) assert.equal(new MemoryQuestionStore({ maxQuestions }).size, 0);
  });

  it('views a question for the person: ids, untrusted question, status, ISO times; never owner or answer', () => {
    const store = new MemoryQuestionStore();
    const record = store.create(input({ state: 'auth-required', question: 'Sign in?' }), NOW);
    assert.deepEqual(store.questionView(record, NOW + 1), {
      questionId: record.questionId,
      taskId: 'task-1',
      agent: 'guarded',
      remoteAgent: 'travel',
      remoteTaskId: 'up-task-1',
      remoteContextId: 'up-ctx-1',
      state: 'auth-required',
      question: 'Sign in?',
      status: 'pending',
      createdAt: new Date(NOW).toISOString(),
      expiresAt: new Date(NOW + TTL).toISOString(),
    });
    const answered = store.answer(record.questionId, 'alice', 'the secret answer', NOW + 1);
    const view = questionView(answered, NOW + 2);
    assert.equal(view.status, 'answered');
    assert.ok(!JSON.stringify(view).includes('the secret answer') && !JSON.stringify(view).includes(OWNER));
    assert.equal(store.status(answered, NOW + TTL), 'expired');
    assert.equal(questionView(answered, NOW + TTL).status, 'expired');
  });

  it('property: any interleaving of answers and consumes keeps the invariants', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('answer' as const), who: fc.constantFrom('alice', 'mallory') }),
      fc.record({ kind: fc.constant('consume' as const), task: fc.constantFrom('task-1', 'task-2') }),
      fc.record({ kind: fc.constant('tick' as const), ms: fc.integer({ min: 0, max: TTL / 2 }) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 20 }), (ops) => {
        const store = new MemoryQuestionStore();
        const record = store.create(input(), NOW);
        let now = NOW;
        let answers = 0;
        let consumes = 0;
        for (const step of ops) {
          try {
            if (step.kind === 'tick') now += step.ms;
            else if (step.kind === 'answer') {
              store.answer(record.questionId, step.who, 'ok', now);
              answers++;
              if (step.who !== 'alice' || now >= record.expiresAt) return false;
            } else {
              const used = store.consume(record.questionId, step.task, now);
              consumes++;
              if (step.task !== 'task-1' || answers !== 1 || now >= record.expiresAt || used.answer !== 'ok') {
                return false;
              }
            }
          } catch (error) {
            if (!isApprovalError(error)) return false;
          }
        }
        return answers <= 1 && consumes <= 1;
      }),
      { numRuns: 300 },
    );
  });
});

describe('MemoryQuestionStore per principal (issue 16)', () => {
  it('refuses principal_quota over maxPendingPerPrincipal; another principal is not refused', () => {
    const questions = new MemoryQuestionStore({ maxPendingPerPrincipal: 1 });
    questions.create(input({ taskId: 't1', owner: 'client:a::a@guarded' }), NOW);
    assert.throws(
      () => questions.create(input({ taskId: 't2', owner: 'client:a::a@other' }), NOW),
      (error: unknown) => isApprovalError(error, 'principal_quota'),
    );
    questions.create(input({ taskId: 't1', owner: 'client:b::b@guarded' }), NOW);
    assert.ok(questions.withdraw('client:a::a@guarded', 't1'));
    questions.create(input({ taskId: 't2', owner: 'client:a::a@other' }), NOW);
  });
});
