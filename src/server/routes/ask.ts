/**
 * The REST ask route (`POST {basePath}/{slug}/ask`): the caller and body steps as for
 * JSON-RPC, then the ask body, then the turn steps, then one blocking SendMessage. Every
 * refusal is an ask error (the google.rpc.Status shape the OpenAPI document lists).
 *
 * @example
 * ```ts
 * const serveAsk = createAskRoute({ service, admitCaller, admitTurn, limits });
 * return serveAsk(forAgent(arrival, agent));
 * ```
 */
import type { ServerResponse } from 'node:http';
import { A2AError } from '../../protocol/errors.js';
import { CapacityError } from '../../tasks/policy.js';
import type { TaskService } from '../../tasks/service.js';
import { createJsonBodyStep } from '../admission/body.js';
import { andThen, compose, REFUSED, type Step } from '../admission/compose.js';
import { delegationOf } from '../admission/delegation.js';
import type { AdmittedInbound, AgentInbound } from '../admission/inbound.js';
import { extensionRequestOf } from '../admission/extensions.js';
import type { TurnCandidate } from '../admission/turn.js';
import { headerOf, sendJson } from '../respond/response.js';
import {
  askError,
  askErrorResponse,
  askMessage,
  AskRequestError,
  parseAskRequest,
  sendAsk,
  type AskErrorResponse,
} from '../rest/ask.js';
import type { Span } from '@opentelemetry/api';
import { ATTR, SPAN } from '../../telemetry/tracer.js';
import { noteError, serveInSpan, startInboundSpan, tracedStep, tracingActive } from '../trace.js';
import { decodeUtf8 } from '../../protocol/utf8.js';

/**
 * What the route needs from the gateway around it.
 *
 * @example
 * ```ts
 * const deps: AskRouteOptions = { service, admitCaller, admitTurn, limits };
 * ```
 */
export interface AskRouteOptions {
  service: TaskService;
  admitCaller: Step<AgentInbound, AdmittedInbound>;
  admitTurn: Step<TurnCandidate, TurnCandidate>;
  limits: { maxBodyBytes: number; bodyTimeoutMs: number; maxJsonDepth: number };
}

/**
 * An ask error, sent with its length.
 *
 * @example
 * ```ts
 * sendAskError(res, askError(400, 'The body is not valid JSON'));
 * ```
 */
export function sendAskError(res: ServerResponse, error: AskErrorResponse): void {
  const body = JSON.stringify(error.body);
  res.writeHead(error.status, {
    ...error.headers,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

/**
 * The route: serves one ask.
 *
 * @example
 * ```ts
 * const serveAsk = createAskRoute(options);
 * await serveAsk(inbound);
 * ```
 */
export function createAskRoute(options: AskRouteOptions): (inbound: AgentInbound) => Promise<void> {
  const { service, admitTurn } = options;
  const readJson = createJsonBodyStep({
    ...options.limits,
    refuse: (inbound, status, _code, message) => sendAskError(inbound.res, askError(status, message)),
  });
  const admitRequest = compose(options.admitCaller, readJson);

  // The server span covers admission too; with no tracer registered there is none (no closure).
  return (inbound) => {
    const span = tracingActive()
      ? startInboundSpan('a2a.ask', headerOf(inbound.req, 'traceparent'), { 'a2a.agent': inbound.agent.config.slug })
      : undefined;
    return span === undefined ? serveAsk(inbound, undefined) : serveInSpan(span, () => serveAsk(inbound, span));
  };

  async function serveAsk(inbound: AgentInbound, span: Span | undefined): Promise<void> {
    const admitted = await (span === undefined
      ? admitRequest(inbound)
      : tracedStep(SPAN.admission, admitRequest, inbound, span));
    if (admitted === REFUSED) return;
    const { res, agent, principal } = admitted;
    span?.setAttribute(ATTR.method, 'send');
    try {
      let parsed: unknown;
      try {
        parsed = JSON.parse(decodeUtf8(admitted.body));
      } catch {
        sendAskError(res, askError(400, 'The body is not valid JSON'));
        return;
      }
      // No length cap here: the turn steps apply maxInputChars, and audit the refusal.
      const message = askMessage(parseAskRequest(parsed));
      const turn: TurnCandidate = {
        ctx: {
          principalKey: principal.key,
          agentSlug: agent.config.slug,
          backend: agent.backend,
          caller: principal,
          via: admitted.via,
          delegation: delegationOf(admitted),
        },
        message,
        extensions: extensionRequestOf(admitted.req, res),
        refuseTurn: (error) => sendAskError(res, askErrorResponse(error)),
        text: '',
        grant: undefined,
      };
      const reply = await andThen(
        span === undefined ? admitTurn(turn) : tracedStep(SPAN.admissionTurn, admitTurn, turn, span),
        (granted) => (granted === REFUSED ? REFUSED : sendAsk(service, granted.ctx, message, granted.grant)),
      );
      if (reply !== REFUSED) sendJson(res, 200, reply);
    } catch (error) {
      if (!(error instanceof A2AError) && !(error instanceof AskRequestError) && !(error instanceof CapacityError)) {
        agent.onRpcError(error);
      }
      if (span !== undefined) noteError(span, error);
      sendAskError(res, askErrorResponse(error));
    }
  }
}
