/**
 * What the tool loop keeps while a call waits for the person: the conversation with the model up
 * to that call (system, history, the caller's message, every answer with tool calls and every
 * tool result so far, the pending call's own answer last with the results of the calls before
 * it), the pending call's id and the ids of the calls after it in that answer. The gateway keeps
 * it with the parked action (as JSON, at most {@link MAX_CONTINUATION_BYTES}) and hands it back on
 * the turn that resumes after the decision; {@link readContinuation} then checks it field by field
 * before a byte of it goes to the model again, because it comes back from storage.
 *
 * @example
 * ```ts
 * const built = buildContinuation(transcript, call.id, later.map((c) => c.id));
 * if (built.ok) yield { type: 'propose-action', action, continuation: built.continuation };
 * // … the next turn:
 * const read = readContinuation(turn.approvedAction?.continuation);
 * if (!read.ok) yield { type: 'failed', reason: read.reason };
 * ```
 */
import type { ChatToolCall, ToolCallMessage, TranscriptMessage } from './request.js';
import type { ModelToolCall } from './tool-calls.js';
import { MAX_CONTINUATION_BYTES } from '../backend.js';

/** Marks a continuation as this backend's own. */
export const CONTINUATION_KIND = 'airlock.openai.tool-loop';
const VERSION = 1;

/** The most a continuation may take as JSON (UTF-8 bytes); the gateway keeps no more. */
export { MAX_CONTINUATION_BYTES };

/** Messages a continuation may hold (a bound for the check; the byte cap is the real one). */
const MAX_MESSAGES = 4096;

/**
 * The continuation as stored (JSON).
 *
 * @example
 * ```ts
 * const kept: ToolLoopContinuation = { kind: CONTINUATION_KIND, version: 1, messages, pending: 'call_2', remaining: ['call_3'] };
 * ```
 */
export interface ToolLoopContinuation {
  readonly kind: typeof CONTINUATION_KIND;
  readonly version: typeof VERSION;
  readonly messages: readonly TranscriptMessage[];
  /** The id of the call that waits for the person. */
  readonly pending: string;
  /** The ids of the calls after it in the same answer, not run yet, in order. */
  readonly remaining: readonly string[];
}

/**
 * Where a resumed turn picks up: the conversation as kept, the calls of the answer that parked,
 * and which of them waited for the person (those before it have their results in `messages`).
 *
 * @example
 * ```ts
 * const { messages, calls, pendingIndex } = read.state;
 * ```
 */
export interface ResumePoint {
  readonly messages: TranscriptMessage[];
  readonly calls: readonly ModelToolCall[];
  readonly pendingIndex: number;
}

/**
 * The continuation to keep, or why there can be none (more than {@link MAX_CONTINUATION_BYTES}).
 *
 * @example
 * ```ts
 * buildContinuation(transcript, 'call_2', ['call_3']);
 * // { ok: true, continuation: { kind, version: 1, messages: transcript, pending: 'call_2', remaining: ['call_3'] }, bytes }
 * ```
 */
export function buildContinuation(
  messages: readonly TranscriptMessage[],
  pending: string,
  remaining: readonly string[],
): { ok: true; continuation: ToolLoopContinuation; bytes: number } | { ok: false; reason: string } {
  const continuation: ToolLoopContinuation = {
    kind: CONTINUATION_KIND,
    version: VERSION,
    messages: [...messages],
    pending,
    remaining: [...remaining],
  };
  const bytes = Buffer.byteLength(JSON.stringify(continuation), 'utf8');
  if (bytes > MAX_CONTINUATION_BYTES) {
    return {
      ok: false,
      reason:
        `the conversation with the model is too long to wait for the person's approval ` +
        `(${Math.ceil(bytes / 1024)} KiB, at most ${MAX_CONTINUATION_BYTES / 1024} KiB)`,
    };
  }
  return { ok: true, continuation, bytes };
}

/**
 * Checks a continuation handed back by the gateway and returns where to resume, or why it cannot
 * be resumed. It must be this backend's own (`kind`, `version`), every message well-formed, the
 * conversation must start with the system message and end with the answer that parked followed
 * by exactly the results of the calls before `pending`, and `pending` and `remaining` must be
 * the rest of that answer's calls, in order.
 *
 * @example
 * ```ts
 * readContinuation(undefined); // { ok: false, reason: 'no continuation …' }
 * ```
 */
export function readContinuation(value: unknown): { ok: true; state: ResumePoint } | { ok: false; reason: string } {
  const problem = (what: string): { ok: false; reason: string } => ({
    ok: false,
    reason: `the tool loop cannot resume: its saved state ${what}`,
  });
  if (value === undefined || value === null) return problem('is missing');
  if (!isRecord(value)) return problem('is not an object');
  if (value.kind !== CONTINUATION_KIND || value.version !== VERSION) return problem('was not made by this backend');
  const { messages, pending, remaining } = value;
  if (!Array.isArray(messages) || messages.length < 2 || messages.length > MAX_MESSAGES) {
    return problem('holds no conversation');
  }
  if (typeof pending !== 'string' || pending.length === 0) return problem('names no pending call');
  if (!Array.isArray(remaining) || !remaining.every((id) => typeof id === 'string')) {
    return problem('has malformed remaining calls');
  }
  const checked: TranscriptMessage[] = [];
  for (const message of messages as unknown[]) {
    const one = checkMessage(message);
    if (one === undefined) return problem('holds a malformed message');
    checked.push(one);
  }
  if (checked[0]?.role !== 'system') return problem('does not start with the system message');
  let askedAt = -1;
  for (let i = checked.length - 1; i >= 0; i--) {
    if (checked[i]?.role === 'assistant') {
      askedAt = i;
      break;
    }
  }
  const asked = checked[askedAt];
  if (asked === undefined || !isToolCallMessage(asked)) return problem('does not end with the tool calls of the model');
  const answered = checked.slice(askedAt + 1);
  const ids = asked.tool_calls.map((call) => call.id);
  if (new Set(ids).size !== ids.length) return problem('holds a tool call id twice');
  const expected = [...answered.map((message) => (message.role === 'tool' ? message.tool_call_id : '')), pending];
  expected.push(...remaining);
  if (expected.length !== ids.length || expected.some((id, i) => id !== ids[i])) {
    return problem('does not match the calls the model made');
  }
  const calls: ModelToolCall[] = asked.tool_calls.map((call) => ({
    id: call.id,
    name: call.function.name,
    arguments: call.function.arguments,
  }));
  return { ok: true, state: { messages: checked, calls, pendingIndex: answered.length } };
}

function checkMessage(value: unknown): TranscriptMessage | undefined {
  if (!isRecord(value)) return undefined;
  switch (value.role) {
    case 'system':
    case 'user':
      return typeof value.content === 'string' ? { role: value.role, content: value.content } : undefined;
    case 'assistant': {
      const content = value.content;
      if (content !== null && typeof content !== 'string') return undefined;
      if (value.tool_calls === undefined) {
        return typeof content === 'string' ? { role: 'assistant', content } : undefined;
      }
      if (!Array.isArray(value.tool_calls) || value.tool_calls.length === 0) return undefined;
      const calls: ChatToolCall[] = [];
      for (const call of value.tool_calls as unknown[]) {
        const one = checkToolCall(call);
        if (one === undefined) return undefined;
        calls.push(one);
      }
      return { role: 'assistant', content, tool_calls: calls };
    }
    case 'tool':
      return typeof value.tool_call_id === 'string' &&
        value.tool_call_id.length > 0 &&
        typeof value.content === 'string'
        ? { role: 'tool', tool_call_id: value.tool_call_id, content: value.content }
        : undefined;
    default:
      return undefined;
  }
}

function checkToolCall(value: unknown): ChatToolCall | undefined {
  if (!isRecord(value) || typeof value.id !== 'string' || value.id.length === 0 || value.type !== 'function') {
    return undefined;
  }
  const fn = value.function;
  if (!isRecord(fn) || typeof fn.name !== 'string' || typeof fn.arguments !== 'string') return undefined;
  return { id: value.id, type: 'function', function: { name: fn.name, arguments: fn.arguments } };
}

function isToolCallMessage(message: TranscriptMessage): message is ToolCallMessage {
  return message.role === 'assistant' && 'tool_calls' in message;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
