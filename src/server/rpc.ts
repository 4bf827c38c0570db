/**
 * JSON-RPC dispatch: frame → dialect → canonical request (`decodeRpc`), then, once the turn
 * is admitted, task service → dialect result (`runRpc`). This is the only server code that
 * touches a `Dialect`; the service below it never knows which version the caller speaks.
 *
 * @example
 * ```ts
 * const decoded = decodeRpc(body, versionHeader, onError);
 * const outcome = decoded.ok ? await runRpc(decoded, call, grant) : decoded.outcome;
 * if (outcome.kind === 'json') res.end(outcome.body);
 * ```
 */
import type { Dialect, DialectVersion } from '../protocol/dialect.js';
import { A2AError } from '../protocol/errors.js';
import {
  jsonRpcError,
  jsonRpcResult,
  notificationRefused,
  parseJsonRpcCall,
  salvageId,
  type JsonRpcId,
} from '../protocol/jsonrpc.js';
import type { A2ARequest, Message, PushConfigInput, SendParams, StreamEvent } from '../protocol/model.js';
import type { PushService } from '../push/service.js';
import { checkInlinePush, registeringPush } from './inline-push.js';
import { V03_JSON, v03 } from '../protocol/v03/index.js';
import type { JsonWriters } from '../protocol/json-text.js';
import { dialectForMethod, parseA2AVersion } from '../protocol/version.js';
import { V10_JSON, v10 } from '../protocol/v10/index.js';
import { CapacityError, type TurnGrant } from '../tasks/policy.js';
import type { TaskService } from '../tasks/service.js';
import type { CallContext } from '../tasks/call-context.js';
import { isStoreUnavailable } from '../tasks/stores/errors.js';
import { decodeUtf8 } from '../protocol/utf8.js';

/**
 * What a caller hears while the task store cannot be reached (a database down, or too slow):
 * always this text, so that clients and operators can match on it. JSON-RPC answers it as
 * -32603; the REST ask endpoint as 503 with Retry-After ({@link STORE_UNAVAILABLE_RETRY_AFTER_SECONDS}).
 *
 * @example
 * ```ts
 * if (error.message === STORE_UNAVAILABLE_MESSAGE) await sleep(1_000); // then retry
 * ```
 */
export const STORE_UNAVAILABLE_MESSAGE = 'Task storage is unavailable; retry shortly';

/**
 * The Retry-After, in seconds, sent with a 503 for an unavailable task store.
 *
 * @example
 * ```ts
 * res.setHeader('retry-after', String(STORE_UNAVAILABLE_RETRY_AFTER_SECONDS));
 * ```
 */
export const STORE_UNAVAILABLE_RETRY_AFTER_SECONDS = 1;

/** What the dispatcher needs from the server around it. */
export interface RpcCall {
  service: TaskService;
  context: CallContext;
  /**
   * The extended card as JSON text in the caller's dialect, undefined when the agent has none.
   * The server renders it (and signs it, when it signs cards) once and serves it from a cache,
   * so nothing card-related is computed per call.
   */
  extendedCard: (version: DialectVersion) => string | undefined;
  onError: (error: unknown) => void;
  /** Push-config operations; absent when `push.enabled` is off (the methods answer -32003). */
  push?: PushService | undefined;
}

export type RpcOutcome =
  /** `errorCode`: the JSON-RPC error code when the body is an error (what reporters read; never parsed back). */
  | { kind: 'json'; body: string; errorCode?: number }
  /** A JSON-RPC error sent as the only event of an SSE stream. */
  | { kind: 'stream-error'; body: string; errorCode: number }
  /** Too many tasks running: an HTTP 503 with Retry-After rather than a JSON-RPC answer. */
  | { kind: 'unavailable'; message: string; retryAfterSeconds: number }
  | { kind: 'stream'; events: AsyncIterable<StreamEvent>; frame: (event: StreamEvent) => string };

/**
 * A JSON-RPC request decoded into its canonical form, ready for admission and the service; or
 * the error outcome when it could not be (not JSON, not JSON-RPC, unknown method, bad params, a
 * notification).
 */
export type RpcDecoded =
  { ok: true; request: A2ARequest; dialect: Dialect; id: JsonRpcId } | { ok: false; outcome: RpcOutcome };

/**
 * Decodes one JSON-RPC request body. Never throws: every failure is an outcome (an unexpected
 * one is passed to `onError` first).
 *
 * @example
 * ```ts
 * const decoded = decodeRpc(body, headerOf(req, 'a2a-version'), onError);
 * if (!decoded.ok) return write(decoded.outcome);
 * ```
 */
export function decodeRpc(
  body: Buffer,
  versionHeader: string | undefined,
  onError: (error: unknown) => void,
): RpcDecoded {
  let frame: unknown;
  try {
    frame = JSON.parse(decodeUtf8(body));
  } catch {
    return { ok: false, outcome: errorOutcome(null, fallbackDialect(versionHeader), new A2AError('JSON_PARSE')) };
  }
  let id: JsonRpcId = salvageId(frame);
  let dialect = fallbackDialect(versionHeader);
  try {
    const rpc = parseJsonRpcCall(frame);
    id = rpc.id ?? null;
    parseA2AVersion(versionHeader);
    const chosen = dialectForMethod(rpc.method);
    if (chosen === undefined) throw new A2AError('METHOD_NOT_FOUND', `Method not found: ${printable(rpc.method)}`);
    dialect = chosen;
    const request = dialect.decodeRequest(rpc.method, rpc.params);
    if (rpc.id === undefined) throw notificationRefused();
    return { ok: true, request, dialect, id };
  } catch (error) {
    return { ok: false, outcome: rpcFailure(error, id, dialect, undefined, onError) };
  }
}

/**
 * The message a request would start a turn with: SendMessage and SendStreamingMessage (either
 * dialect's name) need admission as a turn; every other method starts none.
 *
 * @example
 * ```ts
 * const message = turnMessageOf(decoded.request); // undefined for tasks/get
 * ```
 */
export function turnMessageOf(request: A2ARequest): Message | undefined {
  return request.method === 'send' || request.method === 'stream' ? request.params.message : undefined;
}

/**
 * Runs a decoded request on the service (with the grant admission gave a turn). Never throws:
 * every failure becomes an outcome.
 *
 * @example
 * ```ts
 * const outcome = await runRpc(decoded, call, turn.grant);
 * ```
 */
export function runRpc(
  decoded: Extract<RpcDecoded, { ok: true }>,
  call: RpcCall,
  grant?: TurnGrant,
): Promise<RpcOutcome> {
  const { request, dialect, id } = decoded;
  // `run` is async (it never throws, it rejects): one promise and one hop fewer than an async
  // wrapper awaiting it.
  return run(request, dialect, id, call, grant).then(undefined, (error: unknown) =>
    rpcFailure(error, id, dialect, request.method, call.onError),
  );
}

/**
 * The outcome for a failed call: a capacity refusal is a 503; an unexpected error is passed
 * to `onError` and answered as an internal error; an unreachable store in words callers can
 * rely on.
 *
 * @example
 * ```ts
 * const outcome = rpcFailure(new CapacityError(1), 7, v10, 'send', onError); // { kind: 'unavailable', … }
 * ```
 */
export function rpcFailure(
  error: unknown,
  id: JsonRpcId,
  dialect: Dialect,
  operation: A2ARequest['method'] | undefined,
  onError: (error: unknown) => void,
): RpcOutcome {
  if (error instanceof CapacityError) {
    return { kind: 'unavailable', message: error.message, retryAfterSeconds: error.retryAfterSeconds };
  }
  if (!(error instanceof A2AError)) onError(error);
  // Retryable, and said so in words the caller can rely on (the cause stays in the log).
  const shown = isStoreUnavailable(error) ? new A2AError('INTERNAL', STORE_UNAVAILABLE_MESSAGE) : error;
  const outcome = errorOutcome(id, dialect, shown);
  // Strict v0.3 clients read tasks/resubscribe as a stream even when it fails.
  if (operation === 'subscribe' && dialect.version === '0.3') {
    return { kind: 'stream-error', body: outcome.body, errorCode: outcome.errorCode };
  }
  return outcome;
}

/** Codecs that write their most common results as JSON text directly (see JsonWriters). */
const JSON_WRITERS: ReadonlyMap<Dialect, JsonWriters> = new Map<Dialect, JsonWriters>([
  [v03, V03_JSON],
  [v10, V10_JSON],
]);

async function run(
  request: A2ARequest,
  dialect: Dialect,
  id: JsonRpcId,
  call: RpcCall,
  grant: TurnGrant | undefined,
): Promise<RpcOutcome> {
  const { service, context } = call;
  const writers = JSON_WRITERS.get(dialect);
  switch (request.method) {
    case 'send': {
      const inline = request.params.configuration.pushConfig;
      // With push off an inline config is refused (-32003), as on HTTP+JSON: never dropped.
      if (inline !== undefined) return sendWithPush(request.params, inline, call.push, dialect, id, call, grant);
      const result = await service.send(context, request.params, grant);
      return writers === undefined
        ? json(id, dialect.encodeSendResult(result))
        : jsonText(id, writers.sendResult(result));
    }
    case 'stream': {
      const inline = request.params.configuration.pushConfig;
      const push = inline === undefined ? undefined : checkInlinePush(call.push, inline, grant);
      const events = await service.stream(context, request.params, grant);
      return stream(
        id,
        dialect,
        inline === undefined || push === undefined
          ? events
          : registeringPush(events, (taskId) => push.registerInline(context, taskId, inline, dialect.version)),
      );
    }
    case 'get': {
      const task = await service.get(context, request.params.id, request.params.historyLength);
      return writers === undefined ? json(id, dialect.encodeTask(task)) : jsonText(id, writers.task(task));
    }
    case 'list':
      return json(id, dialect.encodeListResult(await service.list(context, request.params)));
    case 'cancel': {
      const task = await service.cancel(context, request.params.id);
      return writers === undefined ? json(id, dialect.encodeTask(task)) : jsonText(id, writers.task(task));
    }
    case 'subscribe':
      return stream(id, dialect, await service.subscribe(context, request.params.id));
    case 'push-config':
      if (call.push === undefined) throw new A2AError('PUSH_NOTIFICATION_NOT_SUPPORTED');
      return json(id, dialect.encodePushResult(await call.push.handle(context, request.params, dialect.version)));
    case 'extended-card': {
      const card = call.extendedCard(dialect.version);
      if (card === undefined) throw new A2AError('EXTENDED_AGENT_CARD_NOT_CONFIGURED');
      return jsonText(id, card);
    }
  }
}

/**
 * A send with an inline push config: the config is judged before the turn starts (a refused
 * webhook refuses the send and gives the turn's slot back), and stored once the task exists.
 */
async function sendWithPush(
  params: SendParams,
  inline: PushConfigInput,
  on: PushService | undefined,
  dialect: Dialect,
  id: JsonRpcId,
  call: RpcCall,
  grant: TurnGrant | undefined,
): Promise<RpcOutcome> {
  const push = checkInlinePush(on, inline, grant);
  const result = await call.service.send(call.context, params, grant);
  if (result.kind === 'task') await push.registerInline(call.context, result.task.id, inline, dialect.version);
  return json(id, dialect.encodeSendResult(result));
}

function json(id: JsonRpcId, result: unknown): RpcOutcome {
  return { kind: 'json', body: JSON.stringify(jsonRpcResult(id, result)) };
}

/** As `json`, for a result that is already JSON text: the same bytes as `JSON.stringify(jsonRpcResult(...))`. */
function jsonText(id: JsonRpcId, result: string): RpcOutcome {
  return { kind: 'json', body: `${resultHead(id)}${result}}` };
}

/** A JSON-RPC result's envelope up to its `result` value, as `JSON.stringify(jsonRpcResult(...))` writes it. */
function resultHead(id: JsonRpcId): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":`;
}

function stream(id: JsonRpcId, dialect: Dialect, events: AsyncIterable<StreamEvent>): RpcOutcome {
  const writers = JSON_WRITERS.get(dialect);
  if (writers === undefined) {
    return {
      kind: 'stream',
      events,
      frame: (event) => JSON.stringify(jsonRpcResult(id, dialect.encodeStreamEvent(event))),
    };
  }
  // The same bytes as JSON.stringify(jsonRpcResult(id, dialect.encodeStreamEvent(event))).
  const head = resultHead(id);
  return { kind: 'stream', events, frame: (event) => `${head}${writers.streamEvent(event)}}` };
}

/** Renders any failure as a JSON-RPC error; unexpected errors say nothing about internals. */
export function errorOutcome(
  id: JsonRpcId,
  dialect: Dialect,
  error: unknown,
): Extract<RpcOutcome, { kind: 'json' }> & { errorCode: number } {
  const a2aError = error instanceof A2AError ? error : new A2AError('INTERNAL');
  const encoded = dialect.encodeError(a2aError);
  return { kind: 'json', body: JSON.stringify(jsonRpcError(id, encoded)), errorCode: encoded.code };
}

/** Errors before a method is known are shaped for the version the caller asked for. */
export function fallbackDialect(versionHeader: string | undefined): Dialect {
  try {
    return parseA2AVersion(versionHeader) === '1.0' ? v10 : v03;
  } catch {
    return v03;
  }
}

function printable(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, '?').slice(0, 64);
}
