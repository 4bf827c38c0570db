/**
 * Limiters a config reload can replace while the admission steps built at start keep calling
 * the same object: each delegates to the limiter of the moment. A limiter whose limit did not
 * change is kept (its windows survive the reload); a changed one starts afresh.
 *
 * @example
 * ```ts
 * const rates = new LiveRates(new RateLimiter({ limit: 600 }), 600);
 * createRateStep({ rates, audit });
 * rates.setLimit(120, (limit) => new RateLimiter({ limit })); // on reload
 * ```
 */
import type { Socket } from 'node:net';
import type { ClientEntry } from '../../config/load.js';
import type { AuthOutcome } from '../auth/index.js';
import type { AuthFailureLockout } from '../limits/address-failures.js';
import type { RequestRateLimit } from '../limits/rate.js';
import type { CertificateIdentities } from '../tls/identity.js';

/**
 * A limiter of type `T` with the limit it was built for, replaced only when the limit changes.
 *
 * @example
 * ```ts
 * const held = new LiveLimiter(new RateLimiter({ limit: 10 }), 10);
 * held.setLimit(10, make); // same limit: kept, with its state
 * ```
 */
export class LiveLimiter<T> {
  #current: T;
  #limit: number;

  constructor(current: T, limit: number) {
    this.#current = current;
    this.#limit = limit;
  }

  /** The limiter in force. */
  get current(): T {
    return this.#current;
  }

  /**
   * Replaces the limiter when `limit` differs from the one in force; true when it did.
   *
   * @example
   * ```ts
   * held.setLimit(next.limits.requestsPerMinute, (limit) => new RateLimiter({ limit }));
   * ```
   */
  setLimit(limit: number, make: (limit: number) => T): boolean {
    if (limit === this.#limit) return false;
    this.#current = make(limit);
    this.#limit = limit;
    return true;
  }
}

/**
 * The request rate limit of the moment (`limits.requestsPerMinute`).
 *
 * @example
 * ```ts
 * const rates = new LiveRates(new RateLimiter({ limit: 600 }), 600);
 * rates.take('client:a', performance.now());
 * ```
 */
export class LiveRates extends LiveLimiter<RequestRateLimit> implements RequestRateLimit {
  take(key: string, now: number): true | number | Promise<true | number> {
    return this.current.take(key, now);
  }
}

/**
 * The failed-authentication lockout of the moment (`limits.authFailuresPerMinute`).
 *
 * @example
 * ```ts
 * const lockout = new LiveAuthFailures(new AuthFailureLimiter({ limit: 10 }), 10);
 * lockout.isLocked('127.0.0.1', performance.now());
 * ```
 */
export class LiveAuthFailures extends LiveLimiter<AuthFailureLockout> implements AuthFailureLockout {
  isLocked(address: string, now: number): number | Promise<number> {
    return this.current.isLocked(address, now);
  }

  recordFailure(address: string, now: number): number | Promise<number> {
    return this.current.recordFailure(address, now);
  }
}

/** What the authentication step asks of the client certificates (mTLS). */
type CertificateView = Pick<CertificateIdentities, 'active' | 'clientOf' | 'combine'>;

/**
 * The clients' certificates of the moment (mTLS, `clients[].certificate`): a reload that adds,
 * removes or changes a client replaces them with the clients' token digests, so a removed
 * client's certificate names no one from then on.
 *
 * @example
 * ```ts
 * const certificates = new LiveCertificates(new CertificateIdentities(config.clients));
 * certificates.replace(new CertificateIdentities(next.clients));
 * ```
 */
export class LiveCertificates implements CertificateView {
  #current: CertificateView;

  constructor(current: CertificateView) {
    this.#current = current;
  }

  /** Swaps in the certificates of a reloaded config. */
  replace(next: CertificateView): void {
    this.#current = next;
  }

  get active(): boolean {
    return this.#current.active;
  }

  clientOf(socket: Socket): ClientEntry | undefined {
    return this.#current.clientOf(socket);
  }

  combine(outcome: AuthOutcome, named: ClientEntry | undefined, presented: boolean, slug: string): AuthOutcome {
    return this.#current.combine(outcome, named, presented, slug);
  }
}
