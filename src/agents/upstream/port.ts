/**
 * The port between the `a2a` upstream backend and whatever reaches the upstream agent. The
 * backend (this folder) decides what is sent, when, and what the answer becomes; a connector
 * (Airlock's is `createUpstreamConnector` in src/client/upstream.ts: registry, guarded
 * transport, card trust) does the sending. Everything crossing the port is the canonical
 * protocol model (src/protocol/model.ts) or plain values: no dialect, no HTTP, no header.
 *
 * The port takes text, never a message: a connector builds a new user message (new
 * messageId, one text part) around it, so nothing of the inbound request (metadata,
 * extensions, ids, headers, tokens) can reach the upstream through this interface.
 *
 * @example
 * ```ts
 * const agent = connector.open('travel');                   // throws when the registry has no such entry
 * const channel = await agent.connect(signal);              // the trusted card: streaming or not
 * const result = await channel.send({ text: 'Trains to Lyon?', signal });
 * ```
 */
import type { SendResult, StreamEvent, Task, TaskState } from '../../protocol/model.js';
import { AirlockError } from '../../errors/index.js';
import type { OutboundSubject } from '../../identity/delegation.js';

/**
 * Reaches upstream agents by their registry name.
 *
 * @example
 * ```ts
 * const connector: UpstreamConnector = createUpstreamConnector({ registryPath, registry, pinsPath });
 * const agent = connector.open('travel');
 * ```
 */
export interface UpstreamConnector {
  /**
   * The upstream agent registered as `name`. Synchronous and local (nothing is contacted): it
   * only checks that the name exists, so that a configuration naming an unknown agent fails at
   * startup. Throws (a one-line, operator-facing message) otherwise.
   */
  open(name: string): UpstreamAgent;
}

/**
 * The limits of one upstream agent, from its registry entry (milliseconds and characters).
 *
 * @example
 * ```ts
 * const limits: UpstreamLimits = { maxWaitMs: 120_000, pollIntervalMs: 2_000, maxReplyChars: 20_000 };
 * ```
 */
export interface UpstreamLimits {
  /** A turn's whole exchange with the upstream (`max_wait_s`); then the upstream task is canceled. */
  readonly maxWaitMs: number;
  /** Between two GetTask reads while a task runs (`poll_interval_s`), when the upstream cannot stream. */
  readonly pollIntervalMs: number;
  /** The most reply text relayed per turn (`max_reply_chars`); the rest is cut with a note. */
  readonly maxReplyChars: number;
}

/**
 * One upstream agent.
 *
 * @example
 * ```ts
 * const agent = connector.open('travel');
 * agent.limits.maxWaitMs; // 120000
 * ```
 */
export interface UpstreamAgent {
  /** Its registry name (for log lines). */
  readonly name: string;
  readonly limits: UpstreamLimits;
  /**
   * Values that must never appear in what is relayed from this agent (the bearer token Airlock
   * sends it, should it echo it back). For redaction only; never logged or shown.
   */
  readonly secrets: readonly string[];
  /**
   * The agent's trusted card (fetched, checked against its pin, cached by the connector) and
   * the channel it describes. `subject` is who the turn's calls act for: an OAuth token exchange
   * entry exchanges a delegated caller's token for one to the upstream (the user as subject),
   * and uses its client credentials for a service caller; absent (no turn, e.g. a cancel): the
   * entry's own configuration alone. Throws {@link UpstreamError} (`card_pin_mismatch`,
   * `address_blocked`, `network_error`, `remote_auth_failed`, …).
   */
  connect(signal: AbortSignal, subject?: OutboundSubject): Promise<UpstreamChannel>;
}

/**
 * One outbound message: the text, and the upstream's own ids when continuing.
 *
 * @example
 * ```ts
 * const request: UpstreamRequest = { text: 'Tuesday', taskId: 'up-task-1', contextId: 'up-ctx-1', signal, timeoutMs: 30_000 };
 * ```
 */
export interface UpstreamRequest {
  /** Sent as the only (text) part of a new user message with a new messageId. */
  readonly text: string;
  /** The upstream task to continue (an input-required one); absent starts a new task. */
  readonly taskId?: string;
  /** The upstream context; absent lets the upstream mint one. */
  readonly contextId?: string;
  /** Aborts the request (or the stream) in flight. */
  readonly signal: AbortSignal;
  /**
   * The longest the request (or the whole stream) may take: what is left of `maxWaitMs`, with a
   * little grace, since the backend's own deadline is meant to end it first.
   */
  readonly timeoutMs: number;
  /** The hop chain to send (the turn's `via`); absent: this gateway's own id only. */
  readonly via?: readonly string[];
}

/**
 * The exchanges with one upstream agent, as its trusted card describes it.
 *
 * @example
 * ```ts
 * const events = channel.streaming ? channel.stream(request) : undefined;
 * ```
 */
export interface UpstreamChannel {
  /** The trusted card declares `capabilities.streaming`: {@link UpstreamChannel.stream} may be used. */
  readonly streaming: boolean;
  /**
   * SendMessage. A new task is sent non-blocking (its id comes back at once, to poll and to
   * cancel); a continued one (`taskId`) blocking, cut at `timeoutMs`. Throws {@link UpstreamError}.
   */
  send(request: UpstreamRequest): Promise<SendResult>;
  /**
   * SendStreamingMessage: the upstream's events as they arrive. The iteration throws
   * {@link UpstreamError} (a cut at the byte cap, a timeout, an invalid event, the upstream's
   * own error); leaving it early closes the stream.
   */
  stream(request: UpstreamRequest): AsyncIterable<StreamEvent>;
  /** GetTask. Throws {@link UpstreamError}. */
  getTask(taskId: string, signal: AbortSignal): Promise<Task>;
  /**
   * CancelTask, best effort and bounded in time: the state the upstream reports, or undefined
   * when it could not be asked. Never throws.
   */
  cancel(taskId: string): Promise<TaskState | undefined>;
}

/**
 * A failed exchange with the upstream. `type` is one of the outbound client's error types
 * (`network_error`, `card_pin_mismatch`, `request_timeout`, `remote_error`, …; see
 * `CALL_ERROR_TYPES` in src/client/result.ts) and `message` Airlock's own fixed explanation of
 * it: neither ever holds text the upstream chose, nor a secret.
 *
 * @example
 * ```ts
 * throw new UpstreamError('address_blocked', 'the remote host resolves to an address this entry may not reach');
 * ```
 */
export class UpstreamError extends AirlockError {
  readonly code = 'upstream_failed';
  /** The outbound error type, e.g. `network_error`. */
  readonly type: string;
  /**
   * The upstream answered with a JSON-RPC error of its own (or does not know the task): it
   * ended its side, so its task need not be canceled.
   */
  readonly remoteEnded: boolean;

  constructor(type: string, message: string, options: { remoteEnded?: boolean } = {}) {
    super(message);
    this.type = type;
    this.remoteEnded = options.remoteEnded === true;
  }
}
