/**
 * Size limits on one inbound message, checked after decoding and before anything is sent to a
 * backend: how many parts it has, and how much text all its text parts hold together.
 *
 * Text is counted as JavaScript string length (UTF-16 code units), the unit every later stage
 * (scrubbing, logging, model token budgets) sees, and cheap to get. Only text parts count:
 * raw, url and data parts are bounded by the body size cap instead.
 *
 * The errors name the numbers and never the content, so they are safe to return and to log.
 *
 * @example
 * ```ts
 * const error = checkMessageLimits(params.message, config.limits);
 * if (error !== undefined) {
 *   audit({ outcome: 'refused', reason: error.reason });
 *   throw error;
 * }
 * ```
 */
import { A2AError } from '../../protocol/errors.js';
import type { Message } from '../../protocol/model.js';

/** Why a message was refused, for the audit log. */
export type MessageLimitReason = 'too_many_parts' | 'input_too_long';

/** The limits {@link checkMessageLimits} applies (a subset of the `limits` config). */
export interface MessageLimits {
  maxParts: number;
  maxInputChars: number;
}

/**
 * An INVALID_PARAMS error that also carries the audit reason. It is an {@link A2AError}, so the
 * codecs render it like any other.
 *
 * @example
 * ```ts
 * if (error instanceof MessageLimitError) audit({ reason: error.reason });
 * ```
 */
export class MessageLimitError extends A2AError {
  readonly reason: MessageLimitReason;

  constructor(reason: MessageLimitReason, message: string) {
    super('INVALID_PARAMS', message, { field: 'message.parts' });
    this.reason = reason;
  }
}

/**
 * The first limit `message` breaks, or undefined when it keeps to all of them. Nothing is
 * allocated when the message is within limits.
 *
 * @example
 * ```ts
 * checkMessageLimits({ messageId: 'm', role: 'user', parts: [{ kind: 'text', text: 'hi' }] },
 *   { maxParts: 16, maxInputChars: 8192 }); // undefined
 * ```
 */
export function checkMessageLimits(message: Message, limits: MessageLimits): MessageLimitError | undefined {
  const parts = message.parts;
  // Parts first: a message with a million parts is refused without walking them.
  if (parts.length > limits.maxParts) {
    return new MessageLimitError(
      'too_many_parts',
      `Message has ${parts.length} parts; at most ${limits.maxParts} are accepted`,
    );
  }
  let chars = 0;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as Message['parts'][number];
    if (part.kind === 'text') chars += part.text.length;
  }
  if (chars > limits.maxInputChars) {
    return new MessageLimitError(
      'input_too_long',
      `Message text is ${chars} characters; at most ${limits.maxInputChars} are accepted`,
    );
  }
  return undefined;
}
