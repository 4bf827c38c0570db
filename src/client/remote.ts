/**
 * One remote A2A agent as the outbound side talks to it: the endpoint its trusted card names
 * (URL, binding, dialect, tenant, the headers every request carries), and exchanges with it
 * over the guarded transport — whole requests, and SSE streams read under the entry's byte cap.
 * JSON-RPC is spoken here; a remote whose card lists only HTTP+JSON is spoken to by
 * remote-http-json.ts, behind the same methods (callers never branch on the binding).
 * Shared by the outbound client (`OutboundCaller`, call.ts) and the upstream connector
 * (upstream.ts), so that both send exactly the same requests and read answers the same way.
 *
 * Every failure is a {@link CallFailure} with an error type from the fixed vocabulary
 * (result.ts); the remote's own words only ever travel in `remoteText`, for framing.
 *
 * @example
 * ```ts
 * const endpoint = await resolveEndpoint(entry, cards);
 * const rpc = new RemoteRpc(transport);
 * const task = await rpc.getTask(endpoint, 'task-1');
 * ```
 */
import type { Dialect } from '../protocol/dialect.js';
import type { A2ARequest, SendParams, StreamEvent, Task } from '../protocol/model.js';
import { dialectForVersion } from '../protocol/version.js';
import type { CalledBinding } from '../trust/index.js';
import type { CardResolver, GuardedClient, GuardedResponse, GuardedStream, TrustedCard } from './contracts.js';
import type { RegistryEntry } from './registry.js';
import { decodeFromRemote, readJsonEvents } from './stream-frames.js';
import type { ShapeOptions } from './result.js';
import { CallFailure, failureFromRpcError, transportFailure } from './call-failure.js';
import { issuedTokensFor } from './auth/cache.js';
import type { EndpointAuth, OutboundAuth } from './auth/provider.js';
import { HttpJsonBinding } from './remote-http-json.js';
import {
  authFailure,
  checkResponseHead,
  headerOf,
  httpRefusal,
  readFrame,
  renewAfter401,
  requestHeaders,
  type RemoteBinding,
  type StreamOptions,
} from './remote-wire.js';
import type { ExchangeSubject } from './auth/token-exchange.js';
import { decodeUtf8 } from '../protocol/utf8.js';

// Kept here too: they were first exported from this module.
export { CallFailure, errorTypeOf, failureFromRpcError, streamFailure } from './call-failure.js';
export { MAX_SSE_EVENT_BYTES, authFailure } from './remote-wire.js';
export type { RemoteBinding, StreamOptions } from './remote-wire.js';

/**
 * The resolved endpoint of one registry entry, from its trusted card.
 *
 * @example
 * ```ts
 * const endpoint: RemoteEndpoint = await resolveEndpoint(entry, cards);
 * endpoint.streaming; // the card declares capabilities.streaming
 * ```
 */
export interface RemoteEndpoint {
  entry: RegistryEntry;
  /** JSON-RPC when the card lists it, else HTTP+JSON (v1.0); see `chooseInterface`. */
  binding: CalledBinding;
  dialect: Dialect;
  url: string;
  tenant?: string;
  /** Sent on every request: content type, the version header, the entry's bearer token (the transport adds the hop header). */
  headers: Record<string, string>;
  shape: ShapeOptions;
  /** The trusted card declares `capabilities.streaming`. */
  streaming: boolean;
  /** An OAuth entry's token source: its header is added per request, renewed once after a 401. */
  auth?: EndpointAuth;
}

/**
 * The endpoint of `entry`: its card, checked by card trust (pins, origins), gives the URL,
 * the dialect and the tenant; the headers are Airlock's own and the entry's bearer token.
 * Nothing of a caller's request is in them.
 *
 * @example
 * ```ts
 * const endpoint = await resolveEndpoint(registry.get('travel'), cards);
 * ```
 * @throws CallFailure with the card trust error's type (`card_pin_mismatch`, `address_blocked`, …)
 */
export async function resolveEndpoint(
  entry: RegistryEntry,
  cards: CardResolver,
  auth?: OutboundAuth,
  subject?: ExchangeSubject,
): Promise<RemoteEndpoint> {
  let trusted: TrustedCard;
  try {
    trusted = await cards.resolve(entry);
  } catch (error) {
    throw transportFailure(error, 'card_invalid');
  }
  const { url, version } = trusted.endpoint;
  const dialect = dialectForVersion(version);
  // v1.0 clients MUST copy the interface's tenant into every request (§8.3.2); v0.3 has none.
  const tenant = version === '1.0' ? trusted.endpoint.tenant : undefined;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json',
    // A byte cap on the wire bounds what is read only when nothing is decompressed after it.
    'accept-encoding': 'identity',
    // The hop header is the transport's (outbound-transport.ts): no request leaves without it.
  };
  // A missing A2A-Version means 0.3 (§3.6.2), so it is sent only for 1.0.
  if (version === '1.0') headers['a2a-version'] = '1.0';
  if (entry.auth !== undefined) headers.authorization = entry.auth.header();
  let endpointAuth: EndpointAuth | undefined;
  if (entry.oauth !== undefined) {
    if (auth === undefined)
      throw new CallFailure('remote_auth_failed', { detail: 'no token source for an OAuth entry' });
    try {
      endpointAuth = auth.forEndpoint(entry, trusted.card, url, subject);
    } catch (error) {
      throw authFailure(error);
    }
  }
  return {
    entry,
    binding: trusted.endpoint.binding,
    dialect,
    url,
    ...(tenant !== undefined && { tenant }),
    headers,
    shape: shapeOptions(entry),
    streaming: trusted.card.capabilities?.streaming === true,
    ...(endpointAuth !== undefined && { auth: endpointAuth }),
  };
}

/**
 * The endpoint with every request timeout cut to at most `ms`.
 *
 * @example
 * ```ts
 * await rpc.cancelTask(withTotalTimeout(endpoint, 10_000), task.id);
 * ```
 */
export function withTotalTimeout(endpoint: RemoteEndpoint, ms: number): RemoteEndpoint {
  const { timeouts } = endpoint.entry;
  return {
    ...endpoint,
    entry: {
      ...endpoint.entry,
      timeouts: {
        connectMs: Math.min(timeouts.connectMs, ms),
        readMs: Math.min(timeouts.readMs, ms),
        totalMs: Math.min(timeouts.totalMs, ms),
      },
    },
  };
}

/**
 * How results of `entry` are shaped: its name, its reply cap, and its bearer token as a value
 * that must never appear in a result.
 *
 * @example
 * ```ts
 * shapeResult({ kind: 'task', task }, shapeOptions(entry));
 * ```
 */
export function shapeOptions(entry: RegistryEntry): ShapeOptions {
  const shape: ShapeOptions = {
    agent: entry.name,
    maxReplyChars: entry.maxReplyChars,
    ...(entry.auth !== undefined && { secrets: [entry.auth.valueForRedaction()] }),
  };
  if (entry.oauth === undefined) return shape;
  // Read when a result is shaped: the tokens issued by then, including one fetched after this call.
  return Object.defineProperty(shape, 'secrets', { get: () => issuedTokensFor(entry.name), enumerable: true });
}

/**
 * The exchanges with a {@link RemoteEndpoint} over the guarded transport: JSON-RPC 2.0 (request
 * ids count from 1 per instance), or HTTP+JSON when the endpoint's binding is that
 * ({@link HttpJsonBinding}); same headers, caps, timeouts, failures and decoded results.
 *
 * @example
 * ```ts
 * const rpc = new RemoteRpc(transport);
 * const sent = await rpc.call(endpoint, { method: 'send', params }, (r) => endpoint.dialect.decodeSendResult(r));
 * ```
 */
export class RemoteRpc implements RemoteBinding {
  readonly #transport: GuardedClient;
  readonly #httpJson: HttpJsonBinding;
  #rpcId = 0;

  constructor(transport: GuardedClient) {
    this.#transport = transport;
    this.#httpJson = new HttpJsonBinding(transport);
  }

  /**
   * One JSON-RPC exchange: encode, send, check the envelope, decode. `signal` aborts the
   * request (the transport then reports `network_error`, or `request_timeout` for a timeout
   * reason).
   *
   * @example
   * ```ts
   * const task = await rpc.call(endpoint, { method: 'get', params: { id } }, (r) => endpoint.dialect.decodeTask(r));
   * ```
   */
  async call<T>(
    endpoint: RemoteEndpoint,
    request: A2ARequest,
    decode: (result: unknown) => T,
    signal?: AbortSignal,
  ): Promise<T> {
    if (endpoint.binding === 'HTTP+JSON') return this.#httpJson.call(endpoint, request, decode, signal);
    const encoded = endpoint.dialect.encodeRequest(request);
    const id = this.#nextId();
    const { entry } = endpoint;
    let response: GuardedResponse;
    // A 401 to an OAuth token renews it and retries exactly once.
    for (let attempt = 0; ; attempt += 1) {
      const headers = await requestHeaders(endpoint);
      try {
        response = await this.#transport.request({
          method: 'POST',
          url: endpoint.url,
          headers,
          body: JSON.stringify({ jsonrpc: '2.0', id, method: encoded.method, params: encoded.params }),
          maxResponseBytes: entry.maxResponseBytes,
          timeouts: entry.timeouts,
          privateNetwork: entry.privateNetwork,
          ...(signal !== undefined && { signal }),
        });
      } catch (error) {
        throw transportFailure(error, 'network_error');
      }
      if (!renewAfter401(endpoint, response.status, attempt)) break;
    }
    checkResponseHead(response);
    const ok = response.status >= 200 && response.status < 300;
    let frame: unknown;
    try {
      frame = JSON.parse(decodeUtf8(response.body));
    } catch {
      throw new CallFailure(ok ? 'invalid_response' : 'remote_error', {
        detail: ok ? 'the remote did not answer JSON' : `the remote answered HTTP ${response.status}`,
      });
    }
    const record =
      frame !== null && typeof frame === 'object' && !Array.isArray(frame)
        ? (frame as Record<string, unknown>)
        : undefined;
    if (!ok && record?.jsonrpc === undefined) throw httpRefusal(response.status, record);
    if (record === undefined || record.jsonrpc !== '2.0') {
      throw new CallFailure('invalid_response', { detail: 'the remote did not answer JSON-RPC 2.0' });
    }
    if (record.error !== undefined) throw failureFromRpcError(endpoint.dialect.decodeError(record.error));
    // An error may come back with a null id (the server could not read ours); a result may not.
    if (record.id !== id)
      throw new CallFailure('invalid_response', { detail: 'the response id does not match the request' });
    if (!ok) throw new CallFailure('remote_error', { detail: `the remote answered HTTP ${response.status}` });
    if (record.result === undefined)
      throw new CallFailure('invalid_response', { detail: 'the response has no result' });
    return decodeFromRemote(decode, record.result);
  }

  /**
   * GetTask; an answer about another task is `invalid_response`.
   *
   * @example
   * ```ts
   * const task = await rpc.getTask(endpoint, 'task-1');
   * ```
   */
  async getTask(endpoint: RemoteEndpoint, id: string, signal?: AbortSignal): Promise<Task> {
    const task = await this.call(
      endpoint,
      { method: 'get', params: { id, ...(endpoint.tenant !== undefined && { tenant: endpoint.tenant }) } },
      (result) => endpoint.dialect.decodeTask(result),
      signal,
    );
    if (task.id !== id) throw new CallFailure('invalid_response', { detail: 'the remote answered about another task' });
    return task;
  }

  /**
   * CancelTask: the task as the remote reports it after the cancel.
   *
   * @example
   * ```ts
   * const canceled = await rpc.cancelTask(withTotalTimeout(endpoint, 10_000), 'task-1');
   * ```
   */
  async cancelTask(endpoint: RemoteEndpoint, id: string): Promise<Task> {
    return this.call(
      endpoint,
      { method: 'cancel', params: { id, ...(endpoint.tenant !== undefined && { tenant: endpoint.tenant }) } },
      (result) => endpoint.dialect.decodeTask(result),
    );
  }

  /**
   * SendStreamingMessage: sends the request through the guarded transport's `stream()`, with
   * `max_response_bytes` as the cap over the whole stream and `options.totalMs` as its time
   * limit, and checks the answer is an event stream (a JSON-RPC error instead is thrown as
   * one). Resolves once the stream is open, with its events, decoded: an event that is not
   * JSON-RPC, answers another request, or does not decode ends the iteration with
   * `invalid_response`; a JSON-RPC error event with its failure (`fromRpcError`); a cut or
   * timeout with the transport's type (see {@link streamFailure}). Leaving the iteration early
   * closes the stream.
   *
   * @example
   * ```ts
   * const events = await rpc.openStream(endpoint, params, { totalMs: 30_000 });
   * for await (const event of events) if (event.kind === 'status-update' && event.final) break;
   * ```
   */
  async openStream(
    endpoint: RemoteEndpoint,
    params: SendParams,
    options: StreamOptions,
  ): Promise<AsyncGenerator<StreamEvent, void, undefined>> {
    if (endpoint.binding === 'HTTP+JSON') return this.#httpJson.openStream(endpoint, params, options);
    const { entry, dialect } = endpoint;
    const encoded = dialect.encodeRequest({ method: 'stream', params });
    const id = this.#nextId();
    const totalMs = Math.max(1, options.totalMs);
    let response: GuardedStream;
    for (let attempt = 0; ; attempt += 1) {
      const headers = await requestHeaders(endpoint);
      try {
        response = await this.#transport.stream({
          method: 'POST',
          url: endpoint.url,
          headers: { ...headers, accept: 'text/event-stream, application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', id, method: encoded.method, params: encoded.params }),
          maxResponseBytes: entry.maxResponseBytes,
          timeouts: {
            connectMs: Math.min(entry.timeouts.connectMs, totalMs),
            readMs: Math.min(entry.timeouts.readMs, totalMs),
            totalMs,
          },
          privateNetwork: entry.privateNetwork,
          ...(options.signal !== undefined && { signal: options.signal }),
        });
      } catch (error) {
        throw transportFailure(error, 'network_error');
      }
      if (!renewAfter401(endpoint, response.status, attempt)) break;
      // The refused answer's body is left unread: drain it so the connection is released.
      for await (const chunk of response.body) void chunk;
    }
    checkResponseHead(response);
    const ok = response.status >= 200 && response.status < 300;
    const contentType = (headerOf(response, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (contentType !== 'text/event-stream') {
      // A remote may refuse a stream with a plain JSON-RPC error.
      const frame = await readFrame(response.body);
      if (frame?.jsonrpc === '2.0' && frame.error !== undefined) {
        throw failureFromRpcError(dialect.decodeError(frame.error));
      }
      if (!ok) throw httpRefusal(response.status, frame);
      throw new CallFailure(ok ? 'invalid_response' : 'remote_error', {
        detail: ok ? 'the remote did not answer with an event stream' : `the remote answered HTTP ${response.status}`,
      });
    }
    if (!ok) throw new CallFailure('remote_error', { detail: `the remote answered HTTP ${response.status}` });
    return decodeEvents(response.body, endpoint, id);
  }

  #nextId(): number {
    this.#rpcId += 1;
    return this.#rpcId;
  }
}

/** The decoded events of an open stream (see {@link RemoteRpc.openStream}). */
async function* decodeEvents(
  body: AsyncIterable<Buffer>,
  endpoint: RemoteEndpoint,
  id: number,
): AsyncGenerator<StreamEvent, void, undefined> {
  for await (const { frame } of readJsonEvents(body, endpoint)) {
    if (frame === undefined || frame.jsonrpc !== '2.0') {
      throw new CallFailure('invalid_response', { detail: 'a stream event is not JSON-RPC 2.0' });
    }
    if (frame.error !== undefined) throw failureFromRpcError(endpoint.dialect.decodeError(frame.error));
    if (frame.id !== id) {
      throw new CallFailure('invalid_response', { detail: 'a stream event id does not match the request' });
    }
    yield decodeFromRemote((value) => endpoint.dialect.decodeStreamEvent(value), frame.result);
  }
}
