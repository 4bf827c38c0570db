/**
 * The two collaborators the outbound client needs, as minimal structural types: the guarded
 * transport (`src/net/`) and the card resolver (`src/trust/`). Declaring them here keeps
 * `src/client/` compiling on its own and lets tests plug in a loopback transport and a stub
 * resolver; the real implementations satisfy these shapes without importing them.
 *
 * @example
 * ```ts
 * const transport: GuardedClient = { request: async (o) => guarded.request(o) };
 * const cards: CardResolver = { resolve: async (entry) => trust.resolve(entry) };
 * ```
 */
import type { AgentCard } from '../protocol/model.js';
import type { RegistryEntry } from './registry.js';

/**
 * One HTTP exchange through the guarded transport.
 *
 * @example
 * ```ts
 * const options: GuardedRequestOptions = { method: 'POST', url, body, maxResponseBytes: 1 << 20, timeouts };
 * ```
 */
export interface GuardedRequestOptions {
  method: 'GET' | 'POST';
  url: string;
  headers?: Record<string, string>;
  body?: string;
  /** The body is read up to this many bytes; more is `response_too_large`. */
  maxResponseBytes: number;
  timeouts: { connectMs: number; readMs: number; totalMs: number };
  /** The entry may reach the hosts in AIRLOCK_PRIVATE_ALLOW. */
  privateNetwork?: boolean;
  signal?: AbortSignal;
}

/**
 * A complete response; header names in lower case.
 *
 * @example
 * ```ts
 * const text = response.body.toString('utf8');
 * ```
 */
export interface GuardedResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * The guarded HTTP client. Failures throw an Error whose `code` is one of
 * {@link TRANSPORT_ERROR_CODES}.
 *
 * @example
 * ```ts
 * const response = await transport.request({ method: 'POST', url, body, maxResponseBytes, timeouts });
 * ```
 */
export interface GuardedClient {
  request(options: GuardedRequestOptions): Promise<GuardedResponse>;
}

/**
 * The `code` values the guarded transport throws with.
 *
 * @example
 * ```ts
 * TRANSPORT_ERROR_CODES.includes((error as { code?: string }).code as never);
 * ```
 */
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
] as const;

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
 * A card the trust layer accepted, and the endpoint to use: JSON-RPC, on an allowed origin,
 * the registry's `rpc_url` when the operator named one.
 *
 * @example
 * ```ts
 * const { endpoint } = await cards.resolve(entry); // { url: 'https://…/rpc', version: '1.0' }
 * ```
 */
export interface TrustedCard {
  card: AgentCard;
  digest: string;
  /** `tenant`: the chosen v1.0 interface's, copied into every request (§8.3.2). */
  endpoint: { url: string; version: '1.0' | '0.3'; tenant?: string };
  fetchedAt: number;
}

/**
 * Resolves an entry's card (fetch, verify, pin). Failures throw an Error whose `code` is
 * `card_invalid`, `card_pin_mismatch` or `card_signature_invalid` (or a transport code).
 *
 * @example
 * ```ts
 * const trusted = await cards.resolve(registry.get('travel'));
 * ```
 */
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
