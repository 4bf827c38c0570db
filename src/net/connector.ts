/**
 * The custom undici connector: the one place where Airlock's outbound sockets are made.
 *
 * For every new connection it resolves the host once (an IP literal is taken as is, `localhost`
 * is pinned to 127.0.0.1 and ::1 without asking DNS), runs every answer through
 * {@link checkDestination}, refuses the whole host if any answer fails, and then dials only the
 * answers it checked: there is no second lookup between check and connect, so a DNS answer that
 * changes (rebinding) cannot redirect the socket. Public destinations go through the egress proxy
 * when one is configured, with the checked address in the CONNECT line; TLS is always verified
 * against the URL's host name.
 *
 * @example
 * ```ts
 * const agent = new Agent({ connect: guardedConnector({ privateNetwork: false, privateAllow: [], connectMs: 5000,
 *   resolve: systemResolve, secureContext: undefined, proxy: undefined }) });
 * ```
 */
import { lookup } from 'node:dns/promises';
import net from 'node:net';
import type tls from 'node:tls';
import type { buildConnector } from 'undici';
import { checkDestination, chooseRoute } from './address.js';
import { codeOf, dialAddress, openTunnel, startTls } from './dial.js';
import { OutboundError } from './errors.js';
import type { EgressProxy } from './settings.js';

/** The resolver contract: every address a name resolves to. */
export type Resolver = (hostname: string) => Promise<{ address: string; family: 4 | 6 }[]>;

/** Most answers checked and dialled for one name; more is a misconfiguration or an attack. */
export const MAX_ANSWERS = 32;

/** What one connector instance enforces. */
export interface ConnectorOptions {
  privateNetwork: boolean;
  privateAllow: readonly string[];
  /** Budget for the whole connect phase: lookup, TCP, CONNECT and TLS. */
  connectMs: number;
  resolve: Resolver;
  secureContext: tls.SecureContext | undefined;
  proxy: EgressProxy | undefined;
}

/**
 * The system resolver: `getaddrinfo` (so /etc/hosts applies), every answer, in the order given.
 *
 * @example
 * ```ts
 * await systemResolve('localhost'); // [{ address: '127.0.0.1', family: 4 }, ...]
 * ```
 */
export const systemResolve: Resolver = async (hostname) => {
  const answers = await lookup(hostname, { all: true, verbatim: true });
  return answers.map((answer) => ({ address: answer.address, family: answer.family === 6 ? 6 : 4 }));
};

/**
 * Builds an undici `connect` function that enforces `options` on every new connection.
 *
 * @example
 * ```ts
 * new Agent({ connect: guardedConnector(options) });
 * ```
 */
export function guardedConnector(options: ConnectorOptions): buildConnector.connector {
  return (connectOptions, callback) => {
    connectGuarded(connectOptions, options).then(
      (socket) => callback(null, socket),
      (error: unknown) => callback(asOutboundError(error, connectOptions), null),
    );
  };
}

/**
 * Resolves (or takes the literal), checks every answer and returns the checked addresses, or
 * throws `address_blocked`. Exported so the "one lookup, then exactly those addresses" rule can
 * be tested without sockets.
 *
 * @example
 * ```ts
 * await resolveChecked('agent.example', { privateNetwork: false, privateAllow: [], proxyConfigured: false }, resolve);
 * // ['93.184.216.34']
 * ```
 */
export async function resolveChecked(
  host: string,
  policy: { privateNetwork: boolean; privateAllow: readonly string[]; proxyConfigured: boolean },
  resolve: Resolver,
): Promise<string[]> {
  let addresses: string[];
  if (net.isIP(host) !== 0) {
    addresses = [host];
  } else if (host.toLowerCase() === 'localhost') {
    // RFC 6761: localhost is this machine. Pinning it means no resolver (or /etc/hosts entry)
    // can point "localhost" somewhere else.
    addresses = ['127.0.0.1', '::1'];
  } else {
    let answers: { address: string; family: 4 | 6 }[];
    try {
      answers = await resolve(host);
    } catch (error) {
      throw new OutboundError('network_error', `cannot resolve ${host} (${codeOf(error)})`, { cause: error });
    }
    if (!Array.isArray(answers))
      throw new OutboundError('network_error', `cannot resolve ${host} (bad resolver answer)`);
    addresses = [...new Set(answers.map((answer) => String(answer?.address)))];
  }
  if (addresses.length === 0) throw new OutboundError('network_error', `${host} resolved to no address`);
  if (addresses.length > MAX_ANSWERS) {
    throw new OutboundError('address_blocked', `${host} resolved to more than ${MAX_ANSWERS} addresses`);
  }
  for (const address of addresses) {
    const verdict = checkDestination({ host, address, ...policy });
    // One bad answer refuses the host: mixing a public and a private answer is a known trick
    // to win a race against a checker that looks at only one of them.
    if (!verdict.ok) throw new OutboundError('address_blocked', `${host} refused: ${verdict.reason}`);
  }
  return addresses;
}

async function connectGuarded(target: buildConnector.Options, options: ConnectorOptions): Promise<net.Socket> {
  const host = unbracket(target.hostname);
  const https = target.protocol === 'https:';
  if (!https && target.protocol !== 'http:') {
    throw new OutboundError('insecure_url', `${target.protocol} is not allowed`);
  }
  const port = target.port === '' || target.port === undefined ? (https ? 443 : 80) : Number(target.port);
  const label = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  const controller = new AbortController();
  const timer = setTimeout(
    () =>
      controller.abort(
        new OutboundError('request_timeout', `connecting to ${label} took longer than ${options.connectMs} ms`),
      ),
    options.connectMs,
  );
  try {
    const proxyConfigured = options.proxy !== undefined;
    const policy = { privateNetwork: options.privateNetwork, privateAllow: options.privateAllow, proxyConfigured };
    const addresses = await raceAbort(resolveChecked(host, policy, options.resolve), controller.signal);
    const routes = new Set(addresses.map((address) => chooseRoute({ address, ...policy })));
    if (routes.size !== 1) {
      // Cannot happen with the current policy (see checkDestination); refuse rather than guess.
      throw new OutboundError('address_blocked', `${host} resolved to addresses that need different routes`);
    }
    let raw: net.Socket;
    if (routes.has('proxy') && options.proxy !== undefined) {
      if (!https) throw new OutboundError('insecure_url', `only https goes through the egress proxy (${label})`);
      if (net.isIPv6(host)) {
        throw new OutboundError(
          'address_blocked',
          `${label} is an IPv6 literal, which is not sent through the egress proxy`,
        );
      }
      raw = await firstThatWorks(addresses, (address) =>
        openTunnel(options.proxy as EgressProxy, address, port, label, controller.signal),
      );
    } else {
      raw = await firstThatWorks(addresses, (address) => dialAddress(address, port, controller.signal));
    }
    if (!https) return raw;
    return await startTls(raw, host, options.secureContext, controller.signal);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Tries each checked address in order. An unreachable address (a plain socket error) or a proxy
 * that could not reach it (502, 503, 504) moves on to the next; a refusal, a timeout or an
 * unreachable proxy ends the attempt at once, since the next address would meet the same.
 */
async function firstThatWorks(
  addresses: readonly string[],
  attempt: (address: string) => Promise<net.Socket>,
): Promise<net.Socket> {
  let last: unknown;
  for (const address of addresses) {
    try {
      return await attempt(address);
    } catch (error) {
      const retryable =
        !(error instanceof OutboundError) ||
        (error.code === 'proxy_refused' && /\((502|503|504)\)$/.test(error.message));
      if (!retryable) throw error;
      last = error;
    }
  }
  throw last;
}

function raceAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

function asOutboundError(error: unknown, target: buildConnector.Options): Error {
  if (error instanceof OutboundError) return error;
  const host = unbracket(target.hostname);
  const where = `${host.includes(':') ? `[${host}]` : host}${target.port ? `:${target.port}` : ''}`;
  return new OutboundError('network_error', `cannot connect to ${where} (${codeOf(error)})`, { cause: error });
}

function unbracket(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}
