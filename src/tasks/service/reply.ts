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
import type { Artifact, JsonObject, JsonValue, Message, Part } from '../../protocol/model.js';
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
 * The same parts with every field scrubbed: text, raw bytes (base64), URL, media type, file
 * name, data (every key and string, deep) and metadata. A field that leaves Airlock is a field a
 * backend could put a secret in, whatever its kind (issue 16).
 *
 * @example
 * ```ts
 * const parts = scrubParts(live, event.parts);
 * ```
 */
export function scrubParts(live: LiveTask, parts: Message['parts']): Message['parts'] {
  const scrubber = live.scrubber;
  if (scrubber === undefined) return parts;
  return parts.map((part) => scrubPart(part, (text) => scrubber.scrub(text)));
}

/**
 * An artifact with its parts, name, description and metadata scrubbed.
 *
 * @example
 * ```ts
 * const artifact = scrubArtifact(live, event.artifact);
 * ```
 */
export function scrubArtifact<A extends Pick<Artifact, 'parts' | 'name' | 'description' | 'metadata'>>(
  live: LiveTask,
  artifact: A,
): A {
  const scrubber = live.scrubber;
  if (scrubber === undefined) return artifact;
  const scrub = (text: string): string => scrubber.scrub(text);
  const out: A = { ...artifact, parts: artifact.parts.map((part) => scrubPart(part, scrub)) };
  if (typeof artifact.name === 'string') out.name = scrub(artifact.name);
  if (typeof artifact.description === 'string') out.description = scrub(artifact.description);
  if (artifact.metadata !== undefined) out.metadata = scrubJson(artifact.metadata, scrub) as JsonObject;
  return out;
}

function scrubPart(part: Part, scrub: (text: string) => string): Part {
  const out: Part = { ...part };
  switch (out.kind) {
    case 'text':
      out.text = scrub(out.text);
      break;
    case 'raw':
      out.raw = scrub(out.raw);
      break;
    case 'url':
      out.url = scrub(out.url);
      break;
    case 'data':
      out.data = scrubJson(out.data, scrub);
      break;
  }
  if (typeof out.mediaType === 'string') out.mediaType = scrub(out.mediaType);
  if (typeof out.filename === 'string') out.filename = scrub(out.filename);
  if (out.metadata !== undefined) out.metadata = scrubJson(out.metadata, scrub) as JsonObject;
  return out;
}

/** Every key and string of a JSON value scrubbed (numbers too, when their digits hold a secret). */
function scrubJson(value: JsonValue, scrub: (text: string) => string): JsonValue {
  if (typeof value === 'string') return scrub(value);
  if (typeof value === 'number') {
    const digits = String(value);
    const clean = scrub(digits);
    return clean === digits ? value : clean;
  }
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => scrubJson(item, scrub));
  const out: { [key: string]: JsonValue } = {};
  for (const [key, item] of Object.entries(value)) {
    Object.defineProperty(out, scrub(key), {
      value: scrubJson(item, scrub),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/**
 * Text chunks go to one reply artifact: the first creates it, the rest append. The stored
 * artifact keeps one growing text part; the published event carries only the new text.
 * Every chunk counts against the task's output cap (`maxOutputBytes`, see caps.ts): the chunk
 * that would pass it is neither stored nor sent, and the answer is false (the bridge then
 * fails the turn, saying so).
 *
 * @example
 * ```ts
 * if (!appendReplyText(live, event.text, event.last === true, writes, bus, caps.maxTaskOutputBytes)) stop();
 * ```
 */
export function appendReplyText(
  live: LiveTask,
  chunk: string,
  last: boolean,
  writes: TaskWrites,
  bus: TaskEventBus,
  maxOutputBytes = Infinity,
): boolean {
  // A backend given in code is not checked like a module: a non-string chunk is coerced, as the
  // text it joins would coerce it, rather than failing the byte count.
  let text = typeof chunk === 'string' ? chunk : String(chunk);
  const scrubber = live.scrubber;
  if (scrubber !== undefined) {
    if (last && live.scrubStream === undefined) {
      // A reply that arrives whole: the one-shot scrub gives what a stream's pushes and flush
      // give (createReplyScrubber's contract), without the stream, and the text stays as it is
      // when nothing is replaced rather than cut at the hold-back and joined again.
      text = scrubber.scrub(text);
    } else {
      // Held-back text (a possible secret's start) goes out with a later chunk or the flush.
      const stream = (live.scrubStream ??= scrubber.stream());
      text = stream.push(text);
      if (last) {
        text += stream.flush();
        live.scrubStream = undefined;
      }
      if (text.length === 0 && !last) return true;
    }
  }
  const outputBytes = (live.outputBytes ?? 0) + Buffer.byteLength(text, 'utf8');
  if (outputBytes > maxOutputBytes) return false;
  live.outputBytes = outputBytes;
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
  return true;
}

/**
 * Reply text the scrubber still holds back, flushed before the turn's final status.
 *
 * @example
 * ```ts
 * if (!flushHeldText(live, writes, bus, caps.maxTaskOutputBytes)) state = 'failed';
 * writes.commit(live, withStatus(live.task, 'completed', timestamp()));
 * ```
 */
export function flushHeldText(
  live: LiveTask,
  writes: TaskWrites,
  bus: TaskEventBus,
  maxOutputBytes = Infinity,
): boolean {
  const held = live.scrubStream;
  if (held === undefined) return true;
  live.scrubStream = undefined;
  const rest = held.flush();
  return rest.length > 0 ? appendReplyText(live, rest, true, writes, bus, maxOutputBytes) : true;
}
