/**
 * Tasks running at once, all callers together and per principal. Over either bound the caller
 * is answered 503 with a short Retry-After: a slot frees as soon as any running task ends, so
 * there is no honest longer wait to announce.
 *
 * A slot is held through the release function `tryAcquire` returns. Releasing is idempotent
 * because the paths that end a task (completion, error, client disconnect, cancel) can overlap,
 * and a double release must never open a slot nobody holds. Per-key entries are deleted when
 * they reach zero, so the map holds only principals with work in flight: at most `global` keys.
 *
 * @example
 * ```ts
 * const inFlight = new InFlightLimiter({ global: 256, perKey: 16 });
 * const release = inFlight.tryAcquire(principal.key);
 * if (release === null) return respond503({ 'retry-after': String(CONCURRENCY_RETRY_AFTER_SECONDS) });
 * try { await runTask(); } finally { release(); }
 * ```
 */

/** The Retry-After (seconds) to send with a 503 for too many tasks in flight. */
export const CONCURRENCY_RETRY_AFTER_SECONDS = 1;

/** Bounds of {@link InFlightLimiter}. */
export interface InFlightLimits {
  /** Slots across all keys. */
  global: number;
  /** Slots for any one key. */
  perKey: number;
}

/** Gives a slot back. Safe to call more than once: only the first call counts. */
export type Release = () => void;

/**
 * Caps on work in flight, as the in-flight admission step (admission/in-flight.ts) uses them:
 * {@link InFlightLimiter} in one process, or caps shared by replicas (`shared/`), which answer
 * asynchronously.
 *
 * @example
 * ```ts
 * const caps: InFlightCap = new InFlightLimiter({ global: 256, perKey: 16 });
 * const release = await caps.tryAcquire(principal.key);
 * ```
 */
export interface InFlightCap {
  /** A slot for `key` (its release function), or `null` when the global or the key's bound is reached. */
  tryAcquire(key: string): Release | null | Promise<Release | null>;
}

/**
 * Counts in-flight work globally and per key, refusing a new slot when either bound is reached.
 *
 * @example
 * ```ts
 * const inFlight = new InFlightLimiter({ global: 2, perKey: 1 });
 * const release = inFlight.tryAcquire('client:a'); // a function
 * inFlight.tryAcquire('client:a');                 // null: the key holds its one slot
 * release?.();
 * release?.();                                     // no effect
 * ```
 */
export class InFlightLimiter implements InFlightCap {
  readonly #perKey = new Map<string, number>();
  #globalMax = 1;
  #perKeyMax = 1;
  #global = 0;

  constructor(limits: InFlightLimits) {
    this.resize(limits);
  }

  /**
   * New bounds (a config reload): slots already held stay held and are counted against them; a
   * lower bound refuses new acquisitions until enough are released.
   *
   * @example
   * ```ts
   * inFlight.resize({ global: 64, perKey: 4 });
   * ```
   */
  resize(limits: InFlightLimits): void {
    const { global, perKey } = limits;
    if (!Number.isInteger(global) || global < 1) throw new RangeError('global must be an integer ≥ 1');
    if (!Number.isInteger(perKey) || perKey < 1) throw new RangeError('perKey must be an integer ≥ 1');
    this.#globalMax = global;
    this.#perKeyMax = perKey;
  }

  /**
   * Takes a slot for `key`.
   *
   * @returns the release function, or `null` when the global or the key's bound is reached.
   * @example
   * ```ts
   * const release = inFlight.tryAcquire(principal.key);
   * if (release === null) return busy();
   * stream.once('close', release);
   * ```
   */
  tryAcquire(key: string): Release | null {
    if (this.#global >= this.#globalMax) return null;
    const held = this.#perKey.get(key) ?? 0;
    if (held >= this.#perKeyMax) return null;
    this.#perKey.set(key, held + 1);
    this.#global++;
    let released = false;
    // The one allocation per acquire: the closure is what makes release idempotent per slot.
    return () => {
      if (released) return;
      released = true;
      this.#global--;
      const now = this.#perKey.get(key) ?? 0;
      if (now <= 1) this.#perKey.delete(key);
      else this.#perKey.set(key, now - 1);
    };
  }

  /** Slots held across all keys (for metrics and tests). */
  get inFlight(): number {
    return this.#global;
  }

  /** Slots held by `key`. */
  inFlightFor(key: string): number {
    return this.#perKey.get(key) ?? 0;
  }

  /** Keys holding at least one slot. */
  get keys(): number {
    return this.#perKey.size;
  }
}
