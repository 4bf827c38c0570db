/**
 * The approvals service's remote questions: a remote agent's question (input-required or
 * auth-required) parked for the person who answers for the caller, the person's answer, and the
 * resume that hands the answer to the backend exactly once.
 *
 * @example
 * ```ts
 * const outcome = askPerson(state, ctx, owner, task, remote); // { kind: 'park', parts: [text, data] }
 * await answerQuestion(state, questionId, 'person:alice', 'Use the staging key.');
 * ```
 */
import type { RemoteQuestion } from '../agents/backend.js';
import type { Task } from '../protocol/model.js';
import type { CallContext } from '../tasks/call-context.js';
import type { ParkOutcome, ResumeOutcome } from '../tasks/policy.js';
import { auditNow, clientOf, taskRowFields } from './audit-trail.js';
import type { RemoteQuestionView } from './desk.js';
import { deciderOfCall, type GateState } from './gate-state.js';
import { questionView, type PendingQuestion } from './questions.js';
import { ApprovalError, isApprovalError } from './store.js';

/** What a parked task answers when its question is gone or was not answered in time. */
const QUESTION_EXPIRED: ResumeOutcome = {
  kind: 'fail',
  message: 'The remote agent’s question was not answered in time and has expired.',
  reason: 'action_expired',
};

/**
 * Parks a remote agent's question for the person who answers for the caller; with nobody to ask,
 * the caller gets the question, as any input-required.
 *
 * @example
 * ```ts
 * askPerson(state, ctx, owner, task, { agent: 'billing', taskId, contextId, state: 'input-required', question });
 * ```
 */
export function askPerson(
  state: GateState,
  ctx: CallContext,
  owner: string,
  task: Task,
  remote: RemoteQuestion,
): ParkOutcome {
  const decider = state.enabled ? deciderOfCall(ctx, state.clientOwners, state.jwtIssuer) : undefined;
  if (decider === undefined || decider.kind !== 'user') {
    return { kind: 'park', parts: [{ kind: 'text', text: remote.question }] };
  }
  const now = state.now();
  state.origins.prune(now, state.questions);
  let question: PendingQuestion;
  try {
    question = state.questions.create(
      {
        taskId: task.id,
        owner,
        decider,
        agent: ctx.agentSlug,
        remoteAgent: remote.agent,
        remoteTaskId: remote.taskId,
        remoteContextId: remote.contextId,
        state: remote.state,
        question: remote.question,
        expiresAt: now + state.ttlMs,
      },
      now,
    );
  } catch (error) {
    if (isApprovalError(error, 'store_full')) {
      return state.trail.refusal(
        ctx,
        task,
        'store_full',
        'Too many questions are waiting for a person; try again later.',
      );
    }
    if (isApprovalError(error, 'principal_quota')) {
      return state.trail.refusal(
        ctx,
        task,
        'principal_quota',
        'Too many of your questions are waiting for a person (approvals.maxPendingPerPrincipal); wait for an answer, then try again.',
      );
    }
    throw error;
  }
  const client = clientOf(ctx);
  state.trail.writeOrUndo(() => void state.questions.withdraw(owner, task.id), {
    type: 'a2a.question.asked',
    ...taskRowFields(ctx, task, now),
    actionId: question.questionId,
    user: decider.userId,
    state: remote.state,
    ...(ctx.caller !== undefined && { principalKind: ctx.caller.kind }),
  });
  state.origins.rememberQuestion(question.questionId, {
    kind: 'question',
    owner,
    taskId: task.id,
    agent: ctx.agentSlug,
    client,
    contextId: task.contextId,
    ...(ctx.caller !== undefined && { caller: ctx.caller }),
  });
  const url = `${state.baseUrl()}/console`;
  return {
    kind: 'park',
    parts: [
      {
        kind: 'text',
        text:
          `The remote agent "${remote.agent}" asked a question that the person who answers for this caller must answer (${url}); ` +
          'then send any message on this task to go on. A reply on the task is not an answer.',
      },
      {
        kind: 'data',
        data: {
          question_id: question.questionId,
          remote_agent: remote.agent,
          remote_task_id: remote.taskId,
          remote_context_id: remote.contextId,
          state: remote.state,
          expires_at: new Date(question.expiresAt).toISOString(),
          answer_url: url,
        },
      },
    ],
  };
}

/**
 * A message on a task parked on a question: re-park while unanswered, fail when it expired,
 * otherwise use the answer (once) and hand it to the backend.
 *
 * @example
 * ```ts
 * const outcome = await resumeQuestion(state, ctx, owner, task, parked.id, Date.now());
 * ```
 */
export async function resumeQuestion(
  state: GateState,
  ctx: CallContext,
  owner: string,
  task: Task,
  questionId: string,
  now: number,
): Promise<ResumeOutcome> {
  const found = state.questions.findByTask(owner, task.id);
  if (found === undefined || found.questionId !== questionId) return { ...QUESTION_EXPIRED };
  const status = state.questions.status(found, now);
  if (status === 'pending') {
    state.trail.reparked(ctx, task, questionId, now);
    return { kind: 'repark' };
  }
  if (status !== 'answered') return { ...QUESTION_EXPIRED };
  let consumed: PendingQuestion;
  try {
    consumed = state.questions.consume(questionId, task.id, now);
  } catch (error) {
    if (isApprovalError(error, 'already_consumed')) return { kind: 'repark' };
    throw error;
  }
  state.trail.write(
    {
      type: 'a2a.question.consumed',
      ...taskRowFields(ctx, task, now),
      actionId: questionId,
      ...(consumed.answeredBy !== undefined && { user: consumed.answeredBy }),
      ...(ctx.caller !== undefined && { principalKind: ctx.caller.kind }),
    },
    true,
  );
  return {
    kind: 'resume',
    answer: { questionId, text: consumed.answer ?? '', answeredBy: consumed.answeredBy ?? '' },
  };
}

/**
 * The questions waiting for this person.
 *
 * @example
 * ```ts
 * const open = questionsFor(state, 'person:alice');
 * ```
 */
export function questionsFor(state: GateState, userId: string): RemoteQuestionView[] {
  const now = state.now();
  return state.questions.listForDecider(userId, now).map((question) => questionView(question, now));
}

/**
 * The person's answer, with its audit row (also for a refused attempt).
 *
 * @throws ApprovalError from the store (`not_found`, `not_decider`, `already_decided`, `expired`, …).
 * @example
 * ```ts
 * await answerQuestion(state, questionId, 'person:alice', 'Yes, go ahead.');
 * ```
 */
export function answerQuestion(
  state: GateState,
  questionId: string,
  userId: string,
  text: string,
  remote?: string,
): RemoteQuestionView {
  const now = state.now();
  let answered: PendingQuestion;
  try {
    answered = state.questions.answer(questionId, userId, text, now);
  } catch (error) {
    if (error instanceof ApprovalError) state.trail.decisionRefused(userId, error, questionId, remote, now);
    throw error;
  }
  state.trail.write(
    {
      type: 'a2a.question.answered',
      time: auditNow(now),
      outcome: 'ok',
      user: userId,
      actionId: questionId,
      taskId: answered.taskId,
      agent: answered.agent,
      ...(remote !== undefined && { remote }),
    },
    false,
  );
  const origin = state.origins.origin(questionId);
  if (origin !== undefined) {
    state.decided?.({
      owner: origin.owner,
      taskId: origin.taskId,
      agent: origin.agent,
      ...(origin.caller !== undefined && { caller: origin.caller }),
    });
  }
  return questionView(answered, now);
}
