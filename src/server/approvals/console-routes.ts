/**
 * The web console's routes, when enabled: the page (strict CSP, no inline code), sign-in and
 * sign-out (an HttpOnly, SameSite=Strict session cookie plus a CSRF token the page sends back
 * in `X-Airlock-CSRF`), and the overview the page shows.
 *
 *   GET  /console, /console/app.js, /console/app.css        the page
 *   GET | POST | DELETE /console/session                    who is signed in / sign in / sign out
 *   GET  /console/api/overview                              everything the page shows, at once
 *   GET  /console/api/sign-in                               where each person finds their token
 *
 * @example
 * ```ts
 * if (path === '/console' || path.startsWith('/console/')) await serveConsole(surface, req, res, path, remote);
 * ```
 */
import { isLoopbackAddress } from '../gate/client-address.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CONSOLE_ASSETS, CONSOLE_SECURITY_HEADERS } from '../console/assets.js';
import { REFUSED } from '../admission/compose.js';
import { sendJson } from '../respond/response.js';
import { isNotAPerson } from '../auth/persons.js';
import { cookieValues, SESSION_COOKIE } from './person-auth.js';
import { CONSOLE_JSON_HEADERS, FAILED, isRecord, methodNotAllowed, notFound } from './respond.js';
import { SESSION_MAX_AGE_SECONDS, type ConsoleSession } from './sessions.js';
import type { ApprovalSurface } from './surface.js';

/** Tasks and audit rows the overview returns. */
const OVERVIEW_LIMIT = 50;
/** A sign-in body is one credential: never more than this, whatever maxBodyBytes says. */
const MAX_SIGN_IN_BYTES = 16_384;

/**
 * Serves a path under `/console`.
 *
 * @example
 * ```ts
 * await serveConsole(surface, req, res, '/console/session', remote);
 * ```
 */
export async function serveConsole(
  surface: ApprovalSurface,
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
    if (method === 'GET') return currentSession(surface, req, res, remote);
    if (method === 'POST') return signIn(surface, req, res, remote);
    if (method === 'DELETE') return signOut(surface, req, res, remote);
    return methodNotAllowed(res, 'GET, POST, DELETE', CONSOLE_JSON_HEADERS);
  }
  if (path === '/console/api/sign-in') {
    if (method !== 'GET') return methodNotAllowed(res, 'GET', CONSOLE_JSON_HEADERS);
    // Before sign-in, so no credential: only where tokens are (a path, a variable name), the
    // same lines the startup banner prints; a token is never part of a hint. Only a person on
    // this machine is told (where the banner is read too): nobody else learns ids or paths.
    const hints = isLoopbackAddress(remote) ? surface.tokenHints : [];
    return sendJson(res, 200, { tokenHints: hints }, CONSOLE_JSON_HEADERS);
  }
  if (path === '/console/api/overview') {
    if (method !== 'GET') return methodNotAllowed(res, 'GET', CONSOLE_JSON_HEADERS);
    const asker = await surface.personAuth.authenticate(req, res, remote, CONSOLE_JSON_HEADERS);
    if (asker === undefined) return;
    const { userId } = asker;
    const { desk } = surface;
    const overview = await surface.calls.guarded(res, CONSOLE_JSON_HEADERS, async () => {
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
async function currentSession(
  surface: ApprovalSurface,
  req: IncomingMessage,
  res: ServerResponse,
  remote: string | undefined,
): Promise<void> {
  const { personAuth } = surface;
  const ids = cookieValues(req.headers.cookie, SESSION_COOKIE);
  if (ids.length === 0) return personAuth.unauthenticated(res, CONSOLE_JSON_HEADERS, false);
  const asker = await personAuth.authenticate(req, res, remote, CONSOLE_JSON_HEADERS, true);
  if (asker === undefined) return;
  const session = asker.session as ConsoleSession;
  sendJson(res, 200, { userId: session.userId, csrf: session.csrf }, CONSOLE_JSON_HEADERS);
}

async function signIn(
  surface: ApprovalSurface,
  req: IncomingMessage,
  res: ServerResponse,
  remote: string | undefined,
): Promise<void> {
  const { personAuth, sessions, logger } = surface;
  // Login CSRF: a page elsewhere must not sign this browser in (as its own author).
  if (!personAuth.sameOrigin(req)) return personAuth.csrfRefused(res, CONSOLE_JSON_HEADERS);
  const attempt = await personAuth.lockout(personAuth.attempt(res, remote, CONSOLE_JSON_HEADERS));
  if (attempt === REFUSED) return;
  const limit = Math.min(surface.maxBodyBytes, MAX_SIGN_IN_BYTES);
  const parsed = await surface.bodies.readJson(req, res, limit, CONSOLE_JSON_HEADERS);
  if (parsed === FAILED) return;
  const token = isRecord(parsed) ? parsed.token : undefined;
  if (typeof token !== 'string' || token.length === 0) return personAuth.failAuth(attempt, 'missing_credentials');
  const person = await surface.persons.authenticate(token);
  if (person === undefined) return personAuth.failAuth(attempt, 'invalid_credentials');
  if (isNotAPerson(person)) return personAuth.notAPerson(res, CONSOLE_JSON_HEADERS, person, remote);
  // A session cookie sent along (an earlier sign-in) is replaced, not left alive.
  for (const id of cookieValues(req.headers.cookie, SESSION_COOKIE)) sessions.delete(id);
  const { id, session } = sessions.create(person.userId);
  logger.info({ event: 'console_signed_in', userId: person.userId, via: person.via });
  sendJson(res, 200, { userId: session.userId, csrf: session.csrf }, CONSOLE_JSON_HEADERS, {
    'set-cookie': `${SESSION_COOKIE}=${id}; Max-Age=${SESSION_MAX_AGE_SECONDS}${personAuth.cookieSuffix}`,
  });
}

async function signOut(
  surface: ApprovalSurface,
  req: IncomingMessage,
  res: ServerResponse,
  remote: string | undefined,
): Promise<void> {
  const { personAuth } = surface;
  const asker = await personAuth.authenticate(req, res, remote, CONSOLE_JSON_HEADERS, true);
  if (asker === undefined) return;
  if (!personAuth.csrfSafe(req, res, asker, CONSOLE_JSON_HEADERS)) return;
  surface.sessions.delete(asker.sessionId);
  surface.logger.info({ event: 'console_signed_out', userId: asker.userId });
  sendJson(res, 200, { signedOut: true }, CONSOLE_JSON_HEADERS, { 'set-cookie': personAuth.clearCookie() });
}
