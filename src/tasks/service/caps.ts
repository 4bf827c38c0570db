/**
 * Per-task caps: what one task may keep, however many turns it has and however long its
 * backend streams. The history keeps the newest `maxHistoryMessages` messages (the oldest are
 * dropped first); what the backend produces for the task (artifacts, the streamed reply, status
 * messages) is held to `maxTaskOutputBytes` over all its turns, and the turn that passes it
 * fails (see TurnBridge). The service is handed the caps (TaskServiceOptions.limits); the
 * gateway passes them from `limits` in its config.
 *
 * @example
 * ```ts
 * const caps = taskCaps({ maxHistoryMessages: 50 });
 * const history = cappedHistory([...task.history, message], caps.maxHistoryMessages);
 * ```
 */
import type { Message, Part, Task } from '../../protocol/model.js';

/** The caps one task is held to. */
export interface TaskCaps {
  /** Messages kept in a task's history; the oldest go first. */
  readonly maxHistoryMessages: number;
  /** Bytes of backend output a task keeps (artifacts, reply, status messages), all turns together. */
  readonly maxTaskOutputBytes: number;
}

/** The defaults (the same as the config's `limits`): 100 messages, 1 MiB of output. */
export const DEFAULT_TASK_CAPS: TaskCaps = Object.freeze({
  maxHistoryMessages: 100,
  maxTaskOutputBytes: 1024 * 1024,
});

/**
 * The caps with the defaults filled in.
 *
 * @example
 * ```ts
 * taskCaps(undefined).maxHistoryMessages; // 100
 * ```
 */
export function taskCaps(given: Partial<TaskCaps> | undefined): TaskCaps {
  if (given === undefined) return DEFAULT_TASK_CAPS;
  return {
    maxHistoryMessages: Math.max(1, given.maxHistoryMessages ?? DEFAULT_TASK_CAPS.maxHistoryMessages),
    maxTaskOutputBytes: Math.max(0, given.maxTaskOutputBytes ?? DEFAULT_TASK_CAPS.maxTaskOutputBytes),
  };
}

/**
 * The newest `max` messages of `history` (the same array when it is within the cap).
 *
 * @example
 * ```ts
 * cappedHistory([a, b, c], 2); // [b, c]
 * ```
 */
export function cappedHistory(history: Message[], max: number): Message[] {
  return history.length <= max ? history : history.slice(history.length - max);
}

/**
 * The task with its history capped (the same object when it is within the cap).
 *
 * @example
 * ```ts
 * commit(live, withCappedHistory(withStatus(task, 'working', now, text), caps.maxHistoryMessages));
 * ```
 */
export function withCappedHistory(task: Task, max: number): Task {
  return task.history.length <= max ? task : { ...task, history: cappedHistory(task.history, max) };
}

/**
 * The bytes `parts` hold: UTF-8 text, and the JSON size of data parts, the length of raw and url
 * parts, and of metadata, file names and media types.
 *
 * @example
 * ```ts
 * partsBytes([{ kind: 'text', text: 'héllo' }]); // 6
 * ```
 */
export function partsBytes(parts: readonly Part[]): number {
  let bytes = 0;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as Part;
    switch (part.kind) {
      case 'text':
        bytes += Buffer.byteLength(part.text, 'utf8');
        break;
      case 'raw':
        bytes += part.raw.length;
        break;
      case 'url':
        bytes += part.url.length;
        break;
      case 'data':
        bytes += jsonBytes(part.data);
        break;
    }
    if (part.metadata !== undefined) bytes += jsonBytes(part.metadata);
    if (part.filename !== undefined) bytes += part.filename.length;
    if (part.mediaType !== undefined) bytes += part.mediaType.length;
  }
  return bytes;
}

/**
 * The bytes of backend output `task` keeps: its artifacts, and the agent's messages in its
 * history (the current status message is one of them). What a resumed turn starts counting from.
 *
 * @example
 * ```ts
 * live.outputBytes = storedOutputBytes(stored);
 * ```
 */
export function storedOutputBytes(task: Task): number {
  let bytes = 0;
  for (const artifact of task.artifacts) bytes += artifactBytes(artifact);
  for (const message of task.history) if (message.role === 'agent') bytes += partsBytes(message.parts);
  return bytes;
}

/**
 * The bytes of one artifact: its parts, and its name, description and metadata.
 *
 * @example
 * ```ts
 * artifactBytes({ artifactId: 'a', parts: [{ kind: 'text', text: 'hi' }] }); // 2
 * ```
 */
export function artifactBytes(artifact: Task['artifacts'][number]): number {
  let bytes = partsBytes(artifact.parts);
  if (artifact.name !== undefined) bytes += artifact.name.length;
  if (artifact.description !== undefined) bytes += artifact.description.length;
  if (artifact.metadata !== undefined) bytes += jsonBytes(artifact.metadata);
  return bytes;
}

function jsonBytes(value: unknown): number {
  const text = JSON.stringify(value) as string | undefined;
  return text === undefined ? 0 : Buffer.byteLength(text, 'utf8');
}

/**
 * The message a task fails with when its backend's output passed the cap.
 *
 * @example
 * ```ts
 * finish(live, 'failed', outputCapMessage(caps.maxTaskOutputBytes), undefined, 'output_too_large');
 * ```
 */
export function outputCapMessage(maxTaskOutputBytes: number): string {
  return `The agent's output passed this task's limit of ${maxTaskOutputBytes} bytes (limits.maxTaskOutputBytes); the turn was stopped.`;
}
