/**
 * The network gate, the first step of every request: no route, card or credential check is
 * reached from outside loopback unless the operator allowed it, and a request relayed through
 * Airlock gateways is refused when its hop chain holds this gateway (a loop) or is as long as
 * `limits.maxHops`; a peer gateway's call is served (see `protocol/headers.ts`).
 *
 * @example
 * ```ts
 * const gate = createNetworkGate({ trustedProxies, allowNonLoopback: false, audit });
 * const arrival = gate(req, res);
 * if (arrival === REFUSED) return;
 * ```
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HOP_HEADER, parseHopChain } from '../../protocol/headers.js';
import { clientAddressOf, isLoopbackPeer } from '../gate/client-address.js';
import type { InboundAudit } from '../inbound-audit.js';
import { headerOf, refuse } from '../respond/response.js';
import { REFUSED, type Refused } from './compose.js';
import type { Arrival } from './inbound.js';

/**
 * What the gate needs: the parsed trusted proxies (an empty list: the peer address is the
 * caller's), whether callers from outside loopback are admitted, and the audit trail.
 *
 * @example
 * ```ts
 * const options: NetworkGateOptions = { trustedProxies: parseTrustedProxies([]), allowNonLoopback: false, audit };
 * ```
 */
export interface NetworkGateOptions {
  trustedProxies: Parameters<typeof clientAddressOf>[2];
  allowNonLoopback: boolean;
  audit: Pick<InboundAudit, 'forbidden'>;
  /** This gateway's id in hop chains. */
  instanceId: string;
  /** `limits.maxHops`: a chain this long (or longer) is refused. */
  maxHops: number;
}

/**
 * The gate: the request's arrival (its judged address), or REFUSED with a 403 and an audit row.
 *
 * @example
 * ```ts
 * const arrival = createNetworkGate(options)(req, res);
 * ```
 */
export function createNetworkGate(
  options: NetworkGateOptions,
): (req: IncomingMessage, res: ServerResponse) => Arrival | Refused {
  const { trustedProxies, allowNonLoopback, audit, instanceId, maxHops } = options;
  // A request that passed no gateway yet: its relays send this chain on (shared, never copied).
  const ownChain: readonly string[] = Object.freeze([instanceId]);
  return (req, res) => {
    const peer = req.socket.remoteAddress;
    const remote =
      trustedProxies.length === 0 ? peer : clientAddressOf(peer, headerOf(req, 'x-forwarded-for'), trustedProxies);
    const fromLoopback = isLoopbackPeer(remote);
    if (!fromLoopback && !allowNonLoopback) {
      audit.forbidden('address_not_allowed', undefined, remote);
      refuse(res, 403, 'PERMISSION_DENIED', 'Callers from outside this machine are not admitted');
      return REFUSED;
    }
    const header = req.headers[HOP_HEADER];
    if (header === undefined) return { req, res, remote, fromLoopback, via: ownChain };
    const chain = parseHopChain(header);
    if (chain === undefined) {
      audit.forbidden('hop_refused', undefined, remote);
      refuse(res, 400, 'INVALID_ARGUMENT', `The ${HOP_HEADER} header is not a list of Airlock instance ids`);
      return REFUSED;
    }
    if (chain.includes(instanceId)) {
      audit.forbidden('relay_loop', undefined, remote);
      refuse(
        res,
        508,
        'ABORTED',
        `Refused: a relay loop (this request already passed this gateway, ${instanceId}; gateways passed: ${chain.join(' → ')})`,
      );
      return REFUSED;
    }
    if (chain.length >= maxHops) {
      audit.forbidden('too_many_hops', undefined, remote);
      refuse(
        res,
        508,
        'ABORTED',
        `Refused: this request passed ${chain.length} Airlock gateways already (limits.maxHops is ${maxHops})`,
      );
      return REFUSED;
    }
    return { req, res, remote, fromLoopback, via: [...chain, instanceId] };
  };
}
