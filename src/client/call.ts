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
import { AUDIT_EVENT_SPEC } from '../audit/events.js';
import { A2AError } from '../protocol/errors.js';
import { HOP_HEADER } from '../protocol/headers.js';
import type { Dialect } from '../protocol/dialect.js';
import type { A2ARequest, Message, SendParams, SendResult, StreamEvent, Task, TaskState } from '../protocol/model.js';
import { isInterruptedState, isTerminalState } from '../protocol/model.js';
import { dialectForVersion } from '../protocol/version.js';
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
import type {
  CardResolver,
  ClientLog,
  GuardedClient,
  GuardedResponse,
  GuardedStream,
  TrustedCard,
} from './contracts.js';
import type { Registry, RegistryEntry } from './registry.js';
import { SseTooLargeError, readSseEvents } from './sse-reader.js';
import { REGISTRY_NAME_PATTERN } from './registry.js';
import {
  STRICT_ID_PATTERN,
  errorResult,
  safeId,
  shapeResultDetailed,
  type CallErrorType,
  type CallResult,
  type ShapeOptions,
} from './result.js';

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

/** The resolved endpoint of one call. */
interface Endpoint {
  entry: RegistryEntry;
  dialect: Dialect;
  url: string;
  tenant?: string;
  headers: Record<string, string>;
  shape: ShapeOptions;
  /** The trusted card declares `capabilities.streaming`. */
  streaming: boolean;
}

/** A failure with everything known at that point; turned into an error result at the top. */
class CallFailure extends Error {
  readonly errorType: CallErrorType;
  taskId?: string;
  contextId?: string;
  taskState?: TaskState;
  readonly remoteText?: string;
  readonly detail?: string;

  constructor(errorType: CallErrorType, options: { remoteText?: string; detail?: string } = {}) {
    super(errorType);
    this.name = 'CallFailure';
    this.errorType = errorType;
    if (options.remoteText !== undefined) this.remoteText = options.remoteText;
    if (options.detail !== undefined) this.detail = options.detail;
  }

  /** Attaches a task's ids and state, once a task exists. */
  about(task: Pick<Task, 'id' | 'contextId'> & { state?: TaskState }): this {
    this.taskId = task.id;
    this.contextId = task.contextId;
    if (task.state !== undefined) this.taskState = task.state;
    return this;
  }
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

/** Every call error type is an audit reason of a2a.client.* rows (see src/audit/events.ts). */
const CLIENT_REASONS: ReadonlySet<string> = new Set(AUDIT_EVENT_SPEC['a2a.client.send'].reasons);
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
  readonly #transport: GuardedClient;
  readonly #cards: CardResolver;
  readonly #audit: AuditHook | undefined;
  readonly #ledger: OutboundLedger;
  readonly #log: ClientLog;
  readonly #now: () => number;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #newId: () => string;
  #rpcId = 0;

  constructor(options: OutboundCallerOptions) {
    this.#registry = options.registry;
    this.#transport = options.transport;
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
      endpoint = await this.#endpoint(entry);
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
        sent = await this.#rpc(endpoint, { method: 'send', params: sendParams }, decode);
      } else {
        const remaining = Math.max(1, started + entry.maxWaitMs - this.#now());
        try {
          sent = await this.#rpc(withTotalTimeout(endpoint, remaining), { method: 'send', params: sendParams }, decode);
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
      endpoint = await this.#endpoint(entry);
      const task = await this.#getTask(endpoint, taskId);
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
        task = await this.#getTask(endpoint, task.id);
      } catch (error) {
        throw this.#asFailure(error).about({ id: task.id, contextId: task.contextId, state: task.status.state });
      }
    }
    return task;
  }

  async #getTask(endpoint: Endpoint, id: string): Promise<Task> {
    const task = await this.#rpc(
      endpoint,
      { method: 'get', params: { id, ...(endpoint.tenant !== undefined && { tenant: endpoint.tenant }) } },
      (result) => endpoint.dialect.decodeTask(result),
    );
    // An answer about another task is not an answer.
    if (task.id !== id) throw new CallFailure('invalid_response', { detail: 'the remote answered about another task' });
    return task;
  }

  /** CancelTask, best effort: the state the remote reports, or the last one known. */
  async #cancelQuietly(endpoint: Endpoint, task: Task): Promise<TaskState> {
    const short = withTotalTimeout(endpoint, CANCEL_TIMEOUT_MS);
    try {
      const canceled = await this.#rpc(
        short,
        {
          method: 'cancel',
          params: { id: task.id, ...(endpoint.tenant !== undefined && { tenant: endpoint.tenant }) },
        },
        (result) => endpoint.dialect.decodeTask(result),
      );
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
    const { entry, dialect } = endpoint;
    const encoded = dialect.encodeRequest({ method: 'stream', params });
    this.#rpcId += 1;
    const id = this.#rpcId;
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
      let response: GuardedStream;
      try {
        response = await this.#transport.stream({
          method: 'POST',
          url: endpoint.url,
          headers: { ...endpoint.headers, accept: 'text/event-stream, application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', id, method: encoded.method, params: encoded.params }),
          maxResponseBytes: entry.maxResponseBytes,
          timeouts: {
            connectMs: Math.min(entry.timeouts.connectMs, remaining),
            readMs: Math.min(entry.timeouts.readMs, remaining),
            totalMs: remaining,
          },
          privateNetwork: entry.privateNetwork,
          signal: abort.signal,
        });
      } catch (error) {
        throw new CallFailure(errorTypeOf(error, 'network_error'));
      }
      if (response.status === 401 || response.status === 403) throw new CallFailure('remote_auth_failed');
      const encoding = (headerOf(response, 'content-encoding') ?? 'identity').trim().toLowerCase();
      if (encoding !== '' && encoding !== 'identity') {
        throw new CallFailure('invalid_response', { detail: 'the remote sent a compressed response' });
      }
      const ok = response.status >= 200 && response.status < 300;
      const contentType = (headerOf(response, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase();
      if (contentType !== 'text/event-stream') {
        // A remote may refuse a stream with a plain JSON-RPC error.
        const frame = await readFrame(response.body);
        if (frame?.jsonrpc === '2.0' && frame.error !== undefined) {
          throw failureFromRpcError(dialect.decodeError(frame.error));
        }
        throw new CallFailure(ok ? 'invalid_response' : 'remote_error', {
          detail: ok ? 'the remote did not answer with an event stream' : `the remote answered HTTP ${response.status}`,
        });
      }
      if (!ok) throw new CallFailure('remote_error', { detail: `the remote answered HTTP ${response.status}` });
      opened = true;
      for await (const sse of readSseEvents(response.body, Math.min(MAX_SSE_EVENT_BYTES, entry.maxResponseBytes))) {
        let frame: Record<string, unknown> | undefined;
        try {
          const parsed: unknown = JSON.parse(sse.data);
          if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
            frame = parsed as Record<string, unknown>;
          }
        } catch {
          frame = undefined;
        }
        if (frame === undefined || frame.jsonrpc !== '2.0') {
          throw new CallFailure('invalid_response', { detail: 'a stream event is not JSON-RPC 2.0' });
        }
        if (frame.error !== undefined) {
          const failure = failureFromRpcError(dialect.decodeError(frame.error));
          if (task !== undefined) failure.about({ id: task.id, contextId: task.contextId, state: task.status.state });
          throw failure;
        }
        if (frame.id !== id) {
          throw new CallFailure('invalid_response', { detail: 'a stream event id does not match the request' });
        }
        let event: StreamEvent;
        try {
          event = dialect.decodeStreamEvent(frame.result);
        } catch (error) {
          if (error instanceof A2AError) throw new CallFailure('invalid_response');
          throw error;
        }
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
    if (error instanceof CallFailure) return error;
    if (error instanceof SseTooLargeError) {
      return new CallFailure('response_too_large', {
        detail: `a stream event is larger than max_response_bytes (${entry.maxResponseBytes})`,
      });
    }
    const type = errorTypeOf(error, 'invalid_response');
    if (type !== 'invalid_response') return new CallFailure(type);
    return this.#asFailure(error);
  }

  async #endpoint(entry: RegistryEntry): Promise<Endpoint> {
    let trusted: TrustedCard;
    try {
      trusted = await this.#cards.resolve(entry);
    } catch (error) {
      throw new CallFailure(errorTypeOf(error, 'card_invalid'));
    }
    const { url, version } = trusted.endpoint;
    const dialect = dialectForVersion(version);
    // v1.0 clients MUST copy the interface's tenant into every request (§8.3.2); v0.3 has none.
    const tenant = version === '1.0' ? trusted.endpoint.tenant : undefined;
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json',
      // A byte cap on the wire bounds what is read only when nothing is decompressed after it.
      'accept-encoding': 'identity',
      [HOP_HEADER]: '1',
    };
    // A missing A2A-Version means 0.3 (§3.6.2), so it is sent only for 1.0.
    if (version === '1.0') headers['a2a-version'] = '1.0';
    if (entry.auth !== undefined) headers.authorization = entry.auth.header();
    return {
      entry,
      dialect,
      url,
      ...(tenant !== undefined && { tenant }),
      headers,
      shape: shapeOptions(entry),
      streaming: trusted.card.capabilities?.streaming === true,
    };
  }

  /** One JSON-RPC exchange: encode, send, check the envelope, decode. */
  async #rpc<T>(endpoint: Endpoint, request: A2ARequest, decode: (result: unknown) => T): Promise<T> {
    const encoded = endpoint.dialect.encodeRequest(request);
    this.#rpcId += 1;
    const id = this.#rpcId;
    const { entry } = endpoint;
    let response: GuardedResponse;
    try {
      response = await this.#transport.request({
        method: 'POST',
        url: endpoint.url,
        headers: endpoint.headers,
        body: JSON.stringify({ jsonrpc: '2.0', id, method: encoded.method, params: encoded.params }),
        maxResponseBytes: entry.maxResponseBytes,
        timeouts: entry.timeouts,
        privateNetwork: entry.privateNetwork,
      });
    } catch (error) {
      throw new CallFailure(errorTypeOf(error, 'network_error'));
    }
    if (response.status === 401 || response.status === 403) throw new CallFailure('remote_auth_failed');
    const encoding = (headerOf(response, 'content-encoding') ?? 'identity').trim().toLowerCase();
    if (encoding !== '' && encoding !== 'identity') {
      throw new CallFailure('invalid_response', { detail: 'the remote sent a compressed response' });
    }
    const ok = response.status >= 200 && response.status < 300;
    let frame: unknown;
    try {
      frame = JSON.parse(response.body.toString('utf8'));
    } catch {
      throw new CallFailure(ok ? 'invalid_response' : 'remote_error', {
        detail: ok ? 'the remote did not answer JSON' : `the remote answered HTTP ${response.status}`,
      });
    }
    const record =
      frame !== null && typeof frame === 'object' && !Array.isArray(frame)
        ? (frame as Record<string, unknown>)
        : undefined;
    if (record === undefined || record.jsonrpc !== '2.0') {
      throw new CallFailure('invalid_response', { detail: 'the remote did not answer JSON-RPC 2.0' });
    }
    if (record.error !== undefined) throw failureFromRpcError(endpoint.dialect.decodeError(record.error));
    // An error may come back with a null id (the server could not read ours); a result may not.
    if (record.id !== id)
      throw new CallFailure('invalid_response', { detail: 'the response id does not match the request' });
    if (!ok) throw new CallFailure('remote_error', { detail: `the remote answered HTTP ${response.status}` });
    if (record.result === undefined)
      throw new CallFailure('invalid_response', { detail: 'the response has no result' });
    try {
      return decode(record.result);
    } catch (error) {
      if (error instanceof A2AError) throw new CallFailure('invalid_response');
      throw error;
    }
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

/** The endpoint with every request timeout cut to at most `ms`. */
function withTotalTimeout(endpoint: Endpoint, ms: number): Endpoint {
  const { timeouts } = endpoint.entry;
  return {
    ...endpoint,
    entry: {
      ...endpoint.entry,
      timeouts: {
        connectMs: Math.min(timeouts.connectMs, ms),
        readMs: Math.min(timeouts.readMs, ms),
        totalMs: Math.min(timeouts.totalMs, ms),
      },
    },
  };
}

/** One stream event, at most 1 MiB (and never more than the whole stream's cap). */
const MAX_SSE_EVENT_BYTES = 1024 * 1024;

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

/** A capped non-SSE body read whole, as a JSON-RPC frame when it is one. */
async function readFrame(body: AsyncIterable<Buffer>): Promise<Record<string, unknown> | undefined> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk);
  try {
    const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
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

function shapeOptions(entry: RegistryEntry): ShapeOptions {
  return {
    agent: entry.name,
    maxReplyChars: entry.maxReplyChars,
    ...(entry.auth !== undefined && { secrets: [entry.auth.valueForRedaction()] }),
  };
}

function headerOf(response: Pick<GuardedResponse, 'headers'>, name: string): string | undefined {
  const headers = response.headers ?? {};
  for (const key of Object.keys(headers)) if (key.toLowerCase() === name) return headers[key];
  return undefined;
}

/**
 * A thrown transport or trust error as an error type: its `code` when that is in the
 * vocabulary (`proxy_refused` included), else `fallback`.
 *
 * @example
 * ```ts
 * errorTypeOf(new OutboundError('address_blocked', '…'), 'network_error'); // 'address_blocked'
 * errorTypeOf(new TypeError('x'), 'card_invalid');                        // 'card_invalid'
 * ```
 */
export function errorTypeOf(error: unknown, fallback: CallErrorType): CallErrorType {
  const code = error !== null && typeof error === 'object' ? (error as { code?: unknown }).code : undefined;
  if (typeof code === 'string' && CLIENT_REASONS.has(code)) return code as CallErrorType;
  if (code === 'proxy_refused') return 'network_error';
  return fallback;
}

function failureFromRpcError(error: A2AError): CallFailure {
  if (error.code === 'TASK_NOT_FOUND') return new CallFailure('task_not_found');
  if (error.code === 'INVALID_AGENT_RESPONSE') return new CallFailure('invalid_response');
  // The remote's own words go back framed; the code number is ours to show.
  return new CallFailure('remote_error', { remoteText: `JSON-RPC error ${error.rpcCode}: ${error.message}` });
}
