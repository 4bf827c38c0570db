/**
 * Card trust as the outbound client's card resolver: a registry entry turned into what card
 * trust (src/trust) takes, with the entry's timeouts capped when asked.
 *
 * @example
 * ```ts
 * const cards = cardResolverFrom(new CardTrust({ client: transport, pins }));
 * ```
 */
import { DEFAULT_MAX_CARD_BYTES, type CardTrust, type CardTrustEntry } from '../trust/index.js';
import type { CardResolver, TrustedCard } from './contracts.js';
import type { RegistryEntry } from './registry/entry.js';

/**
 * A registry entry as card trust takes it: the entry's URLs, pin, refresh and network
 * setting, its card signature keys and whether a signature is required, the default card size
 * cap, and the entry's timeouts, each cut to `capMs` when given (`airlock agents` gives every
 * card 5 s).
 *
 * @example
 * ```ts
 * await trust.resolve(cardTrustEntry(registry.get('travel'), { capMs: 5000 }));
 * ```
 */
export function cardTrustEntry(
  entry: RegistryEntry,
  options: { capMs?: number; maxCardBytes?: number } = {},
): CardTrustEntry {
  const cap = options.capMs ?? Number.POSITIVE_INFINITY;
  return {
    name: entry.name,
    cardUrl: entry.cardUrl,
    ...(entry.rpcUrl !== undefined && { rpcUrl: entry.rpcUrl }),
    ...(entry.cardSha256 !== undefined && { cardSha256: entry.cardSha256 }),
    cardRefreshS: entry.cardRefreshS,
    maxCardBytes: options.maxCardBytes ?? DEFAULT_MAX_CARD_BYTES,
    privateNetwork: entry.privateNetwork,
    timeouts: {
      connectMs: Math.min(entry.timeouts.connectMs, cap),
      readMs: Math.min(entry.timeouts.readMs, cap),
      totalMs: Math.min(entry.timeouts.totalMs, cap),
    },
    ...(entry.cardKeys !== undefined && { cardKeys: entry.cardKeys }),
    requireSignedCard: entry.requireSignedCard,
  };
}

/**
 * Card trust as the client's {@link CardResolver}.
 *
 * @example
 * ```ts
 * const cards = cardResolverFrom(new CardTrust({ client: transport, pins }));
 * ```
 */
export function cardResolverFrom(
  trust: Pick<CardTrust, 'resolve'>,
  options: { capMs?: number; maxCardBytes?: number } = {},
): CardResolver {
  return {
    resolve: async (entry): Promise<TrustedCard> => trust.resolve(cardTrustEntry(entry, options)),
  };
}
