/**
 * The outbound client's transport: the guarded transport (`src/net`) with Airlock's own
 * headers composed into it, so that no request of the outbound client (JSON-RPC calls, SSE
 * streams, card fetches, JWKS fetches) can leave without the hop header. Another Airlock
 * refuses a request that carries it (loop protection), before any call is made.
 *
 * The one place the hop header is set is {@link OUTBOUND_HEADERS}: as the guarded client's
 * `defaultHeaders` ({@link createOutboundTransport}), or, for a transport built elsewhere (a
 * test's fake, an embedder's own), by {@link withHopHeader}.
 *
 * @example
 * ```ts
 * const transport = createOutboundTransport(parseEnvSettings(process.env));
 * const trust = new CardTrust({ client: transport, pins });
 * const client = createClient({ registry, transport, cards: cardResolverFrom(trust) });
 * ```
 */
import { createGuardedClient, type GuardedClient as NetClient } from '../net/index.js';
import type { GuardedClientSettings } from '../net/settings.js';
import { HOP_HEADER } from '../protocol/headers.js';
import type { GuardedClient } from './contracts.js';

/**
 * The headers every outbound request carries, whoever makes it: the hop header (`'1'`).
 *
 * @example
 * ```ts
 * OUTBOUND_HEADERS; // { 'x-airlock-hop': '1' }
 * ```
 */
export const OUTBOUND_HEADERS: Readonly<Record<string, string>> = Object.freeze({ [HOP_HEADER]: '1' });

/** Transports that already compose {@link OUTBOUND_HEADERS}: wrapping them again would add nothing. */
const CARRIES_OUTBOUND_HEADERS = new WeakSet<object>();

/**
 * The guarded transport of the outbound client: `createGuardedClient(settings)` with
 * {@link OUTBOUND_HEADERS} as its `defaultHeaders`, set after the caller's headers on every
 * request and stream.
 *
 * @example
 * ```ts
 * const transport = createOutboundTransport(parseEnvSettings(process.env));
 * ```
 */
export function createOutboundTransport(settings: GuardedClientSettings = {}): NetClient {
  const transport = createGuardedClient({
    ...settings,
    defaultHeaders: { ...settings.defaultHeaders, ...OUTBOUND_HEADERS },
  });
  CARRIES_OUTBOUND_HEADERS.add(transport);
  return transport;
}

/**
 * A transport with {@link OUTBOUND_HEADERS} composed into each `request` and `stream`; one that
 * already composes them (from {@link createOutboundTransport}, or wrapped before) is returned as
 * it is. For transports not built by this module (tests' fakes, an embedder's own).
 *
 * @example
 * ```ts
 * const trust = new CardTrust({ client: withHopHeader(transport), pins, log });
 * ```
 */
export function withHopHeader(transport: GuardedClient): GuardedClient {
  if (CARRIES_OUTBOUND_HEADERS.has(transport)) return transport;
  const wrapped: GuardedClient = {
    // Looked up per call, not captured: a transport's methods may be replaced after wrapping.
    request: (options) => transport.request({ ...options, headers: { ...options.headers, ...OUTBOUND_HEADERS } }),
    stream: (options) => transport.stream({ ...options, headers: { ...options.headers, ...OUTBOUND_HEADERS } }),
  };
  CARRIES_OUTBOUND_HEADERS.add(wrapped);
  return wrapped;
}
