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
import { displayArgs } from './display.js';
import type { AutonomyLevel } from './ladder.js';
import type { JsonValue } from './redact.js';
import type { PendingAction } from './store.js';

/**
 * The `data` of the input-required status part: `{action_id, tool, args, level, expires_at, approve_url}`.
 * `args` are the redacted ones; `expires_at` is ISO 8601 UTC. When the arguments hold invisible or
 * bidi control characters, `hidden_characters: true` and `args_display` (the arguments as one
 * line of JSON with each such character written `\uXXXX`; `JSON.parse(args_display)` is `args`)
 * are added, so a caller's screen can show what runs rather than what the characters draw.
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
  /** Present (true) only when `args` hold invisible or bidi control characters. */
  readonly hidden_characters?: true;
  /** Present only with `hidden_characters`: `args` escaped (see display.ts). */
  readonly args_display?: string;
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
  const shown = displayArgs(action.args);
  return {
    action_id: action.actionId,
    tool: action.tool,
    args: action.args,
    level: action.level,
    expires_at: new Date(action.expiresAt).toISOString(),
    approve_url: approveUrl,
    ...(shown.hiddenCount > 0 && { hidden_characters: true as const, args_display: shown.text }),
  };
}
