/**
 * The A2A v1.0 JSON-RPC codec (digest §2–§8), assembled from its two halves: `server.ts`
 * (decode requests, encode results, events and errors) and `client.ts` (encode requests,
 * decode a remote's results, events and errors). What both halves share lives in `wire.ts`
 * (shapes, method and enum names) and `mapping.ts` (parts and messages, the v1.0 wire rules);
 * `json-text.ts` is the server's fast path for results.
 *
 * @example
 * ```ts
 * const request = v10.decodeRequest('SendMessage', {
 *   message: { messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: 'hello' }] },
 * });
 * // { method: 'send', params: { message: { messageId: 'm-1', role: 'user', parts: [{ kind: 'text', text: 'hello' }] },
 * //                             configuration: { returnImmediately: false } } }
 * ```
 */
import { decodeAnyCard } from '../card/decode.js';
import { encodeCardV10 } from '../card/encode.js';
import type { Dialect } from '../dialect.js';
import { decodeRpcError } from '../validation/remote-errors.js';
import { decodeListResult, decodeSendResult, decodeStreamEvent, decodeTask, encodeRequest } from './client.js';
import {
  decodeRequest,
  encodeError,
  encodeListResult,
  encodeSendResult,
  encodeStreamEvent,
  encodeTask,
} from './server.js';
import { encodePushResult } from './push.js';
import { METHODS } from './wire.js';

export { V10_JSON } from './json-text.js';
export { V10_WIRE } from './mapping.js';
export { V10_METHODS, taskStateFromV10, taskStateToV10 } from './wire.js';
export type {
  V10Artifact,
  V10ArtifactUpdate,
  V10ListTasksResponse,
  V10Message,
  V10Part,
  V10Role,
  V10SendMessageResponse,
  V10StatusUpdate,
  V10StreamResponse,
  V10Task,
  V10TaskState,
  V10TaskStatus,
} from './wire.js';

/**
 * The A2A v1.0 JSON-RPC dialect.
 *
 * @example
 * ```ts
 * const frame = jsonRpcResult(id, v10.encodeSendResult({ kind: 'task', task })); // result: { task: {...} }
 * ```
 */
export const v10: Dialect = {
  version: '1.0',
  hasMethod: (method) => METHODS.has(method),
  // server side
  decodeRequest,
  encodeSendResult,
  encodeTask,
  encodeListResult,
  encodeStreamEvent,
  encodePushResult,
  encodeError,
  encodeCard: encodeCardV10,
  // client side
  encodeRequest,
  decodeSendResult,
  decodeTask,
  decodeListResult,
  decodeStreamEvent,
  decodeError: decodeRpcError,
  decodeCard: decodeAnyCard,
};
