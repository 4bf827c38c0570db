/**
 * The JSON-RPC route (`POST {basePath}/{slug}`, both dialects, SSE for streams). Admission
 * runs in full before the task service is called: the caller (lockout, credentials, rate),
 * the body (Content-Type, limits, depth), the decoded request, and for a message the turn
 * (limits, content rules, a concurrency slot → the grant the service runs the turn with).
 *
 * @example
 * ```ts
 * const serveRpc = createRpcRoute({ service, admitCaller, admitTurn, limits, cards, logger });
 * return serveRpc(forAgent(arrival, agent));
 * ```
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { A2AError } from '../../protocol/errors.js';
import { jsonRpcError } from '../../protocol/jsonrpc.js';
import { requestedVersion } from '../../protocol/version.js';
import type { TaskService } from '../../tasks/service.js';
import { createJsonBodyStep } from '../admission/body.js';
import { andThen, compose, REFUSED, type Step } from '../admission/compose.js';
import type { AdmittedInbound, AgentInbound } from '../admission/inbound.js';
import { extensionRequestOf } from '../admission/extensions.js';
import { delegationOf } from '../admission/delegation.js';
import type { StreamCandidate } from '../admission/stream-slot.js';
import type { TurnCandidate } from '../admission/turn.js';
import type { Logger } from '../log.js';
import { headerOf, refuse, writeJson } from '../respond/response.js';
import { decodeRpc, fallbackDialect, rpcFailure, runRpc, turnMessageOf, type RpcOutcome } from '../rpc.js';
import { pipeEventsAsSse, writeSseError } from '../sse.js';
import type { Span } from '@opentelemetry/api';
import { SPAN } from '../../telemetry/tracer.js';
import { noteRequest, noteRpcAnswer, serveInSpan, startInboundSpan, tracedStep, tracingActive } from '../trace.js';
import type { DialectVersion } from '../../protocol/dialect.js';
import type { PushService } from '../../push/service.js';
import type { A2AOperation } from '../../protocol/model.js';

/** `A2A-Version` from the header, else from the query (§3.6): one `indexOf` when there is no query. */
function versionOf(req: IncomingMessage): string | undefined {
  return requestedVersion(headerOf(req, 'a2a-version'), req.url);
}

/** The last event of a stream whose reader fell too far behind (the task goes on). */
export const READER_BEHIND_MESSAGE =
  'This stream fell too far behind its reader and was closed; the task goes on: read it with GetTask or subscribe again';

/**
 * What the route needs from the gateway around it.
 *
 * @example
 * ```ts
 * const deps: RpcRouteOptions = { service, admitCaller, admitTurn, limits, extendedCard, logger };
 * ```
 */
export interface RpcRouteOptions {
  service: TaskService;
  /** Lockout → credentials → rate. */
  admitCaller: Step<AgentInbound, AdmittedInbound>;
  /** Content rules → metadata caps → concurrency slot. */
  admitTurn: Step<TurnCandidate, TurnCandidate>;
  /** A stream slot (SendStreamingMessage, SubscribeToTask), given back when the stream ends. */
  admitStream: (candidate: StreamCandidate) => StreamCandidate | typeof REFUSED;
  limits: { maxBodyBytes: number; bodyTimeoutMs: number; maxJsonDepth: number };
  /** The agent's extended card as JSON text in `version`, for this request's base URL. */
  extendedCard: (inbound: AdmittedInbound, version: DialectVersion) => string | undefined;
  logger: Logger;
  /** Push-config operations, when `push.enabled`; absent: the push methods answer -32003. */
  push?: PushService;
}

/**
 * What the route notes of one request for whoever reports on it (the request meter, when
 * metrics are on: server/metrics/requests.ts), who hands it in and reads it once the route
 * settles: the canonical method and dialect once decoded, and the last answer written (none: a
 * step before decoding answered, which is always a refusal — a Content-Type refused over HTTP 200).
 *
 * @example
 * ```ts
 * const report: RpcReport = { method: undefined, dialect: undefined, outcome: undefined };
 * await serveRpc(inbound, report); // report.method === 'send'
 * ```
 */
export interface RpcReport {
  method: A2AOperation | undefined;
  dialect: DialectVersion | undefined;
  outcome: RpcOutcome | undefined;
}

/**
 * The route: serves one admitted-or-refused JSON-RPC request.
 *
 * @example
 * ```ts
 * const serveRpc = createRpcRoute(options);
 * await serveRpc(inbound);
 * ```
 */
export function createRpcRoute(options: RpcRouteOptions): (inbound: AgentInbound, report?: RpcReport) => Promise<void> {
  const { service, admitTurn, logger } = options;
  const readJson = createJsonBodyStep({
    ...options.limits,
    refuse: (inbound, status, code, message) => {
      // Content-Type refusals are JSON-RPC errors (-32005) over HTTP 200; size and time limits
      // keep their HTTP status with a JSON-RPC error body.
      const error = new A2AError(code, message);
      const dialect = fallbackDialect(versionOf(inbound.req));
      writeJson(
        inbound.res,
        code === 'CONTENT_TYPE_NOT_SUPPORTED' ? 200 : status,
        JSON.stringify(jsonRpcError(null, dialect.encodeError(error))),
      );
    },
  });
  // Credentials first: an unauthenticated caller's body is never read, let alone run.
  const admitRequest = compose(options.admitCaller, readJson);

  /** Sends an outcome; a stream is piped as SSE until it ends (the promise settles then). */
  function write(res: ServerResponse, outcome: RpcOutcome, report: RpcReport | undefined): Promise<void> | undefined {
    if (report !== undefined) report.outcome = outcome;
    if (outcome.kind === 'json') writeJson(res, 200, outcome.body);
    else if (outcome.kind === 'unavailable') {
      refuse(res, 503, 'UNAVAILABLE', outcome.message, { 'retry-after': String(outcome.retryAfterSeconds) });
    } else if (outcome.kind === 'stream-error') writeSseError(res, outcome.body);
    else return pipeStream(res, outcome);
    return undefined;
  }

  async function pipeStream(
    res: ServerResponse,
    outcome: Extract<RpcOutcome, { kind: 'stream' }>,
    behind?: () => string,
  ): Promise<void> {
    try {
      const end = await pipeEventsAsSse(res, outcome.events, outcome.frame, behind === undefined ? {} : { behind });
      if (end === 'behind') logger.warn({ event: 'stream_reader_behind' });
    } catch (error) {
      logger.error({ event: 'stream_failed', error: error instanceof Error ? error.message : String(error) });
      writeSseError(res, JSON.stringify(jsonRpcError(null, { code: -32603, message: 'Internal error' })));
    }
  }

  // The server span covers admission too; with no tracer registered there is none (no closure).
  return (inbound, report) => {
    const span = tracingActive()
      ? startInboundSpan('a2a.jsonrpc', headerOf(inbound.req, 'traceparent'), {
          'a2a.agent': inbound.agent.config.slug,
        })
      : undefined;
    return span === undefined
      ? serveRequest(inbound, undefined, report)
      : serveInSpan(span, () => serveRequest(inbound, span, report));
  };

  async function serveRequest(
    inbound: AgentInbound,
    span: Span | undefined,
    report: RpcReport | undefined,
  ): Promise<void> {
    const admitted = await (span === undefined
      ? admitRequest(inbound)
      : tracedStep(SPAN.admission, admitRequest, inbound, span));
    if (admitted === REFUSED) return;
    const { res, agent, principal } = admitted;
    let stream: StreamCandidate | undefined;
    try {
      const decoded = decodeRpc(admitted.body, versionOf(admitted.req), agent.onRpcError);
      if (!decoded.ok) {
        if (span !== undefined && decoded.outcome.kind === 'json') noteRpcAnswer(span, decoded.outcome.errorCode);
        return void write(res, decoded.outcome, report);
      }
      const { request, dialect, id } = decoded;
      if (span !== undefined) noteRequest(span, request);
      if (report !== undefined) {
        report.method = request.method;
        report.dialect = dialect.version;
      }
      const failed = (error: unknown): RpcOutcome => rpcFailure(error, id, dialect, request.method, agent.onRpcError);
      const turn: TurnCandidate = {
        ctx: {
          principalKey: principal.key,
          agentSlug: agent.config.slug,
          backend: agent.backend,
          // The principal itself: it carries clientId and kind, and is built once per client.
          caller: principal,
          via: admitted.via,
          delegation: delegationOf(admitted),
        },
        message: turnMessageOf(request),
        extensions: extensionRequestOf(admitted.req, res),
        refuseTurn: (error) => void write(res, failed(error), report),
        text: '',
        grant: undefined,
      };
      // A stream holds a slot from here until it ends, however it ends (the finally below).
      if (request.method === 'stream' || request.method === 'subscribe') {
        const slot = options.admitStream({
          ctx: turn.ctx,
          refuseStream: (error) => void write(res, failed(error), report),
          release: undefined,
        });
        if (slot === REFUSED) return;
        stream = slot;
      }
      const call = {
        service,
        context: turn.ctx,
        extendedCard: (version: DialectVersion) => options.extendedCard(admitted, version),
        onError: agent.onRpcError,
        push: options.push,
      };
      let outcome: RpcOutcome | typeof REFUSED;
      try {
        // Local caps answer at once: the turn goes to the service without a turn of the loop.
        outcome = await andThen(
          span === undefined ? admitTurn(turn) : tracedStep(SPAN.admissionTurn, admitTurn, turn, span),
          (granted) => (granted === REFUSED ? REFUSED : runRpc(decoded, call, granted.grant)),
        );
      } catch (error) {
        outcome = failed(error);
      }
      if (outcome !== REFUSED && outcome.kind === 'stream') {
        if (report !== undefined) report.outcome = outcome;
        await pipeStream(res, outcome, () =>
          JSON.stringify(jsonRpcError(id, dialect.encodeError(new A2AError('INTERNAL', READER_BEHIND_MESSAGE)))),
        );
      } else if (outcome !== REFUSED) {
        if (span !== undefined && outcome.kind !== 'unavailable') noteRpcAnswer(span, outcome.errorCode);
        void write(res, outcome, report);
      }
    } finally {
      stream?.release?.();
    }
  }
}
