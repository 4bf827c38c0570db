/**
 * The HTTP+JSON binding (v1.0 §11) of the outbound client, for a remote whose card lists no
 * JSON-RPC interface. Requests are rendered by the protocol's own HTTP+JSON codec
 * (`encodeHttpJsonRequest`: `POST /message:send`, `POST /message:stream`, `GET /tasks/{id}`,
 * `POST /tasks/{id}:cancel`) below the interface URL; results and stream events are the v1.0
 * messages the JSON-RPC binding carries in `result`, so the same dialect decodes them.
 *
 * Everything else is the JSON-RPC path's: the guarded transport (resolved-address checks,
 * https, no redirects, byte caps, timeouts), the endpoint's headers (A2A-Version, bearer or
 * OAuth, renewed once after a 401), no compression, the SSE reader's per-event cap. An error
 * status with a `google.rpc.Status` body (its ErrorInfo naming the A2A error) fails exactly as
 * the same JSON-RPC error does (`task_not_found`, `remote_error` with the remote's words framed).
 *
 * @example
 * ```ts
 * const rest = new HttpJsonBinding(transport);
 * const task = await rest.call(endpoint, { method: 'get', params: { id } }, (r) => endpoint.dialect.decodeTask(r));
 * ```
 */
import { encodeHttpJsonRequest } from '../protocol/http-json/index.js';
import type { A2ARequest, SendParams, StreamEvent } from '../protocol/model.js';
import { decodeRpcError } from '../protocol/validation/remote-errors.js';
import { CallFailure, failureFromRpcError, transportFailure } from './call-failure.js';
import type { GuardedClient, GuardedRequestOptions, GuardedResponse, GuardedStream } from './contracts.js';
import type { RemoteEndpoint } from './remote.js';
import {
  checkResponseHead,
  headerOf,
  httpRefusal,
  MAX_REFUSAL_CHARS,
  readFrame,
  renewAfter401,
  requestHeaders,
  type RemoteBinding,
  type StreamOptions,
} from './remote-wire.js';
import { decodeFromRemote, readJsonEvents } from './stream-frames.js';
import { decodeUtf8 } from '../protocol/utf8.js';

/**
 * One request as it goes on the wire: method, full URL and JSON body.
 *
 * @example
 * ```ts
 * httpJsonWire(endpoint, { method: 'cancel', params: { id: 't 1' } });
 * // { method: 'POST', url: 'https://a.example/rest/tasks/t%201:cancel', body: '{}' }
 * ```
 */
export interface HttpJsonWire {
  method: 'GET' | 'POST';
  url: string;
  body?: string;
}

/**
 * `request` rendered for the endpoint's HTTP+JSON interface: the codec's path below the
 * interface URL, the tenant (v1.0 copies the card's into every request) as the `/{tenant}`
 * path prefix of `a2a.proto`'s additional bindings instead of a body or query field.
 *
 * @example
 * ```ts
 * httpJsonWire({ url: 'https://a.example/rest', tenant: 'acme' }, { method: 'get', params: { id: 't-1', tenant: 'acme' } }).url;
 * // 'https://a.example/rest/acme/tasks/t-1'
 * ```
 */
export function httpJsonWire(endpoint: Pick<RemoteEndpoint, 'url' | 'tenant'>, request: A2ARequest): HttpJsonWire {
  const encoded = encodeHttpJsonRequest(request);
  const base = endpoint.url.replace(/\/+$/, '');
  const tenant =
    endpoint.tenant !== undefined && endpoint.tenant !== '' ? `/${encodeURIComponent(endpoint.tenant)}` : '';
  const query = new URLSearchParams(encoded.query);
  if (tenant !== '') query.delete('tenant');
  const url = `${base}${tenant}${encoded.path}${query.size > 0 ? `?${query.toString()}` : ''}`;
  if (encoded.method === 'GET') return { method: 'GET', url };
  const body = { ...encoded.body };
  if (tenant !== '') delete body.tenant;
  return { method: 'POST', url, body: JSON.stringify(body) };
}

/**
 * A refusal over HTTP+JSON: a `google.rpc.Status` body whose ErrorInfo names an A2A error
 * fails as that JSON-RPC error does (TaskNotFound → `task_not_found`, InvalidAgentResponse →
 * `invalid_response`, anything else `remote_error` with the remote's words to frame); a body
 * naming no A2A error is an HTTP refusal (`remote_error`), as on the JSON-RPC path.
 *
 * @example
 * ```ts
 * restFailure(404, { error: { code: 404, status: 'NOT_FOUND', message: 'Task not found', details: [errorInfo] } });
 * // CallFailure('task_not_found')
 * ```
 */
export function restFailure(status: number, body: Record<string, unknown> | undefined): CallFailure {
  const error = body?.error;
  const record =
    error !== null && typeof error === 'object' && !Array.isArray(error)
      ? (error as Record<string, unknown>)
      : undefined;
  const details = record?.details;
  const namesA2AError =
    Array.isArray(details) &&
    details.some(
      (d: unknown) =>
        d !== null &&
        typeof d === 'object' &&
        (d as Record<string, unknown>)['@type'] === 'type.googleapis.com/google.rpc.ErrorInfo',
    );
  if (record === undefined || !namesA2AError) return httpRefusal(status, body);
  // The HTTP code is no JSON-RPC number: the ErrorInfo reason names the error.
  const a2a = decodeRpcError({ code: status, message: record.message, data: details });
  const failure = failureFromRpcError(a2a);
  if (failure.errorType !== 'remote_error') return failure;
  return new CallFailure('remote_error', {
    remoteText: `HTTP ${status} ${a2a.code}: ${a2a.message.slice(0, MAX_REFUSAL_CHARS)}`,
    fromRpcError: true,
  });
}

/**
 * HTTP+JSON over the guarded transport, against a {@link RemoteEndpoint} whose binding is
 * `HTTP+JSON`. Used through `RemoteRpc`, which hands it such endpoints.
 *
 * @example
 * ```ts
 * const events = await new HttpJsonBinding(transport).openStream(endpoint, params, { totalMs: 30_000 });
 * ```
 */
export class HttpJsonBinding implements RemoteBinding {
  readonly #transport: GuardedClient;

  constructor(transport: GuardedClient) {
    this.#transport = transport;
  }

  /**
   * One request: render, send, check the head, decode the body as the JSON-RPC `result` is.
   *
   * @example
   * ```ts
   * const sent = await rest.call(endpoint, { method: 'send', params }, (r) => endpoint.dialect.decodeSendResult(r));
   * ```
   */
  async call<T>(
    endpoint: RemoteEndpoint,
    request: A2ARequest,
    decode: (result: unknown) => T,
    signal?: AbortSignal,
  ): Promise<T> {
    const { entry } = endpoint;
    const response = await this.#send(endpoint, httpJsonWire(endpoint, request), (options) =>
      this.#transport.request({ ...options, timeouts: entry.timeouts, ...(signal !== undefined && { signal }) }),
    );
    checkResponseHead(response);
    const ok = response.status >= 200 && response.status < 300;
    let body: unknown;
    try {
      body = JSON.parse(decodeUtf8(response.body));
    } catch {
      throw new CallFailure(ok ? 'invalid_response' : 'remote_error', {
        detail: ok ? 'the remote did not answer JSON' : `the remote answered HTTP ${response.status}`,
      });
    }
    const record =
      body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
    if (!ok) throw restFailure(response.status, record);
    if (record === undefined)
      throw new CallFailure('invalid_response', { detail: 'the remote did not answer an object' });
    return decodeFromRemote(decode, record);
  }

  /**
   * `POST /message:stream`, read as JSON-RPC streams are: `max_response_bytes` over the whole
   * stream, `options.totalMs` as its time limit, each SSE `data:` a v1.0 StreamResponse; an
   * error event (a `google.rpc.Status`) ends the iteration with its failure.
   *
   * @example
   * ```ts
   * for await (const event of await rest.openStream(endpoint, params, { totalMs })) …
   * ```
   */
  async openStream(
    endpoint: RemoteEndpoint,
    params: SendParams,
    options: StreamOptions,
  ): Promise<AsyncGenerator<StreamEvent, void, undefined>> {
    const { entry } = endpoint;
    const totalMs = Math.max(1, options.totalMs);
    const response = await this.#send(
      endpoint,
      httpJsonWire(endpoint, { method: 'stream', params }),
      (request) =>
        this.#transport.stream({
          ...request,
          headers: { ...request.headers, accept: 'text/event-stream, application/json' },
          timeouts: {
            connectMs: Math.min(entry.timeouts.connectMs, totalMs),
            readMs: Math.min(entry.timeouts.readMs, totalMs),
            totalMs,
          },
          ...(options.signal !== undefined && { signal: options.signal }),
        }),
      // The refused answer's body is left unread: drain it so the connection is released.
      async (refused) => {
        for await (const chunk of refused.body) void chunk;
      },
    );
    checkResponseHead(response);
    const ok = response.status >= 200 && response.status < 300;
    const contentType = (headerOf(response, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (contentType !== 'text/event-stream') {
      const body = await readFrame(response.body);
      if (!ok) throw restFailure(response.status, body);
      throw new CallFailure('invalid_response', { detail: 'the remote did not answer with an event stream' });
    }
    if (!ok) throw new CallFailure('remote_error', { detail: `the remote answered HTTP ${response.status}` });
    return decodeRestEvents(response.body, endpoint);
  }

  /** Sends with the endpoint's headers; a 401 to an OAuth token renews it and retries once. */
  async #send<R extends GuardedResponse | GuardedStream>(
    endpoint: RemoteEndpoint,
    wire: HttpJsonWire,
    exchange: (options: Omit<GuardedRequestOptions, 'timeouts'>) => Promise<R>,
    release?: (refused: R) => Promise<void>,
  ): Promise<R> {
    const { entry } = endpoint;
    for (let attempt = 0; ; attempt += 1) {
      const headers = await requestHeaders(endpoint);
      let response: R;
      try {
        response = await exchange({
          method: wire.method,
          url: wire.url,
          headers,
          ...(wire.body !== undefined && { body: wire.body }),
          maxResponseBytes: entry.maxResponseBytes,
          privateNetwork: entry.privateNetwork,
        });
      } catch (error) {
        throw transportFailure(error, 'network_error');
      }
      if (!renewAfter401(endpoint, response.status, attempt)) return response;
      await release?.(response);
    }
  }
}

/** The decoded events of an open HTTP+JSON stream (see {@link HttpJsonBinding.openStream}). */
async function* decodeRestEvents(
  body: AsyncIterable<Buffer>,
  endpoint: RemoteEndpoint,
): AsyncGenerator<StreamEvent, void, undefined> {
  for await (const { event, frame } of readJsonEvents(body, endpoint)) {
    if (frame === undefined)
      throw new CallFailure('invalid_response', { detail: 'a stream event is not a JSON object' });
    if (event === 'error' || (frame.error !== undefined && Object.keys(frame).length === 1)) {
      const error = frame.error as { code?: unknown } | undefined;
      throw restFailure(typeof error?.code === 'number' ? error.code : 500, frame);
    }
    yield decodeFromRemote((value) => endpoint.dialect.decodeStreamEvent(value), frame);
  }
}
