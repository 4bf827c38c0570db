/**
 * What an OpenAI-compatible `/chat/completions` endpoint says, read into a few plain events: a
 * streamed answer (SSE `data:` chunks of `chat.completion.chunk` objects, then `[DONE]`) or a
 * whole JSON answer (servers that ignore `stream: true`). Nothing here does I/O or knows about
 * secrets: server messages come out raw, and the caller redacts them before anyone sees them.
 *
 * @example
 * ```ts
 * const decoder = new ChatStreamDecoder();
 * for await (const bytes of body) {
 *   for (const event of decoder.push(bytes)) if (event.type === 'token') reply += event.text;
 * }
 * ```
 */
import { SseDataDecoder } from './sse.js';

/**
 * One thing the endpoint said.
 *
 * - `token`: a non-empty piece of the reply (`choices[0].delta.content`, or the whole
 *   `choices[0].message.content` of a JSON answer);
 * - `reasoning`: the model is thinking aloud (`delta.reasoning_content` / `delta.reasoning`); never
 *   forwarded, only proof that the endpoint is alive;
 * - `tool-call`: a piece of a tool call the model makes (`choices[0].delta.tool_calls[i]`, or a
 *   whole entry of `choices[0].message.tool_calls` in a JSON answer): `index` says which call it
 *   belongs to (parallel calls stream interleaved), `id` and `name` come once, `arguments` comes
 *   in pieces to be joined. Never forwarded to the caller;
 * - `finish`: `choices[0].finish_reason` (`stop`, `length`, `tool_calls`, …): the reply is whole;
 * - `done`: the `[DONE]` sentinel (or the end of a JSON answer);
 * - `error`: the server reported an error; `message` is its own text, raw and untrusted;
 * - `invalid`: something that is not a chat completion; `what` says what, in our words.
 *
 * @example
 * ```ts
 * const events: CompletionEvent[] = readStreamData('{"choices":[{"delta":{"content":"Hi"}}]}');
 * // [{ type: 'token', text: 'Hi' }]
 * ```
 */
export type CompletionEvent =
  | { readonly type: 'token'; readonly text: string }
  | { readonly type: 'reasoning' }
  | {
      readonly type: 'tool-call';
      readonly index: number;
      readonly id?: string;
      readonly name?: string;
      readonly arguments?: string;
    }
  | { readonly type: 'finish'; readonly reason: string }
  | { readonly type: 'done' }
  | { readonly type: 'error'; readonly message: string | undefined }
  | { readonly type: 'invalid'; readonly what: string };

/** The sentinel that ends an OpenAI stream. */
const DONE = '[DONE]';

/**
 * Reads one SSE `data` payload of a chat-completion stream.
 *
 * @example
 * ```ts
 * readStreamData('[DONE]');                                           // [{ type: 'done' }]
 * readStreamData('{"choices":[{"delta":{},"finish_reason":"stop"}]}'); // [{ type: 'finish', reason: 'stop' }]
 * readStreamData('{"error":{"message":"overloaded"}}');               // [{ type: 'error', message: 'overloaded' }]
 * readStreamData('{"choices":[');                                     // [{ type: 'invalid', what: … }]
 * ```
 */
export function readStreamData(data: string): CompletionEvent[] {
  if (data.trim() === DONE) return [{ type: 'done' }];
  const chunk = parseObject(data);
  if (chunk === undefined) return [{ type: 'invalid', what: 'a stream event that is not a JSON object' }];
  const error = serverErrorOf(chunk);
  if (error !== undefined) return [error];
  const events: CompletionEvent[] = [];
  const choice = firstChoice(chunk);
  if (choice === undefined) return events; // a usage-only chunk, a keep-alive object, …
  const delta = objectOf(choice.delta);
  if (delta !== undefined) {
    const content = delta.content;
    if (typeof content === 'string' && content.length > 0) events.push({ type: 'token', text: content });
    else if (nonEmptyString(delta.reasoning_content) || nonEmptyString(delta.reasoning)) {
      events.push({ type: 'reasoning' });
    }
    events.push(...toolCallEvents(delta.tool_calls));
  }
  if (typeof choice.finish_reason === 'string') events.push({ type: 'finish', reason: choice.finish_reason });
  return events;
}

/**
 * Reads a whole (non-streamed) chat-completion answer: its `choices[0].message.content`, then
 * `finish` and `done`.
 *
 * @example
 * ```ts
 * readCompletionAnswer('{"choices":[{"message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}]}');
 * // [{ type: 'token', text: 'Hi' }, { type: 'finish', reason: 'stop' }, { type: 'done' }]
 * ```
 */
export function readCompletionAnswer(body: string): CompletionEvent[] {
  const answer = parseObject(body);
  if (answer === undefined) return [{ type: 'invalid', what: 'an answer that is not a JSON object' }];
  const error = serverErrorOf(answer);
  if (error !== undefined) return [error];
  const choice = firstChoice(answer);
  if (choice === undefined) return [{ type: 'invalid', what: 'an answer without choices' }];
  const events: CompletionEvent[] = [];
  const message = objectOf(choice.message);
  const content = message?.content;
  if (typeof content === 'string' && content.length > 0) events.push({ type: 'token', text: content });
  events.push(...toolCallEvents(message?.tool_calls));
  const reason = typeof choice.finish_reason === 'string' ? choice.finish_reason : 'stop';
  events.push({ type: 'finish', reason }, { type: 'done' });
  return events;
}

/**
 * A chat-completion stream from raw bytes to events: UTF-8 decoding (a character cut between two
 * pieces is kept whole), SSE framing, then {@link readStreamData} on each event.
 *
 * @example
 * ```ts
 * const decoder = new ChatStreamDecoder();
 * decoder.push(Buffer.from('data: {"choices":[{"delta":{"content":"H'));  // []
 * decoder.push(Buffer.from('i"}}]}\n\ndata: [DONE]\n\n'));
 * // [{ type: 'token', text: 'Hi' }, { type: 'done' }]
 * ```
 */
export class ChatStreamDecoder {
  readonly #text = new TextDecoder('utf-8');
  readonly #sse = new SseDataDecoder();

  /**
   * Feeds the next bytes of the body; returns the events they completed.
   *
   * @example
   * ```ts
   * for (const event of decoder.push(chunk)) handle(event);
   * ```
   */
  push(bytes: Uint8Array): CompletionEvent[] {
    return this.#events(this.#sse.push(this.#text.decode(bytes, { stream: true })));
  }

  /**
   * The body ended: returns what its last bytes completed.
   *
   * @example
   * ```ts
   * for (const event of decoder.end()) handle(event);
   * ```
   */
  end(): CompletionEvent[] {
    const rest = this.#sse.push(this.#text.decode());
    return this.#events([...rest, ...this.#sse.end()]);
  }

  #events(payloads: readonly string[]): CompletionEvent[] {
    const events: CompletionEvent[] = [];
    for (const data of payloads) events.push(...readStreamData(data));
    return events;
  }
}

/**
 * The server's own error text in the shapes OpenAI-compatible servers use: `{error: {message}}`
 * (OpenAI, llama.cpp, newer vLLM), `{error: "…"}` (Ollama) and `{object: "error", message}`
 * (older vLLM). `undefined` when `value` is not an error at all.
 *
 * @example
 * ```ts
 * serverErrorMessage({ error: 'model "x" not found' });      // { message: 'model "x" not found' }
 * serverErrorMessage({ error: { code: 500 } });               // { message: undefined }
 * serverErrorMessage({ choices: [] });                        // undefined
 * ```
 */
export function serverErrorMessage(value: unknown): { message: string | undefined } | undefined {
  const object = objectOf(value);
  if (object === undefined) return undefined;
  const error = object.error;
  if (typeof error === 'string') return { message: error };
  const detail = objectOf(error);
  if (detail !== undefined) return { message: typeof detail.message === 'string' ? detail.message : undefined };
  if (error !== undefined && error !== null) return { message: undefined };
  if (object.object === 'error') return { message: typeof object.message === 'string' ? object.message : undefined };
  return undefined;
}

/**
 * The tool-call entries of a delta or a whole message. An entry's `index` is its own when it is a
 * small integer, else its position; `arguments` sent as an object (some servers do) is re-encoded
 * as JSON text. Entries that carry nothing (no id, name or arguments) are left out.
 */
function toolCallEvents(value: unknown): CompletionEvent[] {
  if (!Array.isArray(value)) return [];
  const events: CompletionEvent[] = [];
  (value as unknown[]).forEach((item, position) => {
    const entry = objectOf(item);
    if (entry === undefined) return;
    const fn = objectOf(entry.function);
    const index =
      typeof entry.index === 'number' && Number.isInteger(entry.index) && entry.index >= 0 && entry.index < 1024
        ? entry.index
        : position;
    const id = nonEmptyString(entry.id) ? (entry.id as string) : undefined;
    const name = nonEmptyString(fn?.name) ? (fn?.name as string) : undefined;
    const args = argumentsText(fn?.arguments);
    if (id === undefined && name === undefined && args === undefined) return;
    events.push({
      type: 'tool-call',
      index,
      ...(id !== undefined && { id }),
      ...(name !== undefined && { name }),
      ...(args !== undefined && { arguments: args }),
    });
  });
  return events;
}

function argumentsText(value: unknown): string | undefined {
  if (typeof value === 'string') return value.length > 0 ? value : undefined;
  if (value !== null && typeof value === 'object') return JSON.stringify(value);
  return undefined;
}

function serverErrorOf(value: Readonly<Record<string, unknown>>): CompletionEvent | undefined {
  const error = serverErrorMessage(value);
  return error === undefined ? undefined : { type: 'error', message: error.message };
}

function firstChoice(value: Readonly<Record<string, unknown>>): Readonly<Record<string, unknown>> | undefined {
  const choices = value.choices;
  return Array.isArray(choices) ? objectOf(choices[0]) : undefined;
}

function parseObject(text: string): Readonly<Record<string, unknown>> | undefined {
  try {
    return objectOf(JSON.parse(text));
  } catch {
    return undefined;
  }
}

function objectOf(value: unknown): Readonly<Record<string, unknown>> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function nonEmptyString(value: unknown): boolean {
  return typeof value === 'string' && value.length > 0;
}
