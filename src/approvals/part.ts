/**
 * The data part a parked task carries: what the caller (and its human) sees of a pending
 * guarded action. Snake-case keys because it is wire format, read by other A2A implementations.
 *
 * @example
 * ```ts
 * const data = actionDataPart(action, `https://gw.example/approvals/${action.actionId}`);
 * status.message.parts.push({ kind: 'data', data });
 * ```
 */
import type { AutonomyLevel } from './ladder.js';
import type { JsonValue } from './redact.js';
import type { PendingAction } from './store.js';

/**
 * The `data` of the input-required status part: `{action_id, tool, args, level, expires_at, approve_url}`.
 * `args` are the redacted ones; `expires_at` is ISO 8601 UTC.
 *
 * @example
 * ```ts
 * const part: ActionDataPart = { action_id: 'q1…', tool: 'send_email', args: {}, level: 'L4', expires_at: '2026-01-01T00:15:00.000Z', approve_url: 'https://gw.example/approvals/q1…' };
 * ```
 */
export interface ActionDataPart {
  readonly action_id: string;
  readonly tool: string;
  readonly args: JsonValue;
  readonly level: AutonomyLevel;
  readonly expires_at: string;
  readonly approve_url: string;
}

/**
 * Builds the data part for a stored action. Pure. The approve URL is the gateway's own
 * out-of-band endpoint (where the person logs in as themself); it is passed in because only the
 * server knows its public origin.
 *
 * @example
 * ```ts
 * actionDataPart(action, 'https://gw.example/approvals/abc').expires_at; // '2026-…Z'
 * ```
 */
export function actionDataPart(
  action: Pick<PendingAction, 'actionId' | 'tool' | 'args' | 'level' | 'expiresAt'>,
  approveUrl: string,
): ActionDataPart {
  return {
    action_id: action.actionId,
    tool: action.tool,
    args: action.args,
    level: action.level,
    expires_at: new Date(action.expiresAt).toISOString(),
    approve_url: approveUrl,
  };
}
