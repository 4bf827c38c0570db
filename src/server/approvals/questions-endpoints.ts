/**
 * The questions endpoints of the approvals API: remote agents' questions waiting for the
 * person, and the person's answer.
 *
 *   GET  /approvals/questions                       remote agents' questions waiting for them
 *   POST /approvals/questions/{questionId}/answer   {"text": "…"}
 *
 * @example
 * ```ts
 * if (first === 'questions') return serveQuestions(surface, req, res, segments, remote);
 * ```
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { API_HEADERS, FAILED, isRecord, methodNotAllowed, notFound, sendError } from './respond.js';
import type { ApprovalSurface } from './surface.js';
import { sendJson } from '../respond/response.js';

/**
 * Longest answer to a remote agent's question, in characters.
 *
 * @example
 * ```ts
 * if (text.length > MAX_ANSWER_CHARS) refuse400();
 * ```
 */
export const MAX_ANSWER_CHARS = 8192;

/** Action and question ids: base64url or similar opaque tokens. */
export const ID = /^[A-Za-z0-9_-]{1,200}$/;

/**
 * Serves `/approvals/questions…` (`segments` are the path's parts after `/approvals`).
 *
 * @example
 * ```ts
 * await serveQuestions(surface, req, res, ['questions'], remote);
 * ```
 */
export async function serveQuestions(
  surface: ApprovalSurface,
  req: IncomingMessage,
  res: ServerResponse,
  segments: readonly string[],
  remote: string | undefined,
): Promise<void> {
  const method = req.method ?? 'GET';
  const [, second, third] = segments;
  if (segments.length === 1) {
    if (method !== 'GET') return methodNotAllowed(res, 'GET', API_HEADERS);
    const asker = await surface.personAuth.authenticate(req, res, remote, API_HEADERS);
    if (asker === undefined) return;
    return sendJson(res, 200, { questions: await surface.desk.questions(asker.userId) }, API_HEADERS);
  }
  if (segments.length === 3 && second !== undefined && ID.test(second) && third === 'answer') {
    if (method !== 'POST') return methodNotAllowed(res, 'POST', API_HEADERS);
    return answerQuestion(surface, req, res, second, remote);
  }
  return notFound(res, API_HEADERS);
}

async function answerQuestion(
  surface: ApprovalSurface,
  req: IncomingMessage,
  res: ServerResponse,
  questionId: string,
  remote: string | undefined,
): Promise<void> {
  const { personAuth, bodies, calls, desk } = surface;
  const asker = await personAuth.authenticate(req, res, remote, API_HEADERS);
  if (asker === undefined) return;
  if (!personAuth.csrfSafe(req, res, asker, API_HEADERS)) return;
  const parsed = await bodies.readJson(req, res, surface.maxBodyBytes, API_HEADERS);
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
  const question = await calls.guarded(res, API_HEADERS, () => desk.answer(questionId, asker.userId, text, remote));
  if (question === FAILED) return;
  sendJson(res, 200, { question }, API_HEADERS);
}
