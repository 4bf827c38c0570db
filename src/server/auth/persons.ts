/**
 * People, as opposed to callers: who may decide a guarded action. A person signs in with
 * their own credential — a person token from `approvals.people`, or a JWT of the configured
 * issuer that names them as its subject and has no `act` claim (a token with `act` is an agent
 * acting for them, and an agent never decides). A client token is never a person's
 * credential: the loader refuses a person token equal to a client's, and client tokens are
 * not looked up here at all.
 *
 * @example
 * ```ts
 * const persons = new PersonAuthenticator(config.approvals?.people ?? [], auth.jwtVerifier());
 * const person = await persons.authenticate(bearerToken(req.headers.authorization));
 * if (person === undefined) return refuse(401);
 * ```
 */
import { timingSafeEqual } from 'node:crypto';
import type { PersonEntry } from '../../config/load.js';
import { hashToken } from '../../config/tokens.js';
import { looksLikeJwt, type JwtVerification } from './jwt.js';

/** A signed-in person: the id every approval names as its decider. */
export interface Person {
  /** `person:<id>` for a configured person, `jwt:<sub>` for a JWT's subject (see personUserId). */
  readonly userId: string;
  /** How they proved it: their person token, or their own JWT. */
  readonly via: 'token' | 'jwt';
}

/**
 * The user id of a person: configured people and JWT subjects live in separate namespaces, so
 * an identity provider's user named like a configured person can never decide for them.
 *
 * @example
 * ```ts
 * personUserId('token', 'alice'); // 'person:alice'
 * personUserId('jwt', 'alice'); // 'jwt:alice'
 * ```
 */
export function personUserId(via: Person['via'], id: string): string {
  return via === 'token' ? `person:${id}` : `jwt:${id}`;
}

/** Verifies a JWT as the gateway does for callers (issuer, audience, algorithms, keys). */
export type JwtVerifier = (token: string) => Promise<JwtVerification>;

/** Longest credential looked at; longer ones are refused without hashing. */
const MAX_CREDENTIAL_LENGTH = 8192;

export class PersonAuthenticator {
  readonly #byDigest = new Map<string, PersonEntry>();
  readonly #verifyJwt: JwtVerifier | undefined;

  constructor(people: readonly PersonEntry[], verifyJwt?: JwtVerifier) {
    for (const person of people) this.#byDigest.set(person.tokenDigest.toString('hex'), person);
    this.#verifyJwt = verifyJwt;
  }

  /** Whether anyone at all can sign in (people configured, or JWTs verified). */
  get configured(): boolean {
    return this.#byDigest.size > 0 || this.#verifyJwt !== undefined;
  }

  /**
   * The person a credential proves, or undefined. Synchronous for a person token; a Promise
   * only for a JWT. Never rejects.
   *
   * @example
   * ```ts
   * const found = persons.authenticate(token);
   * const person = found instanceof Promise ? await found : found;
   * ```
   */
  authenticate(token: string | undefined): Person | undefined | Promise<Person | undefined> {
    if (token === undefined || token.length === 0 || token.length > MAX_CREDENTIAL_LENGTH) return undefined;
    const digest = hashToken(token);
    const entry = this.#byDigest.get(digest.toString('hex'));
    if (entry !== undefined && timingSafeEqual(entry.tokenDigest, digest))
      return { userId: personUserId('token', entry.id), via: 'token' };
    const verify = this.#verifyJwt;
    if (verify === undefined || !looksLikeJwt(token)) return undefined;
    return verify(token).then(
      (verified) =>
        // A token with `act` is an agent acting for the person: it never decides for them.
        verified.ok && verified.principal.kind === 'service'
          ? { userId: personUserId('jwt', verified.principal.subject), via: 'jwt' as const }
          : undefined,
      () => undefined,
    );
  }
}
