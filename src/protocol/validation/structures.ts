/**
 * The structural decoders whose rules are the same in both dialects once parts and enums are
 * decoded: message, artifact, status, task, task list and the head of a stream event. Each
 * codec supplies a `WireFormat` with what differs (parts, roles, states, `kind` tags).
 *
 * @example
 * ```ts
 * const message = decodeMessage(V10_WIRE, params.message, 'message', REQUEST);
 * ```
 */
import type { Artifact, JsonObject, Message, Part, Role, Task, TaskState, TaskStatus } from '../model.js';
import type { Ctx } from './guard.js';
import {
  LIMITS,
  checkId,
  checkKind,
  checkRecord,
  checkString,
  isAbsent,
  optId,
  optJsonObject,
  optString,
  optStringList,
} from './primitives.js';
import type { Rec } from './primitives.js';
import { statusTimestamp } from './timestamps.js';

/**
 * What differs between the dialects inside messages, artifacts and tasks. Each codec supplies
 * one; the structural decoders below do the rest.
 *
 * @example
 * ```ts
 * const message = decodeMessage(V10_WIRE, params.message, 'message', REQUEST);
 * ```
 */
export interface WireFormat {
  /** v0.3 tags messages and tasks with `kind` (checked when present). */
  readonly kindTags: boolean;
  /** ProtoJSON (v1.0): an empty string is the default value and reads as unset. */
  readonly emptyIsUnset: boolean;
  /** v0.3 requires `contextId` on a task; v1.0 makes it optional (absent → ''). */
  readonly taskContextRequired: boolean;
  decodePart(value: unknown, path: string, ctx: Ctx): Part;
  decodeRole(value: unknown, path: string, ctx: Ctx): Role;
  decodeState(value: unknown, path: string, ctx: Ctx): TaskState;
}

/**
 * Sets the optional fields every part may carry; undefined ones stay absent.
 *
 * @example
 * ```ts
 * setPartExtras({ kind: 'raw', raw: 'aGk=' }, 'text/plain', 'hi.txt', undefined);
 * ```
 */
export function setPartExtras<P extends Part>(
  part: P,
  mediaType: string | undefined,
  filename: string | undefined,
  metadata: JsonObject | undefined,
): P {
  if (mediaType !== undefined) part.mediaType = mediaType;
  if (filename !== undefined) part.filename = filename;
  if (metadata !== undefined) part.metadata = metadata;
  return part;
}

/**
 * A parts array. Requests need 1..1000 parts; remote results may carry none (some agents
 * send empty status messages or empty append chunks) but never more than 1000.
 *
 * @example
 * ```ts
 * const parts = decodeParts(V03_WIRE, m.parts, 'message.parts', REQUEST);
 * ```
 */
export function decodeParts(w: WireFormat, value: unknown, path: string, ctx: Ctx): Part[] {
  if (!Array.isArray(value)) throw ctx.fail(path, isAbsent(value) ? 'is required' : 'must be an array');
  if (ctx.inbound && value.length === 0) throw ctx.fail(path, 'must not be empty');
  if (value.length > LIMITS.parts) throw ctx.fail(path, `must have at most ${LIMITS.parts} items`);
  // map, not push: the array is exactly as long as its parts, and a stored message keeps it.
  return (value as unknown[]).map((item, i) => w.decodePart(item, `${path}[${i}]`, ctx));
}

/**
 * A message. In a request the role must be the user's: a caller never speaks as the agent,
 * and a missing role is refused rather than guessed.
 *
 * @example
 * ```ts
 * decodeMessage(V10_WIRE, { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi' }] }, 'message', REQUEST);
 * ```
 */
export function decodeMessage(w: WireFormat, value: unknown, path: string, ctx: Ctx): Message {
  const rec = checkRecord(value, path, ctx);
  if (w.kindTags) checkKind(rec.kind, 'message', `${path}.kind`, ctx);
  const messageId = checkString(rec.messageId, `${path}.messageId`, ctx, LIMITS.idLength, 1);
  const role = w.decodeRole(rec.role, `${path}.role`, ctx);
  if (ctx.inbound && role !== 'user') throw ctx.fail(`${path}.role`, 'must be the user role');
  const parts = decodeParts(w, rec.parts, `${path}.parts`, ctx);
  const message: Message = { messageId, role, parts };
  const contextId = optId(rec.contextId, `${path}.contextId`, ctx, w.emptyIsUnset);
  if (contextId !== undefined) message.contextId = contextId;
  const taskId = optId(rec.taskId, `${path}.taskId`, ctx, w.emptyIsUnset);
  if (taskId !== undefined) message.taskId = taskId;
  const metadata = optJsonObject(rec.metadata, `${path}.metadata`, ctx);
  if (metadata !== undefined) message.metadata = metadata;
  const extensions = optStringList(rec.extensions, `${path}.extensions`, ctx);
  if (extensions !== undefined) message.extensions = extensions;
  const references = optStringList(rec.referenceTaskIds, `${path}.referenceTaskIds`, ctx, true);
  if (references !== undefined) message.referenceTaskIds = references;
  return message;
}

/**
 * An artifact.
 *
 * @example
 * ```ts
 * decodeArtifact(V10_WIRE, { artifactId: 'a1', parts: [{ text: 'x' }] }, 'artifact', RESPONSE);
 * ```
 */
export function decodeArtifact(w: WireFormat, value: unknown, path: string, ctx: Ctx): Artifact {
  const rec = checkRecord(value, path, ctx);
  const artifactId = checkString(rec.artifactId, `${path}.artifactId`, ctx, LIMITS.idLength, 1);
  const parts = decodeParts(w, rec.parts, `${path}.parts`, ctx);
  const artifact: Artifact = { artifactId, parts };
  const name = optString(rec.name, `${path}.name`, ctx, LIMITS.listItemLength, w.emptyIsUnset);
  if (name !== undefined) artifact.name = name;
  const description = optString(rec.description, `${path}.description`, ctx, Infinity, w.emptyIsUnset);
  if (description !== undefined) artifact.description = description;
  const metadata = optJsonObject(rec.metadata, `${path}.metadata`, ctx);
  if (metadata !== undefined) artifact.metadata = metadata;
  const extensions = optStringList(rec.extensions, `${path}.extensions`, ctx);
  if (extensions !== undefined) artifact.extensions = extensions;
  return artifact;
}

/**
 * A task status. A missing timestamp becomes `UNKNOWN_TIMESTAMP` (see there for why).
 *
 * @example
 * ```ts
 * decodeStatus(V03_WIRE, { state: 'working' }, 'status', RESPONSE);
 * ```
 */
export function decodeStatus(w: WireFormat, value: unknown, path: string, ctx: Ctx): TaskStatus {
  const rec = checkRecord(value, path, ctx);
  const state = w.decodeState(rec.state, `${path}.state`, ctx);
  const timestamp = statusTimestamp(rec.timestamp, `${path}.timestamp`, ctx);
  const status: TaskStatus = { state, timestamp };
  if (!isAbsent(rec.message)) status.message = decodeMessage(w, rec.message, `${path}.message`, ctx);
  return status;
}

function decodeList<T>(
  value: unknown,
  path: string,
  ctx: Ctx,
  decodeItem: (item: unknown, itemPath: string) => T,
): T[] {
  if (isAbsent(value)) return [];
  if (!Array.isArray(value)) throw ctx.fail(path, 'must be an array');
  const out: T[] = [];
  for (let i = 0; i < value.length; i++) out.push(decodeItem(value[i], `${path}[${i}]`));
  return out;
}

/**
 * A task (client side). Missing `artifacts`/`history` become `[]`.
 *
 * @example
 * ```ts
 * decodeTaskWith(V10_WIRE, { id: 't1', status: { state: 'TASK_STATE_WORKING' } }, 'result', RESPONSE);
 * ```
 */
export function decodeTaskWith(w: WireFormat, value: unknown, path: string, ctx: Ctx): Task {
  const rec = checkRecord(value, path, ctx);
  if (w.kindTags) checkKind(rec.kind, 'task', `${path}.kind`, ctx);
  const id = checkId(rec.id, `${path}.id`, ctx);
  const contextId = w.taskContextRequired
    ? checkId(rec.contextId, `${path}.contextId`, ctx)
    : (optId(rec.contextId, `${path}.contextId`, ctx, true) ?? '');
  const status = decodeStatus(w, rec.status, `${path}.status`, ctx);
  const artifacts = decodeList(rec.artifacts, `${path}.artifacts`, ctx, (item, p) => decodeArtifact(w, item, p, ctx));
  const history = decodeList(rec.history, `${path}.history`, ctx, (item, p) => decodeMessage(w, item, p, ctx));
  const task: Task = { id, contextId, status, artifacts, history };
  const metadata = optJsonObject(rec.metadata, `${path}.metadata`, ctx);
  if (metadata !== undefined) task.metadata = metadata;
  return task;
}

/**
 * A list of tasks (ListTasks results).
 *
 * @example
 * ```ts
 * const tasks = decodeTaskList(V10_WIRE, result.tasks, 'result.tasks', RESPONSE);
 * ```
 */
export function decodeTaskList(w: WireFormat, value: unknown, path: string, ctx: Ctx): Task[] {
  return decodeList(value, path, ctx, (item, p) => decodeTaskWith(w, item, p, ctx));
}

/**
 * The fields shared by status-update and artifact-update events.
 *
 * @example
 * ```ts
 * const { taskId, contextId } = decodeEventHead(rec, 'result', RESPONSE);
 * ```
 */
export interface EventHead {
  taskId: string;
  contextId: string;
  metadata?: JsonObject;
}

/**
 * `taskId`, `contextId` and `metadata` of a stream event.
 *
 * @example
 * ```ts
 * const head = decodeEventHead(rec, 'result.statusUpdate', RESPONSE);
 * ```
 */
export function decodeEventHead(rec: Rec, path: string, ctx: Ctx): EventHead {
  const head: EventHead = {
    taskId: checkId(rec.taskId, `${path}.taskId`, ctx),
    contextId: checkId(rec.contextId, `${path}.contextId`, ctx),
  };
  const metadata = optJsonObject(rec.metadata, `${path}.metadata`, ctx);
  if (metadata !== undefined) head.metadata = metadata;
  return head;
}
