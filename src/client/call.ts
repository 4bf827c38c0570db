/**
 * The outbound call: one text message to one registered remote agent, then its answer.
 *
 * send → (if the task is still running) GetTask every `poll_interval_s` until it is terminal or
 * interrupted, or `max_wait_s` has passed → on timeout, a best-effort CancelTask. An
 * `input-required`/`auth-required` task is handed back with its question and ids; the answer
 * (from a person, never a model on its own) goes out as a later send with `taskId`, on the same
 * task. Every request carries the hop header, the dialect's version header and the entry's
 * bearer token; every answer goes through the dialect's decoders and then result shaping.
 *
 * Refusals happen before any request: unknown agent, empty or oversized message, malformed
 * ids, an acting entry without explicit confirmation.
 *
 * Ownership: a `getTask`, and a send with a `taskId`, work only on remote tasks the same
 * principal started through this client (their mirrors are in the ledger under its key).
 * Any other task id is answered exactly as an unknown task is (`task_not_found`), and the
 * remote is not contacted: a caller can neither read nor steer another caller's remote task,
 * nor learn whether it exists. Without a ledger option, an in-memory ledger is used.
 *
 * @example
 * ```ts
 * const caller = new OutboundCaller({ registry, transport, cards, audit: (e) => sink.write(e) });
 * const result = await caller.send({ agent: 'travel', message: 'Trains to Lyon tomorrow?' });
 * if (result.status === 'input_required') {
 *   const answer = await askPerson(result.reply);
 *   await caller.send({ agent: 'travel', message: answer, taskId: result.task_id!, contextId: result.context_id! });
 * }
 * ```
 */
import { randomUUID } from 'node:crypto';
import type { Message, SendResult, Task, TaskState } from '../protocol/model.js';
import {
  MemoryOutboundLedger,
  clientAuditEvent,
  emitAudit,
  mirrorTask,
  ownsRemoteTask,
  recordMirror,
  type AuditHook,
  type ClientAuditFields,
  type OutboundLedger,
} from './bookkeeping.js';
import { checkSend, isPrincipalKey, principalOf, type GetTaskRequest, type SendRequest } from './call-request.js';
import type { CardResolver, ClientLog, GuardedClient } from './contracts.js';
import { TaskExchange, asCallFailure } from './exchange.js';
import type { Registry, RegistryEntry } from './registry.js';
import { REGISTRY_NAME_PATTERN } from './registry/error.js';
import { CallFailure } from './call-failure.js';
import { OutboundAuth } from './auth/provider.js';
import {
  RemoteRpc,
  resolveEndpoint,
  shapeOptions,
  withTotalTimeout,
  type RemoteEndpoint as Endpoint,
} from './remote.js';
import {
  STRICT_ID_PATTERN,
  errorResult,
  safeId,
  shapeResultDetailed,
  type CallErrorType,
  type CallResult,
  type ShapeOptions,
} from './result.js';

// Kept here too: they were first exported from this module.
export { errorTypeOf } from './remote.js';
export { DEFAULT_PRINCIPAL_KEY, MAX_MESSAGE_CHARS } from './call-request.js';
export type { GetTaskRequest, SendRequest } from './call-request.js';

/**
 * What the caller needs: the registry, the guarded transport, the card resolver, and
 * optionally audit, ledger, log, and (for tests) the clock, sleep and id source.
 *
 * @example
 * ```ts
 * const options: OutboundCallerOptions = { registry, transport, cards, now: () => fake.now, sleep: fake.sleep };
 * ```
 */
export interface OutboundCallerOptions {
  registry: Registry;
  transport: GuardedClient;
  cards: CardResolver;
  audit?: AuditHook;
  ledger?: OutboundLedger;
  log?: ClientLog;
  /** Epoch milliseconds. */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** Message ids. */
  newId?: () => string;
  /** OAuth token source (cache settings for tests); default one over `transport`. */
  auth?: OutboundAuth;
}

/** Refusals by config or policy: audited as `denied`; everything else as `error` (also the upstream connector's rows). */
export const DENIED: ReadonlySet<CallErrorType> = new Set<CallErrorType>([
  'agent_not_configured',
  'insecure_url',
  'url_has_credentials',
  'origin_mismatch',
  'address_blocked',
  'redirect_refused',
  'card_signature_invalid',
  'card_pin_mismatch',
  'message_too_long',
  'confirmation_required',
  'invalid_params',
]);

/**
 * Sends messages to, and reads tasks of, registered remote agents. Never throws: every
 * outcome, refusals included, is a {@link CallResult}.
 *
 * @example
 * ```ts
 * const result = await new OutboundCaller(options).getTask({ agent: 'travel', taskId: 't-1' });
 * ```
 */
export class OutboundCaller {
  readonly #registry: Registry;
  readonly #remote: RemoteRpc;
  readonly #exchange: TaskExchange;
  readonly #cards: CardResolver;
  readonly #audit: AuditHook | undefined;
  readonly #ledger: OutboundLedger;
  readonly #log: ClientLog;
  readonly #now: () => number;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #newId: () => string;
  readonly #auth: OutboundAuth;

  constructor(options: OutboundCallerOptions) {
    this.#registry = options.registry;
    this.#remote = new RemoteRpc(options.transport);
    this.#cards = options.cards;
    this.#audit = options.audit;
    this.#ledger = options.ledger ?? new MemoryOutboundLedger();
    this.#log = options.log ?? (() => undefined);
    this.#now = options.now ?? Date.now;
    this.#sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.#newId = options.newId ?? randomUUID;
    this.#auth = options.auth ?? new OutboundAuth({ transport: options.transport });
    this.#exchange = new TaskExchange({ remote: this.#remote, now: this.#now, sleep: this.#sleep, log: this.#log });
  }

  /**
   * Sends one text message and waits for a terminal or interrupted state, up to `max_wait_s`.
   *
   * @example
   * ```ts
   * const result = await caller.send({ agent: 'travel', message: 'Trains to Lyon?' });
   * ```
   */
  async send(request: SendRequest): Promise<CallResult> {
    const agent = typeof request?.agent === 'string' ? request.agent : '';
    const text = request?.message;
    const inputChars = typeof text === 'string' ? text.length : 0;
    const started = this.#now();
    const audit = (result: CallResult) => this.#auditResult('a2a.client.send', agent, result, { inputChars });

    const entry = this.#registry.find(agent);
    if (entry === undefined) return audit(this.#unknownAgent(agent));
    const refusal = checkSend(request, entry);
    if (refusal !== undefined) return audit(refusal);
    const principalKey = principalOf(request.principalKey);
    // A follow-up on someone else's (or no one's) task reads exactly like the remote's own
    // TaskNotFound answer to a send, and nothing is sent.
    if (request.taskId !== undefined && !(await this.#owns(principalKey, entry, request.taskId))) {
      return audit(errorResult('task_not_found', {}));
    }

    let endpoint: Endpoint | undefined;
    try {
      endpoint = await resolveEndpoint(entry, this.#cards, this.#auth);
      const message: Message = {
        messageId: this.#newId(),
        role: 'user',
        parts: [{ kind: 'text', text }],
        ...(request.taskId !== undefined && { taskId: request.taskId }),
        ...(request.contextId !== undefined && { contextId: request.contextId }),
      };
      // A first message goes non-blocking: the task id is known before any long wait, so
      // max_wait_s and the cancel on timeout always apply, whatever the remote's own blocking
      // limits. A follow-up already knows its task, and goes blocking: a remote that answers a
      // non-blocking send with the task as it stood (still input-required, the pattern of the
      // a2a-js SDK) would otherwise read as asking again. Its wait is cut at max_wait_s, and a
      // timeout cancels the task as the poll loop would.
      const followUp = request.taskId !== undefined;
      const sendParams = {
        message,
        configuration: { returnImmediately: !followUp },
        ...(endpoint.tenant !== undefined && { tenant: endpoint.tenant }),
      };
      if (request.stream === true && endpoint.streaming) {
        // A follow-up's task is known before the first event: a failed stream cancels it too.
        const known = followUp ? { id: request.taskId!, contextId: request.contextId ?? '' } : undefined;
        const streamed = await this.#exchange.streamSend(
          endpoint,
          { ...sendParams, configuration: { returnImmediately: false } },
          started,
          known,
        );
        return await this.#finish('a2a.client.send', entry, principalKey, streamed, inputChars);
      }
      const decode = (result: unknown) => endpoint!.dialect.decodeSendResult(result);
      let sent: SendResult;
      if (!followUp) {
        sent = await this.#remote.call(endpoint, { method: 'send', params: sendParams }, decode);
      } else {
        const remaining = Math.max(1, started + entry.maxWaitMs - this.#now());
        try {
          sent = await this.#remote.call(
            withTotalTimeout(endpoint, remaining),
            { method: 'send', params: sendParams },
            decode,
          );
        } catch (error) {
          const failure = this.#asFailure(error);
          if (failure.errorType !== 'request_timeout') throw failure;
          const pending: Task = {
            id: request.taskId!,
            contextId: request.contextId ?? '',
            status: { state: 'unknown', timestamp: new Date(this.#now()).toISOString() },
            artifacts: [],
            history: [],
          };
          const state = await this.#exchange.cancelQuietly(endpoint, pending);
          throw new CallFailure('request_timeout', {
            detail: `the remote did not answer within max_wait_s (${entry.maxWaitMs / 1000} s); Airlock asked the remote to cancel the task`,
          }).about({ id: pending.id, contextId: pending.contextId, state });
        }
      }
      if (sent.kind === 'message') return await this.#finish('a2a.client.send', entry, principalKey, sent, inputChars);
      // max_wait_s counts from the start of the call, card resolution and send included.
      const task = await this.#exchange.pollUntilSettled(endpoint, sent.task, started);
      return await this.#finish('a2a.client.send', entry, principalKey, { kind: 'task', task }, inputChars);
    } catch (error) {
      const failure = this.#asFailure(error);
      const result = this.#failureResult(failure, endpoint?.shape ?? shapeOptions(entry));
      // A task exists on the remote: mirror it, so the caller's bookkeeping knows of it.
      if (result.task_id !== null) {
        await this.#mirror(principalKey, entry, result.task_id, result.context_id, failure.taskState ?? 'unknown');
      }
      return audit(result);
    }
  }

  /**
   * Reads a remote task once (no waiting), shaped like a send's result.
   *
   * @example
   * ```ts
   * const result = await caller.getTask({ agent: 'travel', taskId: 't-1' });
   * ```
   */
  async getTask(request: GetTaskRequest): Promise<CallResult> {
    const agent = typeof request?.agent === 'string' ? request.agent : '';
    const taskId = request?.taskId;
    const entry = this.#registry.find(agent);
    const askedId = safeId(taskId, entry === undefined ? [] : shapeOptions(entry).secrets);
    const audit = (result: CallResult) =>
      this.#auditResult('a2a.client.get', agent, result, { ...(askedId !== null && { taskId: askedId }) });
    if (entry === undefined) return audit(this.#unknownAgent(agent));
    if (typeof taskId !== 'string' || !STRICT_ID_PATTERN.test(taskId)) {
      return audit(
        errorResult('invalid_params', { message: 'taskId must be 1..128 characters of A-Z a-z 0-9 . _ : -' }),
      );
    }
    if (request.principalKey !== undefined && !isPrincipalKey(request.principalKey)) {
      return audit(
        errorResult('invalid_params', { message: 'principalKey must be 1..512 printable ASCII characters' }),
      );
    }
    const principalKey = principalOf(request.principalKey);
    if (!(await this.#owns(principalKey, entry, taskId))) {
      // Exactly what a remote TaskNotFound gives, without contacting the remote.
      const unknown = new CallFailure('task_not_found');
      unknown.taskId = taskId;
      return audit(this.#failureResult(unknown, shapeOptions(entry)));
    }
    let endpoint: Endpoint | undefined;
    try {
      endpoint = await resolveEndpoint(entry, this.#cards, this.#auth);
      const task = await this.#remote.getTask(endpoint, taskId);
      return await this.#finish('a2a.client.get', entry, principalKey, { kind: 'task', task }, 0);
    } catch (error) {
      const failure = this.#asFailure(error);
      failure.taskId ??= taskId;
      return audit(this.#failureResult(failure, endpoint?.shape ?? shapeOptions(entry)));
    }
  }

  #owns(principalKey: string, entry: RegistryEntry, taskId: string): Promise<boolean> {
    return ownsRemoteTask(this.#ledger, principalKey, entry.name, taskId, this.#log);
  }

  // --- results, mirrors and audit ----------------------------------------------------------

  async #finish(
    type: 'a2a.client.send' | 'a2a.client.get',
    entry: RegistryEntry,
    principalKey: string,
    source: SendResult,
    inputChars: number,
  ): Promise<CallResult> {
    const { result, replyChars } = shapeResultDetailed(source, shapeOptions(entry));
    const state: TaskState = source.kind === 'task' ? source.task.status.state : 'completed';
    await this.#mirror(principalKey, entry, result.task_id, result.context_id, state);
    return this.#auditResult(type, entry.name, result, {
      ...(type === 'a2a.client.send' && { inputChars }),
      outputChars: replyChars,
    });
  }

  async #mirror(
    principalKey: string,
    entry: RegistryEntry,
    taskId: string | null | undefined,
    contextId: string | null | undefined,
    state: TaskState,
  ): Promise<void> {
    const mirror = mirrorTask({ agent: entry.name, remoteTaskId: taskId, contextId, state, now: this.#now() });
    await recordMirror(this.#ledger, principalKey, mirror, this.#log);
  }

  async #auditResult(
    type: 'a2a.client.send' | 'a2a.client.get',
    agent: string,
    result: CallResult,
    extra: { inputChars?: number; outputChars?: number; taskId?: string },
  ): Promise<CallResult> {
    const errorType = result.error_type;
    const fields: ClientAuditFields = {
      outcome: errorType === null ? 'ok' : DENIED.has(errorType) ? 'denied' : 'error',
      agent: REGISTRY_NAME_PATTERN.test(agent) ? agent : '-',
      taskId: result.task_id ?? extra.taskId ?? null,
      contextId: result.context_id,
      state: result.task_state,
      ...(extra.inputChars !== undefined && { inputChars: extra.inputChars }),
      ...(extra.outputChars !== undefined && { outputChars: extra.outputChars }),
      ...(errorType !== null && { reason: errorType }),
    };
    await emitAudit(this.#audit, clientAuditEvent(type, fields, new Date(this.#now())), this.#log);
    return result;
  }

  #unknownAgent(agent: string): CallResult {
    const shown = REGISTRY_NAME_PATTERN.test(agent) ? `"${agent}"` : 'by that name';
    const known = this.#registry.names();
    return errorResult('agent_not_configured', {
      message: `no agent ${shown} in the registry; known: ${known.length > 0 ? known.join(', ') : '(none)'}`,
    });
  }

  #asFailure(error: unknown): CallFailure {
    return asCallFailure(error, this.#log);
  }

  #failureResult(failure: CallFailure, shape: ShapeOptions): CallResult {
    return errorResult(failure.errorType, {
      ...(failure.taskId !== undefined && { taskId: failure.taskId }),
      ...(failure.contextId !== undefined && { contextId: failure.contextId }),
      ...(failure.taskState !== undefined && { taskState: failure.taskState }),
      ...(failure.remoteText !== undefined && { remoteText: failure.remoteText }),
      shape,
      ...(failure.detail !== undefined && { message: failure.detail }),
    });
  }
}
