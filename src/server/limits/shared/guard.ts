/**
 * The circuit every shared limit goes through: a call to Redis or PostgreSQL gets `timeoutMs`
 * to answer, and after a failure the shared store is left alone for `cooldownMs` (the limits
 * answer from their local fallback meanwhile), so that an outage costs callers nothing but the
 * first timeout. The next call after the cool-down tries the store again. An outage is logged
 * once when it starts and once when it ends, never per request.
 *
 * @example
 * ```ts
 * const guard = new SharedStoreGuard({ name: 'redis', logger, timeoutMs: 250, cooldownMs: 2_000 });
 * const verdict = guard.usable ? await guard.run(() => shared.take(key)).catch(() => local.take(key)) : local.take(key);
 * ```
 */
import { AirlockError } from '../../../errors/index.js';

/**
 * Where shared limits report outages: the server's logger fits as is.
 *
 * @example
 * ```ts
 * const logger: LimitsLogger = createLogger('info');
 * ```
 */
export interface LimitsLogger {
  info(fields: Record<string, unknown>): void;
  warn(fields: Record<string, unknown>): void;
}

/**
 * The shared store did not answer within the guard's timeout.
 *
 * @example
 * ```ts
 * if (error instanceof SharedLimitTimeoutError) metrics.increment('limits_timeouts');
 * ```
 */
export class SharedLimitTimeoutError extends AirlockError {
  readonly code = 'shared_limit_timeout';

  constructor(timeoutMs: number) {
    super(`the shared limit store did not answer within ${timeoutMs} ms`);
  }
}

/**
 * Options of {@link SharedStoreGuard}.
 *
 * @example
 * ```ts
 * const options: SharedStoreGuardOptions = { name: 'postgres', timeoutMs: 500, cooldownMs: 2_000 };
 * ```
 */
export interface SharedStoreGuardOptions {
  /** The store, for log lines: `redis` or `postgres`. */
  name: string;
  logger?: LimitsLogger;
  timeoutMs: number;
  cooldownMs: number;
}

/**
 * Times shared-store calls out and trips after a failure. See the module comment.
 *
 * @example
 * ```ts
 * const guard = new SharedStoreGuard({ name: 'redis', timeoutMs: 250, cooldownMs: 2_000 });
 * ```
 */
export class SharedStoreGuard {
  readonly #name: string;
  readonly #logger: LimitsLogger | undefined;
  readonly #timeoutMs: number;
  readonly #cooldownMs: number;
  /** Epoch ms before which the store is not tried; 0 while it is healthy. */
  #retryAt = 0;
  /** Since when the store is failing (epoch ms), or undefined while healthy. */
  #downSince: number | undefined;
  #failures = 0;

  constructor(options: SharedStoreGuardOptions) {
    this.#name = options.name;
    this.#logger = options.logger;
    this.#timeoutMs = options.timeoutMs;
    this.#cooldownMs = options.cooldownMs;
  }

  /** False during the cool-down after a failure: answer from the local fallback. */
  get usable(): boolean {
    return this.#retryAt === 0 || Date.now() >= this.#retryAt;
  }

  /** True while the store is considered down (for tests and metrics). */
  get down(): boolean {
    return this.#downSince !== undefined;
  }

  /**
   * Runs one call against the shared store, within the timeout.
   *
   * @throws whatever the call threw, or SharedLimitTimeoutError; the guard trips either way.
   * @example
   * ```ts
   * const res = await guard.run(() => limiter.consume(key));
   * ```
   */
  async run<T>(call: () => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const pending = call();
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new SharedLimitTimeoutError(this.#timeoutMs)), this.#timeoutMs);
    });
    try {
      const result = await Promise.race([pending, timeout]);
      this.succeeded();
      return result;
    } catch (error) {
      this.failed(error);
      throw error;
    } finally {
      clearTimeout(timer);
      // A late rejection of an abandoned call must not go unhandled.
      pending.catch(() => undefined);
    }
  }

  /** The store answered: closes the circuit, and logs the end of an outage. */
  succeeded(): void {
    this.#retryAt = 0;
    const since = this.#downSince;
    if (since === undefined) return;
    this.#downSince = undefined;
    this.#logger?.info({
      event: 'shared_limits_recovered',
      store: this.#name,
      downMs: Date.now() - since,
      failures: this.#failures,
    });
    this.#failures = 0;
  }

  /** The store failed: local fallback for the cool-down; the first failure of an outage is logged. */
  failed(error: unknown): void {
    this.#retryAt = Date.now() + this.#cooldownMs;
    this.#failures++;
    if (this.#downSince !== undefined) return;
    this.#downSince = Date.now();
    this.#logger?.warn({
      event: 'shared_limits_unavailable',
      store: this.#name,
      error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      note: 'limits fall back to this replica alone until the store answers again',
    });
  }
}
