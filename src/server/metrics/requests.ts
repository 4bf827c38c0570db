/**
 * The request meter: one increment of `airlock_requests_total` per answered A2A request, by
 * agent (the routed slug, from the config), binding, canonical method (`unknown` until a request
 * decodes), dialect and outcome (`ok`, `refused`: a 4xx, a 503 or an A2A error; `error`: any
 * other 5xx or an internal error). Counted when the route settles: a stream when it ends.
 *
 * Body refusals no audit row records (413, 408) are counted as refusals here.
 *
 * @example
 * ```ts
 * const meter = createRequestMeter(series);
 * const rpc = meter.jsonRpc(createRpcRoute(bindingOptions));
 * ```
 */
import type { HttpJsonRoute } from '../../protocol/http-json/index.js';
import type { AgentInbound } from '../admission/inbound.js';
import type { RpcReport } from '../routes/jsonrpc.js';
import type { RpcOutcome } from '../rpc.js';
import { refusal, UNKNOWN_LABEL } from './from-audit.js';
import type { MetricSeries } from './series.js';

export type RequestOutcome = 'ok' | 'refused' | 'error';

/**
 * The meter of each route.
 *
 * @example
 * ```ts
 * const routes = { rpc: meter.jsonRpc(rpc), httpJson: meter.httpJson(httpJson), ask: meter.ask(ask) };
 * ```
 */
export interface RequestMeter {
  /** The JSON-RPC route notes the decoded method and its answer in the report it is handed. */
  jsonRpc(
    route: (inbound: AgentInbound, report?: RpcReport) => Promise<void>,
  ): (inbound: AgentInbound) => Promise<void>;
  httpJson(
    route: (inbound: AgentInbound, binding: HttpJsonRoute) => Promise<void>,
  ): (inbound: AgentInbound, binding: HttpJsonRoute) => Promise<void>;
  ask(route: (inbound: AgentInbound) => Promise<void>): (inbound: AgentInbound) => Promise<void>;
}

/**
 * The meter over `series`.
 *
 * @example
 * ```ts
 * const meter = createRequestMeter(series);
 * ```
 */
export function createRequestMeter(series: Pick<MetricSeries, 'requests' | 'refusals'>): RequestMeter {
  function count(
    inbound: AgentInbound,
    binding: string,
    method: string,
    dialect: string,
    answer: RequestOutcome,
  ): void {
    const agent = inbound.agent.config.slug;
    const status = inbound.res.statusCode;
    if (status === 413) countRefusal(agent, 'body_too_large');
    else if (status === 408) countRefusal(agent, 'body_timeout');
    series.requests.inc(agent, binding, method, dialect, outcomeOf(status, answer));
  }
  /**
   * Counts a route once it settles: `error` when it threw (and rethrows), else what `ok` says.
   * One `then` on the route's own promise: no extra async frame per request.
   */
  function metered(running: Promise<void>, counted: (answer: RequestOutcome) => void): Promise<void> {
    return running.then(
      () => counted('ok'),
      (error: unknown) => {
        counted('error');
        throw error;
      },
    );
  }
  function countRefusal(agent: string, reason: 'body_too_large' | 'body_timeout'): void {
    for (const { labels } of refusal(agent, reason).counts) series.refusals.inc(...labels);
  }

  return {
    jsonRpc: (route) => (inbound) => {
      const report: RpcReport = { method: undefined, dialect: undefined, outcome: undefined };
      return metered(route(inbound, report), (answer) =>
        count(
          inbound,
          'jsonrpc',
          report.method ?? UNKNOWN_LABEL,
          report.dialect ?? 'none',
          answer === 'ok' ? (report.outcome === undefined ? 'refused' : answerOf(report.outcome)) : answer,
        ),
      );
    },
    httpJson: (route) => (inbound, binding) =>
      metered(route(inbound, binding), (answer) => count(inbound, 'http-json', binding.op, '1.0', answer)),
    ask: (route) => (inbound) => metered(route(inbound), (answer) => count(inbound, 'rest', 'send', 'none', answer)),
  };
}

/**
 * The outcome label from the HTTP status and what the route answered (JSON-RPC errors travel
 * over HTTP 200).
 *
 * @example
 * ```ts
 * outcomeOf(429, 'ok'); // 'refused'
 * outcomeOf(200, 'error'); // 'error'
 * ```
 */
export function outcomeOf(status: number, answer: RequestOutcome): RequestOutcome {
  if (status === 503 || (status >= 400 && status < 500)) return 'refused';
  if (status >= 500) return 'error';
  return answer;
}

/** A JSON-RPC outcome's label: an internal error (-32603) is an error, any other A2A error a refusal. */
function answerOf(outcome: RpcOutcome): RequestOutcome {
  if (outcome.kind === 'unavailable') return 'refused';
  if (outcome.kind === 'stream') return 'ok';
  const code = outcome.errorCode;
  if (code === undefined) return 'ok';
  return code === -32603 ? 'error' : 'refused';
}
