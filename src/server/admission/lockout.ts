/**
 * The auth-failure lockout, shared by every surface that takes credentials (the agents'
 * routes, the approvals API and console): an address that failed authentication too often is
 * refused before its credentials are looked at, and every failure is counted before the 401
 * goes out, so that the next attempt is judged with it.
 *
 * @example
 * ```ts
 * const lockout = createLockout({ authFailures, now: monotonicNow, refuseLocked: (s, seconds) => tooMany(s, seconds) });
 * const admit = compose(lockout, authenticate);
 * ```
 */
import type { AuthFailureLockout } from '../limits/address-failures.js';
import { andThen, REFUSED, type Refused, type Step } from './compose.js';

/**
 * What the lockout reads and writes: the caller's address, and the clock reading it takes
 * (every later window of the same request is judged with that one reading).
 *
 * @example
 * ```ts
 * const subject: LockoutSubject = { remote: '127.0.0.1', now: 0 };
 * ```
 */
export interface LockoutSubject {
  readonly remote: string | undefined;
  now: number;
}

/**
 * A monotonic clock in milliseconds: a wall clock stepped back would stretch every window.
 *
 * @example
 * ```ts
 * const now = monotonicNow();
 * ```
 */
export function monotonicNow(): number {
  return performance.timeOrigin + performance.now();
}

/**
 * The lockout step: passes the subject on, or refuses a locked-out address (`refuseLocked`
 * sends the surface's own 429 with `retry-after` seconds).
 *
 * @example
 * ```ts
 * const lockout = createLockout({ authFailures, now: monotonicNow, refuseLocked });
 * ```
 */
export function createLockout<S extends LockoutSubject>(options: {
  authFailures: AuthFailureLockout;
  now: () => number;
  refuseLocked: (subject: S, seconds: number) => void;
}): Step<S, S> {
  const { authFailures, now, refuseLocked } = options;
  return (subject) => {
    subject.now = now();
    // A lockout shared by replicas answers asynchronously; the local one at once.
    return andThen(authFailures.isLocked(subject.remote ?? '', subject.now), (locked) => {
      if (locked <= 0) return subject;
      refuseLocked(subject, locked);
      return REFUSED;
    });
  };
}

/**
 * Counts a failed authentication of the subject's address, then sends the 401 (`respond`).
 * A lockout shared by replicas is answered once the failure is counted; it never rejects (it
 * falls back to a local one).
 *
 * @example
 * ```ts
 * return countFailure(authFailures, inbound, () => refuse(res, 401, 'UNAUTHENTICATED', message));
 * ```
 */
export function countFailure(
  authFailures: AuthFailureLockout,
  subject: LockoutSubject,
  respond: () => void,
): Refused | Promise<Refused> {
  return andThen(authFailures.recordFailure(subject.remote ?? '', subject.now), (): Refused => {
    respond();
    return REFUSED;
  });
}
