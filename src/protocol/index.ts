/**
 * The protocol layer: the canonical model, errors, JSON-RPC framing, and the two dialect
 * codecs. Nothing outside `src/protocol/` should need a wire shape.
 *
 * @example
 * ```ts
 * import { dialectForMethod, parseJsonRpcCall, jsonRpcResult } from '../protocol/index.js';
 * const call = parseJsonRpcCall(body);
 * const dialect = dialectForMethod(call.method);
 * ```
 */
export * from './model.js';
export * from './errors.js';
export type * from './dialect.js';
export * from './jsonrpc.js';
export { v10, V10_METHODS, taskStateFromV10, taskStateToV10 } from './v10/index.js';
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
} from './v10/index.js';
export { v03, V03_METHODS, DATA_PART_COMPAT } from './v03/index.js';
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
} from './v03/index.js';
export {
  SUPPORTED_VERSIONS,
  dialectForMethod,
  dialectForVersion,
  parseA2AVersion,
  requestedVersion,
} from './version.js';
export * from './http-json/index.js';
export { decodeAnyCard, encodeCardV03, encodeCardV10 } from './card.js';
export { LIMITS } from './validation/primitives.js';
export { UNKNOWN_TIMESTAMP, parseTimestamp } from './validation/timestamps.js';
