/**
 * The v1.0 ↔ canonical mapping both halves of the codec need: parts and messages out (a
 * server writes them in results, a client in requests), and the v1.0 wire rules in
 * (`V10_WIRE`, which reads parts, roles and states of requests and of results alike).
 *
 * Encoders are on the hot path: object literals and loops, data and metadata passed by
 * reference.
 *
 * @example
 * ```ts
 * encodeMessage({ messageId: 'm-1', role: 'user', parts: [{ kind: 'text', text: 'hi' }] });
 * // { messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: 'hi' }] }
 * ```
 */
import type { Message, Part, Role, TaskState } from '../model.js';
import type { Ctx } from '../validation/guard.js';
import {
  LIMITS,
  checkBase64,
  checkJson,
  checkRecord,
  checkUrl,
  isAbsent,
  optJsonObject,
  optString,
} from '../validation/primitives.js';
import { setPartExtras } from '../validation/structures.js';
import type { WireFormat } from '../validation/structures.js';
import { ROLE_TO_WIRE, STATE_FROM_WIRE } from './wire.js';
import type { V10Message, V10Part } from './wire.js';

// ---------------------------------------------------------------------------------------------
// Encoders

/**
 * One part: its content member plus the optional fields that are set.
 *
 * @example
 * ```ts
 * encodePart({ kind: 'url', url: 'https://example.com/a.pdf' }); // { url: 'https://example.com/a.pdf' }
 * ```
 */
export function encodePart(part: Part): V10Part {
  const out: V10Part = partContent(part);
  if (part.mediaType !== undefined) out.mediaType = part.mediaType;
  if (part.filename !== undefined) out.filename = part.filename;
  if (part.metadata !== undefined) out.metadata = part.metadata;
  return out;
}

function partContent(part: Part): V10Part {
  switch (part.kind) {
    case 'text':
      return { text: part.text };
    case 'raw':
      return { raw: part.raw };
    case 'url':
      return { url: part.url };
    case 'data':
      return { data: part.data };
  }
}

/**
 * A parts array (of a message or an artifact).
 *
 * @example
 * ```ts
 * encodeParts([{ kind: 'text', text: 'hi' }]); // [{ text: 'hi' }]
 * ```
 */
export function encodeParts(parts: readonly Part[]): V10Part[] {
  const out: V10Part[] = [];
  for (let i = 0; i < parts.length; i++) out.push(encodePart(parts[i] as Part));
  return out;
}

/**
 * A message, with only the fields that are set.
 *
 * @example
 * ```ts
 * encodeMessage(message).role; // 'ROLE_USER' or 'ROLE_AGENT'
 * ```
 */
export function encodeMessage(message: Message): V10Message {
  const out: V10Message = {
    messageId: message.messageId,
    role: ROLE_TO_WIRE[message.role],
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

/** Proto enum numbers; ProtoJSON readers must accept them, so remote results may use them. */
const STATE_BY_NUMBER: readonly TaskState[] = [
  'unknown',
  'submitted',
  'working',
  'completed',
  'failed',
  'canceled',
  'input-required',
  'rejected',
  'auth-required',
];

const ROLE_FROM_WIRE: ReadonlyMap<unknown, Role> = new Map<unknown, Role>([
  ['ROLE_USER', 'user'],
  ['ROLE_AGENT', 'agent'],
]);
const ROLE_BY_NUMBER: ReadonlyMap<unknown, Role> = new Map<unknown, Role>([
  [1, 'user'],
  [2, 'agent'],
]);

function decodeRole(value: unknown, path: string, ctx: Ctx): Role {
  const role = ROLE_FROM_WIRE.get(value) ?? (ctx.inbound ? undefined : ROLE_BY_NUMBER.get(value));
  if (role !== undefined) return role;
  throw ctx.fail(path, isAbsent(value) ? 'is required' : 'must be ROLE_USER or ROLE_AGENT');
}

function decodeState(value: unknown, path: string, ctx: Ctx): TaskState {
  let state = STATE_FROM_WIRE.get(value);
  if (state === undefined && !ctx.inbound && typeof value === 'number') state = STATE_BY_NUMBER[value];
  if (state !== undefined) return state;
  throw ctx.fail(path, isAbsent(value) ? 'is required' : 'must be a TASK_STATE_* name');
}

/**
 * One part: exactly one content member. `null` text/raw/url count as unset (ProtoJSON);
 * `data: null` is a JSON null value and counts as content.
 */
function decodePart(value: unknown, path: string, ctx: Ctx): Part {
  const rec = checkRecord(value, path, ctx);
  const hasText = !isAbsent(rec.text);
  const hasRaw = !isAbsent(rec.raw);
  const hasUrl = !isAbsent(rec.url);
  const hasData = rec.data !== undefined;
  if (Number(hasText) + Number(hasRaw) + Number(hasUrl) + Number(hasData) !== 1) {
    throw ctx.fail(path, 'must have exactly one of text, raw, url or data');
  }
  let part: Part;
  if (hasText) {
    if (typeof rec.text !== 'string') throw ctx.fail(`${path}.text`, 'must be a string');
    part = { kind: 'text', text: rec.text };
  } else if (hasRaw) {
    part = { kind: 'raw', raw: checkBase64(rec.raw, `${path}.raw`, ctx) };
  } else if (hasUrl) {
    part = { kind: 'url', url: checkUrl(rec.url, `${path}.url`, ctx) };
  } else {
    part = { kind: 'data', data: checkJson(rec.data, `${path}.data`, ctx) };
  }
  return setPartExtras(
    part,
    optString(rec.mediaType, `${path}.mediaType`, ctx, LIMITS.mediaTypeLength, true),
    optString(rec.filename, `${path}.filename`, ctx, LIMITS.filenameLength, true),
    optJsonObject(rec.metadata, `${path}.metadata`, ctx),
  );
}

/**
 * The v1.0 wire rules for the shared structural decoders.
 *
 * @example
 * ```ts
 * decodeMessage(V10_WIRE, wireMessage, 'message', REQUEST);
 * ```
 */
export const V10_WIRE: WireFormat = {
  kindTags: false,
  emptyIsUnset: true,
  taskContextRequired: false,
  decodePart,
  decodeRole,
  decodeState,
};
