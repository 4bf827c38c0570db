/**
 * The delegated caller's token for the call context: a delegated principal (a verified JWT with
 * `act`) came in through `Authorization: Bearer` (X-API-Key carries client tokens only), so that
 * header holds the very JWT that was verified. It is wrapped ({@link DelegatedToken}) so that no
 * log line, audit row or result can show it; a relay exchanges it for a token to its upstream.
 * Service principals and client-token callers have none.
 *
 * @example
 * ```ts
 * const ctx = { principalKey: principal.key, …, delegation: delegationOf(admitted) };
 * ```
 */
import { DelegatedToken } from '../../identity/delegation.js';
import { bearerToken } from '../auth/clients.js';
import type { AdmittedInbound } from './inbound.js';

/**
 * The wrapped bearer JWT of a delegated caller; undefined for any other caller.
 *
 * @example
 * ```ts
 * delegationOf(admitted)?.reveal(); // the verified JWT, for a token exchange only
 * ```
 */
export function delegationOf(admitted: Pick<AdmittedInbound, 'req' | 'principal'>): DelegatedToken | undefined {
  if (admitted.principal.kind !== 'delegated') return undefined;
  const token = bearerToken(admitted.req.headers.authorization);
  return token === undefined ? undefined : new DelegatedToken(token);
}
