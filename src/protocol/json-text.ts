/**
 * JSON text, the encoders' fast path: the pieces both dialects' JSON writers (`V10_JSON`,
 * `V03_JSON`) are made of. A result is written straight as text instead of being built as a
 * wire object and then serialised; every call of the server's hot path goes through here.
 *
 * @example
 * ```ts
 * jsonListField('history', task.history, writeMessage); // ',"history":[{…},{…}]'
 * ```
 */
import type { Message, SendResult, StreamEvent, Task } from './model.js';

/**
 * A codec's results as JSON text, written directly rather than built as wire objects and then
 * serialised: `sendResult(r) === JSON.stringify(dialect.encodeSendResult(r))`, byte for byte, and
 * likewise `task` and `streamEvent` (one SSE result).
 *
 * @example
 * ```ts
 * const body = `{"jsonrpc":"2.0","id":1,"result":${V03_JSON.sendResult(result)}}`;
 * ```
 */
export interface JsonWriters {
  sendResult(result: SendResult): string;
  task(task: Task): string;
  streamEvent(event: StreamEvent): string;
}

/** A string JSON carries as it is: no quote, backslash, control character or surrogate. */
// eslint-disable-next-line no-control-regex
const PLAIN_JSON_STRING = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;

/**
 * `JSON.stringify(value)` for a string; the common string needs no escaping and skips the
 * general serialiser.
 *
 * @example
 * ```ts
 * jsonString('hi');     // '"hi"'
 * jsonString('say "x"'); // '"say \\"x\\""'
 * ```
 */
export function jsonString(value: string): string {
  if (value.length >= REMEMBERED_LENGTH) return longJsonString(value);
  return PLAIN_JSON_STRING.test(value) ? `"${value}"` : JSON.stringify(value);
}

/**
 * From this length a string found plain is remembered: a task's texts are written twice, once
 * for the store (`model-json.ts`) and once for the answer, and the test reads every character
 * (about 1 ns each in a script beyond Latin-1).
 */
const REMEMBERED_LENGTH = 256;
/**
 * The last two long strings found plain, newest first: a message and its reply. They stay
 * referenced until two other long strings take their place (two texts, each within the body cap).
 */
let plainNewest = '';
let plainBefore = '';

function longJsonString(value: string): string {
  // Equal strings are equally plain; `===` compares by content (at once when it is the same
  // string, as the task's own text is).
  if (value === plainNewest || value === plainBefore) return `"${value}"`;
  if (!PLAIN_JSON_STRING.test(value)) return JSON.stringify(value);
  plainBefore = plainNewest;
  plainNewest = value;
  return `"${value}"`;
}

/**
 * The fields after `parts` that both dialects write alike for a message: `,"contextId":…`,
 * `,"taskId":…`, `,"metadata":…`, `,"extensions":…`, `,"referenceTaskIds":…`, each only when set.
 *
 * @example
 * ```ts
 * messageTailJson({ messageId: 'm', role: 'user', parts: [], taskId: 't' }); // ',"taskId":"t"'
 * ```
 */
export function messageTailJson(message: Message): string {
  let out = '';
  if (message.contextId !== undefined) out += `,"contextId":${jsonString(message.contextId)}`;
  if (message.taskId !== undefined) out += `,"taskId":${jsonString(message.taskId)}`;
  if (message.metadata !== undefined) out += `,"metadata":${JSON.stringify(message.metadata)}`;
  if (message.extensions !== undefined) out += `,"extensions":${JSON.stringify(message.extensions)}`;
  if (message.referenceTaskIds !== undefined) out += `,"referenceTaskIds":${JSON.stringify(message.referenceTaskIds)}`;
  return out;
}

/**
 * `,"key":[…]` for a non-empty list written item by item, or `''` for an empty one (the
 * codecs omit empty lists, as ProtoJSON does).
 *
 * @example
 * ```ts
 * jsonListField('history', task.history, writeMessage); // ',"history":[{…},{…}]'
 * ```
 */
export function jsonListField<T>(key: string, items: readonly T[], write: (item: T) => string): string {
  return items.length === 0 ? '' : `,"${key}":${jsonArray(items, write)}`;
}

/**
 * `[…]`: a list written item by item.
 *
 * @example
 * ```ts
 * jsonArray(['a', 'b'], jsonString); // '["a","b"]'
 * ```
 */
export function jsonArray<T>(items: readonly T[], write: (item: T) => string): string {
  let out = '[';
  for (let i = 0; i < items.length; i++) {
    if (i > 0) out += ',';
    out += write(items[i] as T);
  }
  return `${out}]`;
}
