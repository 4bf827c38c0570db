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
      /** The verified payload (read by the approvals' person check: its `scope`/`scp`). */
      claims?: Readonly<Record<string, unknown>>;
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
 * (else the issuer) the client, the current `act` actor the acting agent. Every claim read as
 * text must be text: a `sub`, `azp`, `client_id` or `act.sub` that is present but not an
 * identifier, or an agents claim that is not a string or an array of strings, refuses the
 * token (never a fallback to another claim, the issuer or "no grants").
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
  // Each of azp and client_id, when present, must be an identifier, whatever the other says:
  // a present but unfit one (a number, an object, null, an empty string) refuses the token.
  // Falling back to the next claim or to the issuer would fold that client into another.
  const azp = clientClaim(claims, 'azp');
  const clientIdClaim = clientClaim(claims, 'client_id');
  if (azp === INVALID || clientIdClaim === INVALID) return { ok: false, failure: 'invalid_client_id' };
  const clientId = azp ?? clientIdClaim ?? mapping.issuer;
  const actor = actingAgentOf(claims);
  if (!actor.ok) return actor;
  const { actingAgent } = actor;
  const grants = grantsFrom(own(claims, mapping.agentsClaim), mapping.agentsPrefix);
  if (grants === INVALID) return { ok: false, failure: 'invalid_agents_claim' };
  const principal = makePrincipal({
    kind: actingAgent === undefined ? 'service' : 'delegated',
    clientId,
    subject,
    ...(actingAgent !== undefined && { actingAgent }),
  });
  return { ok: true, principal, grants, claims };
}

/** A claim present with a value that is not what it must be. */
const INVALID = Symbol('invalid');

/** The claim's identifier; undefined when absent; INVALID when present but not an identifier. */
function clientClaim(claims: Record<string, unknown>, name: string): string | undefined | typeof INVALID {
  if (!Object.hasOwn(claims, name)) return undefined;
  const value = claims[name];
  return isIdentifier(value) ? value : INVALID;
}

/**
 * Entries equal to `agentsPrefix + slug` grant `slug`. The claim, when present, is a
 * space-separated string or an array of strings; any other shape, or an array holding a
 * non-string, is INVALID (the token is refused, not read as granting less). Every entry is
 * looked at (the token's length bounds them); at most {@link MAX_GRANTS} grants are kept.
 */
function grantsFrom(claim: unknown, prefix: string): ReadonlySet<string> | typeof INVALID {
  const grants = new Set<string>();
  if (claim === undefined) return grants;
  let entries: readonly unknown[];
  if (typeof claim === 'string') entries = claim.split(' ', MAX_GRANTS);
  else if (Array.isArray(claim)) entries = claim;
  else return INVALID;
  for (let i = 0; i < entries.length; i++) {
    const entry: unknown = entries[i];
    if (typeof entry !== 'string') return INVALID;
    if (grants.size < MAX_GRANTS && entry.length > prefix.length && entry.startsWith(prefix)) {
      grants.add(entry.slice(prefix.length));
    }
  }
  return grants;
}
