/**
 * Client authentication for the agents' routes: the credentials (Authorization, and X-API-Key
 * when enabled) decide who is calling; the agent's allow list decides whether they may call
 * it. A 401 is counted against the address (see lockout.ts); a 403 is not.
 *
 * @example
 * ```ts
 * const authenticate = createClientAuthentication({ auth, audit, authFailures, logger, apiKeyHeader: false });
 * const admit = compose(lockout, authenticate, rate);
 * ```
 */
import type { Authenticator, AuthOutcome } from '../auth/index.js';
import type { InboundAudit } from '../inbound-audit.js';
import type { AuthFailureLockout } from '../limits/address-failures.js';
import type { Logger } from '../log.js';
import { headerOf, refuse } from '../respond/response.js';
import { andThen, REFUSED, type Outcome, type Step } from './compose.js';
import type { AdmittedInbound, AgentInbound } from './inbound.js';
import { countFailure } from './lockout.js';

/**
 * What authentication needs.
 *
 * @example
 * ```ts
 * const options: ClientAuthenticationOptions = { auth, audit, authFailures, logger, apiKeyHeader: true };
 * ```
 */
export interface ClientAuthenticationOptions {
  auth: Pick<Authenticator, 'authenticate'>;
  audit: Pick<InboundAudit, 'authFailed' | 'forbidden'>;
  authFailures: AuthFailureLockout;
  logger: Logger;
  /** X-API-Key is read as a credential too (and the 401 says so). */
  apiKeyHeader: boolean;
}

/**
 * The authentication step: the caller's principal, or REFUSED with a 401 (counted, with
 * WWW-Authenticate) or a 403. A promise only for a JWT.
 *
 * @example
 * ```ts
 * const authenticate = createClientAuthentication(options);
 * ```
 */
export function createClientAuthentication(options: ClientAuthenticationOptions): Step<AgentInbound, AdmittedInbound> {
  const { auth, audit, authFailures, logger, apiKeyHeader } = options;
  const unauthenticatedMessage = apiKeyHeader
    ? 'Authentication required: send Authorization: Bearer <token> or X-API-Key: <token>'
    : 'Authentication required: send Authorization: Bearer <token>';

  function judge(inbound: AgentInbound, outcome: AuthOutcome): Outcome<AdmittedInbound> {
    if (outcome.ok) {
      inbound.principal = outcome.principal;
      return inbound as AdmittedInbound;
    }
    const slug = inbound.agent.config.slug;
    logger.warn({ event: outcome.status === 401 ? 'auth_failed' : 'forbidden', agent: slug, reason: outcome.reason });
    if (outcome.status === 401) {
      audit.authFailed(outcome.reason, slug, inbound.remote);
      return countFailure(authFailures, inbound, () =>
        refuse(inbound.res, 401, 'UNAUTHENTICATED', unauthenticatedMessage, {
          'www-authenticate': 'Bearer realm="airlock"',
          connection: 'close',
        }),
      );
    }
    audit.forbidden(outcome.reason, slug, inbound.remote, outcome.principal);
    refuse(inbound.res, 403, 'PERMISSION_DENIED', 'This client may not call this agent', { connection: 'close' });
    return REFUSED;
  }

  return (inbound) => {
    const { req, agent } = inbound;
    const credentials = {
      authorization: headerOf(req, 'authorization'),
      apiKey: apiKeyHeader ? headerOf(req, 'x-api-key') : undefined,
    };
    const outcome = auth.authenticate(
      credentials,
      agent.config.slug,
      inbound.fromLoopback,
      agent.config.anonymousLoopback,
    );
    return andThen(outcome, (settled) => judge(inbound, settled));
  };
}
