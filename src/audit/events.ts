/**
 * Audit events: one row per decision and per task outcome — who, which agent, which task,
 * how many characters, what happened — and never what was said. Rows carry ids, counts and
 * closed vocabularies only: `reason` is one of a fixed set of machine codes (never text from a
 * caller or an exception), and `assertAuditSafe` refuses at run time what the types cannot
 * rule out (long strings, keys that look like secrets or content, unknown keys).
 *
 * The table `AUDIT_EVENT_SPEC` is the single source of truth: the TypeScript types below are
 * derived from it, and `assertAuditSafe` (in `safety.ts`) checks against it.
 *
 * @example
 * ```ts
 * const event: AuditEvent = {
 *   type: 'a2a.task.submitted',
 *   time: auditTime(),
 *   outcome: 'ok',
 *   client: 'partner',
 *   agent: 'helpdesk',
 *   taskId,
 *   contextId,
 *   inputChars: text.length,
 * };
 * assertAuditSafe(event); // throws AuditUnsafeEventError for a token-like key or a 300-char string
 * ```
 */
import type { TaskState } from '../protocol/model.js';

export type AuditOutcome = 'ok' | 'denied' | 'error';
export type PrincipalKind = 'client' | 'service' | 'delegated';

/** Suspicious-pattern category (or any other counter name) → how many times it was seen. */
export type AuditCounts = Readonly<Record<string, number>>;

/**
 * An ISO 8601 UTC timestamp with milliseconds, as `Date.prototype.toISOString` writes it.
 * Use `auditTime()`.
 */
export type AuditTime = `${number}-${number}-${number}T${number}:${number}:${number}.${number}Z`;

export function auditTime(date: Date = new Date()): AuditTime {
  return date.toISOString() as AuditTime;
}

/** Why a task failed: a generic code, never the backend's error text. */
const FAILED_REASONS = [
  'agent_failed',
  'agent_timeout',
  'internal_error',
  'shutdown',
  'gateway_restart',
  'action_refused',
  'action_denied',
  'action_expired',
  /** A task parked on input or auth was not updated for `store.parkedTtlMinutes`. */
  'parked_ttl',
  'output_too_large',
  /** The replica running the task stopped renewing its turn lease (`store.leaseSeconds`). */
  'replica_lost',
] as const;
/** Why a guarded action was refused before any person saw it. */
const PROPOSAL_REFUSED_REASONS = [
  'level_above_agent_max',
  'service_principal_capped',
  'no_decider',
  'invalid_proposal',
  'approvals_off',
  'store_full',
  /** The principal has `approvals.maxPendingPerPrincipal` actions and questions awaiting a person. */
  'principal_quota',
] as const;
/** Why a person's decision (or answer) was not taken: the ApprovalError code. */
const DECISION_REFUSED_REASONS = [
  'not_found',
  'not_decider',
  'already_decided',
  'expired',
  'invalid_action',
  'already_consumed',
  // A valid JWT that is not a person's (no person marker, or a client not allowed): issue 16.
  'not_a_person',
] as const;
const CANCELED_REASONS = ['canceled_by_client', 'agent_timeout', 'task_expired', 'shutdown'] as const;
const REJECTED_REASONS = [
  'agent_rejected',
  'task_store_full',
  /** The principal holds `limits.maxTasksPerPrincipal` tasks and none is finished. */
  'task_quota',
  /** The principal has `limits.maxParkedTasksPerPrincipal` tasks parked on input or auth. */
  'parked_quota',
  'body_too_large',
  'input_too_long',
  'too_many_parts',
  'metadata_too_large',
  'metadata_too_many_keys',
  'metadata_too_deep',
  'unsupported_content',
  'invalid_params',
  'context_busy',
  /** The agent's card declares a required extension the request did not list (-32008). */
  'extension_required',
] as const;
const AUTH_FAILED_REASONS = ['missing_credentials', 'invalid_credentials'] as const;
const FORBIDDEN_REASONS = [
  'agent_not_allowed',
  'address_not_allowed',
  'hop_refused',
  /** The request's hop chain holds this gateway: a relay loop. */
  'relay_loop',
  /** The request passed `limits.maxHops` gateways already. */
  'too_many_hops',
  'origin_not_allowed',
  'host_not_loopback',
] as const;
const RATE_LIMITED_REASONS = [
  'client_rate_limit',
  'auth_failure_limit',
  'concurrency_limit',
  'stream_limit',
  'draining',
] as const;
/** Outbound calls: `denied` for refusals by config or transport policy, `error` for failures. */
const CLIENT_REASONS = [
  'agent_not_configured',
  'insecure_url',
  'url_has_credentials',
  'origin_mismatch',
  'address_blocked',
  'redirect_refused',
  'card_invalid',
  'card_signature_invalid',
  'card_pin_mismatch',
  'message_too_long',
  'response_too_large',
  'request_timeout',
  'remote_auth_failed',
  'remote_error',
  'network_error',
  'task_not_found',
  'invalid_response',
  'proxy_refused',
  'confirmation_required',
  'invalid_params',
] as const;

/**
 * Why a tool call did not run (`a2a.tool.refused`), or why it failed (`a2a.tool.called` with
 * outcome `error`).
 */
const TOOL_REASONS = [
  /** The model named a tool the turn does not offer. */
  'not_offered',
  /** The arguments were not a JSON object. */
  'invalid_args',
  /** The tool's pin changed (or a new tool is not pinned yet): disabled until `airlock tools pin`. */
  'tool_disabled',
  /** A service principal asked for an acting tool (L3/L4): refused without parking. */
  'service_principal_capped',
  /** The ladder refused the level for this principal. */
  'level_refused',
  /** The turn used up `tools.maxCallsPerTurn`. */
  'budget_exceeded',
  /** The tool server could not be reached or failed the call. */
  'server_unavailable',
  /** The call took longer than the server's `timeoutSeconds`. */
  'timeout',
  /** The turn was cancelled while the call ran. */
  'aborted',
  /** The approved action ran already (an approval runs once). */
  'already_run',
  /** `runApproved` for an action that is not the one the person approved for this turn. */
  'not_approved',
  /** The tool answered with `isError`. */
  'tool_error',
] as const;

/** Why a webhook was not sent (`a2a.push.refused`): the config or the transport policy said no. */
const PUSH_REFUSED_REASONS = [
  'insecure_url',
  'url_has_credentials',
  'address_blocked',
  'redirect_refused',
  'proxy_refused',
  'invalid_config',
] as const;
/** Why a webhook delivery failed (`a2a.push.failed`), after its last attempt. */
const PUSH_FAILED_REASONS = [
  /** The receiver answered with a status other than 2xx. */
  'http_status',
  'request_timeout',
  'network_error',
  'response_too_large',
  'invalid_response',
  /** Too many events waited for this task's webhooks (`push.maxQueuedEvents`). */
  'queue_full',
] as const;

/** Why a config reload was refused (`config.reload_refused`): the running config keeps serving. */
const RELOAD_REFUSED_REASONS = ['invalid_config', 'needs_restart', 'apply_failed'] as const;

/** What each event type is: its allowed outcomes and reasons, required and optional fields. */
export const AUDIT_EVENT_SPEC = {
  'a2a.task.submitted': {
    outcomes: ['ok'],
    reasons: [],
    required: ['client', 'agent', 'taskId', 'contextId', 'inputChars'],
    optional: ['principalKind'],
  },
  'a2a.task.completed': {
    outcomes: ['ok'],
    reasons: [],
    required: ['client', 'agent', 'taskId', 'contextId', 'outputChars'],
    optional: ['principalKind', 'inputChars'],
  },
  'a2a.task.failed': {
    outcomes: ['error'],
    reasons: FAILED_REASONS,
    required: ['client', 'agent', 'taskId', 'contextId', 'reason'],
    optional: ['principalKind', 'inputChars', 'outputChars'],
  },
  'a2a.task.canceled': {
    outcomes: ['ok'],
    reasons: CANCELED_REASONS,
    required: ['client', 'agent', 'taskId', 'contextId'],
    optional: ['principalKind', 'inputChars', 'outputChars', 'reason'],
  },
  'a2a.task.rejected': {
    outcomes: ['denied'],
    reasons: REJECTED_REASONS,
    required: ['client', 'agent', 'reason'],
    optional: ['principalKind', 'taskId', 'contextId', 'inputChars'],
  },
  'a2a.task.input_required': {
    outcomes: ['ok'],
    reasons: [],
    required: ['client', 'agent', 'taskId', 'contextId', 'outputChars'],
    optional: ['principalKind', 'inputChars'],
  },
  'a2a.approval.requested': {
    outcomes: ['ok'],
    reasons: [],
    required: ['client', 'agent', 'taskId', 'actionId', 'tool', 'level', 'user'],
    optional: ['principalKind', 'contextId'],
  },
  'a2a.approval.refused': {
    outcomes: ['denied'],
    reasons: PROPOSAL_REFUSED_REASONS,
    required: ['client', 'agent', 'taskId', 'reason'],
    optional: ['principalKind', 'contextId', 'tool', 'level'],
  },
  'a2a.approval.decided': {
    outcomes: ['ok', 'denied'],
    reasons: ['approved', 'denied'],
    required: ['user', 'actionId', 'taskId', 'agent', 'reason'],
    optional: ['client', 'tool', 'level', 'remote'],
  },
  'a2a.approval.decision_refused': {
    outcomes: ['denied'],
    reasons: DECISION_REFUSED_REASONS,
    required: ['user', 'reason'],
    optional: ['actionId', 'taskId', 'agent', 'remote'],
  },
  'a2a.approval.consumed': {
    outcomes: ['ok'],
    reasons: [],
    required: ['client', 'agent', 'taskId', 'actionId'],
    optional: ['principalKind', 'contextId', 'user', 'tool', 'level'],
  },
  'a2a.approval.reparked': {
    outcomes: ['denied'],
    reasons: ['not_decided'],
    required: ['client', 'agent', 'taskId', 'actionId', 'reason'],
    optional: ['principalKind', 'contextId'],
  },
  'a2a.question.asked': {
    outcomes: ['ok'],
    reasons: [],
    required: ['client', 'agent', 'taskId', 'actionId', 'user'],
    optional: ['principalKind', 'contextId', 'state'],
  },
  'a2a.question.answered': {
    outcomes: ['ok'],
    reasons: [],
    required: ['user', 'actionId', 'taskId', 'agent'],
    optional: ['remote'],
  },
  'a2a.question.consumed': {
    outcomes: ['ok'],
    reasons: [],
    required: ['client', 'agent', 'taskId', 'actionId'],
    optional: ['principalKind', 'contextId', 'user'],
  },
  'a2a.server.auth_failed': {
    outcomes: ['denied'],
    reasons: AUTH_FAILED_REASONS,
    required: ['reason'],
    optional: ['agent', 'remote'],
  },
  'a2a.server.forbidden': {
    outcomes: ['denied'],
    reasons: FORBIDDEN_REASONS,
    required: ['reason'],
    optional: ['client', 'principalKind', 'agent', 'remote'],
  },
  'a2a.server.rate_limited': {
    outcomes: ['denied'],
    reasons: RATE_LIMITED_REASONS,
    required: ['reason'],
    optional: ['client', 'principalKind', 'agent', 'remote'],
  },
  'a2a.task.suspicious_input': {
    outcomes: ['ok'],
    reasons: [],
    required: ['client', 'agent', 'counts'],
    optional: ['principalKind', 'taskId', 'contextId', 'inputChars'],
  },
  'a2a.client.send': {
    outcomes: ['ok', 'denied', 'error'],
    reasons: CLIENT_REASONS,
    required: ['agent'],
    optional: ['taskId', 'contextId', 'state', 'inputChars', 'outputChars', 'reason'],
  },
  'a2a.client.get': {
    outcomes: ['ok', 'denied', 'error'],
    reasons: CLIENT_REASONS,
    required: ['agent', 'taskId'],
    optional: ['contextId', 'state', 'outputChars', 'reason'],
  },
  'a2a.tool.called': {
    outcomes: ['ok', 'error'],
    reasons: TOOL_REASONS,
    required: ['agent', 'taskId', 'tool', 'level', 'durationMs', 'argsBytes', 'argsDigest'],
    optional: ['client', 'principalKind', 'contextId', 'actionId', 'outputChars', 'reason'],
  },
  'a2a.tool.refused': {
    outcomes: ['denied', 'error'],
    reasons: TOOL_REASONS,
    required: ['agent', 'taskId', 'tool', 'reason'],
    optional: ['client', 'principalKind', 'contextId', 'level', 'actionId', 'durationMs', 'argsBytes', 'argsDigest'],
  },
  'a2a.push.delivered': {
    outcomes: ['ok'],
    reasons: [],
    required: ['agent', 'taskId', 'host'],
    optional: ['client', 'durationMs'],
  },
  'a2a.push.failed': {
    outcomes: ['error'],
    reasons: PUSH_FAILED_REASONS,
    required: ['agent', 'taskId', 'host', 'reason'],
    optional: ['client', 'durationMs'],
  },
  'a2a.push.refused': {
    outcomes: ['denied'],
    reasons: PUSH_REFUSED_REASONS,
    required: ['agent', 'taskId', 'host', 'reason'],
    optional: ['client'],
  },
  'a2a.tool.parked': {
    outcomes: ['ok'],
    reasons: [],
    required: ['agent', 'taskId', 'tool', 'level', 'argsBytes', 'argsDigest'],
    optional: ['client', 'principalKind', 'contextId'],
  },
  /** A config reload (SIGHUP) applied; `sections` names the top-level sections it changed (none: nothing new). */
  'config.reloaded': {
    outcomes: ['ok'],
    reasons: [],
    required: [],
    optional: ['sections'],
  },
  /** A config reload refused whole; `sections`: those of the keys that need a restart (`needs_restart`). */
  'config.reload_refused': {
    outcomes: ['denied'],
    reasons: RELOAD_REFUSED_REASONS,
    required: ['reason'],
    optional: ['sections'],
  },
} as const satisfies Record<
  string,
  {
    outcomes: readonly AuditOutcome[];
    reasons: readonly string[];
    required: readonly AuditField[];
    optional: readonly AuditField[];
  }
>;

type Spec = typeof AUDIT_EVENT_SPEC;
export type AuditEventType = keyof Spec;
export const AUDIT_EVENT_TYPES = Object.keys(AUDIT_EVENT_SPEC) as AuditEventType[];

/** Every reason code any event may carry. */
export type AuditReason = Spec[AuditEventType]['reasons'][number];
export type AuditReasonOf<T extends AuditEventType> = Spec[T]['reasons'][number];

/** The payload fields an event may carry, besides `type`, `time` and `outcome`. */
type AuditField =
  | 'client'
  | 'principalKind'
  | 'agent'
  | 'taskId'
  | 'contextId'
  | 'inputChars'
  | 'outputChars'
  | 'reason'
  | 'remote'
  | 'counts'
  | 'state'
  | 'actionId'
  | 'tool'
  | 'level'
  | 'user'
  | 'durationMs'
  | 'argsBytes'
  | 'argsDigest'
  | 'host'
  | 'sections';

interface FieldTypes<T extends AuditEventType> {
  /** The configured client id (or a token's client id): who called. */
  client: string;
  principalKind: PrincipalKind;
  /** Inbound: the agent's slug. Outbound: the registry name of the remote agent. */
  agent: string;
  taskId: string;
  contextId: string;
  /** Characters of text received (inbound) or sent (outbound). */
  inputChars: number;
  /** Characters of text replied (inbound) or received back (outbound). */
  outputChars: number;
  reason: AuditReasonOf<T>;
  /** The caller's address (IPv4 or IPv6), for refusals before a client is known. */
  remote: string;
  counts: AuditCounts;
  /** Outbound: the remote task's state. */
  state: TaskState;
  /** A pending action's (or a remote question's) id. */
  actionId: string;
  /** The tool a guarded action names. */
  tool: string;
  /** The action's autonomy level. */
  level: 'L1' | 'L2' | 'L3' | 'L4';
  /** The person who decides (or decided): `person:<id>` or `jwt:<issuer>#<sub>`. */
  user: string;
  /** How long a tool call took, in milliseconds. */
  durationMs: number;
  /** Bytes of a tool call's arguments (UTF-8 JSON); never the arguments themselves. */
  argsBytes: number;
  /** SHA-256 (hex) of a tool call's arguments as JCS; never the arguments themselves. */
  argsDigest: string;
  /** A webhook's host name or address as written in its URL: never its path, query or credentials. */
  host: string;
  /** Top-level config section names, comma-separated (`clients,limits`): never a key below them, never a value. */
  sections: string;
}

type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** The event of one type, derived from `AUDIT_EVENT_SPEC`. */
export type AuditEventOf<T extends AuditEventType> = Simplify<
  { type: T; time: AuditTime; outcome: Spec[T]['outcomes'][number] } & {
    [K in Spec[T]['required'][number]]: FieldTypes<T>[K];
  } & { [K in Spec[T]['optional'][number]]?: FieldTypes<T>[K] }
>;

/** Any audit event: a union discriminated on `type`. */
export type AuditEvent = { [T in AuditEventType]: AuditEventOf<T> }[AuditEventType];

export type TaskSubmittedEvent = AuditEventOf<'a2a.task.submitted'>;
export type TaskCompletedEvent = AuditEventOf<'a2a.task.completed'>;
export type TaskFailedEvent = AuditEventOf<'a2a.task.failed'>;
export type TaskCanceledEvent = AuditEventOf<'a2a.task.canceled'>;
export type TaskRejectedEvent = AuditEventOf<'a2a.task.rejected'>;
export type TaskInputRequiredEvent = AuditEventOf<'a2a.task.input_required'>;
export type AuthFailedEvent = AuditEventOf<'a2a.server.auth_failed'>;
export type ForbiddenEvent = AuditEventOf<'a2a.server.forbidden'>;
export type RateLimitedEvent = AuditEventOf<'a2a.server.rate_limited'>;
export type SuspiciousInputEvent = AuditEventOf<'a2a.task.suspicious_input'>;
export type ClientSendEvent = AuditEventOf<'a2a.client.send'>;
export type ClientGetEvent = AuditEventOf<'a2a.client.get'>;
export type ToolCalledEvent = AuditEventOf<'a2a.tool.called'>;
export type ToolRefusedEvent = AuditEventOf<'a2a.tool.refused'>;
export type ToolParkedEvent = AuditEventOf<'a2a.tool.parked'>;
export type ConfigReloadedEvent = AuditEventOf<'config.reloaded'>;
export type ConfigReloadRefusedEvent = AuditEventOf<'config.reload_refused'>;
