/**
 * The two collaborators the outbound client needs, as minimal structural types: the guarded
 * transport (`src/net/`) and the card resolver (`src/trust/`). Declaring them here keeps
 * `src/client/` compiling on its own and lets tests plug in a loopback transport and a stub
 * resolver; the real implementations satisfy these shapes without importing them.
 *
 * @example
 * ```ts
 * const transport: GuardedClient = { request: (o) => guarded.request(o), stream: (o) => guarded.stream(o) };
 * const cards: CardResolver = { resolve: async (entry) => trust.resolve(entry) };
 * ```
 */
import type { GuardedClient as NetGuardedClient, OutboundErrorCode } from '../net/index.js';
import type { TrustedCard } from '../trust/index.js';
import type { RegistryEntry } from './registry.js';

/**
 * One HTTP exchange through the guarded transport.
 *
 * @example
 * ```ts
 * const options: GuardedRequestOptions = { method: 'POST', url, body, maxResponseBytes: 1 << 20, timeouts };
 * ```
 */
export type { GuardedRequestOptions, GuardedResponse, GuardedStream } from '../net/index.js';

/**
 * What calls need of the transport: whole requests, and streamed responses (SSE, read under
 * the same byte cap and total timeout), so a test can pass a plain object.
 */
export type GuardedClient = Pick<NetGuardedClient, 'request' | 'stream'>;

export const TRANSPORT_ERROR_CODES = [
  'insecure_url',
  'url_has_credentials',
  'address_blocked',
  'redirect_refused',
  'response_too_large',
  'request_timeout',
  'network_error',
  'invalid_response',
  'proxy_refused',
] as const satisfies readonly OutboundErrorCode[];

/**
 * One of {@link TRANSPORT_ERROR_CODES}.
 *
 * @example
 * ```ts
 * const code: TransportErrorCode = 'address_blocked';
 * ```
 */
export type TransportErrorCode = (typeof TRANSPORT_ERROR_CODES)[number];

/**
 * A card the trust layer accepted, and the endpoint to use: the card's own JSON-RPC interface,
 * on the card URL's origin or (when the operator set one) the registry's `rpc_url` origin.
 *
 * @example
 * ```ts
 * const { endpoint } = await cards.resolve(entry); // { url: 'https://…/rpc', version: '1.0' }
 * ```
 */
export type { TrustedCard } from '../trust/index.js';

export interface CardResolver {
  resolve(entry: RegistryEntry): Promise<TrustedCard>;
}

/**
 * A log line for operators: a fixed event name and ids, never content or secrets.
 *
 * @example
 * ```ts
 * const log: ClientLog = (event, fields) => logger.warn(fields, event);
 * ```
 */
export type ClientLog = (event: string, fields: Readonly<Record<string, string | number>>) => void;
