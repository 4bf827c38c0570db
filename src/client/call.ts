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
import type { Message, SendParams, SendResult, StreamEvent, Task, TaskState } from '../protocol/model.js';
import { isInterruptedState, isTerminalState } from '../protocol/model.js';
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
import type { CardResolver, ClientLog, GuardedClient } from './contracts.js';
import type { Registry, RegistryEntry } from './registry.js';
import { REGISTRY_NAME_PATTERN } from './registry.js';
import {
  CallFailure,
  RemoteRpc,
  resolveEndpoint,
  shapeOptions,
  streamFailure,
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

// Kept here too: it was first exported from this module.
export { errorTypeOf } from './remote.js';

/**
 * Longest message sent, in UTF-16 code units (what `String.length` counts).
 *
 * @example
 * ```ts
 * if (text.length > MAX_MESSAGE_CHARS) shorten(text);
 * ```
 */
export const MAX_MESSAGE_CHARS = 8192;

/**
 * The principal key used when a caller names none (the local CLI user).
 *
 * @example
 * ```ts
 * await caller.send({ agent: 'travel', message: 'hi' }); // owned by DEFAULT_PRINCIPAL_KEY
 * ```
 */
export const DEFAULT_PRINCIPAL_KEY = 'client:local::';

/** A best-effort cancel must not hold the caller long after max_wait_s has already passed. */
const CANCEL_TIMEOUT_MS = 10_000;

/**
 * One outbound message.
 *
 * @example
 * ```ts
 * const request: SendRequest = { agent: 'shop', message: 'Order 2 more', confirm: true };
 * ```
 */
export interface SendRequest {
  /** A registry name; never a URL. */
  agent: string;
  /** Text only, 1..8192 characters. */
  message: string;
  /**
   * Answer an interrupted task (input-required / auth-required) on that same task. Only a
   * task this principal started is accepted; any other is `task_not_found`.
   */
  taskId?: string;
  contextId?: string;
  /** Required (true) for entries with `effect: acting`. */
  confirm?: boolean;
  /** Who is calling; owns the mirror task. */
  principalKey?: string;
  /**
   * Read the answer as a stream (SendStreamingMessage / message/stream) when the remote's card
   * declares `capabilities.streaming`; otherwise the call is sent and polled as usual. The
   * same caps apply: `max_response_bytes` over the whole stream, `max_wait_s` in total.
   */
  stream?: boolean;
}

/**
 * A one-shot read of a remote task.
 *
 * @example
 * ```ts
 * const request: GetTaskRequest = { agent: 'travel', taskId: 't-1' };
 * ```
 */
export interface GetTaskRequest {
  agent: string;
  /** A task this principal started through this client; any other is `task_not_found`. */
  taskId: string;
  principalKey?: string;
}

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
}

/** Refusals by config or policy: audited as `denied`; everything else as `error`. */
const DENIED: ReadonlySet<CallErrorType> = new Set<CallErrorType>([
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

const PRINCIPAL_KEY = /^[\x20-\x7e]{1,512}$/;

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
  readonly #cards: CardResolver;
  readonly #audit: AuditHook | undefined;
  readonly #ledger: OutboundLedger;
  readonly #log: ClientLog;
  readonly #now: () => number;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #newId: () => string;

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
      endpoint = await resolveEndpoint(entry, this.#cards);
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
        const streamed = await this.#streamSend(
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
          const state = await this.#cancelQuietly(endpoint, pending);
          throw new CallFailure('request_timeout', {
            detail: `the remote did not answer within max_wait_s (${entry.maxWaitMs / 1000} s); Airlock asked the remote to cancel the task`,
          }).about({ id: pending.id, contextId: pending.contextId, state });
        }
      }
      if (sent.kind === 'message') return await this.#finish('a2a.client.send', entry, principalKey, sent, inputChars);
      // max_wait_s counts from the start of the call, card resolution and send included.
      const task = await this.#pollUntilSettled(endpoint, sent.task, started);
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
      endpoint = await resolveEndpoint(entry, this.#cards);
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

  // --- the exchange ----------------------------------------------------------------------

  async #pollUntilSettled(endpoint: Endpoint, first: Task, start: number): Promise<Task> {
    const { pollIntervalMs, maxWaitMs } = endpoint.entry;
    const deadline = start + maxWaitMs;
    // A clock that stands still (or a sleep that returns at once) cannot make this loop forever.
    const maxPolls = Math.ceil(maxWaitMs / pollIntervalMs) + 1;
    let task = first;
    let polls = 0;
    while (!isSettled(task.status.state)) {
      const remaining = deadline - this.#now();
      if (remaining <= 0 || polls >= maxPolls) {
        const state = await this.#cancelQuietly(endpoint, task);
        throw new CallFailure('request_timeout', {
          detail: `the remote task did not finish within max_wait_s (${maxWaitMs / 1000} s); Airlock asked the remote to cancel it`,
        }).about({ id: task.id, contextId: task.contextId, state });
      }
      await this.#sleep(Math.min(pollIntervalMs, remaining));
      polls += 1;
      try {
        task = await this.#remote.getTask(endpoint, task.id);
      } catch (error) {
        throw this.#asFailure(error).about({ id: task.id, contextId: task.contextId, state: task.status.state });
      }
    }
    return task;
  }

  /** CancelTask, best effort: the state the remote reports, or the last one known. */
  async #cancelQuietly(endpoint: Endpoint, task: Task): Promise<TaskState> {
    const short = withTotalTimeout(endpoint, CANCEL_TIMEOUT_MS);
    try {
      const canceled = await this.#remote.cancelTask(short, task.id);
      return canceled.id === task.id ? canceled.status.state : task.status.state;
    } catch (error) {
      this.#log('a2a.client.cancel_failed', { agent: endpoint.entry.name, reason: this.#asFailure(error).errorType });
      return task.status.state;
    }
  }

  // --- streaming -------------------------------------------------------------------------

  /**
   * SendStreamingMessage: reads the SSE answer through the guarded transport's `stream()` with
   * `max_response_bytes` as the cap over the whole stream and what is left of `max_wait_s` as
   * its total timeout. Events are folded into one task (artifact `append`, status replaced)
   * until it is terminal or interrupted. A cut, a timeout, a bad event or a stream that ends
   * early fails the call, and a task already known is canceled (best effort).
   */
  async #streamSend(
    endpoint: Endpoint,
    params: SendParams,
    started: number,
    known: { id: string; contextId: string } | undefined,
  ): Promise<SendResult> {
    const { entry } = endpoint;
    const remaining = Math.max(1, started + entry.maxWaitMs - this.#now());
    const abort = new AbortController();
    let task: Task | undefined =
      known === undefined
        ? undefined
        : {
            id: known.id,
            contextId: known.contextId,
            status: { state: 'unknown', timestamp: new Date(this.#now()).toISOString() },
            artifacts: [],
            history: [],
          };
    let opened = false;
    try {
      const events = await this.#remote.openStream(endpoint, params, { totalMs: remaining, signal: abort.signal });
      opened = true;
      for await (const event of events) {
        if (event.kind === 'message') {
          // A direct answer with no task ends the exchange; on a task it is the task's news.
          if (task === undefined || known !== undefined) {
            if (task !== undefined && event.message.taskId !== undefined && event.message.taskId !== task.id) {
              throw new CallFailure('invalid_response', { detail: 'the remote answered about another task' });
            }
            return { kind: 'message', message: event.message };
          }
          task.status = { ...task.status, message: event.message };
          continue;
        }
        task = foldStreamEvent(task, event, known !== undefined);
        if (isSettled(task.status.state)) return { kind: 'task', task };
      }
      throw new CallFailure('invalid_response', {
        detail: 'the event stream ended before the task reached a final or interrupted state',
      });
    } catch (error) {
      const failure = this.#streamFailure(error, entry);
      // An error event of an open stream is about the task known so far.
      if (opened && failure.fromRpcError && task !== undefined && failure.taskId === undefined) {
        failure.about({ id: task.id, contextId: task.contextId, state: task.status.state });
      }
      // The remote's own error ends its side of the exchange; anything else, once the stream
      // is open (or the wait for it timed out), leaves a task running that nobody reads.
      const cancel = opened || failure.errorType === 'request_timeout';
      if (task !== undefined && failure.taskId === undefined && cancel) {
        const state = await this.#cancelQuietly(endpoint, task);
        failure.about({ id: task.id, contextId: task.contextId, state });
        if (failure.detail === undefined && failure.errorType === 'request_timeout') {
          const timed = new CallFailure('request_timeout', {
            detail: `the remote task did not finish within max_wait_s (${entry.maxWaitMs / 1000} s); Airlock asked the remote to cancel it`,
          });
          throw timed.about({ id: task.id, contextId: task.contextId, state });
        }
      }
      throw failure;
    } finally {
      abort.abort();
    }
  }

  /** A failure while streaming, with transport and SSE-parser errors given their types. */
  #streamFailure(error: unknown, entry: RegistryEntry): CallFailure {
    return streamFailure(error, entry) ?? this.#asFailure(error);
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

  /** A bug or an unexpected throw: logged by name, reported as a failed exchange, never with its text. */
  #asFailure(error: unknown): CallFailure {
    if (error instanceof CallFailure) return error;
    this.#log('a2a.client.unexpected_error', { error: error instanceof Error ? error.name : typeof error });
    return new CallFailure('invalid_response');
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

// ---------------------------------------------------------------------------------------------

/**
 * Folds one stream event into the task seen so far. `followUp`: the task was named by the
 * caller, so every event must be about it. An event about another task is invalid.
 */
function foldStreamEvent(
  current: Task | undefined,
  event: Exclude<StreamEvent, { kind: 'message' }>,
  followUp: boolean,
): Task {
  const eventTaskId = event.kind === 'task' ? event.task.id : event.taskId;
  if (current !== undefined && eventTaskId !== current.id) {
    throw new CallFailure('invalid_response', { detail: 'the remote answered about another task' });
  }
  if (event.kind === 'task') {
    // A snapshot: authoritative for everything it holds.
    const task = event.task;
    return { ...task, artifacts: task.artifacts.map((artifact) => ({ ...artifact, parts: [...artifact.parts] })) };
  }
  const task: Task = current ?? {
    id: event.taskId,
    contextId: event.contextId,
    status: { state: followUp ? 'unknown' : 'submitted', timestamp: new Date(0).toISOString() },
    artifacts: [],
    history: [],
  };
  if (task.contextId === '') task.contextId = event.contextId;
  if (event.kind === 'status-update') {
    task.status = event.status;
    return task;
  }
  const incoming = event.artifact;
  const index = task.artifacts.findIndex((artifact) => artifact.artifactId === incoming.artifactId);
  if (index === -1) {
    task.artifacts.push({ ...incoming, parts: [...incoming.parts] });
  } else if (event.append === true) {
    const existing = task.artifacts[index]!;
    task.artifacts[index] = { ...existing, parts: [...existing.parts, ...incoming.parts] };
  } else {
    task.artifacts[index] = { ...incoming, parts: [...incoming.parts] };
  }
  return task;
}

/** Terminal, or waiting for the caller: either way the poll loop stops. */
function isSettled(state: TaskState): boolean {
  return isTerminalState(state) || isInterruptedState(state);
}

function checkSend(request: SendRequest, entry: RegistryEntry): CallResult | undefined {
  const text = request.message;
  if (typeof text !== 'string' || text.trim().length === 0) {
    return errorResult('invalid_params', { message: 'the message must be non-empty text' });
  }
  if (text.length > MAX_MESSAGE_CHARS) return errorResult('message_too_long', {});
  for (const key of ['taskId', 'contextId'] as const) {
    const value = request[key];
    if (value !== undefined && (typeof value !== 'string' || !STRICT_ID_PATTERN.test(value))) {
      return errorResult('invalid_params', { message: `${key} must be 1..128 characters of A-Z a-z 0-9 . _ : -` });
    }
  }
  if (request.principalKey !== undefined && !isPrincipalKey(request.principalKey)) {
    return errorResult('invalid_params', { message: 'principalKey must be 1..512 printable ASCII characters' });
  }
  if (entry.effect === 'acting' && request.confirm !== true) {
    return errorResult('confirmation_required', {
      message: `agent "${entry.name}" acts on your behalf (effect: acting): repeat the call with explicit confirmation (--confirm)`,
    });
  }
  return undefined;
}

function isPrincipalKey(key: unknown): boolean {
  return typeof key === 'string' && PRINCIPAL_KEY.test(key);
}

function principalOf(key: string | undefined): string {
  return key ?? DEFAULT_PRINCIPAL_KEY;
}
