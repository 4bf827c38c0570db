/**
 * Who may decide a guarded action. Only the human behind the principal decides — never the
 * caller itself, whose reply on the task is the agent speaking, not the person:
 *
 * - delegated JWT principal → the delegating user (`principal.subject`), authenticated as
 *   themself (their own login, not the agent's delegated token);
 * - token client → the owner configured on that client (`clients.<id>.owner`);
 * - service principal → nobody. Fails closed: it is capped below the acting levels anyway.
 *
 * Every {@link Principal} is a machine (an agent or a client), so a decision actor is never
 * built from one: the approve endpoint authenticates the person separately and hands in a
 * {@link DecisionActor}.
 *
 * @example
 * ```ts
 * const decider = deciderFor(principal, new Map([['partner', 'alice@corp']]));
 * if (!mayDecide(decider, { kind: 'user', userId: session.userId })) return reply403();
 * ```
 */
import type { Principal } from '../identity/principal.js';

/**
 * The person entitled to decide, or why nobody is:
 * - `{ kind: 'user', userId, via }`: that user decides; `via` says how they were found.
 * - `{ kind: 'none', reason }`: nobody can; a proposal needing approval must be refused.
 *
 * @example
 * ```ts
 * const decider: Decider = { kind: 'user', userId: 'alice', via: 'delegating_user' };
 * ```
 */
export type Decider =
  | { readonly kind: 'user'; readonly userId: string; readonly via: 'delegating_user' | 'client_owner' }
  | { readonly kind: 'none'; readonly reason: NoDeciderReason };

/**
 * Why nobody may decide (stable codes):
 * - `service_principal`: a service has no human behind it.
 * - `client_has_no_owner`: the token client has no owner configured.
 * - `no_subject`: a delegated principal without a subject (a bad token; never trusted).
 *
 * @example
 * ```ts
 * const reason: NoDeciderReason = 'client_has_no_owner';
 * ```
 */
export type NoDeciderReason = 'service_principal' | 'client_has_no_owner' | 'no_subject';

/**
 * Someone trying to decide: a person authenticated as themself by the approve endpoint or the
 * console. `userId` is compared exactly (no case folding or trimming, which could merge two
 * accounts).
 *
 * @example
 * ```ts
 * const actor: DecisionActor = { kind: 'user', userId: 'alice' };
 * ```
 */
export interface DecisionActor {
  readonly kind: 'user';
  readonly userId: string;
}

/**
 * Client id → the user id of that client's owner, from config. A `Map`, not a plain object, so
 * a client id such as `__proto__` or `constructor` can never find an inherited value.
 *
 * @example
 * ```ts
 * const owners: ClientOwners = new Map([['partner', 'alice']]);
 * ```
 */
export type ClientOwners = ReadonlyMap<string, string>;

/**
 * Who may decide actions proposed on this principal's tasks. Pure.
 *
 * @example
 * ```ts
 * deciderFor(makePrincipal({ kind: 'delegated', clientId: 'app', subject: 'alice', actingAgent: 'bot' }), new Map());
 * // { kind: 'user', userId: 'alice', via: 'delegating_user' }
 * deciderFor(makePrincipal({ kind: 'client', clientId: 'partner', subject: 'partner' }), new Map([['partner', 'bob']]));
 * // { kind: 'user', userId: 'bob', via: 'client_owner' }
 * deciderFor(makePrincipal({ kind: 'service', clientId: 'ci', subject: 'build' }), new Map());
 * // { kind: 'none', reason: 'service_principal' }
 * ```
 */
export function deciderFor(principal: Principal, clientOwners: ClientOwners): Decider {
  switch (principal.kind) {
    case 'delegated':
      return principal.subject.length > 0
        ? { kind: 'user', userId: principal.subject, via: 'delegating_user' }
        : { kind: 'none', reason: 'no_subject' };
    case 'client': {
      const owner = clientOwners.get(principal.clientId);
      return typeof owner === 'string' && owner.length > 0
        ? { kind: 'user', userId: owner, via: 'client_owner' }
        : { kind: 'none', reason: 'client_has_no_owner' };
    }
    case 'service':
      return { kind: 'none', reason: 'service_principal' };
    default:
      // An unknown kind (a future one, or a malformed object) gets nobody: fail closed.
      return { kind: 'none', reason: 'service_principal' };
  }
}

/**
 * Whether `actor` may decide for `decider`: only the same user, exactly. Pure; fails closed on
 * anything malformed.
 *
 * @example
 * ```ts
 * mayDecide({ kind: 'user', userId: 'alice', via: 'delegating_user' }, { kind: 'user', userId: 'alice' }); // true
 * mayDecide({ kind: 'user', userId: 'alice', via: 'delegating_user' }, { kind: 'user', userId: 'Alice' }); // false
 * mayDecide({ kind: 'none', reason: 'service_principal' }, { kind: 'user', userId: 'alice' }); // false
 * ```
 */
export function mayDecide(decider: Decider, actor: DecisionActor): boolean {
  return (
    decider.kind === 'user' &&
    actor?.kind === 'user' &&
    typeof actor.userId === 'string' &&
    actor.userId.length > 0 &&
    actor.userId === decider.userId
  );
}

/**
 * A JWT person's user id: `jwt:<issuer>#<sub>`. A subject is a person only within its issuer,
 * so the issuer is part of the id (its `%` and `#` percent-encoded, so the first `#` ends it).
 * The gate names a delegating user so, and the approvals routes a person signed in with their
 * own JWT.
 *
 * @example
 * ```ts
 * jwtPersonId('https://idp.example', 'carol'); // 'jwt:https://idp.example#carol'
 * ```
 */
export function jwtPersonId(issuer: string, subject: string): string {
  return `jwt:${issuer.replace(/%/g, '%25').replace(/#/g, '%23')}#${subject}`;
}
