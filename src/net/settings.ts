/**
 * Deployment settings of the guarded transport, read from three variables and nothing else:
 * AIRLOCK_PRIVATE_ALLOW, AIRLOCK_CA_FILE and AIRLOCK_EGRESS_PROXY. HTTP_PROXY, HTTPS_PROXY,
 * ALL_PROXY and NO_PROXY are deliberately never read: an inherited proxy variable must not
 * silently reroute (or exempt) Airlock's outbound traffic.
 *
 * @example
 * ```ts
 * const client = createGuardedClient(parseEnvSettings(process.env));
 * ```
 */
import { readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { parseAllowEntry } from './address.js';

/** Settings of {@link createGuardedClient}; see `src/net/index.ts` for the contract. */
export interface GuardedClientSettings {
  /** Hosts and CIDRs private_network entries may reach (AIRLOCK_PRIVATE_ALLOW, comma-separated). */
  privateAllow?: readonly string[];
  /** Extra CA certificates (PEM) trusted besides the system roots (AIRLOCK_CA_FILE). */
  caFile?: string;
  /** AIRLOCK_EGRESS_PROXY, http://host:port (no credentials in logs/errors: mask them). */
  egressProxy?: string;
  /** For tests: replaces DNS. */
  resolve?: (hostname: string) => Promise<{ address: string; family: 4 | 6 }[]>;
  /**
   * Headers sent on every request and stream of the client, over the caller's own (a request
   * cannot leave without them, nor change them). The transport knows no header of its callers'
   * protocols: `src/client` passes Airlock's hop header here.
   */
  defaultHeaders?: Readonly<Record<string, string>>;
}

/** A parsed egress proxy. `display` is safe to log; `authorization` is not. */
export interface EgressProxy {
  host: string;
  port: number;
  /** `Basic …` when the URL carried user:password. Never logged. */
  authorization: string | undefined;
  /** `http://host:port`, with any credentials shown as `***@`. */
  display: string;
}

/**
 * Reads the transport's settings from the environment. Empty variables count as unset. Throws a
 * one-line error naming the variable when a value is malformed; a proxy URL's credentials are
 * masked in that message.
 *
 * @example
 * ```ts
 * parseEnvSettings({ AIRLOCK_PRIVATE_ALLOW: '10.20.0.0/16, w.corp', AIRLOCK_EGRESS_PROXY: 'http://squid:3128' });
 * // { privateAllow: ['10.20.0.0/16', 'w.corp'], egressProxy: 'http://squid:3128' }
 * parseEnvSettings({ AIRLOCK_EGRESS_PROXY: 'https://u:secret@squid' });
 * // throws: AIRLOCK_EGRESS_PROXY: "https://***@squid" must be http://host:port
 * ```
 */
export function parseEnvSettings(env: NodeJS.ProcessEnv): GuardedClientSettings {
  const settings: GuardedClientSettings = {};
  const allow = env.AIRLOCK_PRIVATE_ALLOW?.trim();
  if (allow) {
    const entries = allow
      .split(',')
      .map((entry) => entry.trim())
      .filter((entry) => entry.length > 0);
    settings.privateAllow = validateAllowList(entries, 'AIRLOCK_PRIVATE_ALLOW');
  }
  const caFile = env.AIRLOCK_CA_FILE?.trim();
  if (caFile) {
    loadCaFile(caFile, 'AIRLOCK_CA_FILE');
    settings.caFile = caFile;
  }
  const proxy = env.AIRLOCK_EGRESS_PROXY?.trim();
  if (proxy) {
    parseEgressProxy(proxy, 'AIRLOCK_EGRESS_PROXY');
    settings.egressProxy = proxy;
  }
  return settings;
}

/**
 * Checks every allowlist entry (host name, address or CIDR) and returns them, or throws naming
 * the first bad one.
 *
 * @example
 * ```ts
 * validateAllowList(['10.0.0.0/8'], 'privateAllow'); // ['10.0.0.0/8']
 * validateAllowList(['*.corp'], 'privateAllow');     // throws
 * ```
 */
export function validateAllowList(entries: readonly string[], label: string): string[] {
  for (const entry of entries) {
    if (typeof entry !== 'string' || parseAllowEntry(entry) === undefined) {
      throw new Error(`${label}: "${printable(String(entry))}" is not a host name, IP address or CIDR range`);
    }
  }
  return [...entries];
}

/**
 * Parses an egress proxy URL: `http://host:port` (port defaults to 80), optionally with
 * `user:password@`, nothing else (no path, query or fragment; no https or socks proxies).
 * Throws a one-line error, prefixed with `label`, whose text never contains the credentials.
 *
 * @example
 * ```ts
 * parseEgressProxy('http://u:p@squid.internal:3128').display; // 'http://***@squid.internal:3128'
 * ```
 */
export function parseEgressProxy(value: string, label = 'egress proxy'): EgressProxy {
  const shown = maskCredentials(value);
  const fail = (why: string): never => {
    throw new Error(`${label}: "${printable(shown)}" ${why}`);
  };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return fail('is not a URL; expected http://host:port');
  }
  if (url.protocol !== 'http:') return fail('must be http://host:port');
  if (url.hostname === '') return fail('has no host; expected http://host:port');
  if ((url.pathname !== '/' && url.pathname !== '') || url.search !== '' || url.hash !== '') {
    return fail('must be http://host:port with no path, query or fragment');
  }
  const port = url.port === '' ? 80 : Number(url.port);
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  let authorization: string | undefined;
  if (url.username !== '' || url.password !== '') {
    let user: string;
    let password: string;
    try {
      user = decodeURIComponent(url.username);
      password = decodeURIComponent(url.password);
    } catch {
      return fail('has credentials that are not valid percent-encoding');
    }
    authorization = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  }
  const display = `http://${authorization === undefined ? '' : '***@'}${url.host}`;
  return { host, port, authorization, display };
}

/**
 * Reads a PEM bundle of extra CA certificates and checks that every certificate in it parses.
 * Throws a one-line error prefixed with `label` otherwise.
 *
 * @example
 * ```ts
 * const pem = loadCaFile('/etc/airlock/internal-ca.pem');
 * ```
 */
export function loadCaFile(path: string, label = 'CA file'): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new Error(`${label}: cannot read ${printable(path)} (${code})`, { cause: error });
  }
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw new Error(`${label}: ${printable(path)} contains no PEM certificate`);
  for (const block of blocks) {
    try {
      new X509Certificate(block);
    } catch (error) {
      throw new Error(`${label}: ${printable(path)} contains a certificate that does not parse`, { cause: error });
    }
  }
  return blocks.join('\n');
}

/**
 * Replaces everything between the scheme's `//` and the last `@` with `***` (everything before
 * the last `@` when the text does not start with a scheme), for text about URLs
 * that may carry credentials. Works on text that is not a valid URL too (a password containing
 * `/` or `#` makes the URL unparseable, and must still not be shown), at the price of hiding a
 * path that contains `@`.
 *
 * @example
 * ```ts
 * maskCredentials('http://bob:hunter2@squid:3128'); // 'http://***@squid:3128'
 * ```
 */
export function maskCredentials(text: string): string {
  const at = text.lastIndexOf('@');
  if (at === -1) return text;
  // Only a scheme at the start is kept: a `//` inside a password (`bob:pa//ss@squid`) is not one.
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(text);
  const start = scheme === null ? 0 : scheme[0].length;
  return `${text.slice(0, start)}***${text.slice(at)}`;
}

function printable(text: string): string {
  const cleaned = text.replace(/[^\x20-\x7e]/g, '?');
  return cleaned.length > 120 ? `${cleaned.slice(0, 120)}…` : cleaned;
}
