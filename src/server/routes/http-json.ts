/**
 * The HTTP+JSON route (v1.0 §11: `POST {agent}/message:send`, `GET {agent}/tasks/{id}`, …).
 * The same admission as the JSON-RPC route, in the same order: the caller (lockout,
 * credentials, rate), the version asked for, the body (Content-Type, limits, depth) for the
 * routes that take one, the decoded request, for a stream its slot, and the turn steps (the
 * extensions asked for, and for a message limits, content rules, a concurrency slot). Then the same task service
 * calls; only the codec at the edge (src/protocol/http-json/) differs.
 *
 * @example
 * ```ts
 * const serveHttpJson = createHttpJsonRoute({ service, admitCaller, admitTurn, admitStream, limits, extendedCard, logger, push });
 * const route = matchHttpJsonRoute(req.method, tail);
 * if (route?.kind === 'route') return serveHttpJson(forAgent(arrival, agent), route);
 * ```
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { A2AError } from '../../protocol/errors.js';
import {
  decodeHttpJsonRequest,
  HTTP_JSON_RESULTS,
  httpJsonError,
  responseMediaType,
  type HttpJsonRoute,
} from '../../protocol/http-json/index.js';
import type { A2ARequest } from '../../protocol/model.js';
import { parseA2AVersion, requestedVersion } from '../../protocol/version.js';
import { createJsonBodyStep } from '../admission/body.js';
import { andThen, REFUSED } from '../admission/compose.js';
import { delegationOf } from '../admission/delegation.js';
import { extensionRequestOf } from '../admission/extensions.js';
import type { AgentInbound } from '../admission/inbound.js';
import type { StreamCandidate } from '../admission/stream-slot.js';
import type { TurnCandidate } from '../admission/turn.js';
import { dropUnreadBody, headerOf, refuse, writeJson } from '../respond/response.js';
import { turnMessageOf } from '../rpc.js';
import { pipeEventsAsSse, writeSseError } from '../sse.js';
import type { Span } from '@opentelemetry/api';
import { SPAN } from '../../telemetry/tracer.js';
import { noteError, noteRequest, serveInSpan, startInboundSpan, tracedStep, tracingActive } from '../trace.js';
import { httpJsonFailure, runHttpJson, type HttpJsonOutcome } from './http-json/dispatch.js';
import { READER_BEHIND_MESSAGE, type RpcRouteOptions } from './jsonrpc.js';
import { decodeUtf8 } from '../../protocol/utf8.js';

/**
 * What the route needs: the same as the JSON-RPC route.
 *
 * @example
 * ```ts
 * const deps: HttpJsonRouteOptions = { service, admitCaller, admitTurn, admitStream, limits, extendedCard, logger };
 * ```
 */
export type HttpJsonRouteOptions = RpcRouteOptions;

/** Whether a request carries a body (a POST the SDK sends without one has neither header). */
function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** The query of a request URL. */
function queryOf(url: string | undefined): URLSearchParams {
  const at = url?.indexOf('?') ?? -1;
  return new URLSearchParams(at === -1 || url === undefined ? '' : url.slice(at + 1));
}

/** A JSON body in the media type the request used or accepts (`responseMediaType`). */
function writeBody(res: ServerResponse, status: number, body: string): void {
  dropUnreadBody(res);
  const type = responseMediaType(res.req.headers['content-type'], res.req.headers.accept);
  writeJson(res, status, body, type);
}

/**
 * An A2A error as the binding sends it: its v1.0.1 HTTP status (or `status`, for 413/408) and a
 * google.rpc.Status body.
 *
 * @example
 * ```ts
 * sendHttpJsonError(res, new A2AError('TASK_NOT_FOUND')); // 404
 * ```
 */
export function sendHttpJsonError(res: ServerResponse, error: A2AError, status?: number): void {
  const rendered = httpJsonError(error, status);
  writeBody(res, rendered.status, rendered.body);
}

/**
 * The route: serves one request the router matched to a binding route.
 *
 * @example
 * ```ts
 * const serve = createHttpJsonRoute(options);
 * await serve(inbound, { kind: 'route', op: 'get', taskId: 't-1', body: 'none' });
 * ```
 */
export function createHttpJsonRoute(
  options: HttpJsonRouteOptions,
): (inbound: AgentInbound, route: HttpJsonRoute) => Promise<void> {
  const { service, admitTurn, logger } = options;
  const readJson = createJsonBodyStep({
    ...options.limits,
    // v1.0.1: a wrong Content-Type is 400 (-32005); size and time keep 413 and 408.
    refuse: (inbound, status, code, message) =>
      sendHttpJsonError(
        inbound.res,
        new A2AError(code, message),
        code === 'CONTENT_TYPE_NOT_SUPPORTED' ? undefined : status,
      ),
  });

  function write(res: ServerResponse, outcome: HttpJsonOutcome): void {
    if (outcome.kind === 'json') writeBody(res, 200, outcome.body);
    else if (outcome.kind === 'error') sendHttpJsonError(res, outcome.error);
    else if (outcome.kind === 'unavailable') {
      refuse(res, 503, 'UNAVAILABLE', outcome.message, { 'retry-after': String(outcome.retryAfterSeconds) });
    }
  }

  async function pipeStream(res: ServerResponse, outcome: Extract<HttpJsonOutcome, { kind: 'stream' }>): Promise<void> {
    try {
      const end = await pipeEventsAsSse(res, outcome.events, HTTP_JSON_RESULTS.streamEvent, {
        behind: () => httpJsonError(new A2AError('INTERNAL', READER_BEHIND_MESSAGE)).body,
      });
      if (end === 'behind') logger.warn({ event: 'stream_reader_behind' });
    } catch (error) {
      logger.error({ event: 'stream_failed', error: error instanceof Error ? error.message : String(error) });
      writeSseError(res, httpJsonError(new A2AError('INTERNAL')).body);
    }
  }

  // The server span covers admission too; with no tracer registered there is none (no closure).
  return (inbound, route) => {
    const span = tracingActive()
      ? startInboundSpan('a2a.http_json', headerOf(inbound.req, 'traceparent'), {
          'a2a.agent': inbound.agent.config.slug,
        })
      : undefined;
    return span === undefined
      ? serveRequest(inbound, route, undefined)
      : serveInSpan(span, () => serveRequest(inbound, route, span));
  };

  async function serveRequest(inbound: AgentInbound, route: HttpJsonRoute, span: Span | undefined): Promise<void> {
    const caller = await (span === undefined
      ? options.admitCaller(inbound)
      : tracedStep(SPAN.admission, options.admitCaller, inbound, span));
    if (caller === REFUSED) return;
    const { req, res, agent, principal } = caller;
    let stream: StreamCandidate | undefined;
    try {
      // The binding is served at v1.0 only: a missing or empty A2A-Version (0.3) is refused too.
      try {
        if (parseA2AVersion(requestedVersion(headerOf(req, 'a2a-version'), req.url)) !== '1.0') {
          throw new A2AError('VERSION_NOT_SUPPORTED', 'This binding serves A2A-Version 1.0; send A2A-Version: 1.0');
        }
      } catch (error) {
        return write(res, httpJsonFailure(error, agent.onRpcError));
      }

      let body: unknown;
      if (route.body === 'json' || (route.body === 'optional' && hasBody(req))) {
        const withBody = await readJson(caller);
        if (withBody === REFUSED) return;
        try {
          body = JSON.parse(decodeUtf8(withBody.body));
        } catch {
          return sendHttpJsonError(res, new A2AError('JSON_PARSE'));
        }
      }
      let request: A2ARequest;
      try {
        request = decodeHttpJsonRequest(route, queryOf(req.url), body);
      } catch (error) {
        return write(res, noted(span, httpJsonFailure(error, agent.onRpcError)));
      }
      if (span !== undefined) noteRequest(span, request);

      const failed = (error: unknown): void => write(res, httpJsonFailure(error, agent.onRpcError));
      const turn: TurnCandidate = {
        ctx: {
          principalKey: principal.key,
          agentSlug: agent.config.slug,
          backend: agent.backend,
          caller: principal,
          via: caller.via,
          delegation: delegationOf(caller),
        },
        message: turnMessageOf(request),
        extensions: extensionRequestOf(req, res),
        refuseTurn: failed,
        text: '',
        grant: undefined,
      };
      // A stream holds a slot from here until it ends, however it ends (the finally below).
      if (request.method === 'stream' || request.method === 'subscribe') {
        const slot = options.admitStream({ ctx: turn.ctx, refuseStream: failed, release: undefined });
        if (slot === REFUSED) return;
        stream = slot;
      }
      const call = {
        service,
        context: turn.ctx,
        extendedCard: () => options.extendedCard(caller, '1.0'),
        onError: agent.onRpcError,
        push: options.push,
      };
      let outcome: HttpJsonOutcome | typeof REFUSED;
      try {
        outcome = await andThen(
          span === undefined ? admitTurn(turn) : tracedStep(SPAN.admissionTurn, admitTurn, turn, span),
          (granted) => (granted === REFUSED ? REFUSED : runHttpJson(request, call, granted.grant)),
        );
      } catch (error) {
        outcome = httpJsonFailure(error, agent.onRpcError);
      }
      if (outcome === REFUSED) return;
      if (outcome.kind === 'stream') await pipeStream(res, outcome);
      else write(res, noted(span, outcome));
    } finally {
      stream?.release?.();
    }
  }
}

/** The outcome, its error code noted on the server span first. */
function noted(span: Span | undefined, outcome: HttpJsonOutcome): HttpJsonOutcome {
  if (span !== undefined && outcome.kind === 'error') noteError(span, outcome.error);
  return outcome;
}
