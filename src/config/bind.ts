/**
 * The bind check: a gateway bound to a non-loopback address (`0.0.0.0`, `::`, a LAN address, a
 * host name) while `server.allowNonLoopback` is off would answer every caller from outside
 * loopback with 403, since the network gate admits only loopback callers then; and loopback
 * callers reach a loopback bind just as well. Such a bind can only be a mistake, so the loader
 * (and `airlock serve` after `--host`) refuses it instead of starting.
 *
 * @example
 * ```ts
 * checkBind({ host: '0.0.0.0', allowNonLoopback: false });
 * // throws ConfigError: config: server.host: "0.0.0.0" is not loopback, …
 * ```
 */
import ipaddr from 'ipaddr.js';
import { ConfigError } from './errors.js';

/**
 * Whether a bind address is loopback: `localhost`, or an IP literal in 127.0.0.0/8 or ::1
 * (IPv4-mapped forms and `[…]` brackets included). Names other than `localhost` are not
 * resolved (not loopback), nor are shorthand spellings such as `127.1`.
 *
 * @example
 * ```ts
 * isLoopbackBind('127.0.0.1'); // true
 * isLoopbackBind('0.0.0.0');   // false
 * ```
 */
export function isLoopbackBind(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (bare.toLowerCase() === 'localhost') return true;
  if (!ipaddr.IPv4.isValidFourPartDecimal(bare) && !(bare.includes(':') && ipaddr.IPv6.isValid(bare))) return false;
  return ipaddr.process(bare).range() === 'loopback';
}

/**
 * Refuses a non-loopback `host` unless `allowNonLoopback` is on (see the module comment).
 * `hostFrom` is the key the message names: where the host came from (`server.host` or `--host`).
 *
 * @example
 * ```ts
 * checkBind(config.server);                 // after loading
 * checkBind(config.server, '--host');       // after `airlock serve --host H`
 * ```
 * @throws ConfigError keyed `server.host` (or `hostFrom`), naming `server.allowNonLoopback`
 */
export function checkBind(server: { host: string; allowNonLoopback: boolean }, hostFrom = 'server.host'): void {
  if (server.allowNonLoopback || isLoopbackBind(server.host)) return;
  throw new ConfigError(
    hostFrom,
    `"${server.host}" is not loopback, but server.allowNonLoopback is false, so the gate would ` +
      'refuse every caller that could reach it: bind 127.0.0.1 (the default), or set server.allowNonLoopback: true',
  );
}

/**
 * Refuses `allowNonLoopback` over plain HTTP on a non-loopback bind: callers on the network would
 * send their tokens in the clear. Allowed with `server.tls`, or with `server.allowInsecureNetwork`
 * when a TLS-terminating proxy forwards to Airlock over a network hop the operator trusts. A
 * loopback bind behind a proxy on the same machine needs neither (nothing leaves the machine).
 *
 * @example
 * ```ts
 * checkInsecureNetwork({ host: '0.0.0.0', allowNonLoopback: true, allowInsecureNetwork: false });
 * // throws ConfigError: config: server.allowNonLoopback: true on "0.0.0.0" without server.tls …
 * ```
 * @throws ConfigError keyed `server.allowNonLoopback`, naming `server.tls` and `server.allowInsecureNetwork`
 */
export function checkInsecureNetwork(server: {
  host: string;
  allowNonLoopback: boolean;
  allowInsecureNetwork?: boolean | undefined;
  tls?: unknown;
}): void {
  if (!server.allowNonLoopback || server.tls !== undefined || server.allowInsecureNetwork === true) return;
  if (isLoopbackBind(server.host)) return;
  throw new ConfigError(
    'server.allowNonLoopback',
    `true on "${server.host}" without server.tls would serve plain HTTP on the network: set server.tls (cert, key), ` +
      'or server.allowInsecureNetwork: true when a TLS-terminating proxy forwards over a trusted network',
  );
}
