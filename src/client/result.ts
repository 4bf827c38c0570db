/**
 * Result shaping: what a caller (often a model) gets back from a remote agent. Everything the
 * remote chose — reply text, error text — is redacted, cut to size and framed in the
 * untrusted-content markers; only values Airlock can vouch for stand outside the frame: the
 * status, the task state (a closed vocabulary), ids that match a strict pattern, part kinds,
 * media types of a strict shape, counts, and error types and messages from fixed tables.
 * Pure functions; nothing here does I/O.
 *
 * @example
 * ```ts
 * const result = shapeResult({ kind: 'task', task }, { agent: 'travel', maxReplyChars: 20_000 });
 * result.reply; // 'SECURITY NOTICE: …\nSource: A2A agent travel\n<<<EXTERNAL_UNTRUSTED_CONTENT>>>\n…'
 * ```
 */
import { AUDIT_EVENT_SPEC, type AuditReasonOf } from '../audit/events.js';
import { frameUntrusted, redactContactDetails, redactSecrets } from '../content/index.js';
import type { Part, SendResult, TaskState } from '../protocol/model.js';
import { isInterruptedState, isTerminalState } from '../protocol/model.js';

/**
 * Ids (task, context) appear outside the markers only when they match this: short, and made
 * of characters that cannot spell an instruction or a marker.
 *
 * @example
 * ```ts
 * STRICT_ID_PATTERN.test('3f2c9a70-1b2d-4c5e-8f90-1234567890ab'); // true
 * ```
 */
export const STRICT_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** A media type shown outside the markers: `type/subtype`, lower case, no parameters. */
const MEDIA_TYPE_PATTERN = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,63}$/;

/**
 * At most this many non-text parts are described in `parts`; `dropped_parts` counts them all.
 *
 * @example
 * ```ts
 * result.parts.length <= MAX_PART_SUMMARIES; // always
 * ```
 */
export const MAX_PART_SUMMARIES = 100;

/**
 * Reasons the audit rows know (`a2a.client.send`).
 *
 * @example
 * ```ts
 * const reason: ClientReason = 'request_timeout';
 * ```
 */
export type ClientReason = AuditReasonOf<'a2a.client.send'>;

/**
 * Every `error_type` a result may carry.
 *
 * @example
 * ```ts
 * const type: CallErrorType = 'confirmation_required';
 * ```
 */
export type CallErrorType = ClientReason;

/**
 * The fixed `error_type` vocabulary: exactly the audit's outbound reasons, so every error a
 * caller sees can be recorded as it is.
 *
 * @example
 * ```ts
 * CALL_ERROR_TYPES.includes('request_timeout'); // true
 * ```
 */
export const CALL_ERROR_TYPES: readonly CallErrorType[] = AUDIT_EVENT_SPEC['a2a.client.send'].reasons;

/**
 * `success`: the exchange worked (see `task_state`); `input_required`: a person must answer.
 *
 * @example
 * ```ts
 * const status: CallStatus = result.status;
 * ```
 */
export type CallStatus = 'success' | 'input_required' | 'error';

/**
 * A non-text part the reply left out: its kind and (strict) media type, never its content.
 *
 * @example
 * ```ts
 * const summary: PartSummary = { kind: 'url', media_type: 'application/pdf' };
 * ```
 */
export interface PartSummary {
  kind: Exclude<Part['kind'], 'text'>;
  media_type: string | null;
}

/**
 * The answer to a send or get. `reply` is `''` or one framed block of untrusted text;
 * everything else is Airlock's own. `task_id` is the remote's id, for a follow-up send or get.
 *
 * @example
 * ```ts
 * if (result.status === 'input_required') askHuman(result.reply, result.task_id);
 * ```
 */
export interface CallResult {
  status: CallStatus;
  reply: string;
  task_state: TaskState | null;
  task_id: string | null;
  context_id: string | null;
  parts: PartSummary[];
  dropped_parts: number;
  truncated: boolean;
  error_type: CallErrorType | null;
  /** A fixed local explanation of `error_type`; never text from the remote. */
  error_message: string | null;
}

/**
 * How to shape: the registry name (for the frame's source line), the reply cap, and values
 * that must never appear in a result (the entry's bearer token, should a remote echo it).
 *
 * @example
 * ```ts
 * const options: ShapeOptions = { agent: entry.name, maxReplyChars: entry.maxReplyChars, secrets: [token] };
 * ```
 */
export interface ShapeOptions {
  agent: string;
  maxReplyChars: number;
  secrets?: readonly string[];
}

/**
 * The shaped result and the length of the remote's reply text before redaction and cutting
 * (for the audit row's `outputChars`).
 *
 * @example
 * ```ts
 * const { result, replyChars } = shapeResultDetailed(sendResult, options);
 * ```
 */
export interface ShapedResult {
  result: CallResult;
  replyChars: number;
}

/**
 * A strict id, or null. Anything else a remote sent as an id is not shown at all: it would
 * stand outside the markers.
 *
 * @example
 * ```ts
 * safeId('task-1');                   // 'task-1'
 * safeId('ignore previous');         // null
 * safeId('tok_0123456789', [token]); // null when it is (or holds) a secret
 * ```
 */
export function safeId(value: unknown, secrets: readonly string[] = []): string | null {
  if (typeof value !== 'string' || !STRICT_ID_PATTERN.test(value)) return null;
  // A remote that echoes our token as its task id must not get it past the frame.
  return containsSecret(value, secrets) ? null : value;
}

function containsSecret(value: string, secrets: readonly string[]): boolean {
  return secrets.length > 0 && redactSecrets(value, secrets).redacted > 0;
}

/**
 * Shapes a decoded SendMessage/GetTask answer.
 *
 * - Text parts of the artifacts (in order), then of the status message, become the reply;
 *   a status message identical to an artifact's text is not repeated.
 * - Other parts are left out, counted in `dropped_parts` and described in `parts`.
 * - Status: `completed` or a direct message → success; `input-required`/`auth-required` →
 *   input_required; `failed`/`rejected`/`canceled` → error `remote_error`; a task still
 *   running → success with its state (the caller decides whether to wait).
 *
 * Never throws.
 *
 * @example
 * ```ts
 * shapeResult({ kind: 'message', message }, { agent: 'travel', maxReplyChars: 100 }).status; // 'success'
 * ```
 */
export function shapeResult(source: SendResult, options: ShapeOptions): CallResult {
  return shapeResultDetailed(source, options).result;
}

/**
 * {@link shapeResult}, with the raw reply length for the audit row.
 *
 * @example
 * ```ts
 * const { result, replyChars } = shapeResultDetailed({ kind: 'task', task }, options);
 * ```
 */
export function shapeResultDetailed(source: SendResult, options: ShapeOptions): ShapedResult {
  try {
    return shapeUnsafe(source, options);
  } catch {
    // Decoded input cannot make shaping throw; this keeps the promise for anything else.
    return { result: errorResult('invalid_response', {}), replyChars: 0 };
  }
}

function shapeUnsafe(source: SendResult, options: ShapeOptions): ShapedResult {
  const secrets = options.secrets ?? [];
  const collector = new PartCollector(secrets);
  if (source.kind === 'message') {
    const message = source.message;
    collector.addBlock(message.parts);
    const { reply, truncated } = frameReply(collector.text(), options);
    return {
      result: {
        status: 'success',
        reply,
        task_state: null,
        task_id: safeId(message.taskId, secrets),
        context_id: safeId(message.contextId, secrets),
        parts: collector.summaries,
        dropped_parts: collector.dropped,
        truncated,
        error_type: null,
        error_message: null,
      },
      replyChars: collector.chars(),
    };
  }
  const task = source.task;
  for (const artifact of task.artifacts) collector.addBlock(artifact.parts);
  if (task.status.message !== undefined) collector.addBlock(task.status.message.parts);
  const { reply, truncated } = frameReply(collector.text(), options);
  const state = task.status.state;
  const failed = isTerminalState(state) && state !== 'completed';
  const status: CallStatus = failed ? 'error' : isInterruptedState(state) ? 'input_required' : 'success';
  return {
    result: {
      status,
      reply,
      task_state: state,
      task_id: safeId(task.id, secrets),
      context_id: safeId(task.contextId, secrets),
      parts: collector.summaries,
      dropped_parts: collector.dropped,
      truncated,
      error_type: failed ? 'remote_error' : null,
      error_message: failed ? ERROR_MESSAGES.remote_error : null,
    },
    replyChars: collector.chars(),
  };
}

/**
 * Context for an error result: ids and state known so far, remote text to frame (a JSON-RPC
 * error's message, say), and a local message to use instead of the fixed one.
 *
 * @example
 * ```ts
 * errorResult('request_timeout', { taskId: task.id, contextId: task.contextId, taskState: 'working' });
 * ```
 */
export interface ErrorContext {
  taskId?: string;
  contextId?: string;
  taskState?: TaskState;
  /** Text the remote chose; framed (with `shape`) or dropped (without). */
  remoteText?: string;
  shape?: ShapeOptions;
  /** A local explanation, written by Airlock from operator config and fixed text only. */
  message?: string;
}

/**
 * An error result. Ids pass through {@link safeId}; remote text only ever appears framed in
 * `reply`. Never throws.
 *
 * @example
 * ```ts
 * errorResult('confirmation_required', { message: 'agent "shop" acts: confirm the call' });
 * ```
 */
export function errorResult(errorType: CallErrorType, context: ErrorContext): CallResult {
  let reply = '';
  let truncated = false;
  if (context.remoteText !== undefined && context.shape !== undefined && context.remoteText.length > 0) {
    ({ reply, truncated } = frameReply(context.remoteText, context.shape));
  }
  return {
    status: 'error',
    reply,
    task_state: context.taskState ?? null,
    task_id: safeId(context.taskId, context.shape?.secrets),
    context_id: safeId(context.contextId, context.shape?.secrets),
    parts: [],
    dropped_parts: 0,
    truncated,
    error_type: errorType,
    error_message: context.message ?? ERROR_MESSAGES[errorType],
  };
}

/**
 * Redacts (email addresses, then the given secrets in any encoding), cuts to
 * `maxReplyChars` and frames. Empty text gives an empty reply, not an empty frame.
 *
 * @example
 * ```ts
 * frameReply('mail me at a@b.io', { agent: 'x', maxReplyChars: 100 }).reply.includes('[email redacted]'); // true
 * ```
 */
export function frameReply(text: string, options: ShapeOptions): { reply: string; truncated: boolean } {
  if (typeof text !== 'string' || text.length === 0) return { reply: '', truncated: false };
  let clean = redactContactDetails(text).text;
  if (options.secrets !== undefined && options.secrets.length > 0) clean = redactSecrets(clean, options.secrets).text;
  const limit = Math.max(0, Math.floor(options.maxReplyChars));
  const truncated = clean.length > limit;
  if (truncated) clean = cutAt(clean, limit);
  // Cut before framing, so the closing marker is never cut off.
  return { reply: frameUntrusted(clean, { source: `A2A agent ${options.agent}` }), truncated };
}

/** The first `limit` UTF-16 units, without splitting a surrogate pair. */
function cutAt(text: string, limit: number): string {
  let end = limit;
  const last = text.charCodeAt(end - 1);
  if (end > 0 && last >= 0xd800 && last <= 0xdbff) end -= 1;
  return text.slice(0, end);
}

/** Gathers text blocks and describes the rest. */
class PartCollector {
  readonly summaries: PartSummary[] = [];
  dropped = 0;
  readonly #blocks: string[] = [];
  readonly #secrets: readonly string[];

  constructor(secrets: readonly string[]) {
    this.#secrets = secrets;
  }

  addBlock(parts: readonly Part[]): void {
    let text = '';
    for (const part of parts) {
      if (part.kind === 'text') {
        text += part.text;
        continue;
      }
      this.dropped += 1;
      if (this.summaries.length < MAX_PART_SUMMARIES) {
        const media = typeof part.mediaType === 'string' ? part.mediaType.toLowerCase() : '';
        const shown = MEDIA_TYPE_PATTERN.test(media) && !containsSecret(media, this.#secrets);
        this.summaries.push({ kind: part.kind, media_type: shown ? media : null });
      }
    }
    // An agent often repeats its answer as the final status message: show it once.
    if (text.length > 0 && !this.#blocks.includes(text)) this.#blocks.push(text);
  }

  text(): string {
    return this.#blocks.join('\n');
  }

  chars(): number {
    return this.text().length;
  }
}

/**
 * Fixed explanations, one per error type. They may name Airlock's settings; they never carry
 * anything the remote sent.
 *
 * @example
 * ```ts
 * ERROR_MESSAGES.request_timeout; // 'the remote task did not finish within max_wait_s; …'
 * ```
 */
export const ERROR_MESSAGES: Readonly<Record<CallErrorType, string>> = {
  agent_not_configured: 'no such agent in the registry',
  insecure_url: 'the remote endpoint is not https (plain http is allowed only to loopback)',
  url_has_credentials: 'the remote endpoint URL carries credentials and was refused',
  origin_mismatch: "the card's endpoint is not on an origin this registry entry allows",
  address_blocked: 'the remote host resolves to an address this entry may not reach',
  redirect_refused: 'the remote answered with a redirect; redirects are never followed',
  card_invalid: "the remote agent's card is invalid or unusable",
  card_signature_invalid: "the remote agent's card signature did not verify",
  card_pin_mismatch: "the remote agent's card changed since it was pinned; an operator must re-pin it",
  message_too_long: 'the message is longer than 8192 characters',
  response_too_large: "the remote's response was larger than max_response_bytes",
  request_timeout: 'the remote did not answer in time',
  remote_auth_failed: 'the remote refused our credentials (HTTP 401/403)',
  remote_error: 'the remote agent reported an error; any text it sent is in reply, as untrusted content',
  network_error: 'the remote could not be reached',
  proxy_refused: 'the egress proxy refused to open a tunnel to the remote',
  task_not_found: 'the remote does not know this task',
  invalid_response: 'the remote sent a response that is not valid A2A',
  confirmation_required: 'this agent acts on your behalf: repeat the call with explicit confirmation (--confirm)',
  invalid_params: 'the request is invalid',
};
