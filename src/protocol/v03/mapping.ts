/**
 * The v0.3 ↔ canonical mapping both halves of the codec need: parts and messages out (a
 * server writes them in results, a client in requests), and the v0.3 wire rules in
 * (`V03_WIRE`, which reads parts, roles and states of requests and of results alike).
 *
 * What v0.3 parts cannot carry: `mediaType`/`filename` on text and data parts (dropped). A
 * non-object data value is wrapped as `{value: x}` with `metadata.data_part_compat: true`, as
 * a2a-js does, and unwrapped again on the way in.
 *
 * @example
 * ```ts
 * encodeMessage({ messageId: 'm-1', role: 'user', parts: [{ kind: 'text', text: 'hi' }] });
 * // { kind: 'message', messageId: 'm-1', role: 'user', parts: [{ kind: 'text', text: 'hi' }] }
 * ```
 */
import type { JsonObject, JsonValue, Message, Part, Role, TaskState } from '../model.js';
import { TASK_STATES } from '../model.js';
import type { Ctx } from '../validation/guard.js';
import {
  LIMITS,
  asRecord,
  checkBase64,
  checkJson,
  checkRecord,
  checkUrl,
  isAbsent,
  optJsonObject,
  optString,
} from '../validation/primitives.js';
import type { Rec } from '../validation/primitives.js';
import { setPartExtras } from '../validation/structures.js';
import type { WireFormat } from '../validation/structures.js';
import { DATA_PART_COMPAT } from './wire.js';
import type { V03FileWithBytes, V03FileWithUri, V03Message, V03Part } from './wire.js';

// ---------------------------------------------------------------------------------------------
// Encoders (hot path)

function isJsonObject(value: JsonValue): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * One part. Raw and URL parts become `file` parts; a non-object data value is wrapped.
 *
 * @example
 * ```ts
 * encodePart({ kind: 'data', data: [1] }); // { kind: 'data', data: { value: [1] }, metadata: { data_part_compat: true } }
 * ```
 */
export function encodePart(part: Part): V03Part {
  switch (part.kind) {
    case 'text': {
      const out: V03Part = { kind: 'text', text: part.text };
      if (part.metadata !== undefined) out.metadata = part.metadata;
      return out;
    }
    case 'raw':
    case 'url': {
      const file: V03FileWithBytes | V03FileWithUri = part.kind === 'raw' ? { bytes: part.raw } : { uri: part.url };
      if (part.mediaType !== undefined) file.mimeType = part.mediaType;
      if (part.filename !== undefined) file.name = part.filename;
      const out: V03Part = { kind: 'file', file };
      if (part.metadata !== undefined) out.metadata = part.metadata;
      return out;
    }
    case 'data': {
      if (isJsonObject(part.data)) {
        const out: V03Part = { kind: 'data', data: part.data };
        if (part.metadata !== undefined) out.metadata = part.metadata;
        return out;
      }
      // v0.3 allows only objects: wrap, and flag it so the other side can unwrap.
      return { kind: 'data', data: { value: part.data }, metadata: { ...part.metadata, [DATA_PART_COMPAT]: true } };
    }
  }
}

/**
 * A parts array (of a message or an artifact).
 *
 * @example
 * ```ts
 * encodeParts([{ kind: 'text', text: 'hi' }]); // [{ kind: 'text', text: 'hi' }]
 * ```
 */
export function encodeParts(parts: readonly Part[]): V03Part[] {
  const out: V03Part[] = [];
  for (let i = 0; i < parts.length; i++) out.push(encodePart(parts[i] as Part));
  return out;
}

/**
 * A message, tagged `kind: 'message'`, with only the fields that are set.
 *
 * @example
 * ```ts
 * encodeMessage(message).kind; // 'message'
 * ```
 */
export function encodeMessage(message: Message): V03Message {
  const out: V03Message = {
    kind: 'message',
    messageId: message.messageId,
    role: message.role,
    parts: encodeParts(message.parts),
  };
  if (message.contextId !== undefined) out.contextId = message.contextId;
  if (message.taskId !== undefined) out.taskId = message.taskId;
  if (message.metadata !== undefined) out.metadata = message.metadata;
  if (message.extensions !== undefined) out.extensions = message.extensions;
  if (message.referenceTaskIds !== undefined) out.referenceTaskIds = message.referenceTaskIds;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Decoders

/** The v0.3 state names are the canonical ones. */
const STATES: ReadonlySet<unknown> = new Set<unknown>(TASK_STATES);

function decodeRole(value: unknown, path: string, ctx: Ctx): Role {
  if (value === 'user' || value === 'agent') return value;
  throw ctx.fail(path, isAbsent(value) ? 'is required' : 'must be "user" or "agent"');
}

function decodeState(value: unknown, path: string, ctx: Ctx): TaskState {
  if (STATES.has(value)) return value as TaskState;
  throw ctx.fail(path, isAbsent(value) ? 'is required' : 'must be a task state such as "working"');
}

function decodeFilePart(rec: Rec, path: string, ctx: Ctx): Part {
  const filePath = `${path}.file`;
  const file = checkRecord(rec.file, filePath, ctx);
  const hasBytes = !isAbsent(file.bytes);
  const hasUri = !isAbsent(file.uri);
  if (hasBytes === hasUri) throw ctx.fail(filePath, 'must have exactly one of bytes or uri');
  const part: Part = hasBytes
    ? { kind: 'raw', raw: checkBase64(file.bytes, `${filePath}.bytes`, ctx) }
    : { kind: 'url', url: checkUrl(file.uri, `${filePath}.uri`, ctx) };
  return setPartExtras(
    part,
    optString(file.mimeType, `${filePath}.mimeType`, ctx, LIMITS.mediaTypeLength),
    optString(file.name, `${filePath}.name`, ctx, LIMITS.filenameLength),
    optJsonObject(rec.metadata, `${path}.metadata`, ctx),
  );
}

/** A data part; a flagged `{value: x}` wrapper is unwrapped and the flag removed. */
function decodeDataPart(rec: Rec, path: string, ctx: Ctx): Part {
  const dataPath = `${path}.data`;
  const object = asRecord(rec.data);
  if (object === undefined) throw ctx.fail(dataPath, isAbsent(rec.data) ? 'is required' : 'must be an object');
  const data = checkJson(object, dataPath, ctx) as JsonObject;
  let metadata = optJsonObject(rec.metadata, `${path}.metadata`, ctx);
  let value: JsonValue = data;
  if (metadata !== undefined && metadata[DATA_PART_COMPAT] === true && Object.hasOwn(data, 'value')) {
    value = data.value as JsonValue;
    // fromEntries (not assignment) so that a key such as `__proto__` stays an own key.
    const rest = Object.entries(metadata).filter(([key]) => key !== DATA_PART_COMPAT);
    metadata = rest.length > 0 ? Object.fromEntries(rest) : undefined;
  }
  const part: Part = { kind: 'data', data: value };
  if (metadata !== undefined) part.metadata = metadata;
  return part;
}

function decodePart(value: unknown, path: string, ctx: Ctx): Part {
  const rec = checkRecord(value, path, ctx);
  switch (rec.kind) {
    case 'text': {
      if (typeof rec.text !== 'string') {
        throw ctx.fail(`${path}.text`, isAbsent(rec.text) ? 'is required' : 'must be a string');
      }
      const part: Part = { kind: 'text', text: rec.text };
      const metadata = optJsonObject(rec.metadata, `${path}.metadata`, ctx);
      if (metadata !== undefined) part.metadata = metadata;
      return part;
    }
    case 'file':
      return decodeFilePart(rec, path, ctx);
    case 'data':
      return decodeDataPart(rec, path, ctx);
    default:
      throw ctx.fail(`${path}.kind`, isAbsent(rec.kind) ? 'is required' : 'must be "text", "file" or "data"');
  }
}

/**
 * The v0.3 wire rules for the shared structural decoders.
 *
 * @example
 * ```ts
 * decodeMessage(V03_WIRE, wireMessage, 'message', REQUEST);
 * ```
 */
export const V03_WIRE: WireFormat = {
  kindTags: true,
  emptyIsUnset: false,
  taskContextRequired: true,
  decodePart,
  decodeRole,
  decodeState,
};
