/**
 * The codec contract: everything that differs between A2A v1.0 and v0.3 lives behind it.
 *
 * A server decodes requests and encodes results; a client (the outbound half) encodes
 * requests and decodes results. Both directions are pure functions over plain JSON.
 *
 * @example
 * ```ts
 * const dialect = dialectForMethod('message/send'); // the v0.3 codec
 * const request = dialect?.decodeRequest('message/send', params);
 * ```
 */
import type { A2AError } from './errors.js';
import type {
  A2ARequest,
  AgentCard,
  ListTasksResult,
  Message,
  PushConfigResult,
  SendResult,
  StreamEvent,
  Task,
} from './model.js';

export type DialectVersion = '1.0' | '0.3';

/** The `error` member of a JSON-RPC response. */
export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/** A request ready to send: the wire method name and params. */
export interface EncodedRequest {
  method: string;
  params: Record<string, unknown>;
}

export interface Dialect {
  readonly version: DialectVersion;
  /** True when `method` is one of this dialect's JSON-RPC method names. */
  hasMethod(method: string): boolean;

  // --- server side -------------------------------------------------------------------------
  /** Validates and converts params of one of this dialect's methods. Throws `A2AError` (-32602 etc.). */
  decodeRequest(method: string, params: unknown): A2ARequest;
  encodeSendResult(result: SendResult): unknown;
  encodeTask(task: Task): unknown;
  /** v0.3 has no ListTasks; its codec throws `UNSUPPORTED_OPERATION`. */
  encodeListResult(result: ListTasksResult): unknown;
  encodeStreamEvent(event: StreamEvent): unknown;
  /** A push-config operation's answer (v1.0 flat config / `{configs}` / `{}`; v0.3 nested / array / null). */
  encodePushResult(result: PushConfigResult): unknown;
  encodeError(error: A2AError): JsonRpcErrorObject;
  encodeCard(card: AgentCard): unknown;

  // --- client side -------------------------------------------------------------------------
  /** Renders a canonical request in this dialect. */
  encodeRequest(request: A2ARequest): EncodedRequest;
  /** Validates a remote's SendMessage result. Throws `A2AError('INVALID_AGENT_RESPONSE')`. */
  decodeSendResult(result: unknown): SendResult;
  decodeTask(result: unknown): Task;
  decodeListResult(result: unknown): ListTasksResult;
  decodeStreamEvent(result: unknown): StreamEvent;
  /** A remote's JSON-RPC error, as an `A2AError` (unknown codes become INTERNAL). */
  decodeError(error: unknown): A2AError;
  decodeCard(card: unknown): AgentCard;
}

/** Useful for tests and the client: a message in the shape a dialect expects on the wire. */
export type EncodeMessage = (message: Message) => unknown;
