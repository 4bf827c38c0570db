/**
 * Keys behind a JWKS URL: fetched through the guarded outbound client (https only, no
 * redirects, 64 KiB cap) when the authenticator is built, without blocking startup, then every
 * `refreshSeconds` and on a token whose key is not in the set (at most once per 30 s). A failed
 * refresh keeps the last good set; until the first fetch succeeds, every JWT is refused (401).
 *
 * @example
 * ```ts
 * const remote = new RemoteKeySet({ url, refreshSeconds: 300, privateNetwork: false }, { logger });
 * await remote.ready; // true once a key set is in hand
 * await jwtVerify(token, remote.resolve, options);
 * ```
 */
import { createLocalJWKSet } from 'jose';
import { createGuardedClient, isOutboundError, parseEnvSettings, type GuardedClient } from '../../../net/index.js';
import { createLogger, type Logger } from '../../log.js';
import { JwtConfigError } from './config-error.js';
import type { KeyResolver } from './local-keys.js';
import { isRecord, own } from './shape.js';

/** Largest JWKS document accepted from a JWKS URL. */
export const MAX_JWKS_BYTES = 64 * 1024;
/** Shortest interval between two fetches of a JWKS URL caused by tokens (unknown kid). */
export const JWKS_ON_DEMAND_INTERVAL_MS = 30_000;
/** Timeouts of one JWKS fetch. */
const JWKS_TIMEOUTS = { connectMs: 5000, readMs: 10_000, totalMs: 15_000 } as const;
/**
 * The code of the error a remote key set raises while it has no keys yet (mapped to the
 * `keys_unavailable` failure).
 *
 * @example
 * ```ts
 * if ((error as { code?: unknown }).code === KEYS_UNAVAILABLE) return 'keys_unavailable';
 * ```
 */
export const KEYS_UNAVAILABLE = 'ERR_AIRLOCK_JWKS_UNAVAILABLE';

/**
 * Fetches a JWKS URL and returns the parsed JSON document (validated by the caller). Rejects on
 * any transport failure, non-200 status or non-JSON body.
 *
 * @example
 * ```ts
 * const fetchJwks: JwksFetcher = async () => ({ keys: [publicJwk] }); // a test double
 * ```
 */
export type JwksFetcher = (url: string, options: { privateNetwork: boolean; signal?: AbortSignal }) => Promise<unknown>;

/**
 * How a JWKS URL is fetched and where its refresh failures are logged.
 *
 * @example
 * ```ts
 * const options: JwtAuthenticatorOptions = { client: guardedClient, logger };
 * ```
 */
export interface JwtAuthenticatorOptions {
  /** Fetches the JWKS; default: through `client`. */
  fetchJwks?: JwksFetcher;
  /** The guarded client JWKS fetches go through; default: one from the AIRLOCK_* environment. */
  client?: GuardedClient;
  /**
   * Where refresh failures and keyless refusals are logged (default: JSON lines on stderr), and
   * every refused token with its failure code (`jwt_refused`; not logged without a logger).
   */
  logger?: Logger;
  /** Milliseconds clock for the on-demand rate limit (tests). */
  now?: () => number;
}

/**
 * A {@link JwksFetcher} going through a guarded client: GET with `accept: application/json`,
 * 64 KiB cap, 5/10/15 s timeouts, redirects refused. Errors name the origin only, never the
 * path or query (which may carry a token).
 *
 * @example
 * ```ts
 * const fetchJwks = guardedJwksFetcher(createGuardedClient(parseEnvSettings(process.env)));
 * const jwks = await fetchJwks('https://idp.example/.well-known/jwks.json', { privateNetwork: false });
 * ```
 */
export function guardedJwksFetcher(client: GuardedClient): JwksFetcher {
  return async (url, { privateNetwork, signal }) => {
    const response = await client.request({
      method: 'GET',
      url,
      headers: { accept: 'application/json' },
      maxResponseBytes: MAX_JWKS_BYTES,
      timeouts: JWKS_TIMEOUTS,
      privateNetwork,
      ...(signal !== undefined && { signal }),
    });
    if (response.status !== 200) {
      throw Object.assign(new Error(`${originOf(url)} answered HTTP ${response.status}`), { reason: 'http_status' });
    }
    try {
      return JSON.parse(response.body.toString('utf8')) as unknown;
    } catch {
      throw Object.assign(new Error(`${originOf(url)} did not answer JSON`), { reason: 'invalid_jwks' });
    }
  };
}

/** `scheme://host[:port]` of a URL, for logs: never its path or query. */
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(invalid URL)';
  }
}

/** A JWKS document: an object with a non-empty `keys` array of objects. */
function isJwks(value: unknown): value is { keys: Record<string, unknown>[] } {
  if (!isRecord(value)) return false;
  const keys = own(value, 'keys');
  return Array.isArray(keys) && keys.length > 0 && keys.every(isRecord);
}

/** One line about a failed fetch, fit for a log: codes and origins, never bodies or queries. */
function describeFailure(error: unknown): { reason: string; error: string } {
  if (isOutboundError(error)) return { reason: error.code, error: error.message };
  if (error instanceof JwtConfigError) return { reason: 'invalid_jwks', error: error.message };
  const reason = (error as { reason?: unknown } | null)?.reason;
  return {
    reason: typeof reason === 'string' ? reason : 'fetch_failed',
    error: error instanceof Error ? error.message : 'unknown error',
  };
}

/**
 * The key set behind a JWKS URL: the last good set, replaced only by a fetched document that is
 * a valid JWKS. Fetches at start, every `refreshSeconds` (an unref'd timer: it never keeps the
 * process alive) and when a token's key is missing, at most once per
 * {@link JWKS_ON_DEMAND_INTERVAL_MS}; concurrent needs share one fetch.
 *
 * @example
 * ```ts
 * const remote = new RemoteKeySet(settings.keys, options); // settings.keys.kind === 'url'
 * const key = await remote.resolve(header);
 * await remote.close();
 * ```
 */
export class RemoteKeySet {
  readonly #url: string;
  readonly #origin: string;
  readonly #privateNetwork: boolean;
  readonly #fetch: JwksFetcher;
  readonly #logger: Logger;
  readonly #now: () => number;
  readonly #ownedClient: GuardedClient | undefined;
  readonly #timer: NodeJS.Timeout;
  readonly #stop = new AbortController();
  readonly ready: Promise<boolean>;
  #current: KeyResolver | undefined;
  /** The keys of `#current`, as fetched: a refresh that brings the same keys is not a change. */
  #currentKeys: string | undefined;
  #generation = 0;
  #inflight: Promise<boolean> | undefined;
  #lastFetchAt = Number.NEGATIVE_INFINITY;
  #lastUnavailableLogAt = Number.NEGATIVE_INFINITY;
  #closed = false;

  constructor(
    keys: { url: string; refreshSeconds: number; privateNetwork: boolean },
    options: JwtAuthenticatorOptions,
  ) {
    this.#url = keys.url;
    this.#origin = originOf(keys.url);
    this.#privateNetwork = keys.privateNetwork;
    this.#now = options.now ?? Date.now;
    this.#logger = options.logger ?? createLogger('info');
    let fetcher = options.fetchJwks;
    if (fetcher === undefined) {
      let client = options.client;
      if (client === undefined) {
        client = createGuardedClient(parseEnvSettings(process.env));
        this.#ownedClient = client;
      }
      fetcher = guardedJwksFetcher(client);
    }
    this.#fetch = fetcher;
    this.ready = this.refresh();
    this.#timer = setInterval(() => void this.refresh(), Math.max(1, keys.refreshSeconds * 1000));
    this.#timer.unref();
  }

  /**
   * Counts the key sets in use: it changes whenever a fetch brings keys that differ from the
   * last ones (not when the same set is fetched again). What was verified with an earlier set
   * must be verified again.
   */
  get generation(): number {
    return this.#generation;
  }

  /** Resolves a token's key; on a missing key, fetches again (rate limited) and retries once. */
  readonly resolve: KeyResolver = async (header) => {
    if (this.#current === undefined) {
      // Still fetching at start (or an allowed retry): wait for it rather than refuse.
      await (this.#inflight ?? this.#onDemand());
      if (this.#current === undefined) throw this.#unavailable();
      return (this.#current as KeyResolver)(header);
    }
    const current = this.#current;
    try {
      return await current(header);
    } catch (error) {
      if ((error as { code?: unknown } | null)?.code !== 'ERR_JWKS_NO_MATCHING_KEY') throw error;
      const refreshed = await (this.#inflight ?? this.#onDemand());
      if (!refreshed || this.#current === current) throw error;
      return this.#current(header);
    }
  };

  /** Fetches now, whatever the rate limit (start, timer, tests). Never rejects; true when replaced. */
  refresh(): Promise<boolean> {
    if (this.#closed) return Promise.resolve(false);
    this.#inflight ??= this.#fetchOnce().finally(() => {
      this.#inflight = undefined;
    });
    return this.#inflight;
  }

  /** Stops the timer, aborts a fetch under way and closes the client this set created. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    this.#stop.abort();
    await this.#ownedClient?.close();
  }

  /** A token-caused fetch: only when the last fetch began at least 30 s ago. */
  #onDemand(): Promise<boolean> {
    if (this.#now() - this.#lastFetchAt < JWKS_ON_DEMAND_INTERVAL_MS) return Promise.resolve(false);
    return this.refresh();
  }

  async #fetchOnce(): Promise<boolean> {
    this.#lastFetchAt = this.#now();
    try {
      const document = await this.#fetch(this.#url, {
        privateNetwork: this.#privateNetwork,
        signal: this.#stop.signal,
      });
      if (!isJwks(document)) {
        throw new JwtConfigError(
          `the document at ${this.#origin} is not a JWKS (an object with a non-empty "keys" array)`,
        );
      }
      let resolver: KeyResolver;
      try {
        resolver = createLocalJWKSet({ keys: document.keys });
      } catch (cause) {
        throw new JwtConfigError(`the JWKS at ${this.#origin} is malformed`, { cause });
      }
      if (this.#closed) return false;
      const first = this.#current === undefined;
      this.#current = resolver;
      const keys = JSON.stringify(document.keys);
      if (keys !== this.#currentKeys) {
        this.#currentKeys = keys;
        this.#generation++;
      }
      if (first) this.#logger.info({ event: 'jwks_loaded', jwksOrigin: this.#origin, keys: document.keys.length });
      return true;
    } catch (error) {
      if (this.#closed) return false;
      this.#logger.warn({
        event: 'jwks_refresh_failed',
        jwksOrigin: this.#origin,
        ...describeFailure(error),
        keeping: this.#current === undefined ? 'no keys yet: JWTs are refused' : 'the last good key set',
      });
      return false;
    }
  }

  #unavailable(): Error {
    const now = this.#now();
    if (now - this.#lastUnavailableLogAt >= JWKS_ON_DEMAND_INTERVAL_MS) {
      this.#lastUnavailableLogAt = now;
      this.#logger.warn({
        event: 'jwt_keys_unavailable',
        jwksOrigin: this.#origin,
        message: `JWT refused (401): no key set has been fetched from ${this.#origin} yet`,
      });
    }
    return Object.assign(new Error('no JWKS fetched yet'), { code: KEYS_UNAVAILABLE });
  }
}
