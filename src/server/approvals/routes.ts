/**
 * The out-of-band surface where a person decides guarded actions: the `/approvals` JSON API
 * (for the CLI and scripts, with the person's own bearer token or JWT) and, when enabled, the
 * web console at `/console` (a sign-in with the same credential, then an HttpOnly,
 * SameSite=Strict session cookie plus a CSRF token the page sends back in `X-Airlock-CSRF`).
 *
 *   GET  /approvals                                 the person's pending actions
 *   GET  /approvals/{actionId}                      one of them
 *   POST /approvals/{actionId}/approve | /deny      the decision
 *   GET  /approvals/questions                       remote agents' questions waiting for them
 *   POST /approvals/questions/{questionId}/answer   {"text": "…"}
 *   GET  /console, /console/app.js, /console/app.css        the page (strict CSP, no inline code)
 *   GET | POST | DELETE /console/session                    who is signed in / sign in / sign out
 *   GET  /console/api/overview                              everything the page shows, at once
 *
 * The gateway's network gate and hop refusal run before these routes. A bearer credential, when
 * sent, decides who is asking (the cookie is then ignored); without one, the cookie does, and
 * every cookie-authenticated state change must carry the session's CSRF token and, if the
 * browser says where it comes from, this origin. Credentials, cookies and session ids are never
 * logged.
 *
 * @example
 * ```ts
 * const approvals = createApprovalRoutes({ desk, persons, console: true, secureCookies: false, authFailures, onAuthFailed, logger, maxBodyBytes, bodyTimeoutMs });
 * if (await approvals.handle(req, res, path, remote)) return;
 * ```
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApprovalDesk } from '../../approvals/desk.js';
import { ApprovalError, type ApprovalDecision, type ApprovalErrorCode } from '../../approvals/store.js';
import { bearerToken } from '../auth/clients.js';
import type { PersonAuthenticator } from '../auth/persons.js';
import { readBody } from '../body.js';
import type { AuthFailureLockout } from '../limits/address-failures.js';
import { exceedsJsonDepth } from '../limits/json-depth.js';
import type { Logger } from '../log.js';
import { CONSOLE_ASSETS, CONSOLE_SECURITY_HEADERS } from '../console/assets.js';
import { constantTimeEqual, ConsoleSessions, SESSION_MAX_AGE_SECONDS, type ConsoleSession } from './sessions.js';

export interface ApprovalRoutesOptions {
  desk: ApprovalDesk;
  persons: PersonAuthenticator;
  /** Serve /console (else only the /approvals JSON API). */
  console: boolean;
  /** Add `Secure` to the session cookie (the public URL is https). */
  secureCookies: boolean;
  authFailures: AuthFailureLockout;
  /** Writes the audit row for a failed sign-in / bad credential on these routes. */
  onAuthFailed(reason: 'missing_credentials' | 'invalid_credentials', remote: string | undefined): void;
  logger: Logger;
  maxBodyBytes: number;
  bodyTimeoutMs: number;
  /** For tests. Milliseconds; the same clock as the gateway's lockout (monotonic) unless told. */
  now?: () => number;
}

export interface ApprovalRoutes {
  /** Handles the request if `path` is one of its routes (returns true, possibly via a promise); false when not its path. */
  handle(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    remote: string | undefined,
  ): boolean | Promise<boolean>;
  /** Clears session timers if any (there are none: expiry is lazy) and forgets every session. */
  close(): void;
}

/** The console's session cookie. */
export const SESSION_COOKIE = 'airlock_console';
/** The header a cookie-authenticated state change must carry: the session's CSRF token. */
export const CSRF_HEADER = 'x-airlock-csrf';
/** Longest answer to a remote agent's question, in characters. */
export const MAX_ANSWER_CHARS = 8192;

/** Tasks and audit rows the overview returns. */
const OVERVIEW_LIMIT = 50;
/** Nesting allowed in a request body here (the bodies are flat objects). */
const MAX_JSON_DEPTH = 8;
/** A sign-in body is one credential: never more than this, whatever maxBodyBytes says. */
const MAX_SIGN_IN_BYTES = 16_384;
/** Action and question ids: base64url or similar opaque tokens. */
const ID = /^[A-Za-z0-9_-]{1,200}$/;
const JSON_CONTENT_TYPE = /^application\/(?:json|[\w.+-]+\+json)[\t ]*(?:;|$)/i;
const API_HEADERS = {
  'content-type': 'application/json; charset=utf-8',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
} as const;
const CONSOLE_JSON_HEADERS = { ...CONSOLE_SECURITY_HEADERS, 'content-type': 'application/json; charset=utf-8' };
const UNAUTHENTICATED_MESSAGE =
  'Authentication required: send Authorization: Bearer <your person token or JWT>, or sign in to the console';

/** HTTP status and status name for each ApprovalError code this surface answers with. */
const ERROR_STATUS: Partial<Record<ApprovalErrorCode, readonly [number, string]>> = {
  not_found: [404, 'NOT_FOUND'],
  not_decider: [403, 'PERMISSION_DENIED'],
  already_decided: [409, 'ALREADY_DECIDED'],
  expired: [410, 'EXPIRED'],
  already_consumed: [409, 'ALREADY_CONSUMED'],
  invalid_action: [400, 'INVALID_ARGUMENT'],
};

/** Who is asking, once authenticated. */
interface Asker {
  userId: string;
  /** The console session when the cookie authenticated the request (absent for a bearer). */
  session?: ConsoleSession;
  sessionId?: string;
}

type Headers = Readonly<Record<string, string>>;

export function createApprovalRoutes(options: ApprovalRoutesOptions): ApprovalRoutes {
  const { desk, persons, authFailures, logger, maxBodyBytes, bodyTimeoutMs } = options;
  const now = options.now ?? ((): number => performance.timeOrigin + performance.now());
  const sessions = new ConsoleSessions({ now });
  const cookieSuffix = `; HttpOnly; SameSite=Strict; Path=/${options.secureCookies ? '; Secure' : ''}`;

  function handle(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    remote: string | undefined,
  ): boolean | Promise<boolean> {
    if (path === '/approvals' || path.startsWith('/approvals/')) {
      return settle(res, serveApprovals(req, res, path, remote));
    }
    if (path === '/console' || path.startsWith('/console/')) {
      if (!options.console) return false;
      return settle(res, serveConsole(req, res, path, remote));
    }
    return false;
  }

  /** True once the route has answered; an unexpected failure is logged and answered 500. */
  function settle(res: ServerResponse, served: Promise<void>): Promise<boolean> {
    return served.then(
      () => true,
      (error: unknown) => {
        internalError(res, error);
        return true;
      },
    );
  }

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

  // ---------------------------------------------------------------- /approvals

  async function serveApprovals(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    remote: string | undefined,
  ): Promise<void> {
    const rest = path.slice('/approvals'.length);
    const segments = rest === '' || rest === '/' ? [] : rest.slice(1).split('/');
    const method = req.method ?? 'GET';
    const [first, second, third] = segments;

    if (segments.length === 0) {
      if (method !== 'GET') return methodNotAllowed(res, 'GET', API_HEADERS);
      const asker = await authenticate(req, res, remote, API_HEADERS);
      if (asker === undefined) return;
      return sendJson(res, 200, { approvals: await desk.pending(asker.userId) }, API_HEADERS);
    }
    if (first === 'questions') {
      if (segments.length === 1) {
        if (method !== 'GET') return methodNotAllowed(res, 'GET', API_HEADERS);
        const asker = await authenticate(req, res, remote, API_HEADERS);
        if (asker === undefined) return;
        return sendJson(res, 200, { questions: await desk.questions(asker.userId) }, API_HEADERS);
      }
      if (segments.length === 3 && second !== undefined && ID.test(second) && third === 'answer') {
        if (method !== 'POST') return methodNotAllowed(res, 'POST', API_HEADERS);
        return answerQuestion(req, res, second, remote);
      }
      return notFound(res, API_HEADERS);
    }
    if (first === undefined || !ID.test(first)) return notFound(res, API_HEADERS);
    if (segments.length === 1) {
      if (method !== 'GET') return methodNotAllowed(res, 'GET', API_HEADERS);
      const asker = await authenticate(req, res, remote, API_HEADERS);
      if (asker === undefined) return;
      const approval = await guarded(res, API_HEADERS, () => desk.get(asker.userId, first));
      if (approval === FAILED) return;
      if (approval === undefined) return approvalError(res, new ApprovalError('not_found'), API_HEADERS);
      return sendJson(res, 200, { approval }, API_HEADERS);
    }
    if (segments.length === 2 && (second === 'approve' || second === 'deny')) {
      if (method !== 'POST') return methodNotAllowed(res, 'POST', API_HEADERS);
      return decideAction(req, res, first, second, remote);
    }
    return notFound(res, API_HEADERS);
  }

  async function decideAction(
    req: IncomingMessage,
    res: ServerResponse,
    actionId: string,
    verb: 'approve' | 'deny',
    remote: string | undefined,
  ): Promise<void> {
    const asker = await authenticate(req, res, remote, API_HEADERS);
    if (asker === undefined) return;
    if (!csrfSafe(req, res, asker, API_HEADERS)) return;
    // A body, if any, means nothing here; it is still read under the limits (not left unread).
    const body = await readBounded(req, res, maxBodyBytes, API_HEADERS);
    if (body === undefined) return;
    const decision: ApprovalDecision = verb;
    const approval = await guarded(res, API_HEADERS, () => desk.decide(actionId, asker.userId, decision, remote));
    if (approval === FAILED) return;
    sendJson(res, 200, { approval }, API_HEADERS);
  }

  async function answerQuestion(
    req: IncomingMessage,
    res: ServerResponse,
    questionId: string,
    remote: string | undefined,
  ): Promise<void> {
    const asker = await authenticate(req, res, remote, API_HEADERS);
    if (asker === undefined) return;
    if (!csrfSafe(req, res, asker, API_HEADERS)) return;
    const parsed = await readJson(req, res, maxBodyBytes, API_HEADERS);
    if (parsed === FAILED) return;
    const text = isRecord(parsed) ? parsed.text : undefined;
    if (typeof text !== 'string' || text.length === 0 || text.length > MAX_ANSWER_CHARS) {
      return sendError(
        res,
        400,
        'INVALID_ARGUMENT',
        `Send {"text": "<your answer>"} with 1 to ${MAX_ANSWER_CHARS} characters`,
        API_HEADERS,
        'invalid_answer',
      );
    }
    const question = await guarded(res, API_HEADERS, () => desk.answer(questionId, asker.userId, text, remote));
    if (question === FAILED) return;
    sendJson(res, 200, { question }, API_HEADERS);
  }

  // ---------------------------------------------------------------- /console

  async function serveConsole(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    remote: string | undefined,
  ): Promise<void> {
    const method = req.method ?? 'GET';
    const asset = CONSOLE_ASSETS.get(path);
    if (asset !== undefined) {
      if (method !== 'GET' && method !== 'HEAD') return methodNotAllowed(res, 'GET, HEAD', CONSOLE_JSON_HEADERS);
      res.writeHead(200, {
        ...CONSOLE_SECURITY_HEADERS,
        'content-type': asset.contentType,
        'content-length': asset.body.byteLength,
      });
      res.end(method === 'HEAD' ? undefined : asset.body);
      return;
    }
    if (path === '/console/session') {
      if (method === 'GET') return currentSession(req, res, remote);
      if (method === 'POST') return signIn(req, res, remote);
      if (method === 'DELETE') return signOut(req, res, remote);
      return methodNotAllowed(res, 'GET, POST, DELETE', CONSOLE_JSON_HEADERS);
    }
    if (path === '/console/api/overview') {
      if (method !== 'GET') return methodNotAllowed(res, 'GET', CONSOLE_JSON_HEADERS);
      const asker = await authenticate(req, res, remote, CONSOLE_JSON_HEADERS);
      if (asker === undefined) return;
      const { userId } = asker;
      const overview = await guarded(res, CONSOLE_JSON_HEADERS, async () => {
        const [approvals, tasks, audit, questions] = await Promise.all([
          desk.pending(userId),
          desk.recentTasks(userId, OVERVIEW_LIMIT),
          desk.auditTail(userId, OVERVIEW_LIMIT),
          desk.questions(userId),
        ]);
        return { userId, approvals, tasks, audit, questions };
      });
      if (overview === FAILED) return;
      return sendJson(res, 200, overview, CONSOLE_JSON_HEADERS);
    }
    return notFound(res, CONSOLE_JSON_HEADERS);
  }

  /** Who the cookie names. A missing cookie is not a failed sign-in; a dead one is counted. */
  async function currentSession(req: IncomingMessage, res: ServerResponse, remote: string | undefined): Promise<void> {
    const ids = cookieValues(req.headers.cookie, SESSION_COOKIE);
    if (ids.length === 0) return unauthenticated(res, CONSOLE_JSON_HEADERS, false);
    const asker = await authenticate(req, res, remote, CONSOLE_JSON_HEADERS, true);
    if (asker === undefined) return;
    const session = asker.session as ConsoleSession;
    sendJson(res, 200, { userId: session.userId, csrf: session.csrf }, CONSOLE_JSON_HEADERS);
  }

  async function signIn(req: IncomingMessage, res: ServerResponse, remote: string | undefined): Promise<void> {
    // Login CSRF: a page elsewhere must not sign this browser in (as its own author).
    if (!sameOrigin(req)) return csrfRefused(res, CONSOLE_JSON_HEADERS);
    const time = now();
    if (!(await lockoutAllows(res, remote, time, CONSOLE_JSON_HEADERS))) return;
    const parsed = await readJson(req, res, Math.min(maxBodyBytes, MAX_SIGN_IN_BYTES), CONSOLE_JSON_HEADERS);
    if (parsed === FAILED) return;
    const token = isRecord(parsed) ? parsed.token : undefined;
    if (typeof token !== 'string' || token.length === 0) {
      return failAuth(res, 'missing_credentials', remote, time, CONSOLE_JSON_HEADERS);
    }
    const person = await persons.authenticate(token);
    if (person === undefined) return failAuth(res, 'invalid_credentials', remote, time, CONSOLE_JSON_HEADERS);
    // A session cookie sent along (an earlier sign-in) is replaced, not left alive.
    for (const id of cookieValues(req.headers.cookie, SESSION_COOKIE)) sessions.delete(id);
    const { id, session } = sessions.create(person.userId);
    logger.info({ event: 'console_signed_in', userId: person.userId, via: person.via });
    sendJson(res, 200, { userId: session.userId, csrf: session.csrf }, CONSOLE_JSON_HEADERS, {
      'set-cookie': `${SESSION_COOKIE}=${id}; Max-Age=${SESSION_MAX_AGE_SECONDS}${cookieSuffix}`,
    });
  }

  async function signOut(req: IncomingMessage, res: ServerResponse, remote: string | undefined): Promise<void> {
    const asker = await authenticate(req, res, remote, CONSOLE_JSON_HEADERS, true);
    if (asker === undefined) return;
    if (!csrfSafe(req, res, asker, CONSOLE_JSON_HEADERS)) return;
    sessions.delete(asker.sessionId);
    logger.info({ event: 'console_signed_out', userId: asker.userId });
    sendJson(res, 200, { signedOut: true }, CONSOLE_JSON_HEADERS, { 'set-cookie': clearCookie() });
  }

  // ---------------------------------------------------------------- authentication

  /**
   * The person asking, or undefined once refused (the response is sent). The address lockout
   * first; then a bearer credential if one is sent (it decides, whatever the cookie says), else
   * the session cookie (unless `cookieOnly`, when only the cookie counts).
   */
  async function authenticate(
    req: IncomingMessage,
    res: ServerResponse,
    remote: string | undefined,
    headers: Headers,
    cookieOnly = false,
  ): Promise<Asker | undefined> {
    const time = now();
    if (!(await lockoutAllows(res, remote, time, headers))) return undefined;
    const authorization = headerOf(req, 'authorization');
    if (authorization !== undefined && !cookieOnly) {
      const token = bearerToken(authorization);
      const person = token === undefined ? undefined : await persons.authenticate(token);
      if (person === undefined) return failAuth(res, 'invalid_credentials', remote, time, headers);
      return { userId: person.userId };
    }
    const ids = cookieValues(req.headers.cookie, SESSION_COOKIE);
    if (ids.length === 0) return failAuth(res, 'missing_credentials', remote, time, headers);
    for (const id of ids) {
      const session = sessions.get(id);
      if (session !== undefined) return { userId: session.userId, session, sessionId: id };
    }
    // A session that ended (signed out, idle, a restart): the browser is told to drop the cookie.
    return failAuth(res, 'invalid_credentials', remote, time, headers, { 'set-cookie': clearCookie() });
  }

  /** False (and 429 sent) when the address is locked out after too many failed sign-ins. */
  async function lockoutAllows(
    res: ServerResponse,
    remote: string | undefined,
    time: number,
    headers: Headers,
  ): Promise<boolean> {
    const locked = await authFailures.isLocked(remote ?? '', time);
    if (locked <= 0) return true;
    sendError(
      res,
      429,
      'RESOURCE_EXHAUSTED',
      'Too many failed authentications from this address; try again later',
      headers,
      'auth_failure_limit',
      { 'retry-after': String(locked), connection: 'close' },
    );
    return false;
  }

  async function failAuth(
    res: ServerResponse,
    reason: 'missing_credentials' | 'invalid_credentials',
    remote: string | undefined,
    time: number,
    headers: Headers,
    extra: Headers = {},
  ): Promise<undefined> {
    logger.warn({ event: 'approvals_auth_failed', reason });
    try {
      options.onAuthFailed(reason, remote);
    } catch (error) {
      logger.error({
        event: 'approvals_audit_failed',
        error: error instanceof Error ? `${error.name}: ${error.message}` : 'non-error thrown',
      });
    }
    await authFailures.recordFailure(remote ?? '', time);
    unauthenticated(res, headers, true, extra);
    return undefined;
  }

  function unauthenticated(res: ServerResponse, headers: Headers, close: boolean, extra: Headers = {}): void {
    sendError(res, 401, 'UNAUTHENTICATED', UNAUTHENTICATED_MESSAGE, headers, undefined, {
      'www-authenticate': 'Bearer realm="airlock"',
      ...(close && { connection: 'close' }),
      ...extra,
    });
  }

  /**
   * Whether a state change may go on. A bearer request cannot be forged by another site (the
   * browser never adds the header by itself); a cookie request must carry the session's CSRF
   * token, and come from this origin when the browser says where it comes from.
   */
  function csrfSafe(req: IncomingMessage, res: ServerResponse, asker: Asker, headers: Headers): boolean {
    if (asker.session === undefined) return true;
    const sent = headerOf(req, CSRF_HEADER);
    if (sent !== undefined && constantTimeEqual(sent, asker.session.csrf) && sameOrigin(req)) return true;
    logger.warn({ event: 'approvals_csrf_refused', userId: asker.userId });
    csrfRefused(res, headers);
    return false;
  }

  /** `Origin`, when sent, is this server's own; `Sec-Fetch-Site`, when sent, says same-origin. */
  function sameOrigin(req: IncomingMessage): boolean {
    const site = headerOf(req, 'sec-fetch-site');
    if (site !== undefined && site !== 'same-origin' && site !== 'none') return false;
    const origin = headerOf(req, 'origin');
    if (origin === undefined) return true;
    const host = headerOf(req, 'host');
    if (host === undefined || host.length === 0) return false;
    const encrypted = (req.socket as { encrypted?: boolean }).encrypted === true;
    const scheme = encrypted || options.secureCookies ? 'https' : 'http';
    return origin.toLowerCase() === `${scheme}://${host.toLowerCase()}`;
  }

  function csrfRefused(res: ServerResponse, headers: Headers): void {
    sendError(
      res,
      403,
      'PERMISSION_DENIED',
      'This change must come from the console page itself (CSRF check failed); reload the console and try again',
      headers,
      'csrf',
    );
  }

  function clearCookie(): string {
    return `${SESSION_COOKIE}=; Max-Age=0${cookieSuffix}`;
  }

  // ---------------------------------------------------------------- bodies and errors

  /** The body (under the limits), or undefined once refused. */
  async function readBounded(
    req: IncomingMessage,
    res: ServerResponse,
    limit: number,
    headers: Headers,
  ): Promise<Buffer | undefined> {
    const body = await readBody(req, limit, bodyTimeoutMs);
    if (body.ok) return body.body;
    if (body.reason === 'aborted') {
      res.destroy();
      return undefined;
    }
    // The rest of the body is never read: the connection closes after the answer.
    res.shouldKeepAlive = false;
    res.once('finish', () => req.destroy());
    if (body.reason === 'too_large') {
      sendError(res, 413, 'INVALID_ARGUMENT', `Request body is larger than ${limit} bytes`, headers);
    } else {
      sendError(res, 408, 'INVALID_ARGUMENT', `Request body did not arrive within ${bodyTimeoutMs} ms`, headers);
    }
    return undefined;
  }

  /** A JSON body, or FAILED once refused (wrong Content-Type, limits, not JSON). */
  async function readJson(
    req: IncomingMessage,
    res: ServerResponse,
    limit: number,
    headers: Headers,
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
      return JSON.parse(body.toString('utf8')) as unknown;
    } catch {
      sendError(res, 400, 'INVALID_ARGUMENT', 'The body is not valid JSON', headers);
      return FAILED;
    }
  }

  /** Runs a desk call; an ApprovalError (or anything else) is answered and FAILED returned. */
  async function guarded<T>(res: ServerResponse, headers: Headers, call: () => Promise<T>): Promise<T | typeof FAILED> {
    try {
      return await call();
    } catch (error) {
      approvalError(res, error, headers);
      return FAILED;
    }
  }

  function approvalError(res: ServerResponse, error: unknown, headers: Headers): void {
    const mapped = error instanceof ApprovalError ? ERROR_STATUS[error.code] : undefined;
    if (mapped === undefined || !(error instanceof ApprovalError)) {
      internalError(res, error);
      return;
    }
    sendError(res, mapped[0], mapped[1], error.message, headers, error.code);
  }

  return {
    handle,
    close: () => sessions.clear(),
  };
}

/** Marks a refused request in helpers that would otherwise return a value. */
const FAILED: unique symbol = Symbol('failed');

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function headerOf(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Every value of the cookie `name` in a Cookie header, in order (a browser may send two with
 * one name, e.g. from different paths).
 *
 * @example
 * ```ts
 * cookieValues('a=1; airlock_console=xyz', 'airlock_console'); // ['xyz']
 * ```
 */
export function cookieValues(header: string | undefined, name: string): string[] {
  if (header === undefined) return [];
  const out: string[] = [];
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq === -1) continue;
    if (pair.slice(0, eq).trim() !== name) continue;
    const value = pair.slice(eq + 1).trim();
    if (value.length > 0 && out.length < 8) out.push(value);
  }
  return out;
}

function sendJson(res: ServerResponse, status: number, payload: unknown, headers: Headers, extra: Headers = {}): void {
  const body = JSON.stringify(payload);
  res.writeHead(status, { ...headers, ...extra, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** `{"error":{"code":<status>,"status":"<CODE>","reason":"<code>","message":"…"}}`, the gateway's refusal shape. */
function sendError(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  headers: Headers,
  reason?: string,
  extra: Headers = {},
): void {
  const error =
    reason === undefined ? { code: status, status: code, message } : { code: status, status: code, reason, message };
  sendJson(res, status, { error }, headers, extra);
  dropUnreadBody(res);
}

function methodNotAllowed(res: ServerResponse, allow: string, headers: Headers): void {
  sendError(res, 405, 'METHOD_NOT_ALLOWED', `Use ${allow}`, headers, undefined, { allow });
}

function notFound(res: ServerResponse, headers: Headers): void {
  sendError(res, 404, 'NOT_FOUND', 'No such route', headers);
}

/**
 * After an answer sent before the request body was read: a request that has (or may have) a
 * body closes its connection instead of reading what is left (as the gateway's own refusals).
 */
function dropUnreadBody(res: ServerResponse): void {
  const req = res.req;
  if (req === undefined || req.complete) return;
  const length = req.headers['content-length'];
  if (req.headers['transfer-encoding'] === undefined && (length === undefined || length === '0')) return;
  res.shouldKeepAlive = false;
  res.once('finish', () => req.destroy());
}
