/**
 * How the approvals API and the console answer: their header sets, the refusal shape with a
 * `reason`, bounded body reading, and desk calls whose errors become answers. Built on the
 * gateway's response kit (src/server/respond/response.ts).
 *
 * @example
 * ```ts
 * sendError(res, 409, 'ALREADY_DECIDED', 'Already decided', API_HEADERS, 'already_decided');
 * ```
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApprovalError, type ApprovalErrorCode } from '../../approvals/store.js';
import { readBoundedBody } from '../admission/body.js';
import { REFUSED } from '../admission/compose.js';
import { CONSOLE_SECURITY_HEADERS } from '../console/assets.js';
import { exceedsJsonDepth } from '../limits/json-depth.js';
import type { Logger } from '../log.js';
import { dropUnreadBody, headerOf, JSON_CONTENT_TYPE, sendJson, type ResponseHeaders } from '../respond/response.js';
import { decodeUtf8 } from '../../protocol/utf8.js';

/**
 * The headers of every `/approvals` answer.
 *
 * @example
 * ```ts
 * sendJson(res, 200, { approvals }, API_HEADERS);
 * ```
 */
export const API_HEADERS: ResponseHeaders = {
  'content-type': 'application/json; charset=utf-8',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
};

/**
 * The headers of every JSON answer under `/console` (the page's security headers).
 *
 * @example
 * ```ts
 * sendJson(res, 200, overview, CONSOLE_JSON_HEADERS);
 * ```
 */
export const CONSOLE_JSON_HEADERS: ResponseHeaders = {
  ...CONSOLE_SECURITY_HEADERS,
  'content-type': 'application/json; charset=utf-8',
};

/**
 * Marks a refused request in helpers that would otherwise return a value.
 *
 * @example
 * ```ts
 * if (parsed === FAILED) return;
 * ```
 */
export const FAILED: unique symbol = Symbol('failed');

/** Nesting allowed in a request body here (the bodies are flat objects). */
const MAX_JSON_DEPTH = 8;

/** HTTP status and status name for each ApprovalError code this surface answers with. */
const ERROR_STATUS: Partial<Record<ApprovalErrorCode, readonly [number, string]>> = {
  not_found: [404, 'NOT_FOUND'],
  not_decider: [403, 'PERMISSION_DENIED'],
  already_decided: [409, 'ALREADY_DECIDED'],
  expired: [410, 'EXPIRED'],
  already_consumed: [409, 'ALREADY_CONSUMED'],
  invalid_action: [400, 'INVALID_ARGUMENT'],
};

/**
 * `{"error":{"code":<status>,"status":"<CODE>","reason":"<code>","message":"…"}}`, the
 * gateway's refusal shape with a fixed-code reason. An unread body is dropped after the head.
 *
 * @example
 * ```ts
 * sendError(res, 403, 'PERMISSION_DENIED', 'CSRF check failed', CONSOLE_JSON_HEADERS, 'csrf');
 * ```
 */
export function sendError(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  headers: ResponseHeaders,
  reason?: string,
  extra: ResponseHeaders = {},
): void {
  const error =
    reason === undefined ? { code: status, status: code, message } : { code: status, status: code, reason, message };
  sendJson(res, status, { error }, headers, extra);
  dropUnreadBody(res);
}

/**
 * 405 in this surface's shape.
 *
 * @example
 * ```ts
 * if (method !== 'GET') return methodNotAllowed(res, 'GET', API_HEADERS);
 * ```
 */
export function methodNotAllowed(res: ServerResponse, allow: string, headers: ResponseHeaders): void {
  sendError(res, 405, 'METHOD_NOT_ALLOWED', `Use ${allow}`, headers, undefined, { allow });
}

/**
 * 404 in this surface's shape.
 *
 * @example
 * ```ts
 * return notFound(res, API_HEADERS);
 * ```
 */
export function notFound(res: ServerResponse, headers: ResponseHeaders): void {
  sendError(res, 404, 'NOT_FOUND', 'No such route', headers);
}

/**
 * Whether `value` is a plain JSON object.
 *
 * @example
 * ```ts
 * const text = isRecord(parsed) ? parsed.text : undefined;
 * ```
 */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Body reading for this surface: bounded bodies and JSON bodies, refused in its shape.
 *
 * @example
 * ```ts
 * const bodies = createBodyReaders(30_000);
 * const parsed = await bodies.readJson(req, res, 65_536, API_HEADERS);
 * ```
 */
export function createBodyReaders(bodyTimeoutMs: number): {
  readBounded(
    req: IncomingMessage,
    res: ServerResponse,
    limit: number,
    headers: ResponseHeaders,
  ): Promise<Buffer | undefined>;
  readJson(req: IncomingMessage, res: ServerResponse, limit: number, headers: ResponseHeaders): Promise<unknown>;
} {
  /** The body (under the limits), or undefined once refused. */
  async function readBounded(
    req: IncomingMessage,
    res: ServerResponse,
    limit: number,
    headers: ResponseHeaders,
  ): Promise<Buffer | undefined> {
    const body = await readBoundedBody(req, res, limit, bodyTimeoutMs, (status, message) =>
      sendError(res, status, 'INVALID_ARGUMENT', message, headers),
    );
    return body === REFUSED ? undefined : body;
  }

  /** A JSON body, or FAILED once refused (wrong Content-Type, limits, not JSON). */
  async function readJson(
    req: IncomingMessage,
    res: ServerResponse,
    limit: number,
    headers: ResponseHeaders,
  ): Promise<unknown> {
    const contentType = headerOf(req, 'content-type');
    // Read (under the limits) even when refused: the answer then reaches the client intact.
    const body = await readBounded(req, res, limit, headers);
    if (body === undefined) return FAILED;
    if (contentType === undefined || !JSON_CONTENT_TYPE.test(contentType)) {
      sendError(res, 415, 'INVALID_ARGUMENT', 'Content-Type must be application/json', headers);
      return FAILED;
    }
    if (exceedsJsonDepth(body, MAX_JSON_DEPTH)) {
      sendError(res, 400, 'INVALID_ARGUMENT', 'Request JSON is nested too deeply', headers);
      return FAILED;
    }
    try {
      return JSON.parse(decodeUtf8(body)) as unknown;
    } catch {
      sendError(res, 400, 'INVALID_ARGUMENT', 'The body is not valid JSON', headers);
      return FAILED;
    }
  }

  return { readBounded, readJson };
}

/**
 * Desk calls whose failures are answered: an ApprovalError by its status, anything else as a
 * logged 500.
 *
 * @example
 * ```ts
 * const calls = createDeskCalls(logger);
 * const approval = await calls.guarded(res, API_HEADERS, () => desk.get(userId, id));
 * ```
 */
export function createDeskCalls(logger: Logger): {
  internalError(res: ServerResponse, error: unknown): void;
  guarded<T>(res: ServerResponse, headers: ResponseHeaders, call: () => Promise<T>): Promise<T | typeof FAILED>;
  approvalError(res: ServerResponse, error: unknown, headers: ResponseHeaders): void;
} {
  function internalError(res: ServerResponse, error: unknown): void {
    logger.error({
      event: 'approvals_request_failed',
      error: error instanceof Error ? `${error.name}: ${error.message}` : 'non-error thrown',
    });
    if (res.headersSent) {
      res.destroy();
      return;
    }
    sendError(res, 500, 'INTERNAL', 'Internal error', {});
  }

  function approvalError(res: ServerResponse, error: unknown, headers: ResponseHeaders): void {
    const mapped = error instanceof ApprovalError ? ERROR_STATUS[error.code] : undefined;
    if (mapped === undefined || !(error instanceof ApprovalError)) {
      internalError(res, error);
      return;
    }
    sendError(res, mapped[0], mapped[1], error.message, headers, error.code);
  }

  /** Runs a desk call; an ApprovalError (or anything else) is answered and FAILED returned. */
  async function guarded<T>(
    res: ServerResponse,
    headers: ResponseHeaders,
    call: () => Promise<T>,
  ): Promise<T | typeof FAILED> {
    try {
      return await call();
    } catch (error) {
      approvalError(res, error, headers);
      return FAILED;
    }
  }

  return { internalError, guarded, approvalError };
}
