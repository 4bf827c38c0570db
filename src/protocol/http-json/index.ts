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
