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
 * const rpc = meter.jsonRpc(createRpcRoute({ ...bindingOptions, meter: meter.rpc }));
 * ```
 */
import type { ServerResponse } from 'node:http';
import type { A2AOperation } from '../../protocol/model.js';
import type { DialectVersion } from '../../protocol/dialect.js';
import type { HttpJsonRoute } from '../../protocol/http-json/index.js';
import type { AgentInbound } from '../admission/inbound.js';
import type { RpcRouteMeter } from '../routes/jsonrpc.js';
import type { RpcOutcome } from '../rpc.js';
import { refusal, UNKNOWN_LABEL } from './from-audit.js';
import type { MetricSeries } from './series.js';

export type RequestOutcome = 'ok' | 'refused' | 'error';

/** What the JSON-RPC route told the meter about one request. */
interface RpcTag {
  method: A2AOperation | typeof UNKNOWN_LABEL;
  dialect: DialectVersion | 'none';
  answer: RequestOutcome;
}

/**
 * The meter of each route.
 *
 * @example
 * ```ts
 * const routes = { rpc: meter.jsonRpc(rpc), httpJson: meter.httpJson(httpJson), ask: meter.ask(ask) };
 * ```
 */
export interface RequestMeter {
  /** Handed to the JSON-RPC route: it reports the decoded method and each answer. */
  readonly rpc: RpcRouteMeter;
  jsonRpc(route: (inbound: AgentInbound) => Promise<void>): (inbound: AgentInbound) => Promise<void>;
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
  const tags = new WeakMap<ServerResponse, RpcTag>();
  const tagOf = (res: ServerResponse): RpcTag => {
    let tag = tags.get(res);
    if (tag === undefined) {
      tag = { method: UNKNOWN_LABEL, dialect: 'none', answer: 'ok' };
      tags.set(res, tag);
    }
    return tag;
  };

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
  /** Runs a route and counts it once it ends: `error` when it threw (and rethrows), else `ok`. */
  async function metered(run: () => Promise<void> | void, counted: (answer: RequestOutcome) => void): Promise<void> {
    let answer: RequestOutcome = 'ok';
    try {
      await run();
    } catch (error) {
      answer = 'error';
      throw error;
    } finally {
      counted(answer);
    }
  }
  function countRefusal(agent: string, reason: 'body_too_large' | 'body_timeout'): void {
    for (const { labels } of refusal(agent, reason).counts) series.refusals.inc(...labels);
  }

  return {
    rpc: {
      decoded: (res, method, version) => {
        const tag = tagOf(res);
        tag.method = method;
        tag.dialect = version;
      },
      answered: (res, outcome) => {
        tagOf(res).answer = answerOf(outcome);
      },
    },
    jsonRpc: (route) => (inbound) =>
      metered(
        () => route(inbound),
        (answer) => {
          const tag = tags.get(inbound.res);
          tags.delete(inbound.res);
          count(
            inbound,
            'jsonrpc',
            tag?.method ?? UNKNOWN_LABEL,
            tag?.dialect ?? 'none',
            answer === 'ok' ? (tag?.answer ?? 'ok') : answer,
          );
        },
      ),
    httpJson: (route) => (inbound, binding) =>
      metered(
        () => route(inbound, binding),
        (answer) => count(inbound, 'http-json', binding.op, '1.0', answer),
      ),
    ask: (route) => (inbound) =>
      metered(
        () => route(inbound),
        (answer) => count(inbound, 'rest', 'send', 'none', answer),
      ),
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
  const code = rpcErrorCode(outcome.body);
  if (code === undefined) return 'ok';
  return code === -32603 ? 'error' : 'refused';
}

const ENVELOPE = '{"jsonrpc":"2.0","id":';
const ERROR_MEMBER = ',"error":{"code":';

/**
 * The error code of a JSON-RPC response the gateway wrote, or undefined for a result. Reads
 * only past the id (a string id is skipped to its closing quote), never the whole body.
 *
 * @example
 * ```ts
 * rpcErrorCode('{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"…"}}'); // -32001
 * rpcErrorCode('{"jsonrpc":"2.0","id":"a","result":{}}'); // undefined
 * ```
 */
export function rpcErrorCode(body: string): number | undefined {
  if (!body.startsWith(ENVELOPE)) return undefined;
  let at = ENVELOPE.length;
  if (body.charCodeAt(at) === 34 /* " */) {
    at += 1;
    while (at < body.length && body.charCodeAt(at) !== 34) at += body.charCodeAt(at) === 92 /* \ */ ? 2 : 1;
    at += 1;
  } else {
    while (at < body.length && body.charCodeAt(at) !== 44 /* , */) at += 1;
  }
  if (!body.startsWith(ERROR_MEMBER, at)) return undefined;
  const start = at + ERROR_MEMBER.length;
  let end = start;
  while (end < body.length && /[-0-9]/.test(body[end]!)) end += 1;
  const code = Number(body.slice(start, end));
  return Number.isInteger(code) && end > start ? code : undefined;
}
