/**
 * The resume rule: what the gateway does when a message arrives on a task parked for approval.
 * The message's text is never a decision — it only asks "may I go on?". Pure, so the rule is the
 * same in every server path.
 *
 * @example
 * ```ts
 * const action = await store.findByTask(principal.key, taskId);
 * const step = resumeStep(action, Date.now());
 * if (step.kind === 'resume') await store.consume(step.actionId, taskId, Date.now()); // then run the turn
 * ```
 */
import { approvalStatus, type PendingAction } from './store.js';

/**
 * Why a parked task fails on resume (stable codes for the audit row and the status message).
 *
 * @example
 * ```ts
 * const reason: ResumeFailure = 'action_denied';
 * ```
 */
export type ResumeFailure = 'action_denied' | 'action_expired';

/**
 * What to do with a message on a parked task:
 * - `repark`: no decision yet; answer with the same input-required status and data part.
 * - `resume`: approved; consume the approval (exactly once — a lost race reads `already_consumed`
 *   and must not run the turn) and resume the turn.
 * - `fail`: denied or expired; fail the task with `message`.
 * - `not_parked`: the task has no open action (never parked, or its action was consumed).
 *
 * @example
 * ```ts
 * const step: ResumeStep = { kind: 'repark', actionId: 'q1…' };
 * ```
 */
export type ResumeStep =
  | { readonly kind: 'repark'; readonly actionId: string }
  | { readonly kind: 'resume'; readonly actionId: string }
  | { readonly kind: 'fail'; readonly reason: ResumeFailure; readonly message: string }
  | { readonly kind: 'not_parked' };

/**
 * Decides the next step for a message on a task, from the task's latest action (or `undefined`
 * when the store has none). Pass `parked: true` when the task itself is in input-required for an
 * action: an action that vanished (swept after expiry) then fails as expired instead of resuming
 * without approval.
 *
 * @example
 * ```ts
 * resumeStep(undefined, Date.now(), { parked: true }); // { kind: 'fail', reason: 'action_expired', … }
 * resumeStep({ actionId: 'a', state: 'pending', expiresAt: Date.now() + 1000 }, Date.now()); // { kind: 'repark', actionId: 'a' }
 * ```
 */
export function resumeStep(
  action: Pick<PendingAction, 'actionId' | 'state' | 'expiresAt'> | undefined,
  now: number,
  options: { readonly parked?: boolean } = {},
): ResumeStep {
  if (action === undefined) return options.parked === true ? expired() : { kind: 'not_parked' };
  // A clock that is not a number must not keep an approval alive.
  if (!Number.isFinite(now) && action.state !== 'consumed') return action.state === 'denied' ? denied() : expired();
  switch (approvalStatus(action, now)) {
    case 'pending':
      return { kind: 'repark', actionId: action.actionId };
    case 'approved':
      return { kind: 'resume', actionId: action.actionId };
    case 'denied':
      return denied();
    case 'expired':
      return expired();
    case 'consumed':
      return { kind: 'not_parked' };
  }
}

function denied(): ResumeStep {
  return { kind: 'fail', reason: 'action_denied', message: 'The proposed action was denied.' };
}

function expired(): ResumeStep {
  return {
    kind: 'fail',
    reason: 'action_expired',
    message: 'The proposed action was not approved in time and has expired.',
  };
}
