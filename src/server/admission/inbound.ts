/**
 * What admission knows about a request as it goes through the steps. One record per request,
 * filled in as the steps learn more (who is calling, the body), so that no step allocates.
 *
 * @example
 * ```ts
 * const inbound = forAgent(arrival, agent); // then compose(lockout, authenticate, rate)(inbound)
 * ```
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Principal } from '../auth/index.js';
import type { PublishedAgent } from '../published-agents.js';

/**
 * A request past the network gate: where it comes from, as the gate judged it.
 *
 * @example
 * ```ts
 * if (!arrival.fromLoopback) audit.forbidden('address_not_allowed', undefined, arrival.remote);
 * ```
 */
export interface Arrival {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly remote: string | undefined;
  readonly fromLoopback: boolean;
  /** The gateways the request passed, this one last: the hop chain a relay of it sends on. */
  readonly via: readonly string[];
}

/**
 * A request for one agent, on its way through the caller steps. `now` is set by the lockout
 * step (the clock every later window is judged with), `principal` by authentication, `body`
 * by the body step.
 *
 * @example
 * ```ts
 * const inbound: AgentInbound = forAgent(arrival, agent);
 * ```
 */
export interface AgentInbound extends Arrival {
  readonly agent: PublishedAgent;
  now: number;
  principal: Principal | undefined;
  body: Buffer | undefined;
}

/**
 * A caller the steps admitted: its principal is known.
 *
 * @example
 * ```ts
 * const key = admitted.principal.key;
 * ```
 */
export type AdmittedInbound = AgentInbound & { principal: Principal };

/**
 * An admitted caller whose body was read (under the limits).
 *
 * @example
 * ```ts
 * JSON.parse(withBody.body.toString('utf8'));
 * ```
 */
export type InboundWithBody = AdmittedInbound & { body: Buffer };

/**
 * The record the caller steps fill in, for `agent`.
 *
 * @example
 * ```ts
 * const inbound = forAgent(arrival, agents.get(slug));
 * ```
 */
export function forAgent(arrival: Arrival, agent: PublishedAgent): AgentInbound {
  return {
    req: arrival.req,
    res: arrival.res,
    remote: arrival.remote,
    fromLoopback: arrival.fromLoopback,
    via: arrival.via,
    agent,
    now: 0,
    principal: undefined,
    body: undefined,
  };
}
