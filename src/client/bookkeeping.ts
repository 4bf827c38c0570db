/**
 * Bookkeeping and audit for outbound calls. Each call is mirrored as a task owned by the
 * caller, with an id carrying `a2a-out-` (which the inbound task methods refuse, so a remote
 * caller can never read or cancel it). The mirror holds ids and state only — no prompt, no
 * reply — and the remote's state stays authoritative. Neither a failing ledger nor a failing
 * audit sink ever breaks a call: the remote may already have acted, and the caller must still
 * learn its task id.
 *
 * @example
 * ```ts
 * const ledger = new MemoryOutboundLedger();
 * await recordMirror(ledger, 'client:cli::', mirrorTask({ agent: 'travel', remoteTaskId: 't-1', contextId: 'c-1', state: 'working', now: Date.now() }), log);
 * ```
 */
import { randomUUID } from 'node:crypto';
import { auditTime, type AuditEvent, type ClientGetEvent, type ClientSendEvent } from '../audit/events.js';
import type { Task, TaskState } from '../protocol/model.js';
import { OUTBOUND_ID_PREFIX } from '../tasks/session.js';
import type { TaskStore } from '../tasks/store.js';
import type { ClientLog } from './contracts.js';
import { STRICT_ID_PATTERN } from './result.js';

/**
 * Where mirrors go. `record` replaces the mirror with the same id; `get` answers only for the
 * principal that recorded it. Ownership checks (a `getTask`, or a follow-up send with a
 * `taskId`, works only on remote tasks the same caller started) rely on `get`.
 *
 * @example
 * ```ts
 * const ledger: OutboundLedger = { record: (owner, task) => store.put(owner, task), get: (owner, id) => store.get(owner, id) };
 * ```
 */
export interface OutboundLedger {
  record(principalKey: string, mirror: Task): Promise<void> | void;
  get(principalKey: string, id: string): Promise<Task | undefined> | Task | undefined;
}

/**
 * The mirror id: `a2a-out-<agent>.<remote task id>`, or `a2a-out-<agent>.<uuid>` when the
 * remote gave no usable id (a direct message reply, or an id outside the strict pattern). The
 * agent name is part of it because two remotes may both number their tasks `1`; agent names
 * never contain `.`, so the split is unambiguous.
 *
 * @example
 * ```ts
 * mirrorId('travel', 't-1'); // 'a2a-out-travel.t-1'
 * ```
 */
export function mirrorId(agent: string, remoteTaskId?: string | null): string {
  const remote = typeof remoteTaskId === 'string' && STRICT_ID_PATTERN.test(remoteTaskId) ? remoteTaskId : randomUUID();
  return `${OUTBOUND_ID_PREFIX}${agent}.${remote}`;
}

/**
 * What the mirror of one exchange holds.
 *
 * @example
 * ```ts
 * const input: MirrorInput = { agent: 'travel', remoteTaskId: 't-1', contextId: 'c-1', state: 'completed', now: Date.now() };
 * ```
 */
export interface MirrorInput {
  agent: string;
  remoteTaskId?: string | null;
  contextId?: string | null;
  state: TaskState;
  /** Epoch milliseconds. */
  now: number;
}

/**
 * A mirror task: ids, state and the agent's name in metadata; no message content.
 *
 * @example
 * ```ts
 * mirrorTask({ agent: 'travel', remoteTaskId: 't-1', state: 'working', now: 0 }).id; // 'a2a-out-travel.t-1'
 * ```
 */
export function mirrorTask(input: MirrorInput): Task {
  const id = mirrorId(input.agent, input.remoteTaskId);
  const remoteTaskId = typeof input.remoteTaskId === 'string' ? input.remoteTaskId : '';
  const contextId = typeof input.contextId === 'string' && input.contextId.length > 0 ? input.contextId : id;
  return {
    id,
    contextId,
    status: { state: input.state, timestamp: new Date(input.now).toISOString() },
    artifacts: [],
    history: [],
    metadata: {
      direction: 'outbound',
      agent: input.agent,
      remoteTaskId: STRICT_ID_PATTERN.test(remoteTaskId) ? remoteTaskId : '',
    },
  };
}

/**
 * Records a mirror; any failure (thrown or rejected) is logged by name and swallowed.
 *
 * @example
 * ```ts
 * await recordMirror(ledger, principalKey, mirror, log); // never rejects
 * ```
 */
export async function recordMirror(
  ledger: OutboundLedger | undefined,
  principalKey: string,
  mirror: Task,
  log: ClientLog,
): Promise<void> {
  if (ledger === undefined) return;
  try {
    await ledger.record(principalKey, mirror);
  } catch (error) {
    log('a2a.client.ledger_failed', { taskId: mirror.id, error: errorName(error) });
  }
}

/**
 * True when `principalKey` started the remote task `remoteTaskId` of `agent`: its mirror is in
 * the ledger under that principal. A malformed id, a missing ledger or a failing one (logged
 * by name) all answer false: ownership is never assumed.
 *
 * @example
 * ```ts
 * if (!(await ownsRemoteTask(ledger, 'client:local::', 'travel', 't-1', log))) return notFound();
 * ```
 */
export async function ownsRemoteTask(
  ledger: OutboundLedger | undefined,
  principalKey: string,
  agent: string,
  remoteTaskId: string,
  log: ClientLog,
): Promise<boolean> {
  if (ledger === undefined || typeof remoteTaskId !== 'string' || !STRICT_ID_PATTERN.test(remoteTaskId)) return false;
  const id = mirrorId(agent, remoteTaskId);
  let mirror: Task | undefined;
  try {
    mirror = await ledger.get(principalKey, id);
  } catch (error) {
    log('a2a.client.ledger_failed', { taskId: id, error: errorName(error) });
    return false;
  }
  const metadata = mirror?.metadata;
  return mirror?.id === id && metadata?.agent === agent && metadata.remoteTaskId === remoteTaskId;
}

/**
 * A bounded in-memory ledger: the oldest mirrors go first once `maxTasks` is reached.
 * Lookups are scoped by owner, like the task store's.
 *
 * @example
 * ```ts
 * const ledger = new MemoryOutboundLedger({ maxTasks: 1000 });
 * ledger.get('client:cli::', 'a2a-out-travel.t-1');
 * ```
 */
export class MemoryOutboundLedger implements OutboundLedger {
  readonly #maxTasks: number;
  /** Keyed by owner and id; Map order is insertion order, which eviction relies on. */
  readonly #tasks = new Map<string, { owner: string; task: Task }>();

  constructor(options: { maxTasks?: number } = {}) {
    this.#maxTasks = Math.max(1, options.maxTasks ?? 10_000);
  }

  record(principalKey: string, mirror: Task): void {
    const key = `${principalKey}\n${mirror.id}`;
    // Delete first so a replaced mirror moves to the newest end.
    this.#tasks.delete(key);
    this.#tasks.set(key, { owner: principalKey, task: mirror });
    while (this.#tasks.size > this.#maxTasks) {
      const oldest = this.#tasks.keys().next();
      if (oldest.done === true) break;
      this.#tasks.delete(oldest.value);
    }
  }

  get(principalKey: string, id: string): Task | undefined {
    return this.#tasks.get(`${principalKey}\n${id}`)?.task;
  }

  list(principalKey: string): Task[] {
    return [...this.#tasks.values()].filter((row) => row.owner === principalKey).map((row) => row.task);
  }

  get size(): number {
    return this.#tasks.size;
  }
}

/**
 * A ledger over the shared task store, so mirrors live (and expire) with every other task.
 *
 * @example
 * ```ts
 * const ledger = ledgerFromTaskStore(taskStore);
 * ```
 */
export function ledgerFromTaskStore(store: Pick<TaskStore, 'put' | 'get'>): OutboundLedger {
  return {
    record: (principalKey, mirror) => store.put(principalKey, mirror),
    get: (principalKey, id) => store.get(principalKey, id),
  };
}

// ---------------------------------------------------------------------------------------------
// Audit

/**
 * Where audit events go (an `AuditSink`'s write, typically).
 *
 * @example
 * ```ts
 * const audit: AuditHook = (event) => sink.write(event);
 * ```
 */
export type AuditHook = (event: AuditEvent) => void | Promise<void>;

/** Audit fields need printable ASCII ids; a name that is not one is shown as `-`. */
const AUDIT_ID = /^[\x21-\x7e]{1,256}$/;

/**
 * The fields of one `a2a.client.send` / `a2a.client.get` row, before `type` and `time`.
 *
 * @example
 * ```ts
 * const row: ClientAuditFields = { outcome: 'ok', agent: 'travel', taskId: 't-1', state: 'completed' };
 * ```
 */
export interface ClientAuditFields {
  outcome: 'ok' | 'denied' | 'error';
  agent: string;
  taskId?: string | null;
  contextId?: string | null;
  state?: TaskState | null;
  inputChars?: number;
  outputChars?: number;
  reason?: ClientSendEvent['reason'];
}

/**
 * Builds the row for an outbound call. Ids outside the audit's id shape are left out (the
 * task id of a `get` becomes `-`), so a hostile remote id can never fail or pollute a row.
 *
 * @example
 * ```ts
 * clientAuditEvent('a2a.client.send', { outcome: 'denied', agent: 'shop', reason: 'message_too_long' }, new Date());
 * ```
 */
export function clientAuditEvent(
  type: 'a2a.client.send' | 'a2a.client.get',
  fields: ClientAuditFields,
  time: Date,
): ClientSendEvent | ClientGetEvent {
  const agent = AUDIT_ID.test(fields.agent) ? fields.agent : '-';
  const taskId = auditId(fields.taskId);
  const contextId = auditId(fields.contextId);
  const common = {
    time: auditTime(time),
    outcome: fields.outcome,
    agent,
    ...(contextId !== undefined && { contextId }),
    ...(fields.state !== undefined && fields.state !== null && { state: fields.state }),
    ...(fields.outputChars !== undefined && { outputChars: fields.outputChars }),
    ...(fields.reason !== undefined && { reason: fields.reason }),
  };
  if (type === 'a2a.client.get') return { type, ...common, taskId: taskId ?? '-' };
  return {
    type,
    ...common,
    ...(taskId !== undefined && { taskId }),
    ...(fields.inputChars !== undefined && { inputChars: fields.inputChars }),
  };
}

function auditId(value: string | null | undefined): string | undefined {
  return typeof value === 'string' && STRICT_ID_PATTERN.test(value) ? value : undefined;
}

/**
 * Emits one audit event; a failing hook is logged by name and swallowed.
 *
 * @example
 * ```ts
 * await emitAudit(audit, event, log);
 * ```
 */
export async function emitAudit(hook: AuditHook | undefined, event: AuditEvent, log: ClientLog): Promise<void> {
  if (hook === undefined) return;
  try {
    await hook(event);
  } catch (error) {
    log('a2a.client.audit_failed', { type: event.type, error: errorName(error) });
  }
}

/** An error's class name or code: never its message, which may quote content. */
function errorName(error: unknown): string {
  if (error !== null && typeof error === 'object') {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && /^[A-Za-z0-9_.-]{1,64}$/.test(code)) return code;
    const name = (error as { name?: unknown }).name;
    if (typeof name === 'string' && /^[A-Za-z0-9_.-]{1,64}$/.test(name)) return name;
  }
  return 'Error';
}
