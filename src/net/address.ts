/**
 * Outbound address policy: pure functions, no I/O. The guarded transport resolves a name, runs
 * every answer through {@link checkDestination}, and dials only the answers that passed, so this
 * file is the whole of "where may Airlock connect to".
 *
 * Classification judges the address a packet would really reach: IPv4-mapped (`::ffff:a.b.c.d`),
 * IPv4-translated, NAT64 (64:ff9b::/96 and the local-use 64:ff9b:1::/48) and 6to4 (2002::/16)
 * addresses are judged by the IPv4 address they carry, and the odd IPv4 spellings a URL parser
 * accepts (`127.1`, `0x7f.1`, `0177.0.0.1`, `2130706433`) by the address they spell.
 *
 * @example
 * ```ts
 * classifyAddress('::ffff:169.254.169.254'); // 'metadata'
 * checkDestination({ host: 'agent.example', address: '10.0.0.7', privateNetwork: false, privateAllow: [] });
 * // { ok: false, reason: '10.0.0.7 is a private address and the entry is not private_network' }
 * ```
 */
import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** Where an address leads, from the transport's point of view. */
export type AddressClass = 'public' | 'private' | 'loopback' | 'link-local' | 'metadata' | 'reserved' | 'invalid';

/** The answer of {@link checkDestination}: a refusal always carries a one-line reason. */
export type AddressVerdict = { ok: true } | { ok: false; reason: string };

/** What {@link checkDestination} judges: one resolved (or literal) address for one host. */
export interface DestinationInput {
  /** The host as the URL names it (a name, or an IP literal as written). */
  host: string;
  /** One address the host resolved to, or the literal itself. */
  address: string;
  /** The registry entry is `private_network`. */
  privateNetwork: boolean;
  /** Hosts, addresses and CIDRs a private_network entry may reach (AIRLOCK_PRIVATE_ALLOW). */
  privateAllow: readonly string[];
  /**
   * An egress proxy is configured. Private entries then go direct and may reach only
   * non-public addresses, so that public traffic always meets the proxy's own allowlist.
   */
  proxyConfigured?: boolean;
}

/**
 * Cloud metadata and platform endpoints. Most sit in 169.254/16 (already link-local), but some
 * do not: Alibaba's is in 100.64/10, Azure's WireServer is a public-range address, Oracle's is in
 * 192.0.0/24, and AWS's IPv6 IMDS is in fc00::/7. Listing them makes them refusable even for a
 * private_network entry whose allowlist happens to cover their range.
 */
const METADATA_V4 = new Set([
  '169.254.169.254', // AWS, GCP, Azure, OpenStack, DigitalOcean ... instance metadata
  '169.254.170.2', // AWS ECS task metadata and credentials
  '169.254.170.23', // AWS EKS pod identity agent
  '100.100.100.200', // Alibaba Cloud
  '168.63.129.16', // Azure WireServer
  '192.0.0.192', // Oracle Cloud (legacy)
]);
const METADATA_V6 = new Set(['fd00:ec2::254', 'fd00:ec2::23']);

const NAT64_WELL_KNOWN = ipaddr.IPv6.parse('64:ff9b::');
const NAT64_LOCAL = ipaddr.IPv6.parse('64:ff9b:1::');
const SIX_TO_FOUR = ipaddr.IPv6.parse('2002::');
const GLOBAL_UNICAST = ipaddr.IPv6.parse('2000::');

/** Worst first: when an IPv6 address may carry several IPv4 addresses, the worst reading wins. */
const SEVERITY: Record<AddressClass, number> = {
  invalid: 7,
  metadata: 6,
  'link-local': 5,
  loopback: 4,
  reserved: 3,
  private: 2,
  public: 1,
};

/**
 * Classifies one IP address (IPv4 in any spelling `ipaddr.js` accepts, IPv6 with or without
 * brackets). Anything that is not an address is `'invalid'`. Only global unicast is `'public'`:
 * for IPv6 that means 2000::/3 outside the special-purpose ranges.
 *
 * @example
 * ```ts
 * classifyAddress('0x7f.1');             // 'loopback'
 * classifyAddress('64:ff9b::a00:1');     // 'private' (NAT64 form of 10.0.0.1)
 * classifyAddress('2002:a9fe:a9fe::');   // 'metadata' (6to4 form of 169.254.169.254)
 * classifyAddress('93.184.216.34');      // 'public'
 * ```
 */
export function classifyAddress(address: string): AddressClass {
  const parsed = parseAddress(address);
  return parsed === undefined ? 'invalid' : classifyParsed(parsed);
}

/**
 * Decides whether the transport may connect to `address` on behalf of `host`:
 *
 * - metadata, link-local, reserved and unparseable addresses: never;
 * - loopback: only when the host itself is written as `localhost`, a dotted-quad 127.x.x.x or
 *   `[::1]` (an operator's own machine); a *name* that resolves to loopback is refused;
 * - private (RFC 1918, 100.64/10, fc00::/7, fec0::/10): only for a `private_network` entry whose
 *   host, or the address itself, is in `privateAllow`;
 * - public: yes, except for a `private_network` entry while an egress proxy is configured.
 *
 * @example
 * ```ts
 * checkDestination({ host: 'localhost', address: '127.0.0.1', privateNetwork: false, privateAllow: [] });
 * // { ok: true }
 * checkDestination({ host: 'w.corp', address: '10.20.0.5', privateNetwork: true, privateAllow: ['10.20.0.0/16'] });
 * // { ok: true }
 * ```
 */
export function checkDestination(input: DestinationInput): AddressVerdict {
  const { host, address } = input;
  const shown = printable(address);
  switch (classifyAddress(address)) {
    case 'invalid':
      return refuse(`"${shown}" is not an IP address`);
    case 'metadata':
      return refuse(`${shown} is a cloud metadata address`);
    case 'link-local':
      return refuse(`${shown} is a link-local address`);
    case 'reserved':
      return refuse(`${shown} is a reserved or special-purpose address`);
    case 'loopback':
      return isLoopbackHost(host)
        ? { ok: true }
        : refuse(`${shown} is a loopback address, reachable only from a host written as localhost, 127.x.x.x or [::1]`);
    case 'private':
      if (!input.privateNetwork) return refuse(`${shown} is a private address and the entry is not private_network`);
      if (!isAllowed(host, address, input.privateAllow)) {
        return refuse(`${shown} is a private address and neither it nor the host is in AIRLOCK_PRIVATE_ALLOW`);
      }
      return { ok: true };
    case 'public':
      if (input.privateNetwork && input.proxyConfigured === true) {
        return refuse(
          `${shown} is a public address; a private_network entry goes direct and reaches only private addresses while an egress proxy is set`,
        );
      }
      return { ok: true };
  }
}

/**
 * How a checked address is reached: through the egress proxy (public destinations of ordinary
 * entries, when a proxy is configured) or directly (everything else: loopback, private entries,
 * and every destination when no proxy is set). Private entries never use the proxy: their names
 * may resolve into a listed network that only a local lookup can see.
 *
 * @example
 * ```ts
 * chooseRoute({ address: '93.184.216.34', privateNetwork: false, proxyConfigured: true }); // 'proxy'
 * chooseRoute({ address: '10.0.0.5', privateNetwork: true, proxyConfigured: true });       // 'direct'
 * ```
 */
export function chooseRoute(input: {
  address: string;
  privateNetwork: boolean;
  proxyConfigured: boolean;
}): 'direct' | 'proxy' {
  return input.proxyConfigured && !input.privateNetwork && classifyAddress(input.address) === 'public'
    ? 'proxy'
    : 'direct';
}

/**
 * True for the hosts an operator writes to mean "this machine": `localhost`, a plain dotted-quad
 * in 127/8, or `::1`. Odd spellings (`127.1`, `0x7f.0.0.1`) and IPv4-mapped forms are not
 * accepted: no legitimate configuration needs them, and they are how a hostile URL tries to look
 * like something else.
 *
 * @example
 * ```ts
 * isLoopbackHost('127.0.0.2'); // true
 * isLoopbackHost('[::1]');     // true
 * isLoopbackHost('0x7f.1');    // false
 * ```
 */
export function isLoopbackHost(host: string): boolean {
  const lower = host.toLowerCase();
  if (lower === 'localhost') return true;
  if (ipaddr.IPv4.isValidFourPartDecimal(lower)) return ipaddr.IPv4.parse(lower).range() === 'loopback';
  const bare = unbracket(lower);
  if (bare.includes('%') || !ipaddr.IPv6.isValid(bare)) return false;
  return ipaddr.IPv6.parse(bare).range() === 'loopback';
}

/** One parsed AIRLOCK_PRIVATE_ALLOW entry. */
export type AllowEntry = { kind: 'host'; host: string } | { kind: 'range'; range: [Address, number] };

/**
 * Parses one allowlist entry: a host name (letters, digits, `-`, `_`, dots; no wildcards), a
 * dotted-quad or IPv6 address (a single host), or a CIDR range. Returns undefined when the entry
 * is none of these. IPv4 must be written as four decimal parts: an allowlist is configuration,
 * and `012.0.0.0/8` meaning 10/8 would surprise its reader.
 *
 * @example
 * ```ts
 * parseAllowEntry('10.20.0.0/16'); // { kind: 'range', range: [IPv4 10.20.0.0, 16] }
 * parseAllowEntry('W.Corp');       // { kind: 'host', host: 'w.corp' }
 * parseAllowEntry('*.corp');       // undefined
 * ```
 */
export function parseAllowEntry(entry: string): AllowEntry | undefined {
  const text = entry.trim().toLowerCase();
  if (text.length === 0 || text.length > 253) return undefined;
  const slash = text.indexOf('/');
  const addressPart = unbracket(slash === -1 ? text : text.slice(0, slash));
  const isV4 = ipaddr.IPv4.isValidFourPartDecimal(addressPart);
  const isV6 = !isV4 && !addressPart.includes('%') && ipaddr.IPv6.isValid(addressPart);
  if (isV4 || isV6) {
    const address = ipaddr.parse(addressPart);
    const max = isV4 ? 32 : 128;
    let bits = max;
    if (slash !== -1) {
      const suffix = text.slice(slash + 1);
      if (!/^\d{1,3}$/.test(suffix)) return undefined;
      bits = Number(suffix);
      if (bits > max) return undefined;
    }
    const unwrapped = unmapOnly(address);
    if (unwrapped !== address) {
      // ::ffff:10.0.0.0/104 is 10.0.0.0/8 in IPv6 clothes; a shorter mask would reach outside it.
      if (bits < 96) return undefined;
      return { kind: 'range', range: [unwrapped, bits - 96] };
    }
    return { kind: 'range', range: [address, bits] };
  }
  if (slash !== -1) return undefined;
  if (!/^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/.test(text)) {
    return undefined;
  }
  // A name made only of digits and dots would be read as an IPv4 address by the URL parser.
  if (/^[\d.]+$/.test(text)) return undefined;
  return { kind: 'host', host: text };
}

/**
 * Allowlist entries as parsed (null: malformed), by their text: the list is configuration,
 * checked on every connection to a private address, and parsing an entry costs several µs.
 */
const parsedEntries = new Map<string, AllowEntry | null>();
const MAX_PARSED_ENTRIES = 1024;

function allowEntryOf(raw: string): AllowEntry | undefined {
  let entry = parsedEntries.get(raw);
  if (entry === undefined) {
    entry = parseAllowEntry(raw) ?? null;
    if (raw.length <= 300) {
      if (parsedEntries.size >= MAX_PARSED_ENTRIES) parsedEntries.clear();
      parsedEntries.set(raw, entry);
    }
  }
  return entry ?? undefined;
}

/**
 * True when a private destination is on the allowlist: the host by name, or the address inside
 * a listed address or range. IPv4-mapped forms match their IPv4 ranges (the same socket
 * destination); NAT64 and 6to4 forms match only ranges written in IPv6.
 *
 * @example
 * ```ts
 * isAllowed('w.corp', '10.20.0.5', ['10.20.0.0/16']); // true
 * isAllowed('w.corp', '10.30.0.5', ['w.corp']);       // true
 * ```
 */
export function isAllowed(host: string, address: string, privateAllow: readonly string[]): boolean {
  const name = unbracket(host.toLowerCase());
  const parsed = parseAddress(address);
  const target = parsed === undefined ? undefined : unmapOnly(parsed);
  for (const raw of privateAllow) {
    const entry = allowEntryOf(raw);
    if (entry === undefined) continue; // fail closed: a malformed entry allows nothing
    if (entry.kind === 'host') {
      if (entry.host === name) return true;
      continue;
    }
    const [range, bits] = entry.range;
    if (target !== undefined && target.kind() === range.kind() && target.match(range, bits)) return true;
  }
  return false;
}

/**
 * The IPv4 addresses an IPv6 address carries, or undefined when it carries none. The local-use
 * NAT64 prefix 64:ff9b:1::/48 may be subdivided, so the IPv4 part may sit at any of the RFC 6052
 * positions for /48, /56, /64 or /96: every reading is returned and the caller judges the worst.
 * In practice that refuses most local-use NAT64 addresses (one reading is usually 0.x or
 * otherwise reserved); the prefix length is deployment config we cannot see, and guessing it
 * would let a chosen reading through.
 *
 * @example
 * ```ts
 * carriedIPv4('::ffff:10.0.0.1');    // ['10.0.0.1']
 * carriedIPv4('2002:7f00:1::');      // ['127.0.0.1']
 * carriedIPv4('2001:4860::8888');    // undefined
 * ```
 */
export function carriedIPv4(address: string): string[] | undefined {
  const parsed = parseAddress(address);
  if (parsed === undefined || parsed.kind() !== 'ipv6') return undefined;
  return carried(parsed as ipaddr.IPv6)?.map((v4) => v4.toString());
}

function classifyParsed(address: Address): AddressClass {
  if (address.kind() === 'ipv4') return classifyV4(address as ipaddr.IPv4);
  const v6 = address as ipaddr.IPv6;
  // toString() is the compact RFC 5952 form, whatever spelling came in.
  if (METADATA_V6.has(v6.toString())) return 'metadata';
  const inner = carried(v6);
  if (inner !== undefined) return worst(inner.map(classifyV4));
  // Widened to string: the bundled typings lag the library's range names (deprecatedSiteLocal).
  const range: string = v6.range();
  switch (range) {
    case 'loopback':
      return 'loopback';
    case 'linkLocal':
      return 'link-local';
    case 'uniqueLocal':
    case 'deprecatedSiteLocal':
      return 'private';
    case 'unicast':
      // Outside 2000::/3 nothing is allocated for global unicast; ::a.b.c.d (IPv4-compatible,
      // deprecated) lands here too and is refused rather than guessed at.
      return v6.match(GLOBAL_UNICAST, 3) ? 'public' : 'reserved';
    default:
      return 'reserved';
  }
}

function classifyV4(address: ipaddr.IPv4): AddressClass {
  if (METADATA_V4.has(address.toString())) return 'metadata';
  switch (address.range()) {
    case 'unicast':
      return 'public';
    case 'loopback':
      return 'loopback';
    case 'linkLocal':
      return 'link-local';
    case 'private':
    case 'carrierGradeNat':
      return 'private';
    default:
      return 'reserved';
  }
}

function carried(v6: ipaddr.IPv6): ipaddr.IPv4[] | undefined {
  const bytes = v6.toByteArray();
  const at = (...indexes: number[]): ipaddr.IPv4 => new ipaddr.IPv4(indexes.map((i) => bytes[i] as number));
  const range = v6.range();
  if (range === 'ipv4Mapped' || range === 'rfc6145') return [at(12, 13, 14, 15)];
  if (v6.match(NAT64_WELL_KNOWN, 96)) return [at(12, 13, 14, 15)];
  if (v6.match(NAT64_LOCAL, 48)) {
    // RFC 6052 §2.2: bits 64..71 (byte 8) are reserved and skipped.
    return [at(6, 7, 9, 10), at(7, 9, 10, 11), at(9, 10, 11, 12), at(12, 13, 14, 15)];
  }
  if (v6.match(SIX_TO_FOUR, 16)) return [at(2, 3, 4, 5)];
  return undefined;
}

function worst(classes: AddressClass[]): AddressClass {
  let result: AddressClass = 'public';
  for (const c of classes) if (SEVERITY[c] > SEVERITY[result]) result = c;
  return result;
}

function parseAddress(text: string): Address | undefined {
  if (typeof text !== 'string' || text.length === 0 || text.length > 100) return undefined;
  let bare = unbracket(text);
  // A zone id (fe80::1%eth0) only scopes a link-local address; judge the address itself.
  const zone = bare.indexOf('%');
  if (zone !== -1) {
    if (!bare.includes(':')) return undefined;
    bare = bare.slice(0, zone);
  }
  if (!ipaddr.isValid(bare)) return undefined;
  try {
    const compatible = IPV4_COMPATIBLE.exec(bare);
    // ipaddr.js reads ::a.b.c.d as ::ffff:a.b.c.d; it is ::/96 (IPv4-compatible, deprecated),
    // the same address as ::0808:0808 in hex, and is judged as that: reserved.
    if (compatible !== null) {
      const v4 = ipaddr.IPv4.parse(compatible[1] as string).toByteArray();
      return new ipaddr.IPv6([
        0,
        0,
        0,
        0,
        0,
        0,
        ((v4[0] ?? 0) << 8) | (v4[1] ?? 0),
        ((v4[2] ?? 0) << 8) | (v4[3] ?? 0),
      ]);
    }
    return ipaddr.parse(bare);
  } catch {
    return undefined;
  }
}

/** `::a.b.c.d` (any case of `::`), not `::ffff:a.b.c.d`. */
const IPV4_COMPATIBLE = /^(?:0{0,4}:){0,6}:(\d{1,3}(?:\.\d{1,3}){3})$/;

/** Unwraps only the forms that are the IPv4 address itself on the wire (mapped, translated). */
function unmapOnly(address: Address): Address {
  if (address.kind() !== 'ipv6') return address;
  const v6 = address as ipaddr.IPv6;
  const range = v6.range();
  if (range !== 'ipv4Mapped' && range !== 'rfc6145') return address;
  const bytes = v6.toByteArray();
  return new ipaddr.IPv4(bytes.slice(12, 16));
}

function unbracket(text: string): string {
  return text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
}

/** Keeps refusal reasons one line and short whatever a resolver returned. */
function printable(text: string): string {
  const cleaned = String(text).replace(/[^\x20-\x7e]/g, '?');
  return cleaned.length > 64 ? `${cleaned.slice(0, 64)}…` : cleaned;
}

function refuse(reason: string): AddressVerdict {
  return { ok: false, reason };
}
