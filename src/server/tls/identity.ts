/**
 * Client certificates as an identity (mTLS). A request on a TLS connection whose client
 * certificate the handshake verified against `server.tls.ca` (`socket.authorized`) and that
 * matches a client's `certificate` (subject and/or SHA-256 fingerprint) names that client. An
 * unverified certificate never names anyone, nor does a verified one no client lists.
 *
 * How it combines with the token (`combine`, a pure function):
 * - certificate and token (or JWT) both presented: they must name the same client, else 401;
 * - the certificate alone: the client, only when its entry says `alone: true`; else the request
 *   is judged as if no certificate were there (401 without a credential);
 * - a token alone: as before, unless its client says `required: true` (then 401).
 *
 * @example
 * ```ts
 * const identities = new CertificateIdentities(config.clients);
 * const named = identities.clientOf(req.socket);
 * const outcome = identities.combine(tokenOutcome, named, presented, 'echo');
 * ```
 */
import type { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import type { ClientEntry } from '../../config/airlock-config.js';
import { normalizeSubject } from '../../config/tls.js';
import { makePrincipal } from '../../identity/principal.js';
import type { AuthOutcome } from '../auth/outcome.js';

// Refusals carry no per-request data (as in auth/clients.ts).
const INVALID: AuthOutcome = Object.freeze({ ok: false, status: 401, reason: 'invalid_credentials' });

interface Named {
  client: ClientEntry;
  admitted: AuthOutcome;
  forbidden: AuthOutcome;
}

/**
 * The clients that name a certificate, and the rules that combine a certificate with a token.
 *
 * @example
 * ```ts
 * const identities = new CertificateIdentities(config.clients);
 * identities.active; // false when no client names a certificate
 * ```
 */
export class CertificateIdentities {
  readonly #named: Named[] = [];
  /** Clients whose token is refused without their certificate. */
  readonly #required = new Set<string>();

  constructor(clients: readonly ClientEntry[]) {
    for (const client of clients) {
      if (client.certificate === undefined) continue;
      // The same principal as the client's token: tasks are the client's, however it proved it.
      const principal = makePrincipal({ kind: 'client', clientId: client.id, subject: client.id });
      this.#named.push({
        client,
        admitted: Object.freeze({ ok: true, principal }),
        forbidden: Object.freeze({ ok: false, status: 403, reason: 'agent_not_allowed', principal }),
      });
      if (client.certificate.required) this.#required.add(client.id);
    }
  }

  /** Whether any client names a certificate (else nothing here runs per request). */
  get active(): boolean {
    return this.#named.length > 0;
  }

  /**
   * The client the connection's verified certificate names, if any.
   *
   * @example
   * ```ts
   * identities.clientOf(req.socket)?.id; // 'ci-bot'
   * ```
   */
  clientOf(socket: Socket): ClientEntry | undefined {
    return this.#namedBy(socket)?.client;
  }

  #namedBy(socket: Socket): Named | undefined {
    if (!this.active || !(socket instanceof TLSSocket) || !socket.authorized) return undefined;
    const certificate = socket.getPeerX509Certificate();
    if (certificate === undefined) return undefined;
    let subject: string | undefined;
    for (const entry of this.#named) {
      const wanted = entry.client.certificate;
      if (wanted === undefined) continue;
      if (wanted.fingerprint256 !== undefined && wanted.fingerprint256 !== certificate.fingerprint256) continue;
      if (wanted.subject !== undefined) {
        subject ??= normalizeSubject(certificate.subject, 'lines');
        if (wanted.subject !== subject) continue;
      }
      return entry;
    }
    return undefined;
  }

  /**
   * The outcome once the connection's certificate is weighed with the credential's `outcome`
   * (see the module comment). `presented`: a token, API key or JWT was sent.
   *
   * @example
   * ```ts
   * identities.combine(outcome, identities.clientOf(req.socket), true, 'echo');
   * ```
   */
  combine(outcome: AuthOutcome, named: ClientEntry | undefined, presented: boolean, slug: string): AuthOutcome {
    if (named === undefined) {
      // A token whose client requires its certificate, without it: not enough.
      const principal = outcome.ok || outcome.status === 403 ? outcome.principal : undefined;
      if (principal !== undefined && principal.kind === 'client' && this.#required.has(principal.clientId)) {
        return INVALID;
      }
      return outcome;
    }
    const entry = this.#named.find((candidate) => candidate.client === named);
    if (entry === undefined) return outcome;
    if (!presented) {
      if (!named.certificate?.alone) return outcome;
      return named.agents.has(slug) ? entry.admitted : entry.forbidden;
    }
    // Both presented: they must name one client (a JWT names no configured client).
    const principal = outcome.ok || outcome.status === 403 ? outcome.principal : undefined;
    if (principal === undefined || principal.kind !== 'client' || principal.clientId !== named.id) return INVALID;
    return outcome;
  }

  /**
   * `clientOf` and `combine` in one step, for the authentication step.
   *
   * @example
   * ```ts
   * const settled = identities.judge(outcome, req.socket, presented, slug);
   * ```
   */
  judge(outcome: AuthOutcome, socket: Socket, presented: boolean, slug: string): AuthOutcome {
    if (!this.active) return outcome;
    return this.combine(outcome, this.clientOf(socket), presented, slug);
  }
}
