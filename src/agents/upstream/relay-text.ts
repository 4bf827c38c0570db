/**
 * The relay's text helpers, apart from the turn logic in relay.ts: the text of an upstream
 * message (other parts counted, never read), a question capped for the person, and a promise
 * raced against the turn's abort signal.
 *
 * @example
 * ```ts
 * const { text, dropped } = textOfParts(message.parts);
 * const question = capQuestion(text);
 * ```
 */
import type { Part } from '../../protocol/model.js';
import { MAX_REMEMBERED_QUESTION_CHARS } from './ids.js';

/**
 * Ends a remote question cut at {@link MAX_REMEMBERED_QUESTION_CHARS} for the person.
 *
 * @example
 * ```ts
 * remote.question.endsWith(QUESTION_CUT_NOTE);
 * ```
 */
export const QUESTION_CUT_NOTE = "\n[Airlock: the upstream agent's question was cut]";

/** A message with no text parts. */
export const NO_TEXT = { text: '', hasText: false, dropped: 0 } as const;

/** A question for the person within {@link MAX_REMEMBERED_QUESTION_CHARS}, never splitting a surrogate pair. */
export function capQuestion(text: string): string {
  if (text.length <= MAX_REMEMBERED_QUESTION_CHARS) return text;
  let end = MAX_REMEMBERED_QUESTION_CHARS - QUESTION_CUT_NOTE.length;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return text.slice(0, end) + QUESTION_CUT_NOTE;
}

/** The text parts of `parts`, joined; the others are counted, never read. */
export function textOfParts(parts: readonly Part[]): { text: string; hasText: boolean; dropped: number } {
  let text = '';
  let hasText = false;
  let dropped = 0;
  for (const part of parts) {
    if (part.kind === 'text') {
      hasText = true;
      text += part.text;
    } else {
      dropped += 1;
    }
  }
  return { text, hasText, dropped };
}

/** `promise`, or a rejection as soon as `signal` aborts (the promise itself is left to settle). */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
