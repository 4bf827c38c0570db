/**
 * The one error type of card trust. Its message is one line, written for the operator, and
 * never quotes the remote card's text (names, descriptions, scheme names): a card is
 * third-party input and error messages end up in logs and in front of models. URLs are
 * quoted, after parsing, because the operator needs to see which one was refused.
 *
 * @example
 * ```ts
 * try {
 *   await trust.resolve(entry);
 * } catch (error) {
 *   if (error instanceof CardTrustError && error.code === 'card_pin_mismatch') alertOperator(error.entry);
 * }
 * ```
 */
import { AirlockError } from '../errors/index.js';

/**
 * Why a card was refused.
 *
 * - `card_invalid`: not a card we accept (unreadable, too large, bad shape, an RPC interface
 *   off-origin or over plain http, no usable interface).
 * - `card_pin_mismatch`: the card's trust digest is not the pinned one, or the entry is
 *   disabled after such a change.
 * - `card_signature_invalid`: reserved for card signature checks (a later issue).
 *
 * @example
 * ```ts
 * const code: CardTrustErrorCode = 'card_invalid';
 * ```
 */
export type CardTrustErrorCode = 'card_invalid' | 'card_pin_mismatch' | 'card_signature_invalid';

/**
 * A refused card.
 *
 * @example
 * ```ts
 * throw new CardTrustError('card_invalid', 'weather', 'the card is not valid JSON');
 * ```
 */
export class CardTrustError extends AirlockError {
  override readonly name = 'CardTrustError';
  readonly code: CardTrustErrorCode;
  /** The registry entry's name (operator config), when known. */
  readonly entry: string | undefined;

  constructor(code: CardTrustErrorCode, entry: string | undefined, detail: string, options?: { cause?: unknown }) {
    // Entry names come from operator config, but a newline would still split a log line.
    const prefix = entry === undefined ? 'agent card' : `agent card of registry entry "${oneLine(entry, 80)}"`;
    super(`${prefix}: ${oneLine(detail, 600)}`, options);
    this.code = code;
    this.entry = entry;
  }
}

/**
 * A URL as it may appear in a message: parsed and re-serialised (so it is percent-encoded and
 * holds no spaces or line breaks), without user info, and shortened. Text that does not parse
 * is not quoted at all: it is card text, not a URL.
 *
 * @example
 * ```ts
 * showUrl('https://u:p@a.example/rpc'); // 'https://a.example/rpc'
 * showUrl('not a url');                 // '(an unparseable URL)'
 * ```
 */
export function showUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return '(an unparseable URL)';
  }
  url.username = '';
  url.password = '';
  const text = url.href;
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/** Collapses control characters and caps the length, so a message stays one log line. */
function oneLine(text: string, max: number): string {
  // eslint-disable-next-line no-control-regex
  const flat = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ');
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}
