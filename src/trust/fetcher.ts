/**
 * What card trust needs of the guarded HTTP client (`src/net`), as structural types: the
 * request it makes, the response it reads, and how it reads a transport error's code. Card
 * fetches (`card.ts`) and key set fetches (`signing/fetch-keys.ts`) both speak this, so this
 * module compiles without `src/net` and neither fetcher depends on the other.
 *
 * @example
 * ```ts
 * const client: CardFetcher = { request: (options) => guarded.request(options) };
 * ```
 */

/**
 * The request options card trust passes to the guarded client; a structural subset of
 * `src/net`'s `GuardedRequestOptions`, so this module compiles on its own.
 *
 * @example
 * ```ts
 * const options: CardRequestOptions = { method: 'GET', url, maxResponseBytes: 262144, timeouts };
 * ```
 */
export interface CardRequestOptions {
  method: 'GET' | 'POST';
  url: string;
  headers?: Record<string, string>;
  body?: string;
  maxResponseBytes: number;
  timeouts: RequestTimeouts;
  privateNetwork?: boolean;
  signal?: AbortSignal;
}

/**
 * Connect, read and total timeouts in milliseconds, as the guarded client takes them.
 *
 * @example
 * ```ts
 * const timeouts: RequestTimeouts = { connectMs: 5000, readMs: 60000, totalMs: 120000 };
 * ```
 */
export interface RequestTimeouts {
  connectMs: number;
  readMs: number;
  totalMs: number;
}

/**
 * A response as the guarded client returns it (headers lower-cased, body fully read).
 *
 * @example
 * ```ts
 * const response: CardResponse = { status: 200, headers: {}, body: Buffer.from('{}') };
 * ```
 */
export interface CardResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * What card trust needs of the guarded HTTP client (`src/net`): one request method that
 * enforces `maxResponseBytes` while reading and throws an `OutboundError` (with a `code`
 * such as `response_too_large`) on failure.
 *
 * @example
 * ```ts
 * const client: CardFetcher = { request: async () => ({ status: 200, headers: {}, body }) };
 * ```
 */
export interface CardFetcher {
  request(options: CardRequestOptions): Promise<CardResponse>;
}

/**
 * The `code` of an `OutboundError`, read structurally so `src/net` is not a compile-time dependency.
 *
 * @example
 * ```ts
 * if (outboundCode(error) === 'response_too_large') refuse();
 * ```
 */
export function outboundCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}
