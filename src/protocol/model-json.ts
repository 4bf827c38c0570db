/**
 * The model's task as JSON text, what the task stores keep (the memory store's finished tasks,
 * the SQLite and PostgreSQL rows' bodies): written field by field, with a string that needs no
 * escaping copied as it is, rather than through `JSON.stringify`, which on Node 20 looks at every
 * character of every string on its general path (about 3 ns a character: 12 µs for a message
 * of 4,000, where the check `jsonString` makes takes under 3).
 *
 * The text is `JSON.stringify(task)` byte for byte when the task's keys are in the model's
 * order (the order `model.ts` declares them, which is how the gateway builds its tasks); in any
 * other order it parses to the same task. A key the model does not declare is not written (a
 * part other than text goes through the serialiser whole): a stored task holds the model.
 *
 * @example
 * ```ts
 * const body = taskJson(task); // JSON.parse(body) deep-equals task
 * ```
 */
import { jsonArray, jsonString, messageTailJson } from './json-text.js';
import type { Artifact, Message, Part, Task, TaskStatus } from './model.js';

/**
 * A task of the model as JSON text (see the module comment).
 *
 * @example
 * ```ts
 * taskJson({ id: 't', contextId: 'c', status: { state: 'working', timestamp }, artifacts: [], history: [] });
 * // '{"id":"t","contextId":"c","status":{"state":"working","timestamp":"…"},"artifacts":[],"history":[]}'
 * ```
 */
export function taskJson(task: Task): string {
  let out = `{"id":${jsonString(task.id)},"contextId":${jsonString(task.contextId)}`;
  out += `,"status":${statusJson(task.status)}`;
  out += `,"artifacts":${jsonArray(task.artifacts, artifactJson)}`;
  out += `,"history":${jsonArray(task.history, messageJson)}`;
  if (task.metadata !== undefined) out += `,"metadata":${JSON.stringify(task.metadata)}`;
  return `${out}}`;
}

function statusJson(status: TaskStatus): string {
  const message = status.message === undefined ? '' : `,"message":${messageJson(status.message)}`;
  return `{"state":${jsonString(status.state)}${message},"timestamp":${jsonString(status.timestamp)}}`;
}

function messageJson(message: Message): string {
  const head = `{"messageId":${jsonString(message.messageId)},"role":${jsonString(message.role)}`;
  return `${head},"parts":${jsonArray(message.parts, partJson)}${messageTailJson(message)}}`;
}

function artifactJson(artifact: Artifact): string {
  let out = `{"artifactId":${jsonString(artifact.artifactId)}`;
  if (artifact.name !== undefined) out += `,"name":${jsonString(artifact.name)}`;
  if (artifact.description !== undefined) out += `,"description":${jsonString(artifact.description)}`;
  out += `,"parts":${jsonArray(artifact.parts, partJson)}`;
  if (artifact.metadata !== undefined) out += `,"metadata":${JSON.stringify(artifact.metadata)}`;
  if (artifact.extensions !== undefined) out += `,"extensions":${JSON.stringify(artifact.extensions)}`;
  return `${out}}`;
}

/** Text parts (nearly all) field by field; the others, small or rare, through the serialiser. */
function partJson(part: Part): string {
  if (part.kind !== 'text') return JSON.stringify(part);
  let out = `{"kind":"text","text":${jsonString(part.text)}`;
  if (part.mediaType !== undefined) out += `,"mediaType":${jsonString(part.mediaType)}`;
  if (part.filename !== undefined) out += `,"filename":${jsonString(part.filename)}`;
  if (part.metadata !== undefined) out += `,"metadata":${JSON.stringify(part.metadata)}`;
  return `${out}}`;
}
