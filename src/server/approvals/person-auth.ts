/**
 * Who is asking on the approvals surface, and whether a state change may go on. The address
 * lockout first (the same lockout, and the same failure → count → 401 sequence, as the
 * agents' routes: src/server/admission/lockout.ts); then a bearer credential if one is sent
 * (it decides, whatever the cookie says), else the console session cookie. Cookie-authenticated
 * state changes carry the session's CSRF token and, when the browser says where they come from,
 * this origin. Credentials, cookies and session ids are never logged.
 *
 * @example
 * ```ts
 * const personAuth = createPersonAuth({ persons, sessions, authFailures, now, logger, secureCookies, onAuthFailed });
 * const asker = await personAuth.authenticate(req, res, remote, API_HEADERS);
 * if (asker === undefined || !personAuth.csrfSafe(req, res, asker, API_HEADERS)) return;
 * ```
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { bearerToken } from '../auth/clients.js';
import { isNotAPerson, type NotAPerson, type PersonAuthenticator } from '../auth/persons.js';
import { REFUSED, type Refused } from '../admission/compose.js';
import { countFailure, createLockout, type LockoutSubject } from '../admission/lockout.js';
import type { AuthFailureLockout } from '../limits/address-failures.js';
import type { Logger } from '../log.js';
import { headerOf, type ResponseHeaders } from '../respond/response.js';
import { sendError } from './respond.js';
import { constantTimeEqual, type ConsoleSession, type ConsoleSessions } from './sessions.js';

/**
 * The console's session cookie.
 *
 * @example
 * ```ts
 * cookieValues(req.headers.cookie, SESSION_COOKIE);
 * ```
 */
export const SESSION_COOKIE = 'airlock_console';

/**
 * The header a cookie-authenticated state change must carry: the session's CSRF token.
 *
 * @example
 * ```ts
 * fetch('/console/session', { method: 'DELETE', headers: { [CSRF_HEADER]: csrf } });
 * ```
 */
export const CSRF_HEADER = 'x-airlock-csrf';

const UNAUTHENTICATED_MESSAGE =
  'Authentication required: send Authorization: Bearer <your person token or JWT>, or sign in to the console';

/**
 * Who is asking, once authenticated.
 *
 * @example
 * ```ts
 * const asker: Asker = { userId: 'token:alice' };
 * ```
 */
export interface Asker {
  userId: string;
  /** The console session when the cookie authenticated the request (absent for a bearer). */
  session?: ConsoleSession;
  sessionId?: string;
}

/**
 * One authentication attempt going through the lockout: the response, the header set it is
 * answered with, and the clock reading the lockout took.
 *
 * @example
 * ```ts
 * const attempt = await personAuth.lockout(personAuth.attempt(res, remote, CONSOLE_JSON_HEADERS));
 * ```
 */
export interface PersonAttempt extends LockoutSubject {
  readonly res: ServerResponse;
  readonly headers: ResponseHeaders;
}

/**
 * What person authentication needs.
 *
 * @example
 * ```ts
 * const options: PersonAuthOptions = { persons, sessions, authFailures, now, logger, secureCookies: false, onAuthFailed };
 * ```
 */
export interface PersonAuthOptions {
  persons: PersonAuthenticator;
  sessions: ConsoleSessions;
  authFailures: AuthFailureLockout;
  now: () => number;
  logger: Logger;
  secureCookies: boolean;
  onAuthFailed(reason: 'missing_credentials' | 'invalid_credentials', remote: string | undefined): void;
  /** Writes the audit row for a valid JWT that is not a person's (`decision_refused`, `not_a_person`). */
  onNotAPerson?(userId: string, remote: string | undefined): void;
}

/**
 * Person authentication over `options`.
 *
 * @example
 * ```ts
 * const personAuth = createPersonAuth(options);
 * ```
 */
export function createPersonAuth(options: PersonAuthOptions) {
  const { persons, sessions, authFailures, logger } = options;
  const cookieSuffix = `; HttpOnly; SameSite=Strict; Path=/${options.secureCookies ? '; Secure' : ''}`;
  const lockout = createLockout<PersonAttempt>({
    authFailures,
    now: options.now,
    refuseLocked: (attempt, seconds) =>
      sendError(
        attempt.res,
        429,
        'RESOURCE_EXHAUSTED',
        'Too many failed authentications from this address; try again later',
        attempt.headers,
        'auth_failure_limit',
        { 'retry-after': String(seconds), connection: 'close' },
      ),
  });

  const attempt = (res: ServerResponse, remote: string | undefined, headers: ResponseHeaders): PersonAttempt => ({
    res,
    remote,
    headers,
    now: 0,
  });

  /**
   * The person asking, or undefined once refused (the response is sent). The address lockout
   * first; then a bearer credential if one is sent, else the session cookie (unless
   * `cookieOnly`, when only the cookie counts).
   */
  async function authenticate(
    req: IncomingMessage,
    res: ServerResponse,
    remote: string | undefined,
    headers: ResponseHeaders,
    cookieOnly = false,
  ): Promise<Asker | undefined> {
    const admitted = await lockout(attempt(res, remote, headers));
    if (admitted === REFUSED) return undefined;
    const authorization = headerOf(req, 'authorization');
    if (authorization !== undefined && !cookieOnly) {
      const token = bearerToken(authorization);
      const person = token === undefined ? undefined : await persons.authenticate(token);
      if (person === undefined) return failAuth(admitted, 'invalid_credentials');
      if (isNotAPerson(person)) return notAPerson(res, headers, person, remote);
      return { userId: person.userId };
    }
    const ids = cookieValues(req.headers.cookie, SESSION_COOKIE);
    if (ids.length === 0) return failAuth(admitted, 'missing_credentials');
    for (const id of ids) {
      const session = sessions.get(id);
      if (session !== undefined) return { userId: session.userId, session, sessionId: id };
    }
    // A session that ended (signed out, idle, a restart): the browser is told to drop the cookie.
    // Not counted: a 256-bit session id cannot be guessed, and any page on another loopback port
    // can plant a cookie for this host (cookies ignore ports), so counting it would let that
    // page lock out everyone on the address.
    return failAuth(admitted, 'invalid_credentials', { 'set-cookie': clearCookie() }, false);
  }

  /**
   * Audits a failed authentication, counts it against the address when it tried a credential
   * (a request without one guesses nothing, and counting it would let anyone sharing the
   * address, e.g. a web page on loopback, lock out the people who hold one; issue 16), then
   * answers 401 (`connection: close`).
   */
  async function failAuth(
    failed: PersonAttempt,
    reason: 'missing_credentials' | 'invalid_credentials',
    extra: ResponseHeaders = {},
    counted = reason === 'invalid_credentials',
  ): Promise<undefined> {
    logger.warn({ event: 'approvals_auth_failed', reason });
    try {
      options.onAuthFailed(reason, failed.remote);
    } catch (error) {
      logger.error({
        event: 'approvals_audit_failed',
        error: error instanceof Error ? `${error.name}: ${error.message}` : 'non-error thrown',
      });
    }
    if (counted)
      await countFailure(authFailures, failed, () => unauthenticated(failed.res, failed.headers, true, extra));
    else unauthenticated(failed.res, failed.headers, true, extra);
    return undefined;
  }

  /**
   * A valid JWT that is not a person's own (a machine token carrying a person's `sub`): 403,
   * audited, not counted against the address (it is no guess: its signature is good).
   */
  function notAPerson(
    res: ServerResponse,
    headers: ResponseHeaders,
    refused: NotAPerson,
    remote: string | undefined,
  ): undefined {
    logger.warn({ event: 'approvals_not_a_person', userId: refused.userId, missing: refused.missing });
    try {
      options.onNotAPerson?.(refused.userId, remote);
    } catch (error) {
      logger.error({
        event: 'approvals_audit_failed',
        error: error instanceof Error ? `${error.name}: ${error.message}` : 'non-error thrown',
      });
    }
    const why =
      refused.missing === 'person_scope'
        ? 'it lacks the person scope (approvals.persons.requiredScope)'
        : 'its client is not one people sign in through (approvals.persons.allowedAzp)';
    sendError(
      res,
      403,
      'PERMISSION_DENIED',
      `This JWT is not a person's own sign-in: ${why}. Sign in with your own person token or JWT`,
      headers,
      'not_a_person',
    );
    return undefined;
  }

  function unauthenticated(
    res: ServerResponse,
    headers: ResponseHeaders,
    close: boolean,
    extra: ResponseHeaders = {},
  ): void {
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
  function csrfSafe(req: IncomingMessage, res: ServerResponse, asker: Asker, headers: ResponseHeaders): boolean {
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

  function csrfRefused(res: ServerResponse, headers: ResponseHeaders): void {
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

  return {
    /** The lockout step alone (a sign-in judges its credential itself). */
    lockout: lockout as (subject: PersonAttempt) => PersonAttempt | Refused | Promise<PersonAttempt | Refused>,
    attempt,
    authenticate,
    failAuth,
    notAPerson,
    unauthenticated,
    csrfSafe,
    sameOrigin,
    csrfRefused,
    clearCookie,
    cookieSuffix,
  };
}

/**
 * Person authentication as {@link createPersonAuth} builds it.
 *
 * @example
 * ```ts
 * function serve(personAuth: PersonAuth) {}
 * ```
 */
export type PersonAuth = ReturnType<typeof createPersonAuth>;

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
