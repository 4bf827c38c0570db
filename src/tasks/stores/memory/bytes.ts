/**
 * The size the memory store charges a task against `maxBytes`. A finished task is held as its
 * JSON text, and charged what that text takes ({@link heldBytes}). A task that can still change
 * is held as an object and charged the length of its JSON text (UTF-16 code units, escapes not
 * expanded), computed by walking the task once rather than serialising it: a string of the whole
 * task would be built only to be thrown away. Within a few bytes per value of
 * `JSON.stringify(task).length`; it never undercounts a string, which is where a task's size is
 * (each object is charged a flat 64 bytes for its keys and short fixed values, so a task of many
 * tiny parts is overcounted).
 *
 * @example
 * ```ts
 * taskBytes({ id: 't1', contextId: 'c1', status: { state: 'working', timestamp }, artifacts: [] }); // ≈ 95
 * ```
 */
import type { Artifact, Message, Part, Task } from '../../../protocol/model.js';

/** Nesting deeper than this is charged a flat amount rather than walked (JSON depth is capped upstream). */
const MAX_WALK_DEPTH = 64;
const DEEP_VALUE_BYTES = 1_024;

/**
 * The approximate JSON length of a task. O(size of the task): the fields of a task, its
 * messages, artifacts and parts are read directly (a `for…in` walk of every object costs more
 * than the store's own work on a put); only `metadata` and `data` values are walked generically.
 *
 * @example
 * ```ts
 * if (store.bytes + taskBytes(task) > maxBytes) evictOne();
 * ```
 */
export function taskBytes(task: Task): number {
  let bytes = OBJECT_BYTES + task.id.length + task.contextId.length + task.status.timestamp.length;
  const { message } = task.status;
  if (message !== undefined) bytes += messageBytes(message);
  for (const artifact of task.artifacts) bytes += artifactBytes(artifact);
  const { history } = task;
  if (history !== undefined) for (const entry of history) bytes += messageBytes(entry);
  if (task.metadata !== undefined) bytes += valueBytes(task.metadata, 1);
  return bytes;
}

/** A character beyond Latin-1: V8 keeps a string holding one at two bytes a UTF-16 unit. */
const WIDE = /[\u0100-\uffff]/;

/**
 * What the store charges a task it holds in `held` (its JSON text once finished, see
 * `memory/entries.ts`): the text's length, twice that when it holds a character beyond Latin-1
 * (V8 then keeps every unit in two bytes), so that `maxBytes` bounds the memory the texts take;
 * {@link taskBytes} for a task held as an object. The test costs nanoseconds: on a Latin-1 string
 * V8 knows without a scan that the class cannot match.
 *
 * @example
 * ```ts
 * heldBytes(task, JSON.stringify(task)); // JSON.stringify(task).length for an ASCII task
 * ```
 */
export function heldBytes(task: Task, held: Task | string): number {
  if (typeof held !== 'string') return taskBytes(task);
  return WIDE.test(held) ? 2 * held.length : held.length;
}

/** Keys, quotes, braces and short fixed values (state, role, kind) of one object, charged flat. */
const OBJECT_BYTES = 64;

function messageBytes(message: Message): number {
  let bytes = OBJECT_BYTES + message.messageId.length + partsBytes(message.parts);
  if (message.contextId !== undefined) bytes += message.contextId.length + 16;
  if (message.taskId !== undefined) bytes += message.taskId.length + 16;
  if (message.metadata !== undefined) bytes += valueBytes(message.metadata, 1);
  if (message.extensions !== undefined) bytes += valueBytes(message.extensions, 1);
  if (message.referenceTaskIds !== undefined) bytes += valueBytes(message.referenceTaskIds, 1);
  return bytes;
}

function artifactBytes(artifact: Artifact): number {
  let bytes = OBJECT_BYTES + artifact.artifactId.length + partsBytes(artifact.parts);
  if (artifact.name !== undefined) bytes += artifact.name.length + 16;
  if (artifact.description !== undefined) bytes += artifact.description.length + 16;
  if (artifact.metadata !== undefined) bytes += valueBytes(artifact.metadata, 1);
  if (artifact.extensions !== undefined) bytes += valueBytes(artifact.extensions, 1);
  return bytes;
}

function partsBytes(parts: readonly Part[]): number {
  let bytes = 2;
  for (const part of parts) {
    bytes += OBJECT_BYTES;
    switch (part.kind) {
      case 'text':
        bytes += part.text.length;
        break;
      case 'raw':
        bytes += part.raw.length;
        break;
      case 'url':
        bytes += part.url.length;
        break;
      case 'data':
        bytes += valueBytes(part.data, 1);
        break;
    }
    if (part.metadata !== undefined) bytes += valueBytes(part.metadata, 1);
    if (part.mediaType !== undefined) bytes += part.mediaType.length + 16;
    if (part.filename !== undefined) bytes += part.filename.length + 16;
  }
  return bytes;
}

function valueBytes(value: unknown, depth: number): number {
  switch (typeof value) {
    case 'string':
      return value.length + 2;
    case 'number':
      return 8;
    case 'boolean':
      return 5;
    case 'object': {
      if (value === null) return 4;
      if (depth >= MAX_WALK_DEPTH) return DEEP_VALUE_BYTES;
      let bytes = 2;
      if (Array.isArray(value)) {
        for (const item of value as unknown[]) bytes += valueBytes(item, depth + 1) + 1;
        return bytes;
      }
      for (const key in value) {
        if (!Object.hasOwn(value, key)) continue;
        const item = (value as Record<string, unknown>)[key];
        if (item === undefined) continue;
        bytes += key.length + 4 + valueBytes(item, depth + 1);
      }
      return bytes;
    }
    default:
      return 0;
  }
}
