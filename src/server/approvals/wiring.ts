/**
 * The approvals side of a gateway: the desk guarded actions and remote questions park at (the
 * task service's parking gate, always there), and, when `approvals` is configured, the
 * person's routes (`/approvals`, `/console`) and the console's view of audit rows and tasks.
 *
 * @example
 * ```ts
 * const approvals = openApprovals({ config, audit, auth, authFailures, logger, port: () => port });
 * const service = new TaskService({ store, gate: approvals.desk, observe: approvals.observe(auditObserver) });
 * ```
 */
import type { ApprovalRecords } from '../../tasks/stores/approval-records.js';
import { ApprovalService, type DecidedTask } from '../../approvals/gate.js';
import type { AutonomyLevel } from '../../approvals/ladder.js';
import { auditTime } from '../../audit/events.js';
import type { AirlockConfig } from '../../config/load.js';
import type { TaskObserver } from '../../tasks/policy.js';
import type { Authenticator } from '../auth/index.js';
import { PersonAuthenticator, personUserId } from '../auth/persons.js';
import { hostForUrl } from '../cards.js';
import { tokenHints } from '../console/token-hints.js';
import type { InboundAudit } from '../inbound-audit.js';
import type { AuthFailureLockout } from '../limits/address-failures.js';
import type { Logger } from '../log.js';
import { createApprovalRoutes, type ApprovalRoutes } from './routes.js';

/**
 * What {@link openApprovals} opens.
 *
 * @example
 * ```ts
 * approvals.routes?.close();
 * ```
 */
export interface GatewayApprovals {
  readonly desk: ApprovalService;
  /** Undefined when approvals are not configured. */
  readonly routes: ApprovalRoutes | undefined;
  /** The task observer: the audit trail's, plus the desk's when approvals are configured. */
  observe(auditObserver: TaskObserver | undefined): TaskObserver | undefined;
}

/**
 * Opens the approvals side of a gateway.
 *
 * @example
 * ```ts
 * const { desk, routes } = openApprovals({ config, audit, auth, authFailures, logger, port: () => 41241 });
 * ```
 */
export function openApprovals(options: {
  config: AirlockConfig;
  audit: InboundAudit;
  auth: Authenticator;
  authFailures: AuthFailureLockout;
  logger: Logger;
  port: () => number;
  /** Told of the task behind each decision and answer: the gateway resumes it (see resume-decided.ts). */
  onDecided?: (task: DecidedTask) => void;
  /** The durable task store's approval records: pending actions outlive the process (absent: memory). */
  records?: ApprovalRecords;
}): GatewayApprovals {
  const { config, audit, auth, authFailures, logger } = options;
  const settings = config.approvals;
  const desk = new ApprovalService({
    ...(settings !== undefined && { settings }),
    agentMaxLevels: new Map<string, AutonomyLevel>(
      config.agents.flatMap((agent) =>
        agent.actions === undefined ? [] : [[agent.slug, agent.actions.maxLevel] as const],
      ),
    ),
    continueOnDenied: new Set(
      config.agents.flatMap((agent) => (agent.actions?.onDenied === 'continue' ? [agent.slug] : [])),
    ),
    clientOwners: new Map(
      config.clients.flatMap((client) =>
        client.owner === undefined ? [] : [[client.id, personUserId('token', client.owner)] as const],
      ),
    ),
    ...(config.jwt !== undefined && { jwtIssuer: config.jwt.issuer }),
    secrets: config.scrubSecrets,
    audit: (event, required) => audit.record(event, required),
    baseUrl: () =>
      config.server.publicUrl ??
      `${config.server.tls !== undefined ? 'https' : 'http'}://${hostForUrl(config.server.host)}:${options.port()}`,
    ...(options.onDecided !== undefined && { onDecided: options.onDecided }),
    ...(options.records !== undefined && { records: options.records }),
  });
  const routes =
    settings === undefined
      ? undefined
      : createApprovalRoutes({
          desk,
          persons: new PersonAuthenticator(settings.people, auth.jwtVerifier(), settings.persons),
          console: settings.console,
          tokenHints: tokenHints(settings.people),
          secureCookies: config.server.publicUrl?.startsWith('https:') === true,
          authFailures,
          onAuthFailed: (reason, remote) => audit.authFailed(reason, undefined, remote),
          onNotAPerson: (user, remote) =>
            audit.record(
              {
                type: 'a2a.approval.decision_refused',
                time: auditTime(),
                outcome: 'denied',
                user,
                reason: 'not_a_person',
                ...(remote !== undefined && { remote }),
              },
              false,
            ),
          logger,
          maxBodyBytes: Math.min(config.server.maxBodyBytes, 64 * 1024),
          bodyTimeoutMs: config.server.bodyTimeoutMs,
        });
  return {
    desk,
    routes,
    observe: (auditObserver) =>
      settings === undefined || auditObserver === undefined
        ? auditObserver
        : (event) => {
            auditObserver(event);
            desk.observeTask(event);
          },
  };
}
