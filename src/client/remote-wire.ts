/**
 * What both bindings of the outbound client share on the wire: the headers of one request
 * (an OAuth token renewed once after a 401), the checks every answer's head must pass, the
 * reading of a refused answer, and the small interface each binding implements
 * ({@link RemoteBinding}), so that callers never learn which binding a remote speaks.
 *
 * @example
 * ```ts
 * const headers = await requestHeaders(endpoint);
 * checkResponseHead(response);
 * ```
 */
import type { A2ARequest, SendParams, StreamEvent } from '../protocol/model.js';
import type { GuardedResponse } from './contracts.js';
import { CallFailure } from './call-failure.js';
import { OutboundAuthError } from './auth/errors.js';
import type { RemoteEndpoint } from './remote.js';
import { decodeUtf8 } from '../protocol/utf8.js';

/**
 * One stream event is read whole before it is decoded: at most 1 MiB (and never more than the
 * whole stream's cap).
 *
 * @example
 * ```ts
 * readSseEvents(body, Math.min(MAX_SSE_EVENT_BYTES, entry.maxResponseBytes));
 * ```
 */
export const MAX_SSE_EVENT_BYTES = 1024 * 1024;

/**
 * One binding's exchanges with a remote: whole requests, decoded by `decode`, and the stream of
 * a streaming send. JSON-RPC (remote.ts) and HTTP+JSON (remote-http-json.ts) implement it with
 * the same guarded transport, headers, caps and failures.
 *
 * @example
 * ```ts
 * const binding: RemoteBinding = endpoint.binding === 'HTTP+JSON' ? httpJson : jsonRpc;
 * ```
 */
export interface RemoteBinding {
  /** One request and its decoded answer; every failure is a `CallFailure`. */
  call<T>(
    endpoint: RemoteEndpoint,
    request: A2ARequest,
    decode: (result: unknown) => T,
    signal?: AbortSignal,
  ): Promise<T>;
  /** A streaming send: resolves once the stream is open, with its decoded events. */
  openStream(
    endpoint: RemoteEndpoint,
    params: SendParams,
    options: StreamOptions,
  ): Promise<AsyncGenerator<StreamEvent, void, undefined>>;
}

/**
 * An auth failure (no token could be had) as a call failure, with Airlock's own explanation.
 *
 * @example
 * ```ts
 * catch (error) { throw authFailure(error); }
 * ```
 */
export function authFailure(error: unknown): unknown {
  if (error instanceof OutboundAuthError) return new CallFailure(error.errorType, { detail: error.message });
  return error;
}

/**
 * The endpoint's headers for one request: its OAuth token added, when it has one.
 *
 * @example
 * ```ts
 * const headers = await requestHeaders(endpoint);
 * ```
 */
export async function requestHeaders(endpoint: RemoteEndpoint): Promise<Record<string, string>> {
  if (endpoint.auth === undefined) return endpoint.headers;
  try {
    return { ...endpoint.headers, authorization: await endpoint.auth.header() };
  } catch (error) {
    throw authFailure(error);
  }
}

/**
 * A 401 with a token that can be renewed: drop it, so the one retry gets a new one.
 *
 * @example
 * ```ts
 * if (!renewAfter401(endpoint, response.status, attempt)) break;
 * ```
 */
export function renewAfter401(endpoint: RemoteEndpoint, status: number, attempt: number): boolean {
  return status === 401 && attempt === 0 && endpoint.auth !== undefined && endpoint.auth.invalidate();
}

/**
 * Options of {@link RemoteRpc.openStream}.
 *
 * @example
 * ```ts
 * const options: StreamOptions = { totalMs: 5_000, signal: abort.signal };
 * ```
 */
export interface StreamOptions {
  /** The whole stream's time limit (what is left of `max_wait_s`); connect and read are cut to it too. */
  totalMs: number;
  /** Aborting it ends the stream (and the request, if it is still being sent). */
  signal?: AbortSignal;
}

/**
 * What every answer's status and headers must pass before its body is read: a refusal of our
 * credentials is `remote_auth_failed`; any content encoding is refused, because byte caps bound
 * what is read only when nothing is decompressed after them.
 *
 * @example
 * ```ts
 * checkResponseHead(response);
 * ```
 */
export function checkResponseHead(response: Pick<GuardedResponse, 'status' | 'headers'>): void {
  if (response.status === 401 || response.status === 403) throw new CallFailure('remote_auth_failed');
  const encoding = (headerOf(response, 'content-encoding') ?? 'identity').trim().toLowerCase();
  if (encoding !== '' && encoding !== 'identity') {
    throw new CallFailure('invalid_response', { detail: 'the remote sent a compressed response' });
  }
}

/**
 * The most of a remote's refusal text passed on (it is the remote's words: framed, never trusted).
 *
 * @example
 * ```ts
 * message.slice(0, MAX_REFUSAL_CHARS);
 * ```
 */
export const MAX_REFUSAL_CHARS = 500;

/**
 * A refusal answered before JSON-RPC (an HTTP status with a `google.rpc.Status`-style body, as
 * another Airlock's gate answers a relay loop): `remote_error`, with the remote's own message as
 * `remoteText` (framed and redacted where results are made), cut to a bound.
 *
 * @example
 * ```ts
 * if (!ok) throw httpRefusal(response.status, record);
 * ```
 */
export function httpRefusal(status: number, body: Record<string, unknown> | undefined): CallFailure {
  const error = body?.error;
  const message =
    error !== null && typeof error === 'object' && typeof (error as { message?: unknown }).message === 'string'
      ? (error as { message: string }).message
      : undefined;
  return new CallFailure('remote_error', {
    detail: `the remote refused the call (HTTP ${status}${status === 508 ? ', a relay loop' : ''})`,
    ...(message !== undefined &&
      message.length > 0 && { remoteText: `HTTP ${status}: ${message.slice(0, MAX_REFUSAL_CHARS)}` }),
  });
}

/**
 * A capped non-SSE body read whole, as a JSON object when it is one.
 *
 * @example
 * ```ts
 * const frame = await readFrame(response.body);
 * ```
 */
export async function readFrame(body: AsyncIterable<Buffer>): Promise<Record<string, unknown> | undefined> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk);
  try {
    const parsed: unknown = JSON.parse(decodeUtf8(Buffer.concat(chunks)));
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A response header by its lower-case name, whatever case the response used.
 *
 * @example
 * ```ts
 * headerOf(response, 'content-type'); // 'text/event-stream'
 * ```
 */
export function headerOf(response: Pick<GuardedResponse, 'headers'>, name: string): string | undefined {
  const headers = response.headers ?? {};
  for (const key of Object.keys(headers)) if (key.toLowerCase() === name) return headers[key];
  return undefined;
}
