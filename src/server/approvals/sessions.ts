/**
 * Console sign-in sessions, in memory. A session is named by a 256-bit random id (the cookie
 * value) and holds only who signed in, a CSRF token and two times — never the person's token.
 * Sessions are looked up by the SHA-256 digest of their id (so the map lookup leaks no timing
 * about the id), expire after `idleMs` without use, and are bounded: when full, the session
 * used longest ago is dropped. Expiry is checked lazily (no timers).
 *
 * @example
 * ```ts
 * const sessions = new ConsoleSessions({ now: () => Date.now() });
 * const { id, session } = sessions.create('person:alice');
 * sessions.get(id)?.userId; // 'person:alice'
 * ```
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** What a session holds. */
export interface ConsoleSession {
  readonly userId: string;
  /** Sent back by the page in `X-Airlock-CSRF` on every state change. */
  readonly csrf: string;
  readonly createdAt: number;
  lastUsedAt: number;
}

export interface ConsoleSessionsOptions {
  /** Milliseconds; monotonic is best. */
  now: () => number;
  /** Idle time after which a session is gone (default 8 h). */
  idleMs?: number;
  /** Most sessions at once (default 10 000); the least recently used is dropped beyond it. */
  maxSessions?: number;
}

/** The cookie's lifetime and the default idle expiry: 8 hours. */
export const SESSION_MAX_AGE_SECONDS = 8 * 60 * 60;

/** A fresh random value: 32 bytes from the CSPRNG, base64url (43 characters). */
export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * Whether two strings are equal, in time that depends on neither (both are hashed first, so
 * even their lengths do not show).
 *
 * @example
 * ```ts
 * constantTimeEqual(header, session.csrf);
 * ```
 */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = createHash('sha256').update(a, 'utf8').digest();
  const right = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(left, right) && a.length === b.length;
}

function digestOf(id: string): string {
  return createHash('sha256').update(id, 'utf8').digest('hex');
}

export class ConsoleSessions {
  /** digest of the id → session; Map order is least recently used first. */
  readonly #sessions = new Map<string, ConsoleSession>();
  readonly #now: () => number;
  readonly #idleMs: number;
  readonly #max: number;

  constructor(options: ConsoleSessionsOptions) {
    this.#now = options.now;
    this.#idleMs = options.idleMs ?? SESSION_MAX_AGE_SECONDS * 1000;
    this.#max = options.maxSessions ?? 10_000;
  }

  /** How many sessions are held (expired ones may linger until the next create). */
  get size(): number {
    return this.#sessions.size;
  }

  /** Starts a session for `userId`; returns its id (for the cookie only) and the session. */
  create(userId: string): { id: string; session: ConsoleSession } {
    const now = this.#now();
    this.#sweep(now);
    while (this.#sessions.size >= this.#max) {
      const oldest = this.#sessions.keys().next();
      if (oldest.done === true) break;
      this.#sessions.delete(oldest.value);
    }
    const id = randomToken();
    const session: ConsoleSession = { userId, csrf: randomToken(), createdAt: now, lastUsedAt: now };
    this.#sessions.set(digestOf(id), session);
    return { id, session };
  }

  /** The live session an id names (and marks it used), or undefined. */
  get(id: string | undefined): ConsoleSession | undefined {
    if (id === undefined || id.length === 0 || id.length > 256) return undefined;
    const key = digestOf(id);
    const session = this.#sessions.get(key);
    if (session === undefined) return undefined;
    const now = this.#now();
    if (now - session.lastUsedAt >= this.#idleMs) {
      this.#sessions.delete(key);
      return undefined;
    }
    session.lastUsedAt = now;
    // Re-inserted: the map stays ordered by last use.
    this.#sessions.delete(key);
    this.#sessions.set(key, session);
    return session;
  }

  /** Ends the session an id names, if any. */
  delete(id: string | undefined): void {
    if (id !== undefined) this.#sessions.delete(digestOf(id));
  }

  clear(): void {
    this.#sessions.clear();
  }

  /** Drops idle sessions from the front (least recently used first); stops at the first live one. */
  #sweep(now: number): void {
    for (const [key, session] of this.#sessions) {
      if (now - session.lastUsedAt < this.#idleMs) break;
      this.#sessions.delete(key);
    }
  }
}
