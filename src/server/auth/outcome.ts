/**
 * The answer of every authenticator (client tokens, JWTs): admit the request as a principal, or
 * refuse it with 401/403 and a fixed reason code for the audit row.
 *
 * @example
 * ```ts
 * const outcome: AuthOutcome = { ok: false, status: 401, reason: 'missing_credentials' };
 * ```
 */
import type { Principal } from '../../identity/principal.js';

/** What the gateway does with a request: admit it as `principal`, or refuse it with 401/403. */
export type AuthOutcome =
  | { ok: true; principal: Principal }
  | { ok: false; status: 401; reason: 'missing_credentials' | 'invalid_credentials' }
  | { ok: false; status: 403; reason: 'agent_not_allowed'; principal: Principal };
