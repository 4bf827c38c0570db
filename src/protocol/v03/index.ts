/**
 * The A2A v0.3 JSON-RPC codec (digest §2–§8), assembled from its two halves: `server.ts`
 * (decode requests, encode results, events and errors) and `client.ts` (encode requests,
 * decode a remote's results, events and errors). What both halves share lives in `wire.ts`
 * (shapes, method names) and `mapping.ts` (parts and messages, the v0.3 wire rules);
 * `json-text.ts` is the server's fast path for results.
 *
 * @example
 * ```ts
 * const request = v03.decodeRequest('message/send', {
 *   message: { kind: 'message', messageId: 'm-1', role: 'user', parts: [{ kind: 'text', text: 'hi' }] },
 * });
 * request.params.configuration.returnImmediately; // false: `blocking` absent means blocking
 * ```
 */
import { decodeAnyCard } from '../card/decode.js';
import { encodeCardV03 } from '../card/encode.js';
import type { Dialect } from '../dialect.js';
import { decodeRpcError } from '../validation/remote-errors.js';
import { decodeSendResult, decodeStreamEvent, decodeTask, encodeRequest } from './client.js';
import { decodeRequest, encodeError, encodeSendResult, encodeStreamEvent, encodeTask } from './server.js';
import { encodePushResult } from './push.js';
import { METHODS, unsupportedList } from './wire.js';

export { V03_JSON } from './json-text.js';
export { V03_WIRE } from './mapping.js';
export { DATA_PART_COMPAT, V03_METHODS } from './wire.js';
export type {
  V03Artifact,
  V03ArtifactUpdate,
  V03FileWithBytes,
  V03FileWithUri,
  V03Message,
  V03Part,
  V03StatusUpdate,
  V03StreamResult,
  V03Task,
  V03TaskStatus,
} from './wire.js';

/**
 * The A2A v0.3 JSON-RPC dialect.
 *
 * @example
 * ```ts
 * const frame = jsonRpcResult(id, v03.encodeStreamEvent({ ...statusEvent, final: true }));
 * ```
 */
export const v03: Dialect = {
  version: '0.3',
  hasMethod: (method) => METHODS.has(method),
  // server side
  decodeRequest,
  encodeSendResult,
  encodeTask,
  encodeListResult: unsupportedList,
  encodeStreamEvent,
  encodePushResult,
  encodeError,
  encodeCard: encodeCardV03,
  // client side
  encodeRequest,
  decodeSendResult,
  decodeTask,
  decodeListResult: unsupportedList,
  decodeStreamEvent,
  decodeError: decodeRpcError,
  decodeCard: decodeAnyCard,
};
