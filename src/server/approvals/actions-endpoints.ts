/**
 * The actions endpoints of the approvals API (the person's own bearer token or JWT, or the
 * console's cookie with its CSRF token), and the dispatch of `/approvals…` paths.
 *
 *   GET  /approvals                                 the person's pending actions
 *   GET  /approvals/{actionId}                      one of them
 *   POST /approvals/{actionId}/approve | /deny      the decision
 *   /approvals/questions…                           see questions-endpoints.ts
 *
 * @example
 * ```ts
 * if (path === '/approvals' || path.startsWith('/approvals/')) await serveApprovals(surface, req, res, path, remote);
 * ```
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApprovalError, type ApprovalDecision } from '../../approvals/store.js';
import { sendJson } from '../respond/response.js';
import { ID, serveQuestions } from './questions-endpoints.js';
import { API_HEADERS, FAILED, methodNotAllowed, notFound } from './respond.js';
import type { ApprovalSurface } from './surface.js';

/**
 * Serves a path under `/approvals`.
 *
 * @example
 * ```ts
 * await serveApprovals(surface, req, res, '/approvals', remote);
 * ```
 */
export async function serveApprovals(
  surface: ApprovalSurface,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  remote: string | undefined,
): Promise<void> {
  const { personAuth, desk, calls } = surface;
  const rest = path.slice('/approvals'.length);
  const segments = rest === '' || rest === '/' ? [] : rest.slice(1).split('/');
  const method = req.method ?? 'GET';
  const [first, second] = segments;

  if (segments.length === 0) {
    if (method !== 'GET') return methodNotAllowed(res, 'GET', API_HEADERS);
    const asker = await personAuth.authenticate(req, res, remote, API_HEADERS);
    if (asker === undefined) return;
    return sendJson(res, 200, { approvals: await desk.pending(asker.userId) }, API_HEADERS);
  }
  if (first === 'questions') return serveQuestions(surface, req, res, segments, remote);
  if (first === undefined || !ID.test(first)) return notFound(res, API_HEADERS);
  if (segments.length === 1) {
    if (method !== 'GET') return methodNotAllowed(res, 'GET', API_HEADERS);
    const asker = await personAuth.authenticate(req, res, remote, API_HEADERS);
    if (asker === undefined) return;
    const approval = await calls.guarded(res, API_HEADERS, () => desk.get(asker.userId, first));
    if (approval === FAILED) return;
    if (approval === undefined) return calls.approvalError(res, new ApprovalError('not_found'), API_HEADERS);
    return sendJson(res, 200, { approval }, API_HEADERS);
  }
  if (segments.length === 2 && (second === 'approve' || second === 'deny')) {
    if (method !== 'POST') return methodNotAllowed(res, 'POST', API_HEADERS);
    return decideAction(surface, req, res, first, second, remote);
  }
  return notFound(res, API_HEADERS);
}

async function decideAction(
  surface: ApprovalSurface,
  req: IncomingMessage,
  res: ServerResponse,
  actionId: string,
  verb: 'approve' | 'deny',
  remote: string | undefined,
): Promise<void> {
  const { personAuth, bodies, calls, desk } = surface;
  const asker = await personAuth.authenticate(req, res, remote, API_HEADERS);
  if (asker === undefined) return;
  if (!personAuth.csrfSafe(req, res, asker, API_HEADERS)) return;
  // A body, if any, means nothing here; it is still read under the limits (not left unread).
  const body = await bodies.readBounded(req, res, surface.maxBodyBytes, API_HEADERS);
  if (body === undefined) return;
  const decision: ApprovalDecision = verb;
  const approval = await calls.guarded(res, API_HEADERS, () => desk.decide(actionId, asker.userId, decision, remote));
  if (approval === FAILED) return;
  sendJson(res, 200, { approval }, API_HEADERS);
}
