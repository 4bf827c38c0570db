/**
 * The request rate step: an admitted caller over its requests per minute is refused with 429
 * and Retry-After. Keyed by principal, judged with the clock reading the lockout step took.
 *
 * @example
 * ```ts
 * const rate = createRateStep({ rates: new RateLimiter({ limit: 600 }), audit });
 * const admit = compose(lockout, authenticate, rate);
 * ```
 */
import type { InboundAudit } from '../inbound-audit.js';
import type { RequestRateLimit } from '../limits/rate.js';
import { refuse } from '../respond/response.js';
import { andThen, REFUSED, type Step } from './compose.js';
import type { AdmittedInbound } from './inbound.js';

/**
 * The rate step over `rates` (this process's limiter, or one shared by replicas).
 *
 * @example
 * ```ts
 * const rate = createRateStep({ rates, audit });
 * ```
 */
export function createRateStep(options: {
  rates: RequestRateLimit;
  audit: Pick<InboundAudit, 'rateLimited'>;
}): Step<AdmittedInbound, AdmittedInbound> {
  const { rates, audit } = options;
  return (inbound) =>
    // A rate shared by replicas answers asynchronously; the local one at once.
    andThen(rates.take(inbound.principal.key, inbound.now), (wait) => {
      if (wait === true) return inbound;
      audit.rateLimited('client_rate_limit', inbound.agent.config.slug, inbound.remote, inbound.principal);
      refuse(inbound.res, 429, 'RESOURCE_EXHAUSTED', 'Too many requests; slow down', { 'retry-after': String(wait) });
      return REFUSED;
    });
}
