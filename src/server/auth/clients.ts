/**
 * Configured client tokens. A token is looked up by its SHA-256 digest (a digest reveals nothing
 * an attacker can steer, so a map lookup leaks no timing about the token) and then compared in
 * constant time. Everything here is synchronous and allocates nothing per request on success:
 * this is the hot path.
 *
 * @example
 * ```ts
 * const auth = new ClientAuthenticator(config.clients, { apiKeyHeader: config.server.apiKeyHeader });
 * const outcome = auth.authenticate({ authorization: req.headers.authorization }, 'echo', isLoopback, false);
 * ```
 */
import type { ClientEntry } from '../../config/load.js';
import { sameDigestHex, tokenDigestHex } from '../../config/tokens.js';
import { makePrincipal, type Principal } from '../../identity/principal.js';
import type { AuthOutcome } from './outcome.js';

/** The credential headers of one request, as received (undefined when absent). */
export interface Credentials {
  /** The `Authorization` header. */
  authorization?: string | undefined;
  /** The `X-API-Key` header; read only when the API-key header is enabled. */
  apiKey?: string | undefined;
}

export interface ClientAuthenticatorOptions {
  /** Also accept a client token in `X-API-Key` when no Authorization header is sent. */
  apiKeyHeader?: boolean;
}

/** The header that carries an API key (HTTP header names are case-insensitive; Node lowercases them). */
export const API_KEY_HEADER = 'X-API-Key';

const BEARER = /^Bearer[ \t]+([!-~]{1,4096})[ \t]*$/i;
/** An API key is the bare token: visible ASCII, no scheme, no inner white space. */
const API_KEY = /^[ \t]*([!-~]{1,4096})[ \t]*$/;

/** Not a valid configured client id (those start with a letter or digit), so no client can share its tasks. */
const ANONYMOUS_ID = '*anonymous';

// Refusals carry no per-request data: one frozen object each, nothing allocated per refusal.
const MISSING: AuthOutcome = Object.freeze({ ok: false, status: 401, reason: 'missing_credentials' });
const INVALID: AuthOutcome = Object.freeze({ ok: false, status: 401, reason: 'invalid_credentials' });

/**
 * The token of an `Authorization: Bearer <token>` header, or undefined when the header is not a
 * well-formed bearer header (another scheme, empty, white space inside, over 4096 characters).
 *
 * @example
 * ```ts
 * bearerToken('Bearer abc'); // 'abc'
 * bearerToken('Basic abc'); // undefined
 * ```
 */
export function bearerToken(authorization: string | undefined): string | undefined {
  if (authorization === undefined) return undefined;
  return BEARER.exec(authorization)?.[1];
}

interface ClientMatch {
  client: ClientEntry;
  /** The client's token digest in hex, the map's key: compared again in constant time on a hit. */
  digestHex: string;
  /** Built once per client: the outcomes are the same for every request of that client. */
  admitted: AuthOutcome;
  forbidden: AuthOutcome;
}

/**
 * Authenticates configured client tokens, sent as `Authorization: Bearer <token>` or (when
 * enabled) as `X-API-Key: <token>`. Authorization wins when both are sent: a wrong Authorization
 * header is refused even if the API key is right, so a caller can never probe the one header
 * through the other.
 *
 * @example
 * ```ts
 * const auth = new ClientAuthenticator(config.clients, { apiKeyHeader: true });
 * auth.authenticate({ apiKey: token }, 'echo', false, false); // { ok: true, principal: … }
 * auth.authenticate(`Bearer ${token}`, 'echo', false, false); // the older string form still works
 * ```
 */
export class ClientAuthenticator {
  readonly #byDigest = new Map<string, ClientMatch>();
  readonly #apiKeyHeader: boolean;
  readonly #anonymous: AuthOutcome = Object.freeze({
    ok: true,
    principal: makePrincipal({ kind: 'client', clientId: ANONYMOUS_ID, subject: ANONYMOUS_ID }),
  });

  constructor(clients: readonly ClientEntry[], options: ClientAuthenticatorOptions = {}) {
    this.#apiKeyHeader = options.apiKeyHeader === true;
    for (const client of clients) {
      const principal: Principal = makePrincipal({ kind: 'client', clientId: client.id, subject: client.id });
      const digestHex = client.tokenDigest.toString('hex');
      this.#byDigest.set(digestHex, {
        client,
        digestHex,
        admitted: Object.freeze({ ok: true, principal }),
        forbidden: Object.freeze({ ok: false, status: 403, reason: 'agent_not_allowed', principal }),
      });
    }
  }

  /**
   * Decides who the caller is and whether it may reach `slug`. A caller with no credentials
   * is admitted only for an agent that allows anonymous loopback callers, and only from
   * loopback. An empty header counts as absent (as it always has for Authorization).
   *
   * `credentials` may be the Authorization header alone (the older signature) or both headers.
   *
   * @example
   * ```ts
   * auth.authenticate({ authorization: 'Bearer t', apiKey: undefined }, 'echo', true, false);
   * ```
   */
  authenticate(
    credentials: Credentials | string | undefined,
    slug: string,
    fromLoopback: boolean,
    anonymousLoopback: boolean,
  ): AuthOutcome {
    let authorization: string | undefined;
    let apiKey: string | undefined;
    if (typeof credentials === 'string' || credentials === undefined) authorization = credentials;
    else ({ authorization, apiKey } = credentials);
    let token: string | undefined;
    if (authorization !== undefined && authorization.length > 0) {
      // Authorization wins: never fall back to the API key, even when this one is wrong.
      token = BEARER.exec(authorization)?.[1];
    } else if (this.#apiKeyHeader && apiKey !== undefined && apiKey.length > 0) {
      token = API_KEY.exec(apiKey)?.[1];
    } else {
      return anonymousLoopback && fromLoopback ? this.#anonymous : MISSING;
    }
    if (token === undefined) return INVALID;
    return this.matchToken(token, slug) ?? INVALID;
  }

  /**
   * The outcome for a bare token: admitted or 403 when it is a configured client's token,
   * undefined when no client has it (so that a composing authenticator can try other kinds).
   *
   * @example
   * ```ts
   * auth.matchToken(token, 'echo')?.ok; // true, false (403) or undefined (unknown token)
   * ```
   */
  matchToken(token: string, slug: string): AuthOutcome | undefined {
    const digest = tokenDigestHex(token);
    const entry = this.#byDigest.get(digest);
    // Defence in depth, and equivalent code: the map is keyed by this very digest, so an entry
    // found always has an equal digest and the comparison cannot turn a found entry down. No
    // test can tell it from its absence (removing it changes no outcome), so it has no negative
    // test; what must hold (an unknown or altered token is refused) is tested on the lookup.
    if (entry === undefined || !sameDigestHex(entry.digestHex, digest)) {
      return undefined;
    }
    return entry.client.agents.has(slug) ? entry.admitted : entry.forbidden;
  }
}
