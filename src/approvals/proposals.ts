/**
 * The approvals service's actions: a backend's proposal judged on the ladder (allowed, refused,
 * or parked for a person), and the resume of a task parked on one (re-park, fail, or run the
 * approved action exactly once, with its unredacted arguments).
 *
 * @example
 * ```ts
 * const outcome = proposeAction(state, ctx, owner, task, { tool: 'deploy', args: { env: 'prod' }, level: 'L4' });
 * if (outcome.kind === 'park') task.status.message = { …, parts: outcome.parts };
 * ```
 */
import { MAX_CONTINUATION_BYTES, type ApprovedAction, type ProposedAction } from '../agents/backend.js';
import type { Task } from '../protocol/model.js';
import type { CallContext } from '../tasks/call-context.js';
import type { ParkOutcome, ResumeOutcome } from '../tasks/policy.js';
import { clientOf, taskRowFields } from './audit-trail.js';
import { levelView } from './desk.js';
import { deciderOfCall, type GateState } from './gate-state.js';
import { decideProposal, parseLevel, type AutonomyLevel } from './ladder.js';
import { actionDataPart } from './part.js';
import { redactActionArgs, toolNameHoldsSecret, type JsonValue } from './redact.js';
import { resumeStep } from './resume.js';
import { escapeText } from './display.js';
import { isApprovalError, newActionId, type PendingAction, type PendingActionInput } from './store.js';

/** Tool names a proposal may carry (the audit log and the console show them). */
const TOOL_NAME = /^[A-Za-z0-9_.:-]{1,128}$/;
const DEFAULT_AGENT_MAX_LEVEL: AutonomyLevel = 'L2';

/**
 * A proposal at the end of a turn: allowed at once, refused (with an audit row), or parked with
 * a pending action for the person who answers for the caller.
 *
 * @example
 * ```ts
 * proposeAction(state, ctx, owner, task, proposal); // { kind: 'park', parts: [text, data] }
 * ```
 */
export function proposeAction(
  state: GateState,
  ctx: CallContext,
  owner: string,
  task: Task,
  proposal: ProposedAction,
  continuation?: unknown,
): ParkOutcome | Promise<ParkOutcome> {
  const { trail } = state;
  const level = parseLevel(proposal.level);
  const tool =
    typeof proposal.tool === 'string' &&
    TOOL_NAME.test(proposal.tool) &&
    !toolNameHoldsSecret(proposal.tool, state.secrets)
      ? proposal.tool
      : undefined;
  if (level === undefined || tool === undefined) {
    return trail.refusal(
      ctx,
      task,
      'invalid_proposal',
      'The agent proposed an action without a valid tool name and autonomy level (L1–L4).',
      tool,
      level,
    );
  }
  // Kept as a JSON copy: what comes back is what a store would give back, whatever the backend does to its own.
  const kept = continuation === undefined ? undefined : boundedJsonCopy(continuation);
  if (continuation !== undefined && kept === undefined) {
    return trail.refusal(
      ctx,
      task,
      'invalid_proposal',
      `The agent kept more than ${MAX_CONTINUATION_BYTES / 1024} KiB of JSON (or something that is not JSON) to go on after the decision.`,
      tool,
      level,
    );
  }
  const principalKind = ctx.caller?.kind ?? 'service';
  const verdict = decideProposal({
    level,
    agentMaxLevel: state.agentMaxLevels.get(ctx.agentSlug) ?? DEFAULT_AGENT_MAX_LEVEL,
    principalKind,
    serviceMaxLevel: state.serviceMaxLevel,
  });
  if (verdict.kind === 'refuse') return trail.refusal(ctx, task, verdict.reason, verdict.message, tool, level);
  if (verdict.kind === 'allow') {
    return {
      kind: 'allow',
      action: {
        actionId: newActionId(),
        tool,
        args: proposal.args ?? {},
        level,
        ...(kept !== undefined && { continuation: kept }),
      },
    };
  }
  if (!state.enabled) {
    return trail.refusal(
      ctx,
      task,
      'approvals_off',
      `The action needs a person's approval (${level}), and approvals are not configured on this gateway.`,
      tool,
      level,
    );
  }
  const decider = deciderOfCall(ctx, state.clientOwners, state.jwtIssuer);
  if (decider.kind !== 'user') {
    return trail.refusal(
      ctx,
      task,
      'no_decider',
      `The action needs a person's approval (${level}), and nobody is configured to approve for this caller.`,
      tool,
      level,
    );
  }
  const now = state.now();
  const { value: args } = redactActionArgs(proposal.args ?? {}, { secrets: state.secrets });
  const client = clientOf(ctx);
  const request = requestLine(task, state.secrets);
  const input: PendingActionInput = {
    taskId: task.id,
    owner,
    decider,
    tool,
    args,
    level,
    expiresAt: now + state.ttlMs,
    origin: {
      agent: ctx.agentSlug,
      client,
      contextId: task.contextId,
      ...(ctx.caller !== undefined && { caller: ctx.caller }),
      ...(request !== undefined && { request }),
    },
    kept: { args: proposal.args ?? {}, ...(kept !== undefined && { continuation: kept }) },
  };
  let created: PendingAction | Promise<PendingAction>;
  try {
    created = state.actions.create(input, now);
  } catch (error) {
    return createRefusal(state, ctx, task, error);
  }
  // The memory store answers at once (the turn parks in the same step); a durable store once
  // its record is written, so the task is never parked on an action nobody can find.
  if (created instanceof Promise) {
    return created.then(
      (action) => parked(state, ctx, owner, task, action, now),
      (error: unknown) => createRefusal(state, ctx, task, error),
    );
  }
  return parked(state, ctx, owner, task, created, now);
}

/** The refusal of an action the store would not take (full, or the principal at its quota). */
function createRefusal(state: GateState, ctx: CallContext, task: Task, error: unknown): ParkOutcome {
  const { trail } = state;
  if (isApprovalError(error, 'store_full')) {
    return trail.refusal(ctx, task, 'store_full', 'Too many actions are waiting for approval; try again later.');
  }
  if (isApprovalError(error, 'principal_quota')) {
    return trail.refusal(
      ctx,
      task,
      'principal_quota',
      'Too many of your actions are waiting for approval (approvals.maxPendingPerPrincipal); wait for a decision, then try again.',
    );
  }
  throw error;
}

/** The action is recorded: audited (or withdrawn when the audit cannot be written), and the task parks on it. */
function parked(
  state: GateState,
  ctx: CallContext,
  owner: string,
  task: Task,
  action: PendingAction,
  now: number,
): ParkOutcome {
  state.trail.writeOrUndo(() => void state.actions.withdraw(owner, task.id, now), {
    type: 'a2a.approval.requested',
    ...taskRowFields(ctx, task, now),
    actionId: action.actionId,
    tool: action.tool,
    level: action.level,
    user: action.decider.userId,
    ...(ctx.caller !== undefined && { principalKind: ctx.caller.kind }),
  });
  state.origins.rememberAction(task.id, action.actionId);
  // A person's page when there is one (the console, opened on this action); else the JSON endpoint.
  const url = state.consoleLinks
    ? `${state.baseUrl()}/console#action-${action.actionId}`
    : `${state.baseUrl()}/approvals/${action.actionId}`;
  const info = levelView(action.level);
  return {
    kind: 'park',
    parts: [
      {
        kind: 'text',
        text:
          `Approval needed: the agent wants to run "${action.tool}" (${action.level}, ${info.levelName}). ` +
          `The person who answers for this caller must approve it (${url}); then send any message on this task to go on. ` +
          'A reply on the task is not an approval.',
      },
      { kind: 'data', data: actionDataPart(action, url) as unknown as JsonValue },
    ],
  };
}

/** Characters of the caller's request a person's card shows. */
const REQUEST_LINE_CHARS = 200;

/**
 * The first line of the caller's latest message, scrubbed (configured secrets, tokens, email
 * addresses), cut, and with invisible and bidi controls escaped: what the person's card shows.
 */
function requestLine(task: Task, secrets: readonly string[]): string | undefined {
  for (let index = task.history.length - 1; index >= 0; index--) {
    const message = task.history[index];
    if (message?.role !== 'user') continue;
    const text = message.parts.find((part) => part.kind === 'text');
    const line =
      text?.kind === 'text' ? text.text.split(/\r?\n/).find((candidate) => candidate.trim() !== '') : undefined;
    if (line === undefined) return undefined;
    const { value } = redactActionArgs(line.trim(), { secrets, maxStringLength: REQUEST_LINE_CHARS });
    return typeof value === 'string' ? escapeText(value) : undefined;
  }
  return undefined;
}

/**
 * A message on a task parked on an action: re-park while undecided, fail when denied, expired or
 * already used, otherwise use the approval (once) and hand the action back to the backend.
 *
 * @example
 * ```ts
 * const outcome = await resumeAction(state, ctx, owner, task, parked.id, Date.now());
 * ```
 */
export async function resumeAction(
  state: GateState,
  ctx: CallContext,
  owner: string,
  task: Task,
  actionId: string,
  now: number,
): Promise<ResumeOutcome> {
  const found = await state.actions.findByTask(owner, task.id);
  const action = found?.actionId === actionId ? found : undefined;
  const step = resumeStep(action, now, { parked: true });
  switch (step.kind) {
    case 'repark':
      state.trail.reparked(ctx, task, actionId, now);
      return { kind: 'repark' };
    case 'fail': {
      const kept = await state.actions.take(actionId);
      if (action !== undefined && kept?.continuation !== undefined && state.continueOnDenied.has(ctx.agentSlug)) {
        // The agent goes on without the action: its backend tells its model why.
        return {
          kind: 'resume',
          denied: {
            actionId,
            tool: action.tool,
            level: action.level,
            outcome: step.reason === 'action_denied' ? 'denied' : 'expired',
            reason: step.message,
            continuation: kept.continuation,
          },
        };
      }
      return { kind: 'fail', message: step.message, reason: step.reason };
    }
    case 'not_parked':
      // Already used: a second resume must not run the action again.
      return { kind: 'fail', message: 'The approval of this action was already used.', reason: 'action_expired' };
    case 'resume':
      break;
  }
  let consumed: PendingAction;
  try {
    consumed = await state.actions.consume(actionId, task.id, now);
  } catch (error) {
    // A concurrent resume won the approval: this one runs nothing.
    if (isApprovalError(error, 'already_consumed')) return { kind: 'repark' };
    throw error;
  }
  const kept = await state.actions.take(actionId);
  const args = kept !== undefined ? kept.args : consumed.args;
  state.trail.write(
    {
      type: 'a2a.approval.consumed',
      ...taskRowFields(ctx, task, now),
      actionId,
      tool: consumed.tool,
      level: consumed.level,
      ...(consumed.decidedBy !== undefined && { user: consumed.decidedBy }),
      ...(ctx.caller !== undefined && { principalKind: ctx.caller.kind }),
    },
    true,
  );
  const approved: ApprovedAction = {
    actionId,
    tool: consumed.tool,
    args,
    level: consumed.level,
    ...(consumed.decidedBy !== undefined && { approvedBy: consumed.decidedBy }),
    ...(kept?.continuation !== undefined && { continuation: kept.continuation }),
  };
  return { kind: 'resume', action: approved };
}

/** A JSON copy of `value` if its text has at most {@link MAX_CONTINUATION_BYTES}; undefined if not JSON or larger. */
function boundedJsonCopy(value: unknown): unknown {
  try {
    const text = JSON.stringify(value);
    return typeof text === 'string' && Buffer.byteLength(text, 'utf8') <= MAX_CONTINUATION_BYTES
      ? (JSON.parse(text) as unknown)
      : undefined;
  } catch {
    return undefined;
  }
}
