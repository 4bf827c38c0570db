/**
 * The outbound client's transport: the guarded transport (`src/net`) with Airlock's own
 * headers composed into it, so that no request of the outbound client (JSON-RPC calls, SSE
 * streams, card fetches, JWKS fetches) leaves without the hop header: the chain of Airlock
 * instances the request passed (see `protocol/headers.ts`). Another Airlock serves a peer's
 * call and refuses a loop (its own id in the chain) or a chain as long as its `limits.maxHops`.
 *
 * An outbound call that starts here (the CLI, the MCP server, the library) carries this
 * process's instance id ({@link processInstanceId}, or the gateway's configured
 * `server.instanceId`); a relay (an `a2a` backend) sends the chain its inbound request came with,
 * plus its own id, on each call (`client/upstream.ts`). The header is set in one place:
 * {@link outboundHeaders}, as the guarded client's `defaultHeaders`
 * ({@link createOutboundTransport}), or, for a transport built elsewhere (a test's fake, an
 * embedder's own), by {@link withHopHeader}.
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
import { randomBytes } from 'node:crypto';
import { HOP_HEADER } from '../protocol/headers.js';
import type { GuardedClient } from './contracts.js';
import { SpanKind, type Span } from '@opentelemetry/api';
import { errorCode } from '../errors/index.js';
import type { GuardedRequestOptions } from '../net/index.js';
import { failSpan, SPAN, startChildSpan, traceparentOf } from '../telemetry/tracer.js';

/** This process's instance id, made on first use (`airlock-` + 12 random base64url characters). */
let ownInstanceId: string | undefined;

/**
 * This process's instance id: the hop chain's entry of a call that starts here, and a gateway's
 * own id unless `server.instanceId` names one. Random per process: two gateways started from
 * one folder (two examples side by side) are two instances, not one.
 *
 * @example
 * ```ts
 * processInstanceId(); // 'airlock-3q2x9LmA0bZc'
 * ```
 */
export function processInstanceId(): string {
  ownInstanceId ??= `airlock-${randomBytes(9).toString('base64url')}`;
  return ownInstanceId;
}

/**
 * The headers every outbound request carries: the hop header, here the chain of one instance
 * (`instanceId`, by default this process's).
 *
 * @example
 * ```ts
 * outboundHeaders('gw-a-1f3c9d2e'); // { 'x-airlock-hop': 'gw-a-1f3c9d2e' }
 * ```
 */
export function outboundHeaders(instanceId: string = processInstanceId()): Readonly<Record<string, string>> {
  return { [HOP_HEADER]: instanceId };
}

/** Transports that already compose the outbound headers: wrapping them again would add nothing. */
const CARRIES_OUTBOUND_HEADERS = new WeakSet<object>();

/**
 * The guarded transport of the outbound client: `createGuardedClient(settings)` with
 * {@link outboundHeaders} of `instanceId` as its `defaultHeaders`, set after the caller's
 * headers on every request and stream. A relay's transport (`instanceId: null`) sets no
 * default: each of its requests names its own chain.
 *
 * @example
 * ```ts
 * const transport = createOutboundTransport(parseEnvSettings(process.env));
 * ```
 */
export function createOutboundTransport(
  settings: GuardedClientSettings = {},
  instanceId: string | null = processInstanceId(),
): NetClient {
  const transport = traced(
    createGuardedClient({
      ...settings,
      defaultHeaders: { ...settings.defaultHeaders, ...(instanceId !== null && outboundHeaders(instanceId)) },
    }),
  );
  if (instanceId === null) return transport;
  CARRIES_OUTBOUND_HEADERS.add(transport);
  return transport;
}

/**
 * A transport with {@link outboundHeaders} of `instanceId` composed into each `request` and
 * `stream`; one that already composes them (from {@link createOutboundTransport}, or wrapped
 * before) is returned as it is. For transports not built by this module (tests' fakes, an
 * embedder's own), and for a relay's card fetches.
 *
 * @example
 * ```ts
 * const trust = new CardTrust({ client: withHopHeader(transport), pins, log });
 * ```
 */
export function withHopHeader(transport: GuardedClient, instanceId: string = processInstanceId()): GuardedClient {
  if (CARRIES_OUTBOUND_HEADERS.has(transport)) return transport;
  const headers = outboundHeaders(instanceId);
  const wrapped: GuardedClient = {
    // Looked up per call, not captured: a transport's methods may be replaced after wrapping.
    request: (options) => transport.request({ ...options, headers: { ...options.headers, ...headers } }),
    stream: (options) => transport.stream({ ...options, headers: { ...options.headers, ...headers } }),
  };
  CARRIES_OUTBOUND_HEADERS.add(wrapped);
  return wrapped;
}

/**
 * The transport with a CLIENT span (`airlock.outbound`) per request and stream when a tracer
 * is registered: a child of the active span (an `a2a` backend's turn), and the request carries
 * a `traceparent` naming this span, never the inbound caller's (nor its tracestate or baggage,
 * which nothing forwards). Without a tracer, each call goes straight through.
 */
function traced(transport: NetClient): NetClient {
  return {
    request: (options) => {
      const span = startChildSpan(SPAN.outbound, SpanKind.CLIENT);
      if (span === undefined) return transport.request(options);
      return transport.request(withSpan(options, span)).then(
        (response) => ended(span, response.status, response),
        (error: unknown) => failed(span, error),
      );
    },
    stream: (options) => {
      const span = startChildSpan(SPAN.outbound, SpanKind.CLIENT);
      if (span === undefined) return transport.stream(options);
      return transport.stream(withSpan(options, span)).then(
        (response) => ({ ...response, body: endAfter(response.body, span, response.status) }),
        (error: unknown) => failed(span, error),
      );
    },
    close: () => transport.close(),
  };
}

/** The request with the span's traceparent; the span notes the method and the server (host, port). */
function withSpan(options: GuardedRequestOptions, span: Span): GuardedRequestOptions {
  if (span.isRecording()) {
    // The origin only: a path or query may carry a credential.
    const url = URL.canParse(options.url) ? new URL(options.url) : undefined;
    span.setAttributes({
      'http.request.method': options.method,
      ...(url !== undefined && {
        'url.scheme': url.protocol.slice(0, -1),
        'server.address': url.hostname,
        'server.port': Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
      }),
    });
  }
  const traceparent = traceparentOf(span);
  return traceparent === undefined ? options : { ...options, headers: { ...options.headers, traceparent } };
}

function ended<T>(span: Span, status: number, value: T): T {
  span.setAttribute('http.response.status_code', status);
  if (status >= 400) failSpan(span, status);
  span.end();
  return value;
}

function failed(span: Span, error: unknown): never {
  failSpan(span, errorCode(error) ?? 'network_error');
  span.end();
  throw error;
}

/** A streamed body whose span ends with it (read to the end, failed, or left early). */
async function* endAfter(body: AsyncIterable<Buffer>, span: Span, status: number): AsyncIterable<Buffer> {
  let failure: unknown;
  try {
    yield* body;
  } catch (error) {
    failure = error;
    throw error;
  } finally {
    if (failure === undefined) ended(span, status, undefined);
    else {
      failSpan(span, errorCode(failure) ?? 'network_error');
      span.end();
    }
  }
}
