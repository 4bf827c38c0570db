/**
 * Socket plumbing for the guarded connector: a TCP connect to one exact address, a CONNECT
 * tunnel through an HTTP egress proxy, and TLS on top of either. No policy lives here; the
 * connector decides what may be dialled and these functions dial exactly that.
 *
 * Every function takes an AbortSignal (the connect deadline) and destroys its socket when it
 * fires, so a slow peer cannot hold a file descriptor past the connect timeout.
 *
 * @example
 * ```ts
 * const tcp = await dialAddress('93.184.216.34', 443, signal);
 * const secure = await startTls(tcp, 'agent.example', undefined, signal);
 * ```
 */
import net from 'node:net';
import tls from 'node:tls';
import ipaddr from 'ipaddr.js';
import { OutboundError } from './errors.js';
import type { EgressProxy } from './settings.js';

/** Largest CONNECT response head read from a proxy before giving up on it. */
export const MAX_PROXY_HEAD_BYTES = 16 * 1024;

/**
 * Opens a TCP connection to exactly `address` (an IP literal). Node never looks an IP literal
 * up; the `lookup` hook is there to make a name reaching this function fail loudly instead.
 *
 * @example
 * ```ts
 * const socket = await dialAddress('127.0.0.1', 8080, AbortSignal.timeout(5000));
 * ```
 */
export function dialAddress(address: string, port: number, signal: AbortSignal): Promise<net.Socket> {
  if (net.isIP(address) === 0) {
    return Promise.reject(new OutboundError('network_error', 'internal error: only checked addresses are dialled'));
  }
  return connectSocket({ host: address, port, lookup: refuseLookup }, signal).then((socket) => {
    // Belt and braces: the peer the kernel connected us to is the address that was checked.
    if (!sameAddress(socket.remoteAddress, address)) {
      socket.destroy();
      throw new OutboundError('network_error', `connected to an unexpected peer instead of ${address}`);
    }
    return socket;
  });
}

/**
 * Opens a CONNECT tunnel through `proxy` to `address:port` and returns the raw socket, ready for
 * TLS. The CONNECT line names the checked address (never the host name), so the proxy cannot
 * resolve the name to something else. A non-2xx answer is an `OutboundError('proxy_refused')`
 * reading "egress proxy refused CONNECT to host:port (403)", where `label` is the host:port the
 * caller asked for.
 *
 * @example
 * ```ts
 * const raw = await openTunnel(proxy, '93.184.216.34', 443, 'agent.example:443', signal);
 * ```
 */
export async function openTunnel(
  proxy: EgressProxy,
  address: string,
  port: number,
  label: string,
  signal: AbortSignal,
): Promise<net.Socket> {
  if (net.isIP(address) === 0) {
    throw new OutboundError('network_error', 'internal error: only checked addresses go through the proxy');
  }
  let socket: net.Socket;
  try {
    // The proxy is the operator's own, named in deployment config: an ordinary lookup is fine.
    socket = await connectSocket({ host: proxy.host, port: proxy.port }, signal);
  } catch (error) {
    if (error instanceof OutboundError) throw error;
    throw new OutboundError('network_error', `cannot reach the egress proxy ${proxy.display} (${codeOf(error)})`, {
      cause: error,
    });
  }
  const authority = net.isIPv6(address) ? `[${address}]:${port}` : `${address}:${port}`;
  const lines = [`CONNECT ${authority} HTTP/1.1`, `Host: ${authority}`];
  if (proxy.authorization !== undefined) lines.push(`Proxy-Authorization: ${proxy.authorization}`);
  socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  let head: string;
  try {
    head = await readHead(socket, signal, proxy.display);
  } catch (error) {
    socket.destroy();
    throw error;
  }
  const status = /^HTTP\/1\.[01] (\d{3})(?: |$)/.exec(head);
  if (status === null) {
    socket.destroy();
    throw new OutboundError(
      'network_error',
      `the egress proxy ${proxy.display} answered CONNECT with a malformed reply`,
    );
  }
  const code = Number(status[1]);
  if (code < 200 || code > 299) {
    socket.destroy();
    throw new OutboundError('proxy_refused', `egress proxy refused CONNECT to ${label} (${code})`);
  }
  return socket;
}

/**
 * Starts TLS on a connected socket and verifies the certificate against `host` (the name from
 * the URL, also sent as SNI), whatever address or tunnel the socket goes to. `secureContext`
 * carries the trusted roots; undefined means Node's default roots.
 *
 * @example
 * ```ts
 * const secure = await startTls(raw, 'agent.example', context, signal);
 * ```
 */
export function startTls(
  socket: net.Socket,
  host: string,
  secureContext: tls.SecureContext | undefined,
  signal: AbortSignal,
): Promise<tls.TLSSocket> {
  const isLiteral = net.isIP(host) !== 0;
  return new Promise((resolve, reject) => {
    const secure = tls.connect({
      socket,
      // SNI must not be an IP address (RFC 6066); a literal is still verified against the cert.
      ...(isLiteral ? {} : { servername: host }),
      ...(secureContext === undefined ? {} : { secureContext }),
      ALPNProtocols: ['http/1.1'],
      rejectUnauthorized: true,
      checkServerIdentity: (_ignored, cert) => tls.checkServerIdentity(host, cert),
    });
    const finish = (error: Error | undefined): void => {
      signal.removeEventListener('abort', onAbort);
      secure.off('secureConnect', onSecure);
      secure.off('error', onError);
      if (error === undefined) {
        resolve(secure);
      } else {
        secure.destroy();
        socket.destroy();
        reject(error);
      }
    };
    const onSecure = (): void => finish(undefined);
    const onError = (error: Error): void =>
      finish(new OutboundError('network_error', `TLS with ${host} failed (${codeOf(error)})`, { cause: error }));
    const onAbort = (): void => finish(abortReason(signal));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    secure.once('secureConnect', onSecure);
    secure.once('error', onError);
  });
}

/**
 * The error code of a Node or undici error, for one-line messages (never its message text,
 * which may quote a header or a URL).
 *
 * @example
 * ```ts
 * codeOf(Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:443'), { code: 'ECONNREFUSED' })); // 'ECONNREFUSED'
 * ```
 */
export function codeOf(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && /^[A-Za-z0-9_.-]{1,64}$/.test(code)) return code;
    const name = (error as { name?: unknown }).name;
    if (typeof name === 'string' && /^[A-Za-z0-9_]{1,64}$/.test(name)) return name;
  }
  return 'unknown error';
}

function connectSocket(options: net.NetConnectOpts, signal: AbortSignal): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(abortReason(signal));
    const socket = net.connect({ ...options, noDelay: true, keepAlive: true, keepAliveInitialDelay: 60_000 });
    const finish = (error: Error | undefined): void => {
      signal.removeEventListener('abort', onAbort);
      socket.off('connect', onConnect);
      socket.off('error', onError);
      if (error === undefined) {
        resolve(socket);
      } else {
        socket.destroy();
        reject(error);
      }
    };
    const onConnect = (): void => finish(undefined);
    const onError = (error: Error): void => finish(error);
    const onAbort = (): void => finish(abortReason(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    socket.once('connect', onConnect);
    socket.once('error', onError);
  });
}

/** Reads the proxy's response head (up to the blank line), leaving the socket paused. */
function readHead(socket: net.Socket, signal: AbortSignal, proxyName: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffered = Buffer.alloc(0);
    const finish = (error: Error | undefined, head?: string): void => {
      signal.removeEventListener('abort', onAbort);
      socket.off('data', onData);
      socket.off('error', onError);
      socket.off('end', onEnd);
      socket.pause();
      if (error === undefined) resolve(head as string);
      else reject(error);
    };
    const onData = (chunk: Buffer): void => {
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf('\r\n\r\n');
      if (end === -1) {
        if (buffered.length > MAX_PROXY_HEAD_BYTES) {
          finish(new OutboundError('network_error', `the egress proxy ${proxyName} sent an oversized CONNECT reply`));
        }
        return;
      }
      if (end + 4 !== buffered.length) {
        // Nothing may follow the head before our TLS ClientHello: bytes here would be a proxy
        // speaking for the destination.
        finish(new OutboundError('network_error', `the egress proxy ${proxyName} sent data before the tunnel opened`));
        return;
      }
      finish(undefined, buffered.subarray(0, end).toString('latin1'));
    };
    const onError = (error: Error): void =>
      finish(new OutboundError('network_error', `the egress proxy ${proxyName} failed (${codeOf(error)})`));
    const onEnd = (): void =>
      finish(new OutboundError('network_error', `the egress proxy ${proxyName} closed the connection during CONNECT`));
    const onAbort = (): void => finish(abortReason(signal));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    socket.on('data', onData);
    socket.once('error', onError);
    socket.once('end', onEnd);
  });
}

function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error
    ? reason
    : new OutboundError('request_timeout', 'the connection attempt was abandoned');
}

function refuseLookup(): never {
  throw new OutboundError('network_error', 'internal error: a host name reached the dialler');
}

function sameAddress(actual: string | undefined, expected: string): boolean {
  if (actual === undefined || !ipaddr.isValid(actual) || !ipaddr.isValid(expected)) return false;
  // Compare canonical forms: IPv6 prints differently with or without zero compression.
  return ipaddr.process(actual).toNormalizedString() === ipaddr.process(expected).toNormalizedString();
}
