/**
 * People, as opposed to callers: who may decide a guarded action. A person signs in with
 * their own credential — a person token from `approvals.people`, or a JWT of the configured
 * issuer that names them as its subject, has no `act` claim (a token with `act` is an agent
 * acting for them, and an agent never decides), and carries the person marker of
 * `approvals.persons` (the marker scope; one of the allowed clients when they are listed). A
 * `sub` alone is not a person: a client-credentials token of another client can carry
 * `sub: alice`; such a token is answered {@link NotAPerson} (403 on the routes, audited). A
 * client token is never a person's credential: the loader refuses a person token equal to a
 * client's, and client tokens are not looked up here at all.
 *
 * @example
 * ```ts
 * const persons = new PersonAuthenticator(config.approvals?.people ?? [], auth.jwtVerifier(), config.approvals?.persons);
 * const person = await persons.authenticate(bearerToken(req.headers.authorization));
 * if (person === undefined) return refuse(401);
 * ```
 */
import { timingSafeEqual } from 'node:crypto';
import { jwtPersonId } from '../../approvals/decider.js';
import type { JwtPersonRule, PersonEntry } from '../../config/load.js';
import { hashToken } from '../../config/tokens.js';
import { looksLikeJwt, type JwtVerification } from './jwt.js';

export { jwtPersonId };

/** A signed-in person: the id every approval names as its decider. */
export interface Person {
  /** `person:<id>` for a configured person, `jwt:<issuer>#<sub>` for a JWT person (see personUserId). */
  readonly userId: string;
  /** How they proved it: their person token, or their own JWT. */
  readonly via: 'token' | 'jwt';
}

/**
 * A valid JWT of the issuer that is not a person's: a machine token (no marker scope, or a
 * client not in `allowedAzp`). It proves who sent it, so it is refused (403), not counted as a
 * failed guess. `userId` is the id it would have had, for the audit row.
 *
 * @example
 * ```ts
 * const refused: NotAPerson = { notAPerson: true, userId: 'jwt:https://idp.example#alice', missing: 'person_scope' };
 * ```
 */
export interface NotAPerson {
  readonly notAPerson: true;
  readonly userId: string;
  /** What it lacks: the marker scope, or an allowed client. */
  readonly missing: 'person_scope' | 'allowed_azp';
}

/**
 * Whether an authentication result is a refused machine token.
 *
 * @example
 * ```ts
 * if (isNotAPerson(found)) return refuse403(found.userId);
 * ```
 */
export function isNotAPerson(found: Person | NotAPerson | undefined): found is NotAPerson {
  return found !== undefined && (found as NotAPerson).notAPerson === true;
}

/**
 * The user id of a person: configured people and JWT subjects live in separate namespaces, so
 * an identity provider's user named like a configured person can never decide for them, and a
 * JWT subject is namespaced by its issuer (`%` and `#` of the issuer percent-encoded, so the
 * first `#` ends it).
 *
 * @example
 * ```ts
 * personUserId('token', 'alice'); // 'person:alice'
 * personUserId('jwt', 'alice', 'https://idp.example'); // 'jwt:https://idp.example#alice'
 * ```
 */
export function personUserId(via: Person['via'], id: string, issuer = ''): string {
  return via === 'token' ? `person:${id}` : jwtPersonId(issuer, id);
}

/** Verifies a JWT as the gateway does for callers (issuer, audience, algorithms, keys). */
export type JwtVerifier = (token: string) => Promise<JwtVerification>;

/** Longest credential looked at; longer ones are refused without hashing. */
const MAX_CREDENTIAL_LENGTH = 8192;
/** Most scope entries looked at. */
const MAX_SCOPES = 1000;
/** The rule when none is given: the default marker, any client. */
const DEFAULT_RULE: JwtPersonRule = { requiredScope: 'airlock:person' };

export class PersonAuthenticator {
  readonly #byDigest = new Map<string, PersonEntry>();
  readonly #verifyJwt: JwtVerifier | undefined;
  readonly #issuer: string;
  readonly #requiredScope: string;
  readonly #allowedAzp: ReadonlySet<string> | undefined;

  constructor(people: readonly PersonEntry[], verifyJwt?: JwtVerifier, rule: JwtPersonRule = DEFAULT_RULE) {
    for (const person of people) this.#byDigest.set(person.tokenDigest.toString('hex'), person);
    this.#verifyJwt = verifyJwt;
    this.#issuer = rule.issuer ?? '';
    this.#requiredScope = rule.requiredScope;
    this.#allowedAzp = rule.allowedAzp === undefined ? undefined : new Set(rule.allowedAzp);
  }

  /** Whether anyone at all can sign in (people configured, or JWTs verified). */
  get configured(): boolean {
    return this.#byDigest.size > 0 || this.#verifyJwt !== undefined;
  }

  /**
   * The person a credential proves, a {@link NotAPerson} for a valid machine JWT, or undefined.
   * Synchronous for a person token; a Promise only for a JWT. Never rejects.
   *
   * @example
   * ```ts
   * const found = persons.authenticate(token);
   * const person = found instanceof Promise ? await found : found;
   * ```
   */
  authenticate(token: string | undefined): Person | NotAPerson | undefined | Promise<Person | NotAPerson | undefined> {
    if (token === undefined || token.length === 0 || token.length > MAX_CREDENTIAL_LENGTH) return undefined;
    const digest = hashToken(token);
    const entry = this.#byDigest.get(digest.toString('hex'));
    if (entry !== undefined && timingSafeEqual(entry.tokenDigest, digest))
      return { userId: personUserId('token', entry.id), via: 'token' };
    const verify = this.#verifyJwt;
    if (verify === undefined || !looksLikeJwt(token)) return undefined;
    return verify(token).then(
      (verified) => {
        // A token with `act` is an agent acting for the person: it never decides for them.
        if (!verified.ok || verified.principal.kind !== 'service') return undefined;
        const userId = jwtPersonId(this.#issuer, verified.principal.subject);
        if (!hasScope(verified.claims, this.#requiredScope))
          return { notAPerson: true, userId, missing: 'person_scope' } as const;
        // The principal's client is `azp`, else `client_id`, else the issuer (no client named).
        if (this.#allowedAzp !== undefined && !this.#allowedAzp.has(verified.principal.clientId))
          return { notAPerson: true, userId, missing: 'allowed_azp' } as const;
        return { userId, via: 'jwt' as const };
      },
      () => undefined,
    );
  }
}

/** Whether `scope` (space-separated) or `scp` (an array, or a string) lists `wanted`. */
function hasScope(claims: Readonly<Record<string, unknown>> | undefined, wanted: string): boolean {
  if (claims === undefined) return false;
  for (const name of ['scope', 'scp']) {
    if (!Object.hasOwn(claims, name)) continue;
    const value = claims[name];
    const entries =
      typeof value === 'string' ? value.split(' ', MAX_SCOPES) : Array.isArray(value) ? value.slice(0, MAX_SCOPES) : [];
    if (entries.includes(wanted)) return true;
  }
  return false;
}
