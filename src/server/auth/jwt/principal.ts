/**
 * What a verified token means: a `service` principal, or a `delegated` one when it carries an
 * `act` claim, and the agents it grants. Never a human principal: a JWT caller is always a
 * service or an agent, whoever it acts for.
 *
 * @example
 * ```ts
 * const verified = principalFromClaims(payload, { issuer, agentsClaim: 'scope', agentsPrefix: 'a2a:' });
 * ```
 */
import type { JWTPayload } from 'jose';
import { makePrincipal, type Principal } from '../../../identity/principal.js';
import { actingAgentOf } from './actors.js';
import type { JwtFailure } from './claims.js';
import { isIdentifier, own } from './shape.js';

/** Most entries of the agents claim looked at. */
const MAX_GRANTS = 1000;

/** The result of verifying a token, before any agent is considered. */
export type JwtVerification =
  | {
      ok: true;
      principal: Principal;
      /** Agent slugs the token grants (entries of the agents claim that carry the prefix). */
      grants: ReadonlySet<string>;
    }
  | { ok: false; failure: JwtFailure };

/**
 * How claims map to a principal: the issuer stands in for a missing client id; the agents
 * claim's entries that carry the prefix name the agents granted.
 *
 * @example
 * ```ts
 * const mapping: PrincipalMapping = { issuer: 'https://idp.example', agentsClaim: 'scope', agentsPrefix: 'a2a:' };
 * ```
 */
export interface PrincipalMapping {
  issuer: string;
  agentsClaim: string;
  agentsPrefix: string;
}

/**
 * The principal and grants of a verified payload: `sub` is the subject, `azp` or `client_id`
 * (else the issuer) the client, the current `act` actor the acting agent.
 *
 * @example
 * ```ts
 * const verified = principalFromClaims({ sub: 'svc', scope: 'a2a:echo' }, mapping);
 * // { ok: true, principal: { kind: 'service', ... }, grants: Set { 'echo' } }
 * ```
 */
export function principalFromClaims(payload: JWTPayload, mapping: PrincipalMapping): JwtVerification {
  const claims = payload as Record<string, unknown>;
  const subject = own(claims, 'sub');
  if (!isIdentifier(subject)) return { ok: false, failure: 'invalid_subject' };
  let clientId: string = mapping.issuer;
  for (const name of ['azp', 'client_id']) {
    const value = own(claims, name);
    if (typeof value !== 'string') continue;
    // A client id that is present but unfit refuses the token: falling back to the issuer
    // would fold that client into every other client of the issuer.
    if (!isIdentifier(value)) return { ok: false, failure: 'invalid_client_id' };
    clientId = value;
    break;
  }
  const actor = actingAgentOf(claims);
  if (!actor.ok) return actor;
  const { actingAgent } = actor;
  const principal = makePrincipal({
    kind: actingAgent === undefined ? 'service' : 'delegated',
    clientId,
    subject,
    ...(actingAgent !== undefined && { actingAgent }),
  });
  return { ok: true, principal, grants: grantsFrom(own(claims, mapping.agentsClaim), mapping.agentsPrefix) };
}

/** Entries equal to `agentsPrefix + slug` grant `slug`; a claim of any other shape grants nothing. */
function grantsFrom(claim: unknown, prefix: string): ReadonlySet<string> {
  const grants = new Set<string>();
  const entries = typeof claim === 'string' ? claim.split(' ', MAX_GRANTS) : Array.isArray(claim) ? claim : [];
  for (let i = 0; i < entries.length && i < MAX_GRANTS; i++) {
    const entry: unknown = entries[i];
    if (typeof entry === 'string' && entry.length > prefix.length && entry.startsWith(prefix)) {
      grants.add(entry.slice(prefix.length));
    }
  }
  return grants;
}
