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
 *   GET  /console/api/sign-in                               where each person finds their token (no credential)
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
import type { PersonAuthenticator } from '../auth/persons.js';
import type { TokenHint } from '../console/token-hints.js';
import type { AuthFailureLockout } from '../limits/address-failures.js';
import type { Logger } from '../log.js';
import { serveApprovals } from './actions-endpoints.js';
import { serveConsole } from './console-routes.js';
import { createPersonAuth } from './person-auth.js';
import { createBodyReaders, createDeskCalls } from './respond.js';
import { ConsoleSessions } from './sessions.js';
import type { ApprovalSurface } from './surface.js';

export { cookieValues, CSRF_HEADER, SESSION_COOKIE } from './person-auth.js';
export { MAX_ANSWER_CHARS } from './questions-endpoints.js';

export interface ApprovalRoutesOptions {
  desk: ApprovalDesk;
  persons: PersonAuthenticator;
  /** Serve /console (else only the /approvals JSON API). */
  console: boolean;
  /** Where each configured person finds their token, for the sign-in page (never the tokens). */
  tokenHints?: readonly TokenHint[];
  /** Add `Secure` to the session cookie (the public URL is https). */
  secureCookies: boolean;
  authFailures: AuthFailureLockout;
  /** Writes the audit row for a failed sign-in / bad credential on these routes. */
  onAuthFailed(reason: 'missing_credentials' | 'invalid_credentials', remote: string | undefined): void;
  /** Writes the audit row for a valid JWT that is not a person's (403 `not_a_person`). */
  onNotAPerson?(userId: string, remote: string | undefined): void;
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

/**
 * The approvals routes (and the console's, when enabled).
 *
 * @example
 * ```ts
 * const routes = createApprovalRoutes(options);
 * const handled = await routes.handle(req, res, '/approvals', '127.0.0.1');
 * ```
 */
export function createApprovalRoutes(options: ApprovalRoutesOptions): ApprovalRoutes {
  const { desk, persons, authFailures, logger, maxBodyBytes, bodyTimeoutMs } = options;
  const now = options.now ?? ((): number => performance.timeOrigin + performance.now());
  const sessions = new ConsoleSessions({ now });
  const calls = createDeskCalls(logger);
  const surface: ApprovalSurface = {
    desk,
    persons,
    personAuth: createPersonAuth({
      persons,
      sessions,
      authFailures,
      now,
      logger,
      secureCookies: options.secureCookies,
      onAuthFailed: (reason, remote) => options.onAuthFailed(reason, remote),
      onNotAPerson: (userId, remote) => options.onNotAPerson?.(userId, remote),
    }),
    bodies: createBodyReaders(bodyTimeoutMs),
    calls,
    sessions,
    logger,
    maxBodyBytes,
    tokenHints: options.tokenHints ?? [],
  };

  /** True once the route has answered; an unexpected failure is logged and answered 500. */
  function settle(res: ServerResponse, served: Promise<void>): Promise<boolean> {
    return served.then(
      () => true,
      (error: unknown) => {
        calls.internalError(res, error);
        return true;
      },
    );
  }

  function handle(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    remote: string | undefined,
  ): boolean | Promise<boolean> {
    if (path === '/approvals' || path.startsWith('/approvals/')) {
      return settle(res, serveApprovals(surface, req, res, path, remote));
    }
    if (path === '/console' || path.startsWith('/console/')) {
      if (!options.console) return false;
      return settle(res, serveConsole(surface, req, res, path, remote));
    }
    return false;
  }

  return {
    handle,
    close: () => sessions.clear(),
  };
}
