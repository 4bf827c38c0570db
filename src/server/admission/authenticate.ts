/**
 * Client authentication for the agents' routes: the credentials (Authorization, and X-API-Key
 * when enabled) decide who is calling; the agent's allow list decides whether they may call
 * it. A 401 for a wrong credential is counted against the address (see lockout.ts); a 401 for
 * no credential at all is not, and a 403 is not.
 *
 * Why a missing credential is not counted: the lockout exists to stop credential guessing, and
 * a request without one guesses nothing. Counted, it let anyone who shares the address lock out
 * the callers who do hold a token, and on a loopback gateway every caller shares 127.0.0.1: a
 * web page in the user's browser sending a dozen credential-less `no-cors` POSTs locked every
 * client out for the rest of each minute (issue 16). A wrong token, a malformed Authorization
 * header or a bad JWT still counts, so guessing is still stopped after
 * `limits.authFailuresPerMinute`. Credential-less requests are cheap to refuse: no body is read
 * and the connection closes.
 *
 * An anonymous loopback caller (no credential, an agent with `anonymousLoopback`) is admitted
 * only when `Host` names loopback (loopback-host.ts): else 403 `host_not_loopback`, as a DNS
 * rebinding page on this machine would send its own name.
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
import { andThen, REFUSED, type Outcome, type Refused, type Step } from './compose.js';
import type { AdmittedInbound, AgentInbound } from './inbound.js';
import { countFailure } from './lockout.js';
import { isLoopbackHost } from './loopback-host.js';
import type { CertificateIdentities } from '../tls/identity.js';

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
  /** Client certificates that name clients (mTLS, tls/identity.ts); absent: certificates are no identity. */
  certificates?: Pick<CertificateIdentities, 'active' | 'clientOf' | 'combine'>;
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
  const { auth, audit, authFailures, logger, apiKeyHeader, certificates } = options;
  const unauthenticatedMessage = apiKeyHeader
    ? 'Authentication required: send Authorization: Bearer <token> or X-API-Key: <token>'
    : 'Authentication required: send Authorization: Bearer <token>';

  const unauthenticated = (inbound: AgentInbound): void =>
    refuse(inbound.res, 401, 'UNAUTHENTICATED', unauthenticatedMessage, {
      'www-authenticate': 'Bearer realm="airlock"',
      connection: 'close',
    });
  function judge(inbound: AgentInbound, outcome: AuthOutcome, anonymous: boolean): Outcome<AdmittedInbound> {
    if (outcome.ok) {
      if (anonymous && !isLoopbackHost(inbound.req.headers.host)) return rebound(inbound);
      inbound.principal = outcome.principal;
      return inbound as AdmittedInbound;
    }
    const slug = inbound.agent.config.slug;
    logger.warn({ event: outcome.status === 401 ? 'auth_failed' : 'forbidden', agent: slug, reason: outcome.reason });
    if (outcome.status === 401) {
      audit.authFailed(outcome.reason, slug, inbound.remote);
      // No credential guesses nothing: not counted (see the file comment).
      if (outcome.reason === 'missing_credentials') {
        unauthenticated(inbound);
        return REFUSED;
      }
      return countFailure(authFailures, inbound, () => unauthenticated(inbound));
    }
    audit.forbidden(outcome.reason, slug, inbound.remote, outcome.principal);
    refuse(inbound.res, 403, 'PERMISSION_DENIED', 'This client may not call this agent', { connection: 'close' });
    return REFUSED;
  }
  /** An anonymous caller whose Host is not loopback: a DNS-rebinding page, or a misdirected name. */
  function rebound(inbound: AgentInbound): Refused {
    const slug = inbound.agent.config.slug;
    logger.warn({ event: 'forbidden', agent: slug, reason: 'host_not_loopback' });
    audit.forbidden('host_not_loopback', slug, inbound.remote);
    refuse(
      inbound.res,
      403,
      'PERMISSION_DENIED',
      'Anonymous loopback callers must send a loopback Host (localhost, 127.0.0.1, [::1]); send a client token otherwise',
      { connection: 'close' },
    );
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
    const presented =
      (credentials.authorization !== undefined && credentials.authorization.length > 0) ||
      (credentials.apiKey !== undefined && credentials.apiKey.length > 0);
    // Admitted without credentials exactly when none was sent (ClientAuthenticator's rule).
    const anonymous = agent.config.anonymousLoopback && !presented;
    if (certificates === undefined || !certificates.active) {
      return andThen(outcome, (settled) => judge(inbound, settled, anonymous));
    }
    // mTLS: a verified certificate that names a client is weighed with the credential.
    const named = certificates.clientOf(req.socket);
    const byCertificate = anonymous && named?.certificate?.alone === true;
    return andThen(outcome, (settled) =>
      judge(inbound, certificates.combine(settled, named, presented, agent.config.slug), anonymous && !byCertificate),
    );
  };
}
