/**
 * The person's side of actions: the views of their pending actions (and of one action), their
 * decision with its audit row, and whether a task has an action open (for the console).
 *
 * @example
 * ```ts
 * const view = await decideAction(state, actionId, 'person:alice', 'approve');
 * view.status; // 'approved'
 * ```
 */
import { auditNow } from './audit-trail.js';
import { levelView, type ApprovalView, type DecidedTask } from './desk.js';
import { argsView } from './display.js';
import type { GateState } from './gate-state.js';
import { ApprovalError, approvalStatus, type ApprovalDecision, type PendingAction } from './store.js';

/**
 * The task a decided action was about, and who called it (what the gateway resumes it as);
 * `undefined` for an action recorded without its origin.
 *
 * @example
 * ```ts
 * const task = decidedTaskOf(action); // { owner, taskId, agent, caller }
 * ```
 */
export function decidedTaskOf(action: PendingAction): DecidedTask | undefined {
  const origin = action.origin;
  if (origin === undefined) return undefined;
  return {
    owner: action.owner,
    taskId: action.taskId,
    agent: origin.agent,
    ...(origin.caller !== undefined && { caller: origin.caller }),
  };
}

/**
 * The console's view of an action, with where it came from.
 *
 * @example
 * ```ts
 * actionView(state, action, Date.now()).status; // 'pending'
 * ```
 */
export function actionView(state: GateState, action: PendingAction, now: number): ApprovalView {
  const origin = action.origin;
  return {
    actionId: action.actionId,
    taskId: action.taskId,
    contextId: origin?.contextId ?? '',
    agent: origin?.agent ?? '',
    client: origin?.client ?? '',
    ...(origin?.request !== undefined && { request: origin.request }),
    tool: action.tool,
    args: action.args,
    ...argsView(action.args),
    level: action.level,
    ...levelView(action.level),
    status: approvalStatus(action, now),
    createdAt: new Date(action.createdAt).toISOString(),
    expiresAt: new Date(action.expiresAt).toISOString(),
    ...(action.decidedAt !== undefined && { decidedAt: new Date(action.decidedAt).toISOString() }),
  };
}

/**
 * The actions waiting for this person.
 *
 * @example
 * ```ts
 * const waiting = await pendingActions(state, 'person:alice');
 * ```
 */
export async function pendingActions(state: GateState, userId: string): Promise<ApprovalView[]> {
  const now = state.now();
  return (await state.actions.listForDecider(userId, now)).map((action) => actionView(state, action, now));
}

/**
 * One action, if this person decides it (never another person's).
 *
 * @example
 * ```ts
 * await actionFor(state, 'person:bob', actionId); // undefined: alice decides it
 * ```
 */
export async function actionFor(state: GateState, userId: string, actionId: string): Promise<ApprovalView | undefined> {
  const action = await state.actions.find(actionId);
  if (action === undefined || action.decider.userId !== userId) return undefined;
  return actionView(state, action, state.now());
}

/**
 * Approves or denies, and writes the audit row (also for a refused attempt).
 *
 * @throws ApprovalError from the store (`not_found`, `not_decider`, `already_decided`, `expired`, …).
 * @example
 * ```ts
 * await decideAction(state, actionId, 'person:alice', 'deny', '203.0.113.7');
 * ```
 */
export async function decideAction(
  state: GateState,
  actionId: string,
  userId: string,
  decision: ApprovalDecision,
  remote?: string,
): Promise<ApprovalView> {
  const now = state.now();
  let decided: PendingAction;
  try {
    decided = await state.actions.decide(actionId, { kind: 'user', userId }, decision, now);
  } catch (error) {
    if (error instanceof ApprovalError) state.trail.decisionRefused(userId, error, actionId, remote, now);
    throw error;
  }
  const origin = decided.origin;
  state.trail.write(
    {
      type: 'a2a.approval.decided',
      time: auditNow(now),
      outcome: decision === 'approve' ? 'ok' : 'denied',
      user: userId,
      actionId,
      taskId: decided.taskId,
      agent: origin?.agent ?? '-',
      reason: decision === 'approve' ? 'approved' : 'denied',
      tool: decided.tool,
      level: decided.level,
      ...(origin !== undefined && { client: origin.client }),
      ...(remote !== undefined && { remote }),
    },
    false,
  );
  const task = decidedTaskOf(decided);
  if (task !== undefined) state.decided?.(task);
  return actionView(state, decided, now);
}

/**
 * The task's latest action, while it is still pending.
 *
 * @example
 * ```ts
 * openActionOn(state, task.id); // the action id, or undefined
 * ```
 */
export async function openActionOn(state: GateState, taskId: string): Promise<string | undefined> {
  const actionId = state.origins.latestActionOn(taskId);
  const action = actionId === undefined ? undefined : await state.actions.find(actionId);
  return action !== undefined && approvalStatus(action, state.now()) === 'pending' ? actionId : undefined;
}
