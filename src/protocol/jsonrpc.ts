/**
 * JSON-RPC 2.0 framing (no batches, no notifications: A2A uses neither).
 *
 * @example
 * ```ts
 * const call = parseJsonRpcCall(JSON.parse(body)); // throws A2AError('INVALID_REQUEST')
 * ```
 */
import { A2AError } from './errors.js';
import type { JsonRpcErrorObject } from './dialect.js';

export type JsonRpcId = string | number | null;

export interface JsonRpcCall {
  /**
   * Undefined for a notification. A2A has none, so the dispatcher refuses it, but only after
   * the method and params were checked: the caller learns the most specific problem first.
   */
  id: string | number | undefined;
  method: string;
  params: unknown;
}

const MAX_ID_LENGTH = 256;
const MAX_METHOD_LENGTH = 128;

/** The error for a request without an id, once everything else about it was valid. */
export function notificationRefused(): A2AError {
  return new A2AError('INVALID_REQUEST', 'Notifications are not supported: the request needs an id');
}

/**
 * Checks the envelope of one JSON-RPC request. The id is read first so that an error about
 * the rest of the envelope can still be answered with the caller's id.
 */
export function parseJsonRpcCall(frame: unknown): JsonRpcCall {
  if (Array.isArray(frame)) throw new A2AError('INVALID_REQUEST', 'Batch requests are not supported');
  if (frame === null || typeof frame !== 'object') {
    throw new A2AError('INVALID_REQUEST', 'A JSON-RPC request must be a JSON object');
  }
  const record = frame as Record<string, unknown>;
  if (record.jsonrpc !== '2.0') throw new A2AError('INVALID_REQUEST', 'jsonrpc must be "2.0"');
  const id = record.id;
  if (id === undefined) {
    // A notification: checked further, refused by the caller (see JsonRpcCall.id).
  } else if (typeof id === 'string') {
    if (id.length > MAX_ID_LENGTH) throw new A2AError('INVALID_REQUEST', 'id is too long');
  } else if (typeof id !== 'number' || !Number.isFinite(id)) {
    throw new A2AError('INVALID_REQUEST', 'id must be a string or a number');
  }
  const method = record.method;
  if (typeof method !== 'string' || method.length === 0 || method.length > MAX_METHOD_LENGTH) {
    throw new A2AError('INVALID_REQUEST', 'method must be a non-empty string');
  }
  const params = record.params;
  if (params !== undefined && (params === null || typeof params !== 'object' || Array.isArray(params))) {
    throw new A2AError('INVALID_PARAMS', 'Invalid params: params must be an object', { field: 'params' });
  }
  return { id, method, params: params ?? {} };
}

/** The id to answer with when the envelope was broken: the caller's, if it was usable. */
export function salvageId(frame: unknown): JsonRpcId {
  if (frame === null || typeof frame !== 'object' || Array.isArray(frame)) return null;
  const id = (frame as Record<string, unknown>).id;
  if (typeof id === 'string' && id.length <= MAX_ID_LENGTH) return id;
  if (typeof id === 'number' && Number.isFinite(id)) return id;
  return null;
}

export function jsonRpcResult(id: JsonRpcId, result: unknown): { jsonrpc: '2.0'; id: JsonRpcId; result: unknown } {
  return { jsonrpc: '2.0', id, result };
}

export function jsonRpcError(
  id: JsonRpcId,
  error: JsonRpcErrorObject,
): { jsonrpc: '2.0'; id: JsonRpcId; error: JsonRpcErrorObject } {
  return { jsonrpc: '2.0', id, error };
}
