/**
 * The Origin step, right after the network gate on every A2A route (cards, keys, JSON-RPC,
 * ask): a request that carries an `Origin` header was sent by a web page, and a page on an
 * origin the operator did not list (`server.allowedOrigins`, none by default) is refused with
 * 403 and an audit row (`origin_not_allowed`). A request without `Origin` (every A2A client
 * that is not a browser) passes.
 *
 * The gateway's own origin is not admitted by itself: it would be judged by the `Host` header,
 * which a DNS-rebinding page controls (its requests are "same origin" with the name it rebound).
 * `Origin: null` (sandboxed frames, `file:` pages) is refused too.
 *
 * @example
 * ```ts
 * const checkOrigin = createOriginStep({ allowedOrigins: config.server.allowedOrigins, audit });
 * if (checkOrigin(arrival) === REFUSED) return;
 * ```
 */
import type { InboundAudit } from '../inbound-audit.js';
import { refuse } from '../respond/response.js';
import { REFUSED, type Refused } from './compose.js';
import type { Arrival } from './inbound.js';

/** What the refused page's operator reads: the setting that admits an origin. */
export const ORIGIN_REFUSED_MESSAGE =
  'Requests from web pages are refused: this Origin is not listed in server.allowedOrigins';

/**
 * The step over the allowed origins (normalized by the config loader as browsers send them).
 * O(1): one header read and one set lookup.
 *
 * @example
 * ```ts
 * const checkOrigin = createOriginStep({ allowedOrigins: ['http://localhost:3000'], audit });
 * ```
 */
export function createOriginStep(options: {
  allowedOrigins: readonly string[];
  audit: Pick<InboundAudit, 'forbidden'>;
}): <A extends Arrival>(arrival: A) => A | Refused {
  const allowed = new Set(options.allowedOrigins);
  const { audit } = options;
  return (arrival) => {
    const origin = arrival.req.headers.origin;
    if (origin === undefined || allowed.has(origin)) return arrival;
    audit.forbidden('origin_not_allowed', undefined, arrival.remote);
    refuse(arrival.res, 403, 'PERMISSION_DENIED', ORIGIN_REFUSED_MESSAGE, { vary: 'Origin' });
    return REFUSED;
  };
}
