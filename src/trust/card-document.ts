/**
 * Card documents: the card's bytes fetched through the guarded client (`A2A-Version: 1.0`, a
 * byte cap, HTTP 200 only), read as JSON, and decoded in either card shape. What the remote
 * served wrongly becomes `CardTrustError('card_invalid')`; transport failures propagate.
 *
 * @example
 * ```ts
 * const body = await fetchCardBytes(client, entry);
 * const card = decodeCard(parseCardJson(body, entry.name, showUrl(entry.cardUrl)), entry.name, where);
 * ```
 */
import { A2AError } from '../protocol/errors.js';
import { decodeAnyCard } from '../protocol/card.js';
import type { AgentCard } from '../protocol/model.js';
import type { CardTrustEntry } from './contracts.js';
import { assertDepth } from './digest.js';
import { CardTrustError, showUrl } from './errors.js';
import { outboundCode, type CardFetcher, type CardResponse } from './fetcher.js';

/**
 * The default byte cap on a card: generous for any real card, small enough to read at once.
 *
 * @example
 * ```ts
 * entry.maxCardBytes ?? DEFAULT_MAX_CARD_BYTES; // 262144
 * ```
 */
export const DEFAULT_MAX_CARD_BYTES = 256 * 1024;

/** Agent cards are a few levels deep; this leaves room for extension params and refuses nesting bombs. */
const MAX_CARD_DEPTH = 64;

/**
 * The card's bytes, fetched with the request card trust makes: `A2A-Version: 1.0`, the entry's
 * byte cap (default {@link DEFAULT_MAX_CARD_BYTES}), timeouts and network setting.
 *
 * @example
 * ```ts
 * const body = await fetchCardBytes(client, entry);
 * ```
 * @throws CardTrustError (`card_invalid`: too large, malformed, not HTTP 200); the client's errors otherwise
 */
export async function fetchCardBytes(client: CardFetcher, entry: CardTrustEntry): Promise<Buffer> {
  const cap = entry.maxCardBytes ?? DEFAULT_MAX_CARD_BYTES;
  const where = showUrl(entry.cardUrl);
  let response: CardResponse;
  try {
    response = await client.request({
      method: 'GET',
      url: entry.cardUrl,
      headers: { 'A2A-Version': '1.0', accept: 'application/json' },
      maxResponseBytes: cap,
      timeouts: entry.timeouts,
      privateNetwork: entry.privateNetwork === true,
    });
  } catch (error) {
    const code = outboundCode(error);
    if (code === 'response_too_large') {
      throw new CardTrustError('card_invalid', entry.name, `the card at ${where} is larger than ${cap} bytes`, {
        cause: error,
      });
    }
    if (code === 'invalid_response') {
      throw new CardTrustError('card_invalid', entry.name, `the response for the card at ${where} is malformed`, {
        cause: error,
      });
    }
    throw error;
  }
  // The client enforces the cap; checking again costs nothing and keeps the promise here.
  if (response.body.length > cap) {
    throw new CardTrustError('card_invalid', entry.name, `the card at ${where} is larger than ${cap} bytes`);
  }
  if (response.status !== 200) {
    throw new CardTrustError(
      'card_invalid',
      entry.name,
      `the card fetch from ${where} answered HTTP ${response.status}`,
    );
  }
  return response.body;
}

/**
 * A card's JSON decoded in either shape (v1.0 or v0.3).
 *
 * @example
 * ```ts
 * const card = decodeCard(value, entry.name, showUrl(entry.cardUrl));
 * ```
 * @throws CardTrustError (`card_invalid`) naming the field when it is plain
 */
export function decodeCard(value: unknown, entry: string, where: string): AgentCard {
  try {
    return decodeAnyCard(value);
  } catch (error) {
    throw new CardTrustError(
      'card_invalid',
      entry,
      `the document at ${where} is not a valid agent card${fieldOf(error)}`,
      {
        cause: error,
      },
    );
  }
}

/**
 * A card's bytes as JSON: UTF-8 (fatal decoding) and nested at most 64 levels.
 *
 * @example
 * ```ts
 * const value = parseCardJson(response.body, entry.name, showUrl(entry.cardUrl));
 * ```
 * @throws CardTrustError (`card_invalid`)
 */
export function parseCardJson(body: Buffer, entry: string, where: string): unknown {
  let value: unknown;
  try {
    // Fatal decoding: invalid UTF-8 is refused rather than silently replaced.
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
  } catch (error) {
    throw new CardTrustError('card_invalid', entry, `the card at ${where} is not UTF-8 JSON`, { cause: error });
  }
  try {
    assertDepth(value, MAX_CARD_DEPTH);
  } catch (error) {
    throw new CardTrustError('card_invalid', entry, `the card at ${where} nests deeper than ${MAX_CARD_DEPTH} levels`, {
      cause: error,
    });
  }
  return value;
}

/**
 * The field path of a decoding error, when it is plain (`card.skills[0].id`). Paths can embed
 * map keys from the card (a security scheme's name), which are the remote's text: anything
 * but identifier characters, dots and indexes is left out.
 */
function fieldOf(error: unknown): string {
  if (!(error instanceof A2AError)) return '';
  const field = error.field;
  return field !== undefined && /^[A-Za-z0-9_.[\]]{1,120}$/.test(field) ? ` (${field})` : '';
}
