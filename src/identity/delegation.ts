/**
 * The verified inbound JWT of a delegated caller (one whose token carries `act`), held so that
 * a relay can exchange it (RFC 8693) for a token to its upstream with the user as subject. The
 * token itself is a secret: it goes to the token endpoint as `subject_token` and nowhere else —
 * never on to a remote, into a log, an audit row or a result. Printing, JSON or `inspect` show
 * a fixed placeholder; only {@link DelegatedToken.reveal} gives the value.
 *
 * @example
 * ```ts
 * const delegation = new DelegatedToken(jwt);
 * JSON.stringify({ delegation }); // '{"delegation":"[delegated caller token]"}'
 * ```
 */
import { inspect } from 'node:util';

const SHOWN = '[delegated caller token]';

/**
 * A delegated caller's verified bearer JWT, wrapped.
 *
 * @example
 * ```ts
 * params.subject_token = delegation.reveal(); // for the token endpoint only
 * ```
 */
export class DelegatedToken {
  readonly #token: string;

  constructor(token: string) {
    this.#token = token;
  }

  /** The JWT, for a token exchange request (and for redaction); never for output. */
  reveal(): string {
    return this.#token;
  }

  toString(): string {
    return SHOWN;
  }

  toJSON(): string {
    return SHOWN;
  }

  [inspect.custom](): string {
    return SHOWN;
  }
}

/**
 * Who an outbound call relayed for an inbound caller acts for: `delegated` with the caller's
 * token when the caller is a delegated principal, else `service` (a service JWT or a client
 * token: the relay uses its own client credentials). A delegated caller whose token is not at
 * hand (a turn built by library code) carries `token: undefined`, and the relay refuses rather
 * than fall back to its own identity.
 *
 * @example
 * ```ts
 * const subject: OutboundSubject = { kind: 'delegated', token: new DelegatedToken(jwt) };
 * ```
 */
export type OutboundSubject =
  { readonly kind: 'delegated'; readonly token: DelegatedToken | undefined } | { readonly kind: 'service' };

const SERVICE: OutboundSubject = Object.freeze({ kind: 'service' });

/**
 * The outbound subject of a call: `delegated` (with its token, when at hand) for a delegated
 * caller, `service` for any other, including a call with no caller (library use).
 *
 * @example
 * ```ts
 * outboundSubjectOf({ caller: principal, delegation }); // { kind: 'delegated', token: delegation }
 * ```
 */
export function outboundSubjectOf(call: {
  readonly caller?: { readonly kind: string };
  readonly delegation?: DelegatedToken;
}): OutboundSubject {
  return call.caller?.kind === 'delegated' ? { kind: 'delegated', token: call.delegation } : SERVICE;
}
