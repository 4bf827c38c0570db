/**
 * The gateway's reload: what a new config changes in a running gateway. Everything is built
 * from the new config first (the turn steps and tool policies, a JWT verifier, the client
 * certificates); only then is anything swapped, so a part that cannot be built leaves the
 * running config whole. What is swapped applies to the next request; a request already past
 * a step keeps what that step decided (a running turn keeps its grant, an open stream stays).
 *
 * @example
 * ```ts
 * const reload = createGatewayReload({ config, logger, sharedLimits: false, auth, certificates, rates, authFailures, turns });
 * reload(() => loadConfigFile('airlock.yaml'));
 * ```
 */
import type { AirlockConfig } from '../../config/load.js';
import type { Authenticator } from '../auth/index.js';
import { AuthFailureLimiter, RateLimiter } from '../limits/index.js';
import type { Logger } from '../log.js';
import { CertificateIdentities } from '../tls/identity.js';
import type { LiveAuthFailures, LiveCertificates, LiveRates } from './live.js';
import { createReloader, type ReloadOutcome } from './reloader.js';
import type { LiveTurnAdmission } from './turn-admission.js';

/**
 * The swappable parts of one gateway.
 *
 * @example
 * ```ts
 * const parts: GatewayReloadParts = { config, logger, sharedLimits: false, auth, certificates, rates, authFailures, turns };
 * ```
 */
export interface GatewayReloadParts {
  config: AirlockConfig;
  logger: Logger;
  /** Rate, lockout and in-flight caps shared by replicas: their limits need a restart. */
  sharedLimits: boolean;
  auth: Pick<Authenticator, 'replaceClients' | 'replaceJwt'>;
  certificates: LiveCertificates;
  rates: LiveRates;
  authFailures: LiveAuthFailures;
  turns: LiveTurnAdmission;
  onReload?: ((outcome: ReloadOutcome) => void) | undefined;
}

/**
 * The reload function of a gateway built from `parts`.
 *
 * @example
 * ```ts
 * const outcome = createGatewayReload(parts)(() => next);
 * ```
 */
export function createGatewayReload(parts: GatewayReloadParts): (load: () => AirlockConfig) => ReloadOutcome {
  const { auth, certificates, rates, authFailures, turns, logger } = parts;
  return createReloader({
    config: parts.config,
    context: { sharedLimits: parts.sharedLimits },
    logger,
    ...(parts.onReload !== undefined && { onReload: parts.onReload }),
    apply: (next, diff) => {
      // Build first: each of these may throw, and nothing is swapped yet.
      const swapTurns = turns.prepare(next);
      const identities = new CertificateIdentities(next.clients);
      if (diff.changed.some((key) => key.startsWith('auth.jwt.'))) auth.replaceJwt(next.jwt, { logger });
      swapTurns();
      auth.replaceClients(next.clients, next.server.apiKeyHeader);
      certificates.replace(identities);
      rates.setLimit(next.limits.requestsPerMinute, (limit) => new RateLimiter({ limit }));
      authFailures.setLimit(next.limits.authFailuresPerMinute, (limit) => new AuthFailureLimiter({ limit }));
    },
  });
}
