/**
 * What every handler of the approvals surface shares: the desk, person authentication, the
 * body readers and guarded desk calls, built once per gateway by `createApprovalRoutes`.
 *
 * @example
 * ```ts
 * const asker = await surface.personAuth.authenticate(req, res, remote, API_HEADERS);
 * ```
 */
import type { ApprovalDesk } from '../../approvals/desk.js';
import type { PersonAuthenticator } from '../auth/persons.js';
import type { TokenHint } from '../console/token-hints.js';
import type { Logger } from '../log.js';
import type { PersonAuth } from './person-auth.js';
import type { createBodyReaders, createDeskCalls } from './respond.js';
import type { ConsoleSessions } from './sessions.js';

/**
 * The shared parts of the approvals surface.
 *
 * @example
 * ```ts
 * const approvals = await surface.desk.pending(asker.userId);
 * ```
 */
export interface ApprovalSurface {
  desk: ApprovalDesk;
  persons: PersonAuthenticator;
  personAuth: PersonAuth;
  bodies: ReturnType<typeof createBodyReaders>;
  calls: ReturnType<typeof createDeskCalls>;
  sessions: ConsoleSessions;
  logger: Logger;
  /** The body cap of these routes. */
  maxBodyBytes: number;
  /** Where each configured person finds their token: the sign-in page shows it. */
  tokenHints: readonly TokenHint[];
}
