/**
 * `Expect: 100-continue` after admission. Node answers `100 Continue` on its own, before any
 * handler runs, unless the server listens for `checkContinue`; the gateway does (http.ts) and
 * marks the request here, so that the client is told to send its body only once the gate, the
 * lockout, the credentials, the rate and the Content-Type have admitted it. A refused request
 * gets its 401/403/429 without a 100, and its body is never sent: its connection closes after
 * the answer (the client may not send the body, or send it late; either way the next bytes on
 * the connection cannot be told apart from a request). The body readers call
 * {@link continueIfAwaited} right before they read.
 *
 * @example
 * ```ts
 * server.on('checkContinue', (req, res) => { awaitContinue(req, res); route(req, res); });
 * continueIfAwaited(req, res); // in the body step, once admitted
 * ```
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Requests whose `100 Continue` is still owed (only those that asked for one), with their keep-alive. */
const awaiting = new WeakMap<IncomingMessage, boolean>();

/**
 * Marks `req` as waiting for its `100 Continue` (the `checkContinue` handler calls this). Until
 * it is sent, the connection is set to close after the answer.
 *
 * @example
 * ```ts
 * awaitContinue(req, res);
 * ```
 */
export function awaitContinue(req: IncomingMessage, res: ServerResponse): void {
  awaiting.set(req, res.shouldKeepAlive);
  res.shouldKeepAlive = false;
}

/**
 * Sends the `100 Continue` that `req` waits for, once; nothing for any other request. O(1):
 * a request that did not send `Expect` costs one header read.
 *
 * @example
 * ```ts
 * continueIfAwaited(req, res);
 * const body = await readBody(req, limit, timeoutMs);
 * ```
 */
export function continueIfAwaited(req: IncomingMessage, res: ServerResponse): void {
  if (req.headers.expect === undefined) return;
  const keepAlive = awaiting.get(req);
  if (keepAlive === undefined || res.headersSent) return;
  awaiting.delete(req);
  res.shouldKeepAlive = keepAlive;
  res.writeContinue();
}
