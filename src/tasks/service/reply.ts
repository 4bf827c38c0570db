/**
 * A turn's reply text: secrets scrubbed from every piece of it (when the grant brought a
 * scrubber), and streamed text chunks gathered into one reply artifact.
 *
 * @example
 * ```ts
 * appendReplyText(live, 'Hello', false, writes, bus); // creates the reply artifact
 * appendReplyText(live, ', world', true, writes, bus); // appends to it
 * ```
 */
import type { Artifact, Message } from '../../protocol/model.js';
import type { TaskEventBus } from '../events.js';
import { newId } from '../ids.js';
import type { LiveTask } from './live.js';
import type { TaskWrites } from './writes.js';

/**
 * Scrubs configured secrets from text, when the turn has a scrubber.
 *
 * @example
 * ```ts
 * finish(live, 'completed', scrubText(live, event.text));
 * ```
 */
export function scrubText(live: LiveTask, text: string | undefined): string | undefined {
  const scrubber = live.scrubber;
  return scrubber === undefined || text === undefined ? text : scrubber.scrub(text);
}

/**
 * The same parts with every text part scrubbed (other kinds are our own agents' output, kept).
 *
 * @example
 * ```ts
 * const parts = scrubParts(live, event.parts);
 * ```
 */
export function scrubParts(live: LiveTask, parts: Message['parts']): Message['parts'] {
  const scrubber = live.scrubber;
  if (scrubber === undefined) return parts;
  return parts.map((part) => (part.kind === 'text' ? { ...part, text: scrubber.scrub(part.text) } : part));
}

/**
 * Text chunks go to one reply artifact: the first creates it, the rest append. The stored
 * artifact keeps one growing text part; the published event carries only the new text.
 *
 * @example
 * ```ts
 * appendReplyText(live, event.text, event.last === true, writes, bus);
 * ```
 */
export function appendReplyText(
  live: LiveTask,
  chunk: string,
  last: boolean,
  writes: TaskWrites,
  bus: TaskEventBus,
): void {
  let text = chunk;
  const scrubber = live.scrubber;
  if (scrubber !== undefined) {
    // Held-back text (a possible secret's start) goes out with a later chunk or the flush.
    const stream = (live.scrubStream ??= scrubber.stream());
    text = stream.push(chunk);
    if (last) {
      text += stream.flush();
      live.scrubStream = undefined;
    }
    if (text.length === 0 && !last) return;
  }
  const task = live.task;
  let artifactId = live.replyArtifactId;
  let artifacts: Artifact[];
  let append: boolean;
  if (artifactId === undefined) {
    artifactId = newId();
    live.replyArtifactId = artifactId;
    artifacts = [...task.artifacts, { artifactId, name: 'reply', parts: [{ kind: 'text', text }] }];
    append = false;
  } else {
    const id = artifactId;
    artifacts = task.artifacts.map((artifact) => {
      if (artifact.artifactId !== id) return artifact;
      const head = artifact.parts[0];
      const joined = head !== undefined && head.kind === 'text' ? head.text + text : text;
      return { ...artifact, parts: [{ kind: 'text', text: joined }] };
    });
    append = true;
  }
  writes.commit(live, { ...task, artifacts });
  bus.publish(task.id, {
    kind: 'artifact-update',
    taskId: task.id,
    contextId: task.contextId,
    artifact: { artifactId, name: 'reply', parts: [{ kind: 'text', text }] },
    append,
    lastChunk: last,
  });
}

/**
 * Reply text the scrubber still holds back, flushed before the turn's final status.
 *
 * @example
 * ```ts
 * flushHeldText(live, writes, bus);
 * writes.commit(live, withStatus(live.task, 'completed', timestamp()));
 * ```
 */
export function flushHeldText(live: LiveTask, writes: TaskWrites, bus: TaskEventBus): void {
  const held = live.scrubStream;
  if (held === undefined) return;
  live.scrubStream = undefined;
  const rest = held.flush();
  if (rest.length > 0) appendReplyText(live, rest, true, writes, bus);
}
