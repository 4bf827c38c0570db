/**
 * What one audit row means for the metrics: a pure mapping from a row (src/audit/events.ts) to
 * the counter increments it implies. Refusals, task transitions, outbound calls, approvals, tool
 * calls and push deliveries are audit rows already, so the hot path pays one switch per row and
 * nothing else.
 *
 * Label values are bounded: an agent slug not in the config becomes `unknown`, an outbound name
 * the registry did not know (`agent_not_configured`) becomes `unknown`, and every other label is
 * a reason, state or outcome from the closed enums of `AUDIT_EVENT_SPEC`.
 *
 * @example
 * ```ts
 * const { counts } = metricsOfRow(row, new Set(['echo']));
 * // a2a.server.auth_failed → [{ series: 'refusals', labels: ['echo', 'auth', 'invalid_credentials'] }]
 * ```
 */
import type { AuditEvent } from '../../audit/index.js';

/**
 * Which class of refusal a reason code is: the `class` label of `airlock_refusals_total`.
 *
 * @example
 * ```ts
 * REFUSAL_CLASS.auth_failure_limit; // 'lockout'
 * ```
 */
export const REFUSAL_CLASS = {
  missing_credentials: 'auth',
  invalid_credentials: 'auth',
  agent_not_allowed: 'auth',
  address_not_allowed: 'gate',
  host_not_loopback: 'gate',
  origin_not_allowed: 'origin',
  hop_refused: 'loop',
  relay_loop: 'loop',
  too_many_hops: 'loop',
  client_rate_limit: 'rate',
  auth_failure_limit: 'lockout',
  concurrency_limit: 'concurrency',
  stream_limit: 'stream',
  draining: 'drain',
  body_too_large: 'body',
  body_timeout: 'body',
  input_too_long: 'content',
  too_many_parts: 'content',
  unsupported_content: 'content',
  invalid_params: 'content',
  metadata_too_large: 'content',
  metadata_too_many_keys: 'content',
  metadata_too_deep: 'content',
  task_store_full: 'quota',
  task_quota: 'quota',
  parked_quota: 'quota',
  context_busy: 'busy',
  extension_required: 'extension',
} as const;

export type RefusalReason = keyof typeof REFUSAL_CLASS;

/** A counter of `MetricSeries` that rows feed. */
export type RowSeries =
  | 'refusals'
  | 'taskTransitions'
  | 'taskFailures'
  | 'suspiciousInputs'
  | 'outboundCalls'
  | 'approvalsRequested'
  | 'approvalsDecided'
  | 'approvalsRefused'
  | 'toolCalls'
  | 'pushDeliveries';

/**
 * One increment: the series and its label values in `labelNames` order.
 *
 * @example
 * ```ts
 * const increment: Increment = { series: 'taskTransitions', labels: ['echo', 'completed'] };
 * ```
 */
export interface Increment {
  readonly series: RowSeries;
  readonly labels: readonly string[];
}

/** The states a task's duration is observed at. */
export type FinalState = 'completed' | 'failed' | 'canceled' | 'rejected';

/**
 * What a row means: increments, and the task it starts or ends (for the duration histogram).
 *
 * @example
 * ```ts
 * const meaning: RowMetrics = { counts: [], task: { id: 't-1', agent: 'echo', ends: 'completed' } };
 * ```
 */
export interface RowMetrics {
  readonly counts: readonly Increment[];
  /** Set on `submitted` (no `ends`) and on final rows (`ends`). */
  readonly task?: { readonly id: string; readonly agent: string; readonly ends?: FinalState };
}

const NONE: RowMetrics = { counts: [] };
/** The label for "no reason code" / "no agent known". */
export const NO_LABEL = 'none';
/** The label for a value that is not from the config. */
export const UNKNOWN_LABEL = 'unknown';
/** Registry entry names (docs/OUTBOUND.md): what an outbound `agent` field may be. */
const ENTRY_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/**
 * The increments one audit row implies. Pure: same row, same answer.
 *
 * @example
 * ```ts
 * metricsOfRow({ type: 'a2a.task.completed', time, outcome: 'ok', client: 'c', agent: 'echo', taskId: 't', contextId: 'x', outputChars: 5 }, agents);
 * // { counts: [{ series: 'taskTransitions', labels: ['echo', 'completed'] }], task: { id: 't', agent: 'echo', ends: 'completed' } }
 * ```
 */
export function metricsOfRow(row: AuditEvent, agents: ReadonlySet<string>): RowMetrics {
  switch (row.type) {
    case 'a2a.task.submitted': {
      const agent = slug(row.agent, agents);
      return { counts: [transition(agent, 'submitted')], task: { id: row.taskId, agent } };
    }
    case 'a2a.task.input_required':
      return { counts: [transition(slug(row.agent, agents), 'input-required')] };
    case 'a2a.task.completed':
      return final(row.taskId, slug(row.agent, agents), 'completed');
    case 'a2a.task.canceled':
      return final(row.taskId, slug(row.agent, agents), 'canceled');
    case 'a2a.task.failed': {
      const agent = slug(row.agent, agents);
      const ended = final(row.taskId, agent, 'failed');
      const counts = [...ended.counts, { series: 'taskFailures', labels: [agent, row.reason] } as const];
      // An approval nobody decided in time ends its task: the third decision, besides approved and denied.
      if (row.reason === 'action_expired') counts.push({ series: 'approvalsDecided', labels: [agent, 'expired'] });
      return { ...ended, counts };
    }
    case 'a2a.task.rejected': {
      const agent = slug(row.agent, agents);
      // The agent said no: a task's end. Every other reason is the gateway refusing the message.
      if (row.reason === 'agent_rejected') {
        return row.taskId === undefined
          ? { counts: [transition(agent, 'rejected')] }
          : final(row.taskId, agent, 'rejected');
      }
      return refusal(agent, row.reason);
    }
    case 'a2a.server.auth_failed':
    case 'a2a.server.forbidden':
    case 'a2a.server.rate_limited':
      return refusal(row.agent === undefined ? NO_LABEL : slug(row.agent, agents), row.reason);
    case 'a2a.task.suspicious_input':
      return one('suspiciousInputs', slug(row.agent, agents));
    case 'a2a.client.send':
    case 'a2a.client.get':
      return one(
        'outboundCalls',
        row.reason === 'agent_not_configured' || !ENTRY_NAME.test(row.agent) ? UNKNOWN_LABEL : row.agent,
        row.type === 'a2a.client.send' ? 'send' : 'get',
        row.outcome,
        row.reason ?? NO_LABEL,
      );
    case 'a2a.approval.requested':
      return one('approvalsRequested', slug(row.agent, agents), 'action');
    case 'a2a.question.asked':
      return one('approvalsRequested', slug(row.agent, agents), 'question');
    case 'a2a.approval.decided':
      return one('approvalsDecided', slug(row.agent, agents), row.reason);
    case 'a2a.question.answered':
      return one('approvalsDecided', slug(row.agent, agents), 'answered');
    case 'a2a.approval.refused':
    case 'a2a.approval.decision_refused':
      return one('approvalsRefused', row.reason);
    case 'a2a.tool.called':
      return one('toolCalls', slug(row.agent, agents), row.outcome, row.reason ?? NO_LABEL);
    case 'a2a.tool.refused':
      return one('toolCalls', slug(row.agent, agents), 'refused', row.reason);
    case 'a2a.tool.parked':
      return one('toolCalls', slug(row.agent, agents), 'parked', NO_LABEL);
    case 'a2a.push.delivered':
      return one('pushDeliveries', slug(row.agent, agents), 'delivered', NO_LABEL);
    case 'a2a.push.failed':
      return one('pushDeliveries', slug(row.agent, agents), 'failed', row.reason);
    case 'a2a.push.refused':
      return one('pushDeliveries', slug(row.agent, agents), 'refused', row.reason);
    // Counted where the reload settles (`airlock_config_reloads_total`), with its reason.
    case 'config.reloaded':
    case 'config.reload_refused':
      return NONE;
    // Steps of an approval already counted when it was requested and decided.
    case 'a2a.approval.consumed':
    case 'a2a.approval.reparked':
    case 'a2a.question.consumed':
      return NONE;
    default:
      return unreachable(row);
  }
}

/**
 * A refusal's increment (also used by the request meter for refusals no row records: 413, 408).
 *
 * @example
 * ```ts
 * refusal('echo', 'body_too_large'); // { counts: [{ series: 'refusals', labels: ['echo', 'body', 'body_too_large'] }] }
 * ```
 */
export function refusal(agent: string, reason: RefusalReason): RowMetrics {
  return one('refusals', agent, REFUSAL_CLASS[reason], reason);
}

function slug(agent: string, agents: ReadonlySet<string>): string {
  return agents.has(agent) ? agent : UNKNOWN_LABEL;
}

function transition(agent: string, state: string): Increment {
  return { series: 'taskTransitions', labels: [agent, state] };
}

function final(id: string, agent: string, ends: FinalState): RowMetrics {
  return { counts: [transition(agent, ends)], task: { id, agent, ends } };
}

function one(series: RowSeries, ...labels: string[]): RowMetrics {
  return { counts: [{ series, labels }] };
}

function unreachable(row: never): RowMetrics {
  void row;
  return NONE;
}
