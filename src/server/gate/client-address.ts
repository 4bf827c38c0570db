/**
 * The network gate's view of who is connecting: the TCP peer, or — only when that peer is a
 * trusted proxy — the right-most address in `X-Forwarded-For` that is not itself a trusted
 * proxy. A client can prepend anything it likes to `X-Forwarded-For`; walking from the
 * right and stopping at the first untrusted hop means it can never choose its own address.
 *
 * @example
 * ```ts
 * const trusted = parseTrustedProxies(['10.0.0.0/8']);
 * clientAddressOf('10.1.2.3', '203.0.113.9, 10.0.0.7', trusted); // '203.0.113.9'
 * clientAddressOf('198.51.100.1', '127.0.0.1', trusted);        // '198.51.100.1' (peer not trusted)
 * ```
 */
import ipaddr from 'ipaddr.js';

export type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** Parses proxy CIDRs (a bare address means a single host). Throws naming the bad entry. */
export function parseTrustedProxies(entries: readonly string[]): Cidr[] {
  return entries.map((entry) => {
    try {
      if (entry.includes('/')) {
        const [address, bits] = ipaddr.parseCIDR(entry);
        return [unmap(address), address.kind() === 'ipv6' && unmap(address).kind() === 'ipv4' ? bits - 96 : bits];
      }
      const address = unmap(ipaddr.parse(entry));
      return [address, address.kind() === 'ipv4' ? 32 : 128];
    } catch {
      throw new Error(`"${entry}" is not an IP address or CIDR range`);
    }
  });
}

/** Answers already worked out, per trusted list (a reload brings a new list, so a new cache). */
const ANSWERS = new WeakMap<readonly Cidr[], Map<string, string | undefined>>();
/** Entries a cache holds before it starts over: callers choose `X-Forwarded-For`, so it is bounded. */
export const CLIENT_ADDRESS_CACHE_SIZE = 1024;

/**
 * The caller's address as the gate should judge it; undefined when the socket has none. A pure
 * function of its arguments, so its answers are cached: the same peer and header (one proxy,
 * a few clients) cost one map lookup instead of parsing every address on every request.
 */
export function clientAddressOf(
  peer: string | undefined,
  forwardedFor: string | undefined,
  trusted: readonly Cidr[],
): string | undefined {
  if (peer === undefined) return undefined;
  let answers = ANSWERS.get(trusted);
  if (answers === undefined) {
    answers = new Map();
    ANSWERS.set(trusted, answers);
  }
  const key = forwardedFor === undefined ? peer : `${peer}\n${forwardedFor}`;
  const known = answers.get(key);
  if (known !== undefined || answers.has(key)) return known;
  const answer = workOutClientAddress(peer, forwardedFor, trusted);
  // Starting over is O(1) amortised and keeps the cache at its bound whatever callers send.
  if (answers.size >= CLIENT_ADDRESS_CACHE_SIZE) answers.clear();
  answers.set(key, answer);
  return answer;
}

function workOutClientAddress(
  peer: string,
  forwardedFor: string | undefined,
  trusted: readonly Cidr[],
): string | undefined {
  const peerAddress = parseAddress(peer);
  if (peerAddress === undefined) return undefined;
  if (forwardedFor === undefined || trusted.length === 0 || !isTrusted(peerAddress, trusted)) {
    return peerAddress.toString();
  }
  let candidate = peerAddress;
  const hops = forwardedFor.split(',');
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = parseAddress(stripPort((hops[i] as string).trim()));
    // A malformed hop ends the walk: the last address we could trust to report it stands.
    if (hop === undefined) break;
    candidate = hop;
    if (!isTrusted(hop, trusted)) break;
  }
  return candidate.toString();
}

/**
 * The same answer as {@link isLoopbackAddress} for the addresses node:http reports (canonical
 * dotted quads, compressed lower-case IPv6, `::ffff:` mapped IPv4) and for what
 * {@link clientAddressOf} returns, without parsing: the gate runs it on every request.
 *
 * @example
 * ```ts
 * isLoopbackPeer(req.socket.remoteAddress); // true for '127.0.0.1', '::1', '::ffff:127.0.0.1'
 * ```
 */
export function isLoopbackPeer(address: string | undefined): boolean {
  if (address === undefined) return false;
  if (address === '::1') return true;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return v4.startsWith('127.');
}

/** 127.0.0.0/8, ::1, and their IPv4-mapped forms. */
export function isLoopbackAddress(address: string | undefined): boolean {
  const parsed = parseAddress(address);
  return parsed !== undefined && parsed.range() === 'loopback';
}

function isTrusted(address: ipaddr.IPv4 | ipaddr.IPv6, trusted: readonly Cidr[]): boolean {
  for (const [range, bits] of trusted) {
    if (range.kind() === address.kind() && address.match(range, bits)) return true;
  }
  return false;
}

function parseAddress(text: string | undefined): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  if (text === undefined || text.length === 0 || text.length > 64) return undefined;
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  // Only canonical dotted quads and IPv6: "127.1" or "0x7f.1" are not addresses a proxy writes.
  if (!ipaddr.IPv4.isValidFourPartDecimal(bare) && !ipaddr.IPv6.isValid(bare)) return undefined;
  return unmap(ipaddr.parse(bare.replace(/%.*$/, '')));
}

function unmap(address: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | ipaddr.IPv6 {
  return address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()
    ? (address as ipaddr.IPv6).toIPv4Address()
    : address;
}

/** `203.0.113.9:4711` → `203.0.113.9`; `[2001:db8::1]:443` → `2001:db8::1`. */
function stripPort(hop: string): string {
  if (hop.startsWith('[')) {
    const end = hop.indexOf(']');
    return end === -1 ? hop : hop.slice(1, end);
  }
  const colon = hop.indexOf(':');
  return colon !== -1 && hop.indexOf(':', colon + 1) === -1 ? hop.slice(0, colon) : hop;
}
