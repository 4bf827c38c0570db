/**
 * The body steps: a request body read under the size and time limits (every surface that
 * reads one), and for the agents' routes a JSON body: its Content-Type, then its nesting
 * depth. A body that breaks a limit is never read further: the connection closes after the
 * answer.
 *
 * @example
 * ```ts
 * const readJson = createJsonBodyStep({ maxBodyBytes, bodyTimeoutMs, maxJsonDepth, refuse: shapeError });
 * const admitRpc = compose(admitCaller, readJson);
 * ```
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody, type BodyResult } from '../body.js';
import { exceedsJsonDepth } from '../limits/json-depth.js';
import { headerOf, JSON_CONTENT_TYPE } from '../respond/response.js';
import { REFUSED, type Refused, type Step } from './compose.js';
import { continueIfAwaited } from './continue.js';
import type { AdmittedInbound, InboundWithBody } from './inbound.js';

/**
 * Answers a body that could not be read: over a limit the connection is set to close and
 * `refuseBody` sends the surface's own 413 or 408; a client that went away gets nothing (the
 * response is destroyed).
 *
 * @example
 * ```ts
 * const body = await readBody(req, limit, timeoutMs);
 * if (!body.ok) return bodyRefused(req, res, body.reason, limit, timeoutMs, refuseBody);
 * ```
 */
export function bodyRefused(
  req: IncomingMessage,
  res: ServerResponse,
  reason: 'too_large' | 'aborted' | 'timeout',
  limit: number,
  timeoutMs: number,
  refuseBody: (status: 413 | 408, message: string) => void,
): Refused {
  if (reason === 'aborted') {
    res.destroy();
    return REFUSED;
  }
  // The connection is closed after the answer: the rest of the body is never read.
  res.shouldKeepAlive = false;
  res.once('finish', () => req.destroy());
  if (reason === 'too_large') refuseBody(413, `Request body is larger than ${limit} bytes`);
  else refuseBody(408, `Request body did not arrive within ${timeoutMs} ms`);
  return REFUSED;
}

/**
 * Reads `req`'s body: at most `limit` bytes, all of it within `timeoutMs`; refused as
 * {@link bodyRefused} says otherwise.
 *
 * @example
 * ```ts
 * const body = await readBoundedBody(req, res, 65_536, 30_000, (status, message) => sendError(res, status, message));
 * if (body === REFUSED) return;
 * ```
 */
export async function readBoundedBody(
  req: IncomingMessage,
  res: ServerResponse,
  limit: number,
  timeoutMs: number,
  refuseBody: (status: 413 | 408, message: string) => void,
): Promise<Buffer | Refused> {
  continueIfAwaited(req, res);
  const body = await readBody(req, limit, timeoutMs);
  return body.ok ? body.body : bodyRefused(req, res, body.reason, limit, timeoutMs, refuseBody);
}

/**
 * How a route words a body refusal (its own error shape): the HTTP status, the A2A error code
 * and a message.
 *
 * @example
 * ```ts
 * const shape: BodyRefusal = (inbound, status, _code, message) => sendAskError(inbound.res, askError(status, message));
 * ```
 */
export type BodyRefusal = (
  inbound: AdmittedInbound,
  status: number,
  code: 'INVALID_REQUEST' | 'CONTENT_TYPE_NOT_SUPPORTED',
  message: string,
) => void;

/**
 * The JSON body step: a missing or wrong Content-Type is refused (415) without reading the
 * body, then the body is read under the limits, then JSON nested deeper than `maxJsonDepth` is
 * refused (400).
 *
 * A missing Content-Type is refused like a wrong one: a web page on another origin may POST
 * without a CORS preflight only with no type or a form/text type, so a body read as JSON
 * whatever its type is a body any page can send (issue 16). `application/json` and the
 * `+json` types (`application/a2a+json`), with parameters such as `charset`, are read.
 *
 * @example
 * ```ts
 * const readJson = createJsonBodyStep({ maxBodyBytes: 1_048_576, bodyTimeoutMs: 30_000, maxJsonDepth: 32, refuse });
 * ```
 */
export function createJsonBodyStep(options: {
  maxBodyBytes: number;
  bodyTimeoutMs: number;
  maxJsonDepth: number;
  refuse: BodyRefusal;
}): Step<AdmittedInbound, InboundWithBody> {
  const { maxBodyBytes, bodyTimeoutMs, maxJsonDepth } = options;
  const shapeError = options.refuse;
  const admitBody = (inbound: AdmittedInbound, read: BodyResult): InboundWithBody | Refused => {
    const { req, res } = inbound;
    if (!read.ok) {
      return bodyRefused(req, res, read.reason, maxBodyBytes, bodyTimeoutMs, (status, message) =>
        shapeError(inbound, status, 'INVALID_REQUEST', message),
      );
    }
    const body = read.body;
    if (exceedsJsonDepth(body, maxJsonDepth)) {
      shapeError(inbound, 400, 'INVALID_REQUEST', `Request JSON is nested deeper than ${maxJsonDepth} levels`);
      return REFUSED;
    }
    inbound.body = body;
    return inbound as InboundWithBody;
  };
  return (inbound) => {
    const { req, res } = inbound;
    const contentType = headerOf(req, 'content-type');
    if (contentType === undefined || !JSON_CONTENT_TYPE.test(contentType)) {
      shapeError(inbound, 415, 'CONTENT_TYPE_NOT_SUPPORTED', 'Content-Type must be application/json');
      req.resume();
      return REFUSED;
    }
    // Admitted: a client that waits for `100 Continue` may now send its body.
    continueIfAwaited(req, res);
    // readBody itself, not readBoundedBody, and its promise passed on rather than awaited in an
    // async step: no extra promise or turn of the microtask queue on every call's path.
    return readBody(req, maxBodyBytes, bodyTimeoutMs).then((read) => admitBody(inbound, read));
  };
}
