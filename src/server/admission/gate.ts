/**
 * The network gate, the first step of every request: no route, card or credential check is
 * reached from outside loopback unless the operator allowed it, and a request relayed by an
 * Airlock gateway is refused (loop protection).
 *
 * @example
 * ```ts
 * const gate = createNetworkGate({ trustedProxies, allowNonLoopback: false, audit });
 * const arrival = gate(req, res);
 * if (arrival === REFUSED) return;
 * ```
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HOP_HEADER } from '../../protocol/headers.js';
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
  const { trustedProxies, allowNonLoopback, audit } = options;
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
    if (req.headers[HOP_HEADER] !== undefined) {
      audit.forbidden('hop_refused', undefined, remote);
      refuse(res, 403, 'PERMISSION_DENIED', 'Requests relayed by an Airlock gateway are refused (loop protection)');
      return REFUSED;
    }
    return { req, res, remote, fromLoopback };
  };
}
