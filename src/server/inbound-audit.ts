/**
 * The inbound audit trail: turns the gateway's decisions (refusals, task lifecycle, suspicious
 * input) into audit rows — ids, counts and fixed reason codes, never content or credentials.
 * With no sink configured every method is a no-op.
 *
 * Writes are synchronous. A task whose `submitted` row cannot be written is not started: the
 * write failure becomes an internal error for the caller (see `taskObserver`).
 *
 * @example
 * ```ts
 * const audit = new InboundAudit(openAuditSinks(config.audit));
 * audit.authFailed('invalid_credentials', 'echo', '127.0.0.1');
 * const service = new TaskService({ store, observe: audit.taskObserver() });
 * ```
 */
import { createHash } from 'node:crypto';
import {
  auditTime,
  JsonlAuditSink,
  StdoutAuditSink,
  type AuditCounts,
  type AuditEvent,
  type AuditReasonOf,
  type AuditSink,
  type AuditTime,
  type PrincipalKind,
} from '../audit/index.js';
import type { AuditConfig } from '../config/schema.js';
import { A2AError } from '../protocol/errors.js';
import type { Task } from '../protocol/model.js';
import type { TaskLifecycleEvent, TaskObserver } from '../tasks/policy.js';
import { isoNow } from '../tasks/ids.js';
import type { CallContext } from '../tasks/call-context.js';
import type { Logger } from './log.js';

/**
 * Opens the configured sinks (a hash-chained JSONL file, stdout, or both); none when neither is set.
 * The file is written with group commit (audit/commit.ts): the gateway holds each response until
 * `committed()` (respond/committed.ts). A batch that fails goes to `logger`.
 *
 * @example
 * ```ts
 * const sink = openAuditSinks({ file: '.airlock/audit.jsonl', stdout: false });
 * ```
 */
export function openAuditSinks(config: AuditConfig, logger?: Logger): AuditSink | undefined {
  const sinks: AuditSink[] = [];
  if (config.file !== undefined) {
    sinks.push(
      new JsonlAuditSink(config.file, {
        groupCommit: true,
        // One line per row lost, as when each row was written on its own.
        onCommitError: (error, lines) => {
          for (const line of lines) {
            const { type } = JSON.parse(line) as { type: string };
            logger?.error({ event: 'audit_write_failed', type, error: describe(error) });
          }
        },
      }),
    );
  }
  if (config.stdout) sinks.push(new StdoutAuditSink());
  if (sinks.length === 0) return undefined;
  if (sinks.length === 1) return sinks[0];
  return {
    write: (event) => {
      for (const sink of sinks) sink.write(event);
    },
    committed: () => {
      let wait: Promise<void> | undefined;
      for (const sink of sinks) {
        const commit = sink.committed?.();
        if (commit !== undefined)
          wait = wait === undefined ? commit : Promise.all([wait, commit]).then(() => undefined);
      }
      return wait;
    },
    close: () => {
      for (const sink of sinks) sink.close();
    },
  };
}

type Remote = string | undefined;

export class InboundAudit {
  readonly #sink: AuditSink | undefined;
  readonly #logger: Logger;
  /** The sink's last commit point, and the same promise with its failure as the caller's error. */
  #commit: Promise<void> | undefined;
  #refusedIfLost: Promise<void> | undefined;

  readonly #scansInput: boolean;

  /**
   * `options.scanInput`: whether messages are scanned for suspicious patterns (default: when
   * there is a sink). The gateway turns it off when its only sink is the metrics' counting one,
   * so that metrics alone never add a content scan to each message.
   */
  constructor(sink: AuditSink | undefined, logger: Logger, options: { scanInput?: boolean } = {}) {
    this.#sink = sink;
    this.#logger = logger;
    this.#scansInput = sink !== undefined && (options.scanInput ?? true);
  }

  /** True when rows are written: callers may skip building events otherwise. */
  get enabled(): boolean {
    return this.#sink !== undefined;
  }

  /** True when a message's suspicious patterns are counted (an audit row when there are any). */
  get scansInput(): boolean {
    return this.#scansInput;
  }

  authFailed(reason: AuditReasonOf<'a2a.server.auth_failed'>, agent: string | undefined, remote: Remote): void {
    if (this.#sink === undefined) return;
    this.#refusal({
      type: 'a2a.server.auth_failed',
      time: auditTime(),
      outcome: 'denied',
      reason,
      ...(agent !== undefined && { agent }),
      ...(remote !== undefined && { remote }),
    });
  }

  forbidden(
    reason: AuditReasonOf<'a2a.server.forbidden'>,
    agent: string | undefined,
    remote: Remote,
    caller?: CallContext['caller'],
  ): void {
    if (this.#sink === undefined) return;
    this.#refusal({ type: 'a2a.server.forbidden', ...refusalFields(agent, remote, caller), reason });
  }

  rateLimited(
    reason: AuditReasonOf<'a2a.server.rate_limited'>,
    agent: string | undefined,
    remote: Remote,
    caller?: CallContext['caller'],
  ): void {
    if (this.#sink === undefined) return;
    this.#refusal({ type: 'a2a.server.rate_limited', ...refusalFields(agent, remote, caller), reason });
  }

  /**
   * A task a previous process left running, failed at startup (restart safety), a parked task
   * past its TTL, or a task whose replica stopped (`replica_lost`, failed by another). The owner key is
   * all that is left of the caller: `principalKey@agentSlug`, the principal key being
   * `kind:client:actingAgent:subject` with each part %-escaped.
   */
  restartFailed(
    owner: string,
    task: Task,
    reason: 'gateway_restart' | 'parked_ttl' | 'replica_lost' = 'gateway_restart',
  ): void {
    if (this.#sink === undefined) return;
    const at = owner.lastIndexOf('@');
    const principal = owner.slice(0, at).split(':');
    const kind = principal[0] as PrincipalKind;
    const row: AuditEvent = {
      type: 'a2a.task.failed',
      time: auditTime(),
      outcome: 'error',
      client: auditClientId({ kind, clientId: unescapePrincipalPart(principal[1] ?? '-') }),
      agent: owner.slice(at + 1),
      taskId: task.id,
      contextId: task.contextId,
      reason,
    };
    if (PRINCIPAL_KINDS.has(kind)) row.principalKind = kind;
    this.#task(row);
  }

  /**
   * A new task the store refused for its principal's quota or because it is full (the store
   * knows only the owner key, `principalKey@agentSlug`; see restartFailed).
   */
  storeRefused(owner: string, reason: 'task_quota' | 'parked_quota' | 'task_store_full'): void {
    if (this.#sink === undefined) return;
    const at = owner.lastIndexOf('@');
    const principal = owner.slice(0, at).split(':');
    const kind = principal[0] as PrincipalKind;
    this.#refusal({
      type: 'a2a.task.rejected',
      time: auditTime(),
      outcome: 'denied',
      reason,
      client: auditClientId({ kind, clientId: unescapePrincipalPart(principal[1] ?? '-') }),
      agent: owner.slice(at + 1),
      ...(PRINCIPAL_KINDS.has(kind) && { principalKind: kind }),
    });
  }

  /** A message refused before any task was made (limits, content rules, busy context). */
  rejected(ctx: CallContext, reason: AuditReasonOf<'a2a.task.rejected'>, inputChars?: number): void {
    if (this.#sink === undefined) return;
    this.#refusal({
      type: 'a2a.task.rejected',
      time: auditTime(),
      outcome: 'denied',
      reason,
      client: auditClientId(ctx.caller),
      agent: ctx.agentSlug,
      ...(ctx.caller !== undefined && { principalKind: ctx.caller.kind }),
      ...(inputChars !== undefined && { inputChars }),
    });
  }

  /** Suspicious patterns counted in a caller's message (counts by category only). */
  suspicious(ctx: CallContext, counts: AuditCounts, inputChars: number): void {
    if (this.#sink === undefined) return;
    this.#task({
      type: 'a2a.task.suspicious_input',
      time: auditTime(),
      outcome: 'ok',
      client: auditClientId(ctx.caller),
      agent: ctx.agentSlug,
      counts,
      inputChars,
      ...(ctx.caller !== undefined && { principalKind: ctx.caller.kind }),
    });
  }

  /**
   * With group commit: undefined when every row is written, else a promise settled once it is,
   * rejected with the internal error a task whose submitted row is lost gets ("nothing was run").
   * The task service awaits it after the submitted row (TaskServiceOptions.observed).
   */
  written(): Promise<void> | undefined {
    const commit = this.#sink?.committed?.();
    if (commit === undefined) return undefined;
    // One mapped promise per batch, not per request.
    if (commit !== this.#commit) {
      this.#commit = commit;
      // The failure is logged by the sink's onCommitError, once per row.
      this.#refusedIfLost = commit.catch(() => {
        throw new A2AError('INTERNAL', 'The request could not be recorded in the audit log; nothing was run');
      });
      this.#refusedIfLost.catch(() => undefined);
    }
    return this.#refusedIfLost;
  }

  /** The task service's observer: submitted and outcome rows. Undefined when nothing is audited. */
  taskObserver(): TaskObserver | undefined {
    if (this.#sink === undefined) return undefined;
    return (event) => this.#task(lifecycleRow(event));
  }

  /**
   * Writes a row built elsewhere (approvals). A `required` row that cannot be written throws an
   * internal error, so that what it records is not done unaudited; others go to the log.
   *
   * @example
   * ```ts
   * audit.record({ type: 'a2a.approval.decided', time: auditTime(), outcome: 'ok', user, actionId, taskId, agent, reason: 'approved' }, false);
   * ```
   */
  record(event: AuditEvent, required: boolean): void {
    if (this.#sink === undefined) return;
    try {
      this.#sink.write(event);
    } catch (error) {
      this.#logger.error({ event: 'audit_write_failed', type: event.type, error: describe(error) });
      if (required) throw new A2AError('INTERNAL', 'The step could not be recorded in the audit log; nothing was done');
    }
  }

  close(): void {
    this.#sink?.close();
  }

  /** A refusal that cannot be recorded is still a refusal: the failure goes to the log. */
  #refusal(event: AuditEvent): void {
    try {
      this.#sink?.write(event);
    } catch (error) {
      this.#logger.error({ event: 'audit_write_failed', type: event.type, error: describe(error) });
    }
  }

  /** A task row that cannot be written stops the task (the caller gets an internal error). */
  #task(event: AuditEvent): void {
    try {
      this.#sink?.write(event);
    } catch (error) {
      this.#logger.error({ event: 'audit_write_failed', type: event.type, error: describe(error) });
      if (event.type === 'a2a.task.submitted') {
        throw new A2AError('INTERNAL', 'The request could not be recorded in the audit log; nothing was run');
      }
    }
  }
}

/**
 * The row for one lifecycle event. Written out field by field: this runs twice per task, and
 * spreading a shared base object into each row is several times slower in V8.
 */
function lifecycleRow(event: TaskLifecycleEvent): AuditEvent {
  const time = isoNow() as AuditTime;
  const client = auditClientId(event.ctx.caller);
  const principalKind = event.ctx.caller?.kind;
  const agent = event.ctx.agentSlug;
  const { taskId, contextId } = event;
  let row: AuditEvent;
  switch (event.type) {
    case 'submitted':
      row = {
        type: 'a2a.task.submitted',
        time,
        outcome: 'ok',
        client,
        agent,
        taskId,
        contextId,
        inputChars: event.inputChars,
      };
      break;
    case 'completed':
      row = {
        type: 'a2a.task.completed',
        time,
        outcome: 'ok',
        client,
        agent,
        taskId,
        contextId,
        inputChars: event.inputChars,
        outputChars: event.outputChars,
      };
      break;
    case 'input-required':
      row = {
        type: 'a2a.task.input_required',
        time,
        outcome: 'ok',
        client,
        agent,
        taskId,
        contextId,
        inputChars: event.inputChars,
        outputChars: event.outputChars,
      };
      break;
    case 'rejected':
      row = {
        type: 'a2a.task.rejected',
        time,
        outcome: 'denied',
        client,
        agent,
        taskId,
        contextId,
        reason: 'agent_rejected',
      };
      break;
    case 'failed':
      row = {
        type: 'a2a.task.failed',
        time,
        outcome: 'error',
        client,
        agent,
        taskId,
        contextId,
        reason: failedReason(event.reason),
        inputChars: event.inputChars,
        outputChars: event.outputChars,
      };
      break;
    case 'canceled':
      row = {
        type: 'a2a.task.canceled',
        time,
        outcome: 'ok',
        client,
        agent,
        taskId,
        contextId,
        reason: event.reason === 'shutdown' ? 'shutdown' : 'canceled_by_client',
        outputChars: event.outputChars,
      };
      break;
  }
  if (principalKind !== undefined) row.principalKind = principalKind;
  return row;
}

/** The fields every forbidden / rate-limited row shares. */
function refusalFields(
  agent: string | undefined,
  remote: Remote,
  caller: CallContext['caller'],
): {
  time: AuditTime;
  outcome: 'denied';
  agent?: string;
  remote?: string;
  client?: string;
  principalKind?: PrincipalKind;
} {
  return {
    time: auditTime(),
    outcome: 'denied',
    ...(agent !== undefined && { agent }),
    ...(remote !== undefined && { remote }),
    ...(caller !== undefined && { client: auditClientId(caller), principalKind: caller.kind }),
  };
}

const PRINCIPAL_KINDS: ReadonlySet<string> = new Set<PrincipalKind>(['client', 'service', 'delegated']);

/** The inverse of escapePrincipalPart (`%HH` UTF-8 escapes and `%uXXXX` for lone surrogates). */
function unescapePrincipalPart(part: string): string {
  if (!part.includes('%')) return part;
  try {
    return decodeURIComponent(
      part.replace(/%u([0-9A-F]{4})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
    );
  } catch {
    return part;
  }
}

/** What audit rows accept as a client id: printable ASCII without spaces, at most 256. */
const AUDITABLE_ID = /^[\x21-\x7e]{1,256}$/;

/**
 * The client id as a row can hold it. Configured ids always fit; a JWT's `azp`/`client_id` (or
 * its issuer) may hold spaces or other characters, and is then recorded as `~` and the first
 * 32 hex digits of its SHA-256, so that the task is still audited and the id still correlates.
 */
function auditClientId(caller: CallContext['caller']): string {
  if (caller === undefined) return '-';
  const id = caller.clientId;
  return AUDITABLE_ID.test(id) ? id : `~${createHash('sha256').update(id, 'utf8').digest('hex').slice(0, 32)}`;
}

/** The failed row's reason: the service's code when the row type has it, else `agent_failed`. */
function failedReason(reason: TaskLifecycleEvent['reason']): AuditReasonOf<'a2a.task.failed'> {
  switch (reason) {
    case 'shutdown':
    case 'internal_error':
    case 'action_refused':
    case 'action_denied':
    case 'action_expired':
    case 'output_too_large':
    case 'replica_lost':
      return reason;
    default:
      return 'agent_failed';
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
