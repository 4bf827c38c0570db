/**
 * One webhook request and its audit row, shared by both deliveries (in memory: `deliver.ts`;
 * through a store's outbox: `outbox-delivery.ts`). The request goes through the guarded outbound
 * client (resolved-address check at connect, no redirects, no proxy variables, byte-capped
 * answer, connect/read/total timeouts); the body is the event in the dialect the config was
 * created in (v1.0: a StreamResponse, `application/a2a+json`; v0.3: the `kind`-tagged event,
 * `application/json`), with the config's `token` in `X-A2A-Notification-Token` and its
 * authentication as `Authorization`. Audit rows name the webhook's host only, never its path,
 * query, token or credentials.
 *
 * @example
 * ```ts
 * const outcome = await sendWebhook(settings, client, record, event);
 * auditDelivery(sink, { taskId, agent: 'echo' }, record, outcome);
 * ```
 */
import type { AuditEvent } from '../audit/events.js';
import { auditTime } from '../audit/events.js';
import type { GuardedClient } from '../net/client.js';
import { isOutboundError } from '../net/errors.js';
import type { Dialect } from '../protocol/dialect.js';
import { A2AError } from '../protocol/errors.js';
import { isTerminalState, type StreamEvent } from '../protocol/model.js';
import { v03 } from '../protocol/v03/index.js';
import { v10 } from '../protocol/v10/index.js';
import type { PushConfigRecord } from '../tasks/stores/push-records.js';
import type { PushSettings } from './config.js';
import { checkPushConfig } from './validate.js';

/**
 * The task a delivery is for, and who it belongs to (for audit rows).
 *
 * @example
 * ```ts
 * const watched: WatchedTask = { taskId: 't-1', agent: 'echo', client: 'ci' };
 * ```
 */
export interface WatchedTask {
  taskId: string;
  agent: string;
  client?: string;
}

/**
 * What one attempt came to: delivered, worth a retry, failed for good, or refused by policy.
 *
 * @example
 * ```ts
 * const outcome: Attempt = { kind: 'retry', reason: 'network_error' };
 * ```
 */
export type Attempt =
  | { kind: 'delivered' }
  | { kind: 'retry' | 'failed'; reason: FailedReason }
  | { kind: 'refused'; reason: RefusedReason };
type FailedReason = Extract<AuditEvent, { type: 'a2a.push.failed' }>['reason'];
type RefusedReason = Extract<AuditEvent, { type: 'a2a.push.refused' }>['reason'];

const DIALECTS: Readonly<Record<PushConfigRecord['dialect'], Dialect>> = { '1.0': v10, '0.3': v03 };
const CONTENT_TYPES: Readonly<Record<PushConfigRecord['dialect'], string>> = {
  '1.0': 'application/a2a+json',
  '0.3': 'application/json',
};
const REFUSED_CODES = new Set([
  'insecure_url',
  'url_has_credentials',
  'address_blocked',
  'redirect_refused',
  'proxy_refused',
]);
const RETRIED_STATUSES = new Set([408, 425, 429, 500, 502, 503, 504]);

/**
 * One POST of `event` to `record`'s webhook, in the config's dialect, with its token and
 * authentication. The config is judged again first: the policy may have changed since.
 *
 * @example
 * ```ts
 * const outcome = await sendWebhook(settings, client, record, event); // { kind: 'delivered' }
 * ```
 */
export async function sendWebhook(
  settings: PushSettings,
  client: GuardedClient,
  record: PushConfigRecord,
  event: StreamEvent,
): Promise<Attempt> {
  const { config } = record;
  try {
    // Judged again at every delivery: the policy may have changed since the config was set.
    checkPushConfig(config, settings);
  } catch (error) {
    if (error instanceof A2AError) return { kind: 'refused', reason: 'invalid_config' };
    throw error;
  }
  const headers: Record<string, string> = { 'content-type': CONTENT_TYPES[record.dialect] };
  if (config.token !== undefined) headers['x-a2a-notification-token'] = config.token;
  const auth = config.authentication;
  if (auth !== undefined)
    headers.authorization = auth.credentials === undefined ? auth.scheme : `${auth.scheme} ${auth.credentials}`;
  try {
    const response = await client.request({
      method: 'POST',
      url: config.url,
      headers,
      body: JSON.stringify(DIALECTS[record.dialect].encodeStreamEvent(event)),
      maxResponseBytes: settings.maxResponseBytes,
      timeouts: {
        connectMs: settings.connectTimeoutMs,
        readMs: settings.readTimeoutMs,
        totalMs: settings.totalTimeoutMs,
      },
      privateNetwork: settings.allowPrivate.length > 0,
    });
    if (response.status >= 200 && response.status < 300) return { kind: 'delivered' };
    return { kind: RETRIED_STATUSES.has(response.status) ? 'retry' : 'failed', reason: 'http_status' };
  } catch (error) {
    if (!isOutboundError(error)) return { kind: 'retry', reason: 'network_error' };
    if (REFUSED_CODES.has(error.code)) return { kind: 'refused', reason: error.code as RefusedReason };
    if (error.code === 'response_too_large') return { kind: 'failed', reason: 'response_too_large' };
    if (error.code === 'invalid_response') return { kind: 'failed', reason: 'invalid_response' };
    return { kind: 'retry', reason: error.code === 'request_timeout' ? 'request_timeout' : 'network_error' };
  }
}

/**
 * Writes the audit row of a delivery's end: `a2a.push.delivered`, `failed` or `refused`, naming
 * the webhook's host only. A failing sink never stops delivery.
 *
 * @example
 * ```ts
 * auditDelivery(sink, { taskId, agent: 'echo' }, record, { kind: 'delivered' }, 12);
 * ```
 */
export function auditDelivery(
  sink: ((event: AuditEvent) => void) | undefined,
  task: WatchedTask,
  record: PushConfigRecord | undefined,
  outcome: Attempt,
  durationMs?: number,
): void {
  if (sink === undefined) return;
  const common = {
    time: auditTime(),
    agent: task.agent,
    taskId: task.taskId,
    host: hostOf(record),
    ...(task.client !== undefined && { client: task.client }),
  };
  const duration = durationMs === undefined ? {} : { durationMs: Math.max(0, Math.round(durationMs)) };
  try {
    if (outcome.kind === 'delivered') sink({ type: 'a2a.push.delivered', outcome: 'ok', ...common, ...duration });
    else if (outcome.kind === 'refused')
      sink({ type: 'a2a.push.refused', outcome: 'denied', ...common, reason: outcome.reason });
    else sink({ type: 'a2a.push.failed', outcome: 'error', ...common, ...duration, reason: outcome.reason });
  } catch {
    // The audit trail reports its own failures; delivery goes on.
  }
}

/** The host as written in the URL (`-` when there is none to name). Never path, query or credentials. */
function hostOf(record: PushConfigRecord | undefined): string {
  if (record === undefined) return '-';
  try {
    const host = new URL(record.config.url).host;
    return /^[\x21-\x7e]{1,256}$/.test(host) ? host : '-';
  } catch {
    return '-';
  }
}

/**
 * The last event of a task's life: a terminal status. Interrupted tasks go on.
 *
 * @example
 * ```ts
 * isFinal({ kind: 'status-update', taskId, contextId, status: { state: 'completed' }, final: true }); // true
 * ```
 */
export function isFinal(event: StreamEvent): boolean {
  if (event.kind === 'status-update') return isTerminalState(event.status.state);
  if (event.kind === 'task') return isTerminalState(event.task.status.state);
  return false;
}
