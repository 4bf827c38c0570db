/**
 * The response kit every route of the gateway (and the MCP HTTP server) answers with: JSON
 * bodies with their length, the google.rpc.Status-shaped refusal, 404 / 405, draining a body
 * that will not be read, and header access. One copy, so that every surface closes a refused
 * connection and shapes its errors the same way.
 *
 * @example
 * ```ts
 * if (req.method !== 'POST') return methodNotAllowed(res, 'POST');
 * refuse(res, 429, 'RESOURCE_EXHAUSTED', 'Too many requests; slow down', { 'retry-after': '3' });
 * ```
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { utf8ToWrite } from '../../protocol/utf8.js';

/** Response headers as a plain record. */
export type ResponseHeaders = Readonly<Record<string, string>>;

/**
 * JSON request bodies: `application/json` or any `+json` type.
 *
 * @example
 * ```ts
 * JSON_CONTENT_TYPE.test('application/json; charset=utf-8'); // true
 * ```
 */
export const JSON_CONTENT_TYPE = /^application\/(?:json|[\w.+-]+\+json)[\t ]*(?:;|$)/i;

/**
 * The first value of a request header (Node joins most, but not all, repeated headers).
 *
 * @example
 * ```ts
 * const version = headerOf(req, 'a2a-version');
 * ```
 */
export function headerOf(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The path of a request URL, without its query.
 *
 * @example
 * ```ts
 * requestPath('/a2a/echo?x=1'); // '/a2a/echo'
 * ```
 */
export function requestPath(url: string | undefined): string {
  const raw = url ?? '/';
  const query = raw.indexOf('?');
  return query === -1 ? raw : raw.slice(0, query);
}

/**
 * A JSON response with its length, as `type` (default `application/json`). The headers go as a
 * flat list: no header object is built per response (spreading a constant into a new object
 * with one more key is slow in V8). Long text mostly outside ASCII goes as bytes from the
 * faster converter ({@link utf8ToWrite}).
 *
 * @example
 * ```ts
 * writeJson(res, 200, '{"jsonrpc":"2.0","id":1,"result":{}}');
 * ```
 */
export function writeJson(res: ServerResponse, status: number, body: string, type = 'application/json'): void {
  const length = Buffer.byteLength(body);
  res.writeHead(status, ['content-type', type, 'content-length', length]);
  res.end(utf8ToWrite(body, length));
}

/**
 * `payload` as JSON. Without `headers` it is `application/json`; with them, those headers
 * (they name the content type) plus `extra`.
 *
 * @example
 * ```ts
 * sendJson(res, 200, { status: 'ok' });
 * sendJson(res, 200, { approvals }, API_HEADERS, { 'set-cookie': cookie });
 * ```
 */
export function sendJson(
  res: ServerResponse,
  status: number,
  payload: unknown,
  headers?: ResponseHeaders,
  extra?: ResponseHeaders,
): void {
  const body = JSON.stringify(payload);
  if (headers === undefined) return writeJson(res, status, body);
  res.writeHead(status, { ...headers, ...extra, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/**
 * An HTTP-level refusal, shaped like google.rpc.Status rather than JSON-RPC, so that clients
 * report the status itself instead of a malformed JSON-RPC exchange. The request body is
 * drained, never read.
 *
 * @example
 * ```ts
 * refuse(res, 401, 'UNAUTHENTICATED', 'Authentication required', { 'www-authenticate': 'Bearer realm="airlock"' });
 * ```
 */
export function refuse(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  headers: ResponseHeaders = {},
): void {
  const body = JSON.stringify({ error: { code: status, status: code, message } });
  // Before the head: a connection that will be closed must say so (Connection: close).
  dropUnreadBody(res);
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/**
 * For an answer sent before the request body was read: a request that has (or may have) a
 * body closes its connection instead of reading what is left, so a refused caller cannot make
 * the server swallow an unbounded body. Called before the head is written, the answer says
 * `Connection: close`. Body-less requests keep their connection.
 *
 * @example
 * ```ts
 * dropUnreadBody(res);
 * res.writeHead(404, headers);
 * ```
 */
export function dropUnreadBody(res: ServerResponse): void {
  const req = res.req as IncomingMessage | undefined;
  if (req === undefined || req.complete) return;
  const length = req.headers['content-length'];
  if (req.headers['transfer-encoding'] === undefined && (length === undefined || length === '0')) return;
  res.shouldKeepAlive = false;
  res.once('finish', () => req.destroy());
}

/**
 * The gateway's 404 for a path it does not serve.
 *
 * @example
 * ```ts
 * if (agent === undefined) return notFound(res);
 * ```
 */
export function notFound(res: ServerResponse): void {
  dropUnreadBody(res);
  sendJson(res, 404, { error: { code: 'NOT_FOUND', message: 'No such route or agent' } });
}

/**
 * The gateway's 405, naming the methods the route takes.
 *
 * @example
 * ```ts
 * if (req.method !== 'POST') return methodNotAllowed(res, 'POST');
 * ```
 */
export function methodNotAllowed(res: ServerResponse, allow: string): void {
  const body = JSON.stringify({ error: { code: 405, status: 'METHOD_NOT_ALLOWED', message: `Use ${allow}` } });
  dropUnreadBody(res);
  res.writeHead(405, { 'content-type': 'application/json', allow, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
