/**
 * The `metrics` section: Prometheus metrics on a listener of their own, off unless the section
 * is present. Its schema is ./metrics-schema.ts (composed by `schema.ts`); the loader calls
 * {@link resolveMetrics} (what a schema cannot say, and the token read once, kept as a digest).
 *
 * A non-loopback `host` needs a `token`: the series name agents and registry entries, and who
 * reaches the listener from the network should have to say who they are.
 *
 * @example
 * ```yaml
 * metrics:
 *   port: 9464                 # required; 0 picks a free port (tests)
 *   host: 127.0.0.1            # the default
 *   token: { env: METRICS_TOKEN }
 * ```
 */
import { isLoopbackBind } from './bind.js';
import { ConfigError } from './errors.js';
import type { MetricsConfig } from './metrics-schema.js';

export type { MetricsConfig } from './metrics-schema.js';

/**
 * `metrics` as loaded: the token only as its SHA-256 digest.
 *
 * @example
 * ```ts
 * const settings: MetricsSettings = { host: '127.0.0.1', port: 0 };
 * ```
 */
export interface MetricsSettings {
  host: string;
  port: number;
  /** SHA-256 of the bearer token; absent: no token asked. */
  tokenDigest?: Buffer;
}

/**
 * Checks `metrics` against the server section and reads its token (`readToken` is the config's
 * token reader: tokens.ts, passed in so that this module stays below the schema).
 *
 * @example
 * ```ts
 * resolveMetrics({ host: '0.0.0.0', port: 9464 }, 41241, readToken);
 * // throws ConfigError: config: metrics.host: "0.0.0.0" is not loopback: set metrics.token …
 * ```
 * @throws ConfigError naming the key and the fix
 */
export function resolveMetrics(
  raw: MetricsConfig | undefined,
  serverPort: number,
  readToken: (source: { env?: string; file?: string }, key: string) => Buffer,
): MetricsSettings | undefined {
  if (raw === undefined) return undefined;
  if (raw.port !== 0 && raw.port === serverPort) {
    throw new ConfigError('metrics.port', `${raw.port} is server.port: give the metrics listener a port of its own`);
  }
  if (raw.token !== undefined && raw.token.env === undefined && raw.token.file === undefined) {
    throw new ConfigError(
      'metrics.token',
      'names no env or file to read the token from: { env: NAME } or { file: path }',
    );
  }
  if (raw.token === undefined && !isLoopbackBind(raw.host)) {
    throw new ConfigError(
      'metrics.host',
      `"${raw.host}" is not loopback: set metrics.token ({ env: NAME } or { file: path }) so that scrapers must authenticate, or bind 127.0.0.1 (the default)`,
    );
  }
  return {
    host: raw.host,
    port: raw.port,
    ...(raw.token !== undefined && { tokenDigest: readToken(raw.token, 'metrics.token') }),
  };
}
