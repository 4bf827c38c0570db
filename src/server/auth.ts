/**
 * Who is calling. Bearer tokens are looked up by their SHA-256 digest (a digest reveals
 * nothing an attacker can steer, so a map lookup leaks no timing about the token) and then
 * compared in constant time.
 *
 * @example
 * ```ts
 * const auth = new ClientAuthenticator(config.clients);
 * const outcome = auth.authenticate(req.headers.authorization, 'echo', isLoopback, agent.anonymousLoopback);
 * ```
 */
import crypto, { timingSafeEqual } from 'node:crypto';
import type { ClientEntry } from '../config/load.js';
import { hashToken } from '../config/tokens.js';

/** Everything that decides what a caller may see. */
export interface Principal {
  kind: 'client' | 'service' | 'delegated';
  /** The configured client (token clients) or the token's issuer-side client id. */
  clientId: string;
  subject: string;
  actingAgent?: string;
  /** `kind:client:actingAgent:subject`: the owner of every task this caller creates. */
  key: string;
}

export type AuthOutcome =
  | { ok: true; principal: Principal }
  | { ok: false; status: 401; reason: 'missing_credentials' | 'invalid_credentials' }
  | { ok: false; status: 403; reason: 'agent_not_allowed'; principal: Principal };

const BEARER = /^Bearer[ \t]+([!-~]{1,4096})[ \t]*$/i;

/**
 * One-shot `crypto.hash` (Node 20.12+): the same SHA-256 digest of the token's UTF-8 bytes as
 * `hashToken`, without a Hash object per request. Older Node versions use `hashToken`.
 */
const oneShotHash = (crypto as { hash?: typeof crypto.hash }).hash;

/** The hex SHA-256 digest of a presented token, as `hashToken(token).toString('hex')`. */
function tokenDigestHex(token: string): string {
  return oneShotHash === undefined ? hashToken(token).toString('hex') : oneShotHash('sha256', token, 'hex');
}

/** Not a valid configured client id (those start with a letter or digit), so no client can share its tasks. */
const ANONYMOUS_ID = '*anonymous';

export function principalKey(kind: Principal['kind'], clientId: string, actingAgent: string, subject: string): string {
  return `${kind}:${clientId}:${actingAgent}:${subject}`;
}

export class ClientAuthenticator {
  readonly #byDigest = new Map<string, { client: ClientEntry; principal: Principal }>();
  readonly #anonymous: Principal = {
    kind: 'client',
    clientId: ANONYMOUS_ID,
    subject: ANONYMOUS_ID,
    key: principalKey('client', ANONYMOUS_ID, '', ANONYMOUS_ID),
  };

  constructor(clients: readonly ClientEntry[]) {
    for (const client of clients) {
      const principal: Principal = {
        kind: 'client',
        clientId: client.id,
        subject: client.id,
        key: principalKey('client', client.id, '', client.id),
      };
      this.#byDigest.set(client.tokenDigest.toString('hex'), { client, principal });
    }
  }

  /**
   * Decides who the caller is and whether it may reach `slug`. A caller with no
   * Authorization header is admitted only for an agent that allows anonymous loopback
   * callers, and only from loopback.
   */
  authenticate(
    authorization: string | undefined,
    slug: string,
    fromLoopback: boolean,
    anonymousLoopback: boolean,
  ): AuthOutcome {
    if (authorization === undefined || authorization.length === 0) {
      if (anonymousLoopback && fromLoopback) return { ok: true, principal: this.#anonymous };
      return { ok: false, status: 401, reason: 'missing_credentials' };
    }
    const match = BEARER.exec(authorization);
    if (match === null) return { ok: false, status: 401, reason: 'invalid_credentials' };
    const digest = tokenDigestHex(match[1] as string);
    const entry = this.#byDigest.get(digest);
    if (entry === undefined || !timingSafeEqual(entry.client.tokenDigest, Buffer.from(digest, 'hex'))) {
      return { ok: false, status: 401, reason: 'invalid_credentials' };
    }
    if (!entry.client.agents.has(slug)) {
      return { ok: false, status: 403, reason: 'agent_not_allowed', principal: entry.principal };
    }
    return { ok: true, principal: entry.principal };
  }
}
