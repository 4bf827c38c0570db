/**
 * The HTTP+JSON binding's codec (v1.0 §11): routes, request decoding into the canonical
 * requests, result and error encoding. The third codec beside JSON-RPC v1.0 and v0.3; the task
 * service never learns which one a caller used.
 *
 * @example
 * ```ts
 * const route = matchHttpJsonRoute(req.method, tail);
 * if (route?.kind === 'route') request = decodeHttpJsonRequest(route, query, body);
 * ```
 */
export { matchHttpJsonRoute } from './routes.js';
export type { HttpJsonBody, HttpJsonMethodMiss, HttpJsonRoute } from './routes.js';
export { decodeHttpJsonRequest } from './decode.js';
export { HTTP_JSON_RESULTS, encodeHttpJsonRequest } from './encode.js';
export type { HttpJsonRequest } from './encode.js';
export { HTTP_JSON_STATUS, httpJsonError } from './errors.js';

/**
 * The media type of the binding's requests and responses (§11.2); `application/json` is read too.
 *
 * @example
 * ```ts
 * res.setHeader('content-type', A2A_JSON_CONTENT_TYPE);
 * ```
 */
export const A2A_JSON_CONTENT_TYPE = 'application/a2a+json';

/**
 * The media type of a response: `application/a2a+json` (v1.0.1 §11.2) when the request's
 * `Content-Type` or `Accept` names it, else `application/json`. The bodies are the same; a
 * v1.0.0 client (which knows only `application/json`) gets the type it sent or accepts, a
 * v1.0.1 client the one it asked for.
 *
 * @example
 * ```ts
 * responseMediaType('application/a2a+json', undefined); // 'application/a2a+json'
 * responseMediaType(undefined, '*\/*'); // 'application/json'
 * ```
 */
export function responseMediaType(contentType: string | undefined, accept: string | undefined): string {
  return namesA2AJson(contentType) || namesA2AJson(accept) ? A2A_JSON_CONTENT_TYPE : 'application/json';
}

function namesA2AJson(header: string | undefined): boolean {
  return header !== undefined && header.toLowerCase().includes(A2A_JSON_CONTENT_TYPE);
}
