/**
 * The approvals service's audit rows: the writer it is given, the rows every part of it writes
 * alike (a refused proposal, a re-park, a refused decision), and the two fields they share (the
 * time and a client id fit for the log).
 *
 * @example
 * ```ts
 * const trail = new ApprovalAuditTrail(options.audit, Date.now);
 * return trail.refusal(ctx, task, 'no_decider', 'Nobody is configured to approve for this caller.');
 * ```
 */
import type { AuditEvent, AuditTime } from '../audit/events.js';
import type { Task } from '../protocol/model.js';
import type { CallContext } from '../tasks/call-context.js';
import type { ParkOutcome } from '../tasks/policy.js';
import type { AutonomyLevel } from './ladder.js';
import type { ApprovalError } from './store.js';

/**
 * Writes one audit row; `required` rows that cannot be written throw (nothing is done unaudited).
 *
 * @example
 * ```ts
 * const audit: ApprovalAuditWriter = (event, required) => auditLog.write(event, { required });
 * ```
 */
export type ApprovalAuditWriter = (event: AuditEvent, required: boolean) => void;

/**
 * Why a proposal (or a question) was refused, as its audit row says.
 *
 * @example
 * ```ts
 * const reason: ProposalRefusal = 'approvals_off';
 * ```
 */
export type ProposalRefusal =
  | 'level_above_agent_max'
  | 'service_principal_capped'
  | 'no_decider'
  | 'invalid_proposal'
  | 'approvals_off'
  | 'store_full'
  | 'principal_quota';

/** Our ids: 32 random bytes, base64url. */
const ACTION_ID = /^[A-Za-z0-9_-]{43}$/;
const AUDITABLE_ID = /^[\x21-\x7e]{1,256}$/;

/**
 * Where the approvals service's audit rows go (nowhere when no writer is configured).
 *
 * @example
 * ```ts
 * trail.write({ type: 'a2a.question.answered', time: auditNow(now), outcome: 'ok', user, actionId, taskId, agent }, false);
 * ```
 */
export class ApprovalAuditTrail {
  readonly #audit: ApprovalAuditWriter | undefined;
  readonly #now: () => number;

  constructor(audit: ApprovalAuditWriter | undefined, now: () => number) {
    this.#audit = audit;
    this.#now = now;
  }

  write(event: AuditEvent, required: boolean): void {
    this.#audit?.(event, required);
  }

  /** A required row; when it cannot be written, what it records is undone and the error goes on. */
  writeOrUndo(undo: () => void, event: AuditEvent): void {
    try {
      this.#audit?.(event, true);
    } catch (error) {
      undo();
      throw error;
    }
  }

  /** Writes the refusal of a proposal or question and returns what the task service does with it. */
  refusal(
    ctx: CallContext,
    task: Task,
    reason: ProposalRefusal,
    message: string,
    tool?: string,
    level?: AutonomyLevel,
  ): ParkOutcome {
    this.write(
      {
        type: 'a2a.approval.refused',
        time: auditNow(this.#now()),
        outcome: 'denied',
        client: clientOf(ctx),
        agent: ctx.agentSlug,
        taskId: task.id,
        contextId: task.contextId,
        reason,
        ...(tool !== undefined && { tool }),
        ...(level !== undefined && { level }),
        ...(ctx.caller !== undefined && { principalKind: ctx.caller.kind }),
      },
      false,
    );
    return { kind: 'refuse', message, reason: 'action_refused' };
  }

  /** A message on a parked task that nobody has decided yet: nothing runs. */
  reparked(ctx: CallContext, task: Task, actionId: string, now: number): void {
    this.write(
      {
        type: 'a2a.approval.reparked',
        time: auditNow(now),
        outcome: 'denied',
        client: clientOf(ctx),
        agent: ctx.agentSlug,
        taskId: task.id,
        contextId: task.contextId,
        actionId,
        reason: 'not_decided',
        ...(ctx.caller !== undefined && { principalKind: ctx.caller.kind }),
      },
      false,
    );
  }

  /** A person's decision or answer that the store refused (other error codes write nothing). */
  decisionRefused(userId: string, error: ApprovalError, id: string, remote: string | undefined, now: number): void {
    const code = error.code;
    if (
      code !== 'not_found' &&
      code !== 'not_decider' &&
      code !== 'already_decided' &&
      code !== 'expired' &&
      code !== 'invalid_action' &&
      code !== 'already_consumed'
    ) {
      return;
    }
    this.write(
      {
        type: 'a2a.approval.decision_refused',
        time: auditNow(now),
        outcome: 'denied',
        user: userId,
        reason: code,
        // An id the person typed is recorded only when it has the shape of one of ours.
        ...(ACTION_ID.test(id) && { actionId: id }),
        ...(remote !== undefined && { remote }),
      },
      false,
    );
  }
}

/**
 * The caller's client id, or `-` when there is none or it is not fit for the log.
 *
 * @example
 * ```ts
 * clientOf(ctx); // 'bot'
 * ```
 */
export function clientOf(ctx: CallContext): string {
  const id = ctx.caller?.clientId;
  return id !== undefined && AUDITABLE_ID.test(id) ? id : '-';
}

/**
 * The fields every `ok` row about one of a caller's tasks starts with, in the order they are
 * written: the time, the outcome, the client, the agent and the task.
 *
 * @example
 * ```ts
 * trail.write({ type: 'a2a.question.consumed', ...taskRowFields(ctx, task, now), actionId: questionId }, true);
 * ```
 */
export function taskRowFields(
  ctx: CallContext,
  task: Task,
  now: number,
): {
  time: AuditTime;
  outcome: 'ok';
  client: string;
  agent: string;
  taskId: string;
  contextId: string;
} {
  return {
    time: auditNow(now),
    outcome: 'ok',
    client: clientOf(ctx),
    agent: ctx.agentSlug,
    taskId: task.id,
    contextId: task.contextId,
  };
}

/**
 * An audit row's time.
 *
 * @example
 * ```ts
 * auditNow(0); // '1970-01-01T00:00:00.000Z'
 * ```
 */
export function auditNow(now: number): AuditTime {
  return new Date(now).toISOString() as AuditTime;
}
