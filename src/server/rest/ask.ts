/**
 * The REST ask endpoint (`POST {basePath}/{slug}/ask`) for callers that do not speak A2A: a
 * JSON `{ message, contextId? }` in, `{ reply, state, taskId, contextId }` out. It is a thin
 * shape over the same task service as JSON-RPC: the message becomes the same canonical
 * Message (role user, one text part) and the same blocking SendMessage runs, so ownership,
 * sessions and every guard below the service apply unchanged.
 *
 * @example
 * ```ts
 * try {
 *   const reply = await runAsk(service, callContext, parseAskRequest(JSON.parse(body)));
 *   send(res, 200, reply);
 * } catch (error) {
 *   const { status, body } = askErrorResponse(error);
 *   send(res, status, body);
 * }
 * ```
 */
import { A2AError } from '../../protocol/errors.js';
import { TASK_STATES, type Message, type SendResult, type Task, type TaskState } from '../../protocol/model.js';
import { newId } from '../../tasks/ids.js';
import { CapacityError, type TurnGrant } from '../../tasks/policy.js';
import type { TaskService } from '../../tasks/service.js';
import type { CallContext } from '../../tasks/call-context.js';
import { isStoreUnavailable } from '../../tasks/stores/errors.js';
import { STORE_UNAVAILABLE_MESSAGE, STORE_UNAVAILABLE_RETRY_AFTER_SECONDS } from '../rpc.js';
import { AirlockError } from '../../errors/index.js';

/** A validated ask request. */
export interface AskRequest {
  message: string;
  /** Continues an earlier conversation: the `contextId` of a previous reply. */
  contextId?: string;
}

/** The answer to an ask. */
export interface AskReply {
  /** The agent's reply text; for input-required, failed and rejected, what the status says. */
  reply: string;
  state: AskState;
  /** `''` when the agent answered directly, without a task. */
  taskId: string;
  /** Send it back as `contextId` to continue the same conversation. */
  contextId: string;
}

/** Task states by their lowercase names (v1.0 spells them `TASK_STATE_*`). */
export type AskState = TaskState;

/** Every `state` an ask reply can carry, in lifecycle order (the OpenAPI enum). */
export const ASK_STATES: readonly AskState[] = TASK_STATES;

/** The body of every ask error: the google.rpc.Status shape the gateway's other HTTP errors use. */
export interface AskErrorBody {
  error: {
    /** The HTTP status again, as google.rpc.Status JSON carries it. */
    code: number;
    /** A stable name for the status, e.g. `INVALID_ARGUMENT` or `NOT_FOUND`. */
    status: string;
    /** One line for a person; never message content or internals. */
    message: string;
  };
}

/** An ask error, ready to send. */
export interface AskErrorResponse {
  status: number;
  body: AskErrorBody;
  /** Extra response headers: `retry-after` (seconds) on a 503 for capacity. */
  headers?: Record<string, string>;
}

/** Context ids as the protocol accepts them: 1..256 printable ASCII characters, no spaces. */
export const MAX_CONTEXT_ID_LENGTH = 256;
const CONTEXT_ID_PATTERN = /^[\x21-\x7e]+$/;
const FIELDS: ReadonlySet<string> = new Set(['message', 'contextId']);

/**
 * A request the ask endpoint refuses before anything runs: always a 400 with a one-line message.
 *
 * @example
 * ```ts
 * if (error instanceof AskRequestError) send(res, error.status, { error: { message: error.message } });
 * ```
 */
export class AskRequestError extends AirlockError {
  readonly code = 'ask_request_invalid';
  readonly status = 400;

  constructor(message: string) {
    super(message);
  }
}

/**
 * Validates a parsed ask body. `message` must be a non-empty string (at most
 * `maxMessageChars` characters when given); `contextId` is optional, a context id as A2A
 * accepts it. An absent, `null` or `''` contextId means a new conversation: tool callers
 * often fill optional fields with empty values. Any other key is refused (a misspelt
 * `contextID` silently ignored would start a new conversation when the caller meant to
 * continue one). Throws `AskRequestError`.
 *
 * @example
 * ```ts
 * parseAskRequest({ message: 'Hello', contextId: 'c-1' }); // { message: 'Hello', contextId: 'c-1' }
 * parseAskRequest({ text: 'Hello' });                     // throws AskRequestError (400)
 * ```
 */
export function parseAskRequest(body: unknown, options: { maxMessageChars?: number } = {}): AskRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new AskRequestError('The body must be a JSON object: {"message": "...", "contextId": "..."}');
  }
  const record = body as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!FIELDS.has(key)) {
      throw new AskRequestError(`Unknown field ${quoted(key)}: only "message" and "contextId" are accepted`);
    }
  }
  const message = record.message;
  if (typeof message !== 'string') {
    throw new AskRequestError(
      message === undefined || message === null ? '"message" is required' : '"message" must be a string',
    );
  }
  if (message.length === 0) throw new AskRequestError('"message" must not be empty');
  const max = options.maxMessageChars;
  if (max !== undefined && message.length > max) {
    throw new AskRequestError(`"message" must be at most ${max} characters`);
  }
  const contextId = record.contextId;
  if (contextId === undefined || contextId === null || contextId === '') return { message };
  if (typeof contextId !== 'string') throw new AskRequestError('"contextId" must be a string');
  if (contextId.length > MAX_CONTEXT_ID_LENGTH) {
    throw new AskRequestError(`"contextId" must be at most ${MAX_CONTEXT_ID_LENGTH} characters`);
  }
  if (!CONTEXT_ID_PATTERN.test(contextId)) {
    throw new AskRequestError('"contextId" must be printable ASCII without spaces');
  }
  return { message, contextId };
}

/**
 * The ask reply for what `TaskService.send` returned. The reply text is the text parts of the
 * task's artifacts, joined by newlines; for a task that is waiting for input, failed or was
 * rejected it is the text of its status message instead (the question or the reason), and a
 * task with no artifact text falls back on its status message too. Parts that are not text
 * are left out. A direct reply (a message, no task) is `completed` with `taskId: ''`.
 *
 * @example
 * ```ts
 * askResultOf({ kind: 'task', task }); // { reply: 'Hello', state: 'completed', taskId: task.id, contextId: task.contextId }
 * ```
 */
export function askResultOf(result: SendResult | Task): AskReply {
  if ('kind' in result && result.kind === 'message') {
    return {
      reply: textOf(result.message.parts),
      state: 'completed',
      taskId: result.message.taskId ?? '',
      contextId: result.message.contextId ?? '',
    };
  }
  const task = 'kind' in result ? result.task : result;
  const state = task.status.state;
  const statusText = task.status.message === undefined ? '' : textOf(task.status.message.parts);
  let reply: string;
  if (state === 'input-required' || state === 'failed' || state === 'rejected') {
    reply = statusText;
  } else {
    reply = artifactText(task);
    if (reply.length === 0) reply = statusText;
  }
  return { reply, state, taskId: task.id, contextId: task.contextId };
}

/**
 * The user message an ask sends: a fresh messageId, one text part, the caller's contextId
 * when given.
 *
 * @example
 * ```ts
 * askMessage({ message: 'Hello', contextId: 'c-1' }); // { messageId, role: 'user', parts: [{ kind: 'text', text: 'Hello' }], contextId: 'c-1' }
 * ```
 */
export function askMessage(request: AskRequest): Message {
  const message: Message = { messageId: newId(), role: 'user', parts: [{ kind: 'text', text: request.message }] };
  if (request.contextId !== undefined) message.contextId = request.contextId;
  return message;
}

/**
 * Sends an ask's message to the service as a blocking SendMessage, with the grant admission
 * gave its turn, and shapes the answer. Errors are the service's own (`A2AError`); map them
 * with `askErrorResponse`.
 *
 * @example
 * ```ts
 * const reply = await sendAsk(service, ctx, askMessage(request), turn.grant);
 * ```
 */
export async function sendAsk(
  service: TaskService,
  context: CallContext,
  message: Message,
  grant?: TurnGrant,
): Promise<AskReply> {
  return askResultOf(await service.send(context, { message, configuration: { returnImmediately: false } }, grant));
}

/**
 * Runs one ask: a new user message (see {@link askMessage}) sent to the service as a blocking
 * SendMessage (see {@link sendAsk}).
 *
 * @example
 * ```ts
 * const first = await runAsk(service, ctx, { message: 'Plan a trip' });
 * const next = await runAsk(service, ctx, { message: 'To Oslo', contextId: first.contextId });
 * ```
 */
export function runAsk(
  service: TaskService,
  context: CallContext,
  request: AskRequest,
  grant?: TurnGrant,
): Promise<AskReply> {
  return sendAsk(service, context, askMessage(request), grant);
}

/** HTTP statuses for the A2A errors an ask can meet; every other code is a 500. */
const STATUS_BY_CODE: ReadonlyMap<number, number> = new Map([
  [-32700, 400], // JSON parse error
  [-32600, 400], // invalid request
  [-32602, 400], // invalid params
  [-32001, 404], // task not found
  [-32002, 409], // task not cancelable
  [-32004, 409], // unsupported operation: the task or context is busy or has ended
]);

/** google.rpc.Code names for the statuses an ask answers with (the ones the gateway's refusals use too). */
const STATUS_NAMES: ReadonlyMap<number, string> = new Map([
  [400, 'INVALID_ARGUMENT'],
  [401, 'UNAUTHENTICATED'],
  [403, 'PERMISSION_DENIED'],
  [404, 'NOT_FOUND'],
  [408, 'DEADLINE_EXCEEDED'],
  [409, 'ABORTED'],
  [413, 'INVALID_ARGUMENT'],
  [415, 'INVALID_ARGUMENT'],
  [429, 'RESOURCE_EXHAUSTED'],
  [500, 'INTERNAL'],
  [503, 'UNAVAILABLE'],
]);

/**
 * The HTTP response for an error thrown by `parseAskRequest` or `runAsk`. Request errors are
 * 400s; A2A errors map by code (-32700/-32600/-32602 → 400, -32001 → 404, -32002/-32004 → 409)
 * and keep their message, which A2AError promises is fit for the caller; a `CapacityError`
 * from admission and a `StoreUnavailableError` (the task store cannot be reached) are 503s with
 * `retry-after`; anything else, including -32603 and errors that
 * are not ours, is a 500 that says nothing about internals (log the error before calling this).
 *
 * @example
 * ```ts
 * askErrorResponse(new A2AError('TASK_NOT_FOUND'));
 * // { status: 404, body: { error: { code: 404, status: 'NOT_FOUND', message: 'Task not found' } } }
 * ```
 */
export function askErrorResponse(error: unknown): AskErrorResponse {
  if (error instanceof AskRequestError) return askError(400, error.message);
  if (error instanceof CapacityError) {
    return { ...askError(503, error.message), headers: { 'retry-after': String(error.retryAfterSeconds) } };
  }
  if (isStoreUnavailable(error)) {
    return {
      ...askError(503, STORE_UNAVAILABLE_MESSAGE),
      headers: { 'retry-after': String(STORE_UNAVAILABLE_RETRY_AFTER_SECONDS) },
    };
  }
  if (error instanceof A2AError) {
    const status = STATUS_BY_CODE.get(error.rpcCode);
    if (status !== undefined) return askError(status, error.message);
  }
  return askError(500, 'Internal error');
}

/**
 * An ask error body for any status, for the refusals made around the endpoint (401, 403, 413,
 * 429, 503), so that every error the OpenAPI document lists has the one shape.
 *
 * @example
 * ```ts
 * askError(429, 'Too many requests; retry later').body.error.status; // 'RESOURCE_EXHAUSTED'
 * ```
 */
export function askError(status: number, message: string): AskErrorResponse {
  return {
    status,
    body: { error: { code: status, status: STATUS_NAMES.get(status) ?? 'UNKNOWN', message: oneLine(message) } },
  };
}

function artifactText(task: Task): string {
  let out = '';
  for (const artifact of task.artifacts) {
    const text = textOf(artifact.parts);
    if (text.length > 0) out = out.length === 0 ? text : `${out}\n${text}`;
  }
  return out;
}

function textOf(parts: Message['parts']): string {
  let out = '';
  for (const part of parts) {
    if (part.kind === 'text' && part.text.length > 0) out = out.length === 0 ? part.text : `${out}\n${part.text}`;
  }
  return out;
}

/** Error messages travel as one line of printable text. */
function oneLine(text: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what this removes
  const line = text.replace(/[\x00-\x1f\x7f]+/g, ' ').trim();
  return line.length > 300 ? `${line.slice(0, 299)}…` : line;
}

/** A caller's key, quoted for an error message: printable ASCII, clipped. */
function quoted(key: string): string {
  const safe = key.replace(/[^\x20-\x7e]/g, '?');
  return JSON.stringify(safe.length > 64 ? `${safe.slice(0, 64)}…` : safe);
}
