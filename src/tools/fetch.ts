/**
 * The `fetch` a Streamable HTTP tool server is reached with: built on `net/`'s guarded client,
 * never on the global fetch. So every request to a tool server gets the outbound rules — https,
 * or http to loopback only; every resolved address checked at connect (private addresses only
 * with `privateNetwork` and AIRLOCK_PRIVATE_ALLOW); no redirects; no proxy variables; identity
 * encoding; a byte cap and a deadline per response.
 *
 * Only POST goes out (each JSON-RPC message; the answer is JSON or an SSE stream). The SDK's
 * optional GET (a server-initiated event stream) and DELETE (session end) are answered `405`
 * here without a request: Airlock needs neither, and a long-lived stream would outlive every cap.
 *
 * @example
 * ```ts
 * const fetch = guardedFetch(createGuardedClient(parseEnvSettings(process.env)), {
 *   privateNetwork: false, maxResponseBytes: 4 << 20, timeoutMs: 30_000,
 * });
 * const transport = new StreamableHTTPClientTransport(new URL(url), { fetch });
 * ```
 */
import type { GuardedClient } from '../net/index.js';

/**
 * What the MCP SDK's transports accept as `fetch`.
 *
 * @example
 * ```ts
 * const fetch: FetchLike = guardedFetch(client, options);
 * ```
 */
export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * Options of {@link guardedFetch}.
 *
 * @example
 * ```ts
 * const options: GuardedFetchOptions = { privateNetwork: false, maxResponseBytes: 1 << 20, timeoutMs: 10_000 };
 * ```
 */
export interface GuardedFetchOptions {
  readonly privateNetwork: boolean;
  /** Bytes of one response body, counted while it streams. */
  readonly maxResponseBytes: number;
  /** The whole request and response (the per-call timeout). */
  readonly timeoutMs: number;
  /** The `Authorization` header value, when the server has a token. */
  readonly authorization?: string;
}

/** Statuses whose Response must have no body. */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * A `fetch` over the guarded client (see the module comment). Errors of the guarded client
 * (`OutboundError`: address_blocked, insecure_url, redirect_refused, response_too_large,
 * request_timeout, …) reject the returned promise (or error the body stream) as they are.
 *
 * @example
 * ```ts
 * const response = await guardedFetch(client, options)('http://127.0.0.1:7777/mcp', { method: 'POST', body: '{}' });
 * ```
 */
export function guardedFetch(client: GuardedClient, options: GuardedFetchOptions): FetchLike {
  return async (url, init) => {
    const method = (init?.method ?? 'GET').toUpperCase();
    if (method !== 'POST') {
      return new Response(null, { status: 405, headers: { allow: 'POST' } });
    }
    const body = init?.body;
    if (body !== undefined && body !== null && typeof body !== 'string') {
      throw new TypeError('a tool server request body must be a string');
    }
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, name) => {
      headers[name] = value;
    });
    if (options.authorization !== undefined) headers.authorization = options.authorization;
    const timeoutMs = options.timeoutMs;
    const opened = await client.stream({
      method: 'POST',
      url: String(url),
      headers,
      ...(typeof body === 'string' && { body }),
      maxResponseBytes: options.maxResponseBytes,
      timeouts: { connectMs: Math.min(timeoutMs, 10_000), readMs: timeoutMs, totalMs: timeoutMs },
      privateNetwork: options.privateNetwork,
      ...(init?.signal !== undefined && init.signal !== null && { signal: init.signal }),
    });
    const responseHeaders = new Headers();
    for (const [name, value] of Object.entries(opened.headers)) responseHeaders.set(name, value);
    if (NULL_BODY.has(opened.status)) {
      for await (const _chunk of opened.body) {
        // drained: a null-body status carries nothing
      }
      return new Response(null, { status: opened.status, headers: responseHeaders });
    }
    return new Response(toReadable(opened.body), { status: opened.status, headers: responseHeaders });
  };
}

/** A web stream over the guarded body: pulled on demand, so the byte cap and deadline still hold. */
function toReadable(body: AsyncIterable<Buffer>): ReadableStream<Uint8Array> {
  const iterator = body[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await iterator.next();
        if (next.done === true) controller.close();
        else controller.enqueue(new Uint8Array(next.value));
      } catch (error) {
        controller.error(error);
      }
    },
    async cancel() {
      await iterator.return?.();
    },
  });
}
