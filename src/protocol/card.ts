/**
 * Agent cards in both shapes (digest §6): `card/encode.ts` writes the v1.0 and v0.3 cards
 * Airlock serves, `card/decode.ts` reads a remote's card in either shape. This file is the
 * one import for cards (server, client, trust and CLI code all use it).
 *
 * @example
 * ```ts
 * const wire = encodeCardV10(card);     // serve with A2A-Version: 1.0
 * const same = decodeAnyCard(wire);     // deep-equals card
 * ```
 */
export { encodeCardV03, encodeCardV10, encodeInterfaceV10 } from './card/encode.js';
export { decodeAnyCard } from './card/decode.js';
