/**
 * Who calls: the first admission steps every A2A route runs, composed once — the lockout of an
 * address with too many failed authentications (429 + Retry-After), the credentials (a token,
 * an API key, a JWT or a client certificate → the principal, or 401/403), then the principal's
 * request rate (429).
 *
 * @example
 * ```ts
 * const admitCaller = createCallerAdmission({ auth, audit, authFailures, rates, logger, apiKeyHeader: false });
 * const caller = await admitCaller(inbound); // AdmittedInbound, or REFUSED (already answered)
 * ```
 */
import type { InboundAudit } from '../inbound-audit.js';
import type { AuthFailureLockout, RequestRateLimit } from '../limits/index.js';
import { refuse } from '../respond/response.js';
import { createClientAuthentication, type ClientAuthenticationOptions } from './authenticate.js';
import { compose, type Step } from './compose.js';
import type { AdmittedInbound, AgentInbound } from './inbound.js';
import { createLockout, monotonicNow } from './lockout.js';
import { createRateStep } from './rate.js';

/**
 * What the caller steps need: the authentication step's options, the rate limiter, and the
 * audit trail for lockouts and rate refusals.
 *
 * @example
 * ```ts
 * const options: CallerAdmissionOptions = { auth, audit, authFailures, rates, logger, apiKeyHeader: true };
 * ```
 */
export interface CallerAdmissionOptions extends ClientAuthenticationOptions {
  audit: ClientAuthenticationOptions['audit'] & Pick<InboundAudit, 'rateLimited'>;
  rates: RequestRateLimit;
  authFailures: AuthFailureLockout;
}

/**
 * The composed caller admission: lockout → credentials → rate.
 *
 * @example
 * ```ts
 * const admitCaller = createCallerAdmission(options);
 * ```
 */
export function createCallerAdmission(options: CallerAdmissionOptions): Step<AgentInbound, AdmittedInbound> {
  const { audit, authFailures, rates } = options;
  return compose(
    createLockout<AgentInbound>({
      authFailures,
      now: monotonicNow,
      refuseLocked: (inbound, seconds) => {
        audit.rateLimited('auth_failure_limit', inbound.agent.config.slug, inbound.remote);
        refuse(
          inbound.res,
          429,
          'RESOURCE_EXHAUSTED',
          'Too many failed authentications from this address; try again later',
          { 'retry-after': String(seconds), connection: 'close' },
        );
      },
    }),
    createClientAuthentication(options),
    createRateStep({ rates, audit }),
  );
}
