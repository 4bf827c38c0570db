/**
 * The model's tool calls, put together from a streamed answer. A streamed call comes in pieces:
 * its `index` (parallel calls interleave), its `id` and function `name` once, its `arguments` as
 * JSON text in chunks. {@link ToolCallAssembly} joins them per index and hands back whole calls in
 * index order, each with an id that is unique within the answer (one is made up when the server
 * sent none, a duplicate, or an unusable one).
 *
 * @example
 * ```ts
 * const assembly = new ToolCallAssembly(1);
 * assembly.add({ type: 'tool-call', index: 0, id: 'call_a', name: 'fs_read', arguments: '{"pa' });
 * assembly.add({ type: 'tool-call', index: 0, arguments: 'th":"a.txt"}' });
 * assembly.calls(); // [{ id: 'call_a', name: 'fs_read', arguments: '{"path":"a.txt"}' }]
 * ```
 */
import type { CompletionEvent } from './stream.js';

/**
 * One whole tool call of the model.
 *
 * @example
 * ```ts
 * const call: ModelToolCall = { id: 'call_a', name: 'fs_read', arguments: '{"path":"a.txt"}' };
 * ```
 */
export interface ModelToolCall {
  readonly id: string;
  /** The function name the model gave (empty when it gave none). */
  readonly name: string;
  /** The arguments as the model wrote them: JSON text, unchecked. */
  readonly arguments: string;
}

/** Tool calls one answer may hold; more fail the turn. */
export const MAX_CALLS_PER_ANSWER = 64;

/** Rounds of the tool loop per turn when `maxToolRounds` is not set. */
export const DEFAULT_MAX_TOOL_ROUNDS = 8;

/** Longest id kept as the server sent it; a longer one is replaced. */
const MAX_ID_CHARS = 128;
const ID_PATTERN = /^[\x21-\x7e]+$/;

interface PendingCall {
  id: string | undefined;
  name: string;
  arguments: string;
}

/**
 * Collects the `tool-call` events of one answer.
 *
 * @example
 * ```ts
 * for (const event of events) if (event.type === 'tool-call') assembly.add(event);
 * if (assembly.size > 0) runCalls(assembly.calls());
 * ```
 */
export class ToolCallAssembly {
  readonly #round: number;
  readonly #byIndex = new Map<number, PendingCall>();

  /**
   * `seed` goes into made-up ids; a number no other answer of the conversation uses (the
   * conversation's length when the answer comes) keeps them unique across answers too.
   */
  constructor(seed: number) {
    this.#round = seed;
  }

  /** Calls seen so far. */
  get size(): number {
    return this.#byIndex.size;
  }

  /**
   * Adds one piece. Returns false when the answer holds more than {@link MAX_CALLS_PER_ANSWER}
   * calls (the piece is dropped).
   */
  add(event: Extract<CompletionEvent, { type: 'tool-call' }>): boolean {
    let call = this.#byIndex.get(event.index);
    if (call === undefined) {
      if (this.#byIndex.size >= MAX_CALLS_PER_ANSWER) return false;
      call = { id: undefined, name: '', arguments: '' };
      this.#byIndex.set(event.index, call);
    }
    // As OpenAI's own client does: the id and the name are set (a server may repeat them), the
    // arguments are appended.
    if (event.id !== undefined) call.id = event.id;
    if (event.name !== undefined) call.name = event.name;
    if (event.arguments !== undefined) call.arguments += event.arguments;
    return true;
  }

  /** The whole calls, in index order, each with an id unique within the answer. */
  calls(): ModelToolCall[] {
    const seen = new Set<string>();
    const indexes = [...this.#byIndex.keys()].sort((a, b) => a - b);
    return indexes.map((index, position) => {
      const call = this.#byIndex.get(index) as PendingCall;
      let id = call.id;
      if (id === undefined || id.length > MAX_ID_CHARS || !ID_PATTERN.test(id) || seen.has(id)) {
        id = `call_airlock_${this.#round}_${position}`;
      }
      seen.add(id);
      return { id, name: call.name, arguments: call.arguments };
    });
  }
}

/**
 * The arguments of a call as a value: `{}` for an empty text (some servers send nothing for a
 * call without arguments), the parsed JSON otherwise, or `undefined` when the text is not JSON.
 *
 * @example
 * ```ts
 * parseArguments('{"path":"a.txt"}'); // { ok: true, value: { path: 'a.txt' } }
 * parseArguments('{"path":');         // { ok: false }
 * ```
 */
export function parseArguments(text: string): { ok: true; value: unknown } | { ok: false } {
  if (text.trim().length === 0) return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}
