/**
 * v1.0 results as JSON text (the server's hot path): the text of the encoders' results,
 * written without building them. Each writer writes exactly `JSON.stringify` of its encoder's
 * result, key order included; text parts (nearly all parts) are written here, any other part
 * goes through its encoder.
 *
 * @example
 * ```ts
 * const body = `{"jsonrpc":"2.0","id":1,"result":${V10_JSON.sendResult(result)}}`;
 * ```
 */
import { jsonArray, jsonListField, jsonString, messageTailJson } from '../json-text.js';
import type { JsonWriters } from '../json-text.js';
import type { Artifact, Message, Part, SendResult, StreamEvent, Task, TaskStatus, TextPart } from '../model.js';
import { encodePart } from './mapping.js';
import { ROLE_TO_WIRE, STATE_TO_WIRE } from './wire.js';

function writeParts(parts: readonly Part[]): string {
  return jsonArray(parts, writePart);
}

function writePart(part: Part): string {
  return part.kind === 'text' ? writeTextPart(part) : JSON.stringify(encodePart(part));
}

function writeTextPart(part: TextPart): string {
  let out = `{"text":${jsonString(part.text)}`;
  if (part.mediaType !== undefined) out += `,"mediaType":${jsonString(part.mediaType)}`;
  if (part.filename !== undefined) out += `,"filename":${jsonString(part.filename)}`;
  if (part.metadata !== undefined) out += `,"metadata":${JSON.stringify(part.metadata)}`;
  return `${out}}`;
}

function writeMessage(message: Message): string {
  let out = `{"messageId":${jsonString(message.messageId)},"role":${jsonString(ROLE_TO_WIRE[message.role])}`;
  out += `,"parts":${writeParts(message.parts)}`;
  return `${out}${messageTailJson(message)}}`;
}

function writeStatus(status: TaskStatus): string {
  const message = status.message === undefined ? '' : `,"message":${writeMessage(status.message)}`;
  return `{"state":${jsonString(STATE_TO_WIRE[status.state])}${message},"timestamp":${jsonString(status.timestamp)}}`;
}

function writeArtifact(artifact: Artifact): string {
  let out = `{"artifactId":${jsonString(artifact.artifactId)},"parts":${writeParts(artifact.parts)}`;
  if (artifact.name !== undefined) out += `,"name":${jsonString(artifact.name)}`;
  if (artifact.description !== undefined) out += `,"description":${jsonString(artifact.description)}`;
  if (artifact.metadata !== undefined) out += `,"metadata":${JSON.stringify(artifact.metadata)}`;
  if (artifact.extensions !== undefined) out += `,"extensions":${JSON.stringify(artifact.extensions)}`;
  return `${out}}`;
}

function writeTask(task: Task): string {
  let out = `{"id":${jsonString(task.id)},"contextId":${jsonString(task.contextId)}`;
  out += `,"status":${writeStatus(task.status)}`;
  out += jsonListField('artifacts', task.artifacts, writeArtifact);
  out += jsonListField('history', task.history, writeMessage);
  if (task.metadata !== undefined) out += `,"metadata":${JSON.stringify(task.metadata)}`;
  return `${out}}`;
}

function writeSendResult(result: SendResult): string {
  return result.kind === 'task' ? `{"task":${writeTask(result.task)}}` : `{"message":${writeMessage(result.message)}}`;
}

/** One StreamResponse: `final` is not written (a v1.0 stream ends when the server closes it). */
function writeStreamEvent(event: StreamEvent): string {
  switch (event.kind) {
    case 'task':
      return `{"task":${writeTask(event.task)}}`;
    case 'message':
      return `{"message":${writeMessage(event.message)}}`;
    case 'status-update': {
      let out = `{"statusUpdate":{"taskId":${jsonString(event.taskId)},"contextId":${jsonString(event.contextId)}`;
      out += `,"status":${writeStatus(event.status)}`;
      if (event.metadata !== undefined) out += `,"metadata":${JSON.stringify(event.metadata)}`;
      return `${out}}}`;
    }
    case 'artifact-update': {
      let out = `{"artifactUpdate":{"taskId":${jsonString(event.taskId)},"contextId":${jsonString(event.contextId)}`;
      out += `,"artifact":${writeArtifact(event.artifact)}`;
      if (event.append !== undefined) out += `,"append":${event.append}`;
      if (event.lastChunk !== undefined) out += `,"lastChunk":${event.lastChunk}`;
      if (event.metadata !== undefined) out += `,"metadata":${JSON.stringify(event.metadata)}`;
      return `${out}}}`;
    }
  }
}

/**
 * v1.0 results as JSON text: `V10_JSON.sendResult(r) === JSON.stringify(v10.encodeSendResult(r))`,
 * `V10_JSON.task(t) === JSON.stringify(v10.encodeTask(t))` and `V10_JSON.streamEvent(e) ===
 * JSON.stringify(v10.encodeStreamEvent(e))`, without the wire objects.
 *
 * @example
 * ```ts
 * const body = `{"jsonrpc":"2.0","id":1,"result":${V10_JSON.sendResult(result)}}`;
 * ```
 */
export const V10_JSON: JsonWriters = { sendResult: writeSendResult, task: writeTask, streamEvent: writeStreamEvent };
