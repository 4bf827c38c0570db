/**
 * Fuzzing the outbound address policy (src/net/address.ts `classifyAddress`, and
 * src/net/url-policy.ts `checkOutboundUrl`, which judges IP-literal hosts) against a reference
 * written here from the IANA special-purpose registries as explicit CIDR tables, with integer
 * arithmetic only (no ipaddr.js ranges), on random addresses in every spelling the code accepts:
 * dotted quads, decimal/octal/hex and short IPv4 forms, IPv4-mapped and -translated IPv6 (dotted
 * and hex), NAT64 (64:ff9b::/96, 64:ff9b:1::/48), 6to4, Teredo, compressed/expanded/padded IPv6,
 * upper and lower case, brackets and zone ids; in URLs also trailing dots, fullwidth digits,
 * ideographic full stops and percent-encoding.
 *
 * Each property says which control it protects.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { classifyAddress, type AddressClass } from '../../src/net/address.js';
import { OutboundError } from '../../src/net/errors.js';
import { checkOutboundUrl, type UrlPolicy } from '../../src/net/url-policy.js';
import { fuzzRuns, fuzzTimeout } from './runs.js';

// ---------------------------------------------------------------------------------------------
// The reference

/** What the reference says: the class, or the classes the product may answer (see TOLERATED). */
type Expected = ReadonlySet<AddressClass>;
const just = (...classes: AddressClass[]): Expected => new Set(classes);

/**
 * IANA IPv4 special-purpose registry (plus RFC 1918, RFC 6598 and multicast/class E), as
 * [first octets..., prefix length, class]. "tolerated" marks the blocks IANA lists as globally
 * reachable (AS112, AMT): public by the registry; the product may refuse them as reserved.
 */
const V4_TABLE: readonly [string, AddressClass | 'tolerated'][] = [
  ['0.0.0.0/8', 'reserved'], // "this network" (RFC 791)
  ['10.0.0.0/8', 'private'], // RFC 1918
  ['100.64.0.0/10', 'private'], // shared address space, CGN (RFC 6598)
  ['127.0.0.0/8', 'loopback'], // RFC 1122
  ['169.254.0.0/16', 'link-local'], // RFC 3927
  ['172.16.0.0/12', 'private'], // RFC 1918
  ['192.0.0.0/24', 'reserved'], // IETF protocol assignments (RFC 6890)
  ['192.0.2.0/24', 'reserved'], // TEST-NET-1 (RFC 5737)
  ['192.31.196.0/24', 'tolerated'], // AS112-v4 (RFC 7535), globally reachable
  ['192.52.193.0/24', 'tolerated'], // AMT (RFC 7450), globally reachable
  ['192.88.99.0/24', 'reserved'], // deprecated 6to4 relay anycast (RFC 7526)
  ['192.168.0.0/16', 'private'], // RFC 1918
  ['192.175.48.0/24', 'tolerated'], // direct delegation AS112 (RFC 7534), globally reachable
  ['198.18.0.0/15', 'reserved'], // benchmarking (RFC 2544)
  ['198.51.100.0/24', 'reserved'], // TEST-NET-2
  ['203.0.113.0/24', 'reserved'], // TEST-NET-3
  ['224.0.0.0/4', 'reserved'], // multicast (RFC 5771)
  ['240.0.0.0/4', 'reserved'], // reserved for future use, and 255.255.255.255 broadcast
];

/** Cloud metadata endpoints: policy, not IANA; the product refuses them even when allowed. */
const METADATA_V4 = [
  '169.254.169.254',
  '169.254.170.2',
  '169.254.170.23',
  '100.100.100.200',
  '168.63.129.16',
  '192.0.0.192',
];
const METADATA_V6 = [
  [0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54],
  [0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x23],
];

const v4Int = (b: readonly number[]): number => ((b[0]! << 24) >>> 0) + (b[1]! << 16) + (b[2]! << 8) + b[3]!;
const dotted = (b: readonly number[]): string => b.slice(0, 4).join('.');

function parseCidr4(cidr: string): [number, number] {
  const [addr, bits] = cidr.split('/') as [string, string];
  return [v4Int(addr.split('.').map(Number)), Number(bits)];
}
const V4_RANGES = V4_TABLE.map(([cidr, cls]) => [...parseCidr4(cidr), cls] as const);

function inCidr4(n: number, base: number, bits: number): boolean {
  if (bits === 0) return true;
  const mask = bits === 32 ? 0xffffffff : (~0 << (32 - bits)) >>> 0;
  return (n & mask) >>> 0 === (base & mask) >>> 0;
}

function refV4(b: readonly number[]): Expected {
  if (METADATA_V4.includes(dotted(b))) return just('metadata');
  const n = v4Int(b);
  for (const [base, bits, cls] of V4_RANGES) {
    if (inCidr4(n, base, bits)) return cls === 'tolerated' ? just('public', 'reserved') : just(cls);
  }
  return just('public');
}

/** Worst first, when an address carries several IPv4 readings: any refusal wins. */
const SEVERITY: Record<AddressClass, number> = {
  invalid: 7,
  metadata: 6,
  'link-local': 5,
  loopback: 4,
  reserved: 3,
  private: 2,
  public: 1,
};

/** The worst of several readings (each a set): every combination's worst. */
function worstOf(readings: Expected[]): Expected {
  let acc: AddressClass[] = ['public'];
  for (const reading of readings) {
    const next: AddressClass[] = [];
    for (const a of acc) for (const r of reading) next.push(SEVERITY[r] > SEVERITY[a] ? r : a);
    acc = [...new Set(next)];
  }
  return new Set(acc);
}

function prefixMatch(bytes: readonly number[], prefix: readonly number[], bits: number): boolean {
  for (let i = 0; i < bits; i++) {
    const byte = i >> 3;
    const mask = 0x80 >> (i & 7);
    if ((bytes[byte]! & mask) !== (prefix[byte]! & mask)) return false;
  }
  return true;
}

/** Expand an IPv6 prefix written as groups ("2001:db8") into 16 bytes. */
function p6(groups: string): number[] {
  const out = new Array<number>(16).fill(0);
  groups
    .split(':')
    .filter((g) => g !== '')
    .forEach((g, i) => {
      const v = parseInt(g, 16);
      out[2 * i] = v >> 8;
      out[2 * i + 1] = v & 0xff;
    });
  return out;
}

const at = (bytes: readonly number[], ...idx: number[]): number[] => idx.map((i) => bytes[i]!);

/**
 * IANA IPv6 special-purpose registry and RFC 4291/4193/3879/6052/3056/8215, judged by where a
 * packet would go: the IPv4 address carried by mapped, translated, NAT64 and 6to4 forms.
 */
function refV6(bytes: readonly number[]): Expected {
  if (METADATA_V6.some((m) => m.every((v, i) => v === bytes[i]))) return just('metadata');
  const zeroUpTo = (n: number): boolean => bytes.slice(0, n).every((v) => v === 0);
  if (zeroUpTo(16)) return just('reserved'); // :: unspecified
  if (zeroUpTo(15) && bytes[15] === 1) return just('loopback'); // ::1
  // ::ffff:0:0/96 mapped (RFC 4291) and ::ffff:0:0:0/96 translated (RFC 6145): the IPv4 itself.
  if (zeroUpTo(10) && bytes[10] === 0xff && bytes[11] === 0xff) return refV4(at(bytes, 12, 13, 14, 15));
  if (zeroUpTo(8) && bytes[8] === 0xff && bytes[9] === 0xff && bytes[10] === 0 && bytes[11] === 0) {
    return refV4(at(bytes, 12, 13, 14, 15));
  }
  if (prefixMatch(bytes, p6('64:ff9b'), 96)) return refV4(at(bytes, 12, 13, 14, 15)); // RFC 6052
  if (prefixMatch(bytes, p6('64:ff9b:1'), 48)) {
    // RFC 8215 local-use NAT64: the prefix length is deployment config, so every RFC 6052
    // position (/48, /56, /64, /96; byte 8 skipped) is a possible reading.
    return worstOf([
      refV4(at(bytes, 6, 7, 9, 10)),
      refV4(at(bytes, 7, 9, 10, 11)),
      refV4(at(bytes, 9, 10, 11, 12)),
      refV4(at(bytes, 12, 13, 14, 15)),
    ]);
  }
  if (prefixMatch(bytes, p6('2002'), 16)) return refV4(at(bytes, 2, 3, 4, 5)); // 6to4 (RFC 3056)
  if (prefixMatch(bytes, p6('fe80'), 10)) return just('link-local');
  if (prefixMatch(bytes, p6('fc00'), 7)) return just('private'); // ULA (RFC 4193)
  if (prefixMatch(bytes, p6('fec0'), 10)) return just('private'); // site-local (RFC 3879)
  if (prefixMatch(bytes, p6('ff00'), 8)) return just('reserved'); // multicast
  // Inside global unicast 2000::/3, the special-purpose blocks:
  if (prefixMatch(bytes, p6('2001'), 23)) return just('reserved'); // IETF protocol assignments: Teredo, ORCHID, AMT, benchmarking…
  if (prefixMatch(bytes, p6('2001:db8'), 32)) return just('reserved'); // documentation
  if (prefixMatch(bytes, p6('3fff'), 20)) return just('reserved'); // documentation (RFC 9637)
  if (prefixMatch(bytes, p6('2620:4f:8000'), 48)) return just('public', 'reserved'); // AS112-v6, globally reachable
  if (prefixMatch(bytes, p6('2000'), 3)) return just('public');
  // Everything else is unallocated or special (::/96 IPv4-compatible, 100::/64 discard, 5f00::/16…).
  return just('reserved');
}

// ---------------------------------------------------------------------------------------------
// Generators: addresses (biased towards the interesting ranges and their edges) and spellings

const byte = fc.integer({ min: 0, max: 255 });
const bytes = (n: number): fc.Arbitrary<number[]> => fc.array(byte, { minLength: n, maxLength: n });

/** A random address inside a CIDR (near its edges half the time), or just outside it. */
function aroundCidr4(cidr: string): fc.Arbitrary<number[]> {
  const [base, bits] = parseCidr4(cidr);
  const size = 2 ** (32 - bits);
  return fc
    .oneof(
      fc.integer({ min: 0, max: size - 1 }),
      fc.constantFrom(0, size - 1, -1, size),
      fc.integer({ min: -2, max: 2 }),
      fc.integer({ min: size - 3, max: size + 1 }),
    )
    .map((offset) => {
      const n = (base + offset + 2 ** 32) % 2 ** 32;
      return [n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
    });
}

const interestingV4: fc.Arbitrary<number[]> = fc.oneof(
  { weight: 4, arbitrary: fc.oneof(...V4_TABLE.map(([cidr]) => aroundCidr4(cidr))) },
  { weight: 1, arbitrary: fc.constantFrom(...METADATA_V4.map((a) => a.split('.').map(Number))) },
  { weight: 1, arbitrary: aroundCidr4('0.0.0.0/0') },
  {
    weight: 1,
    arbitrary: fc.constantFrom<number[]>([255, 255, 255, 255], [0, 0, 0, 0], [8, 8, 8, 8], [93, 184, 216, 34]),
  },
);

/** 16 bytes: a prefix from the registries with the rest random, or an IPv4 wrapped some way. */
const interestingV6: fc.Arbitrary<number[]> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .tuple(
        fc.constantFrom<[string, number]>(
          ['', 0],
          ['', 96],
          ['', 120],
          ['64:ff9b', 96],
          ['64:ff9b:1', 48],
          ['64:ff9b', 32],
          ['2002', 16],
          ['2001', 32], // Teredo
          ['2001', 23],
          ['2001:2', 48],
          ['2001:db8', 32],
          ['3fff', 20],
          ['2620:4f:8000', 48],
          ['2000', 3],
          ['fe80', 10],
          ['fc00', 7],
          ['fd00:ec2', 32],
          ['fec0', 10],
          ['ff00', 8],
          ['100', 64],
          ['5f00', 16],
        ),
        bytes(16),
        fc.boolean(),
      )
      .map(([[groups, bits], random, sparse]) => {
        const prefix = p6(groups);
        const out = random.map((v, i) => {
          const inPrefix = i * 8 < bits;
          if (!inPrefix) return sparse && i % 2 === 0 && v < 160 ? 0 : v;
          const keep = Math.min(8, bits - i * 8);
          const mask = (0xff << (8 - keep)) & 0xff;
          return (prefix[i]! & mask) | (v & ~mask & 0xff);
        });
        // Zeroed groups exercise '::' compression anywhere.
        if (sparse) for (let i = 0; i < 16; i += 2) if (out[i] === 0) out[i + 1] = 0;
        return out;
      }),
  },
  {
    weight: 3,
    arbitrary: fc
      .tuple(
        interestingV4,
        fc.constantFrom('mapped', 'translated', 'nat64', 'nat64-local', '6to4', 'compatible', 'teredo'),
        bytes(16),
      )
      .map(([v4, how, noise]) => {
        const out = new Array<number>(16).fill(0);
        const put = (positions: number[]): void => positions.forEach((p, i) => (out[p] = v4[i]!));
        switch (how) {
          case 'mapped':
            out[10] = out[11] = 0xff;
            put([12, 13, 14, 15]);
            break;
          case 'translated':
            out[8] = out[9] = 0xff;
            put([12, 13, 14, 15]);
            break;
          case 'nat64':
            out.splice(0, 4, 0, 0x64, 0xff, 0x9b);
            put([12, 13, 14, 15]);
            break;
          case 'nat64-local': {
            out.splice(0, 16, 0, 0x64, 0xff, 0x9b, 0, 1, ...noise.slice(6));
            out[8] = 0;
            put(
              [
                [6, 7, 9, 10],
                [7, 9, 10, 11],
                [9, 10, 11, 12],
                [12, 13, 14, 15],
              ][noise[0]! % 4]!,
            );
            break;
          }
          case '6to4':
            out.splice(0, 2, 0x20, 0x02);
            put([2, 3, 4, 5]);
            for (let i = 6; i < 16; i++) out[i] = noise[i]! < 128 ? 0 : noise[i]!;
            break;
          case 'compatible':
            put([12, 13, 14, 15]);
            break;
          case 'teredo':
            // 2001:0:<server v4>:<flags>:<port>:<client v4 xor ffffffff>
            out.splice(0, 4, 0x20, 0x01, 0, 0);
            put([4, 5, 6, 7]);
            for (let i = 0; i < 4; i++) out[12 + i] = v4[i]! ^ 0xff;
            break;
        }
        return out;
      }),
  },
  { weight: 1, arbitrary: bytes(16) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      p6(''),
      p6('::1').map((_, i) => (i === 15 ? 1 : 0)),
      METADATA_V6[0]!,
    ),
  },
);

/** A random-case hex group with 0–3 extra leading zeros (up to four digits). */
function hexGroup(value: number, rng: Rng): string {
  let text = value.toString(16);
  const pad = rng.nextInt(0, 4 - text.length);
  text = '0'.repeat(pad) + text;
  return [...text].map((c) => (rng.nextBoolean() ? c.toUpperCase() : c)).join('');
}

/** A spelling of 16 bytes as IPv6 text (`::a.b.c.d`, IPv4-compatible, is one of them: reserved). */
interface V6Spelling {
  text: string;
}

const v6Spelling = (b: readonly number[], forUrl: boolean): fc.Arbitrary<V6Spelling> =>
  fc
    .tuple(fc.boolean(), fc.nat(), fc.nat(), fc.constantFrom('', '', '%eth0', '%1', '%25en0'), fc.integer())
    .map(([dottedTail, runPick, lenPick, zoneId, seed]) => {
      const rng = new Rng(seed);
      const zone = forUrl ? '' : zoneId;
      const groups: number[] = [];
      for (let i = 0; i < 16; i += 2) groups.push((b[i]! << 8) | b[i + 1]!);
      const hexCount = dottedTail ? 6 : 8;
      // All runs of zero groups among the hex ones; compress one sub-run of one of them (or none).
      const runs: [number, number][] = [];
      for (let i = 0; i < hexCount;) {
        if (groups[i] !== 0) {
          i++;
          continue;
        }
        let j = i;
        while (j < hexCount && groups[j] === 0) j++;
        runs.push([i, j]);
        i = j;
      }
      let cut: [number, number] | undefined;
      if (runs.length > 0 && runPick % 3 !== 0) {
        const [s, e] = runs[runPick % runs.length]!;
        const len = 1 + (lenPick % (e - s));
        const start = s + ((lenPick >> 3) % (e - s - len + 1));
        cut = [start, start + len];
      }
      const hex = groups.slice(0, hexCount).map((g) => hexGroup(g, rng));
      const tail = dottedTail ? [dotted(b.slice(12, 16))] : [];
      let text: string;
      if (cut === undefined) {
        text = [...hex, ...tail].join(':');
      } else {
        const left = hex.slice(0, cut[0]).join(':');
        const right = [...hex.slice(cut[1]), ...tail].join(':');
        text = `${left}::${right}`;
      }
      return { text: text + zone };
    });

/** A tiny deterministic PRNG (xorshift32), so a spelling is a pure function of its seed. */
class Rng {
  #s: number;
  constructor(seed: number) {
    this.#s = seed >>> 0 || 0x9e3779b9;
  }
  #next(): number {
    let s = this.#s;
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    this.#s = s >>> 0;
    return this.#s;
  }
  /** An integer in [min, max]. */
  nextInt(min: number, max: number): number {
    return min + (this.#next() % (max - min + 1));
  }
  nextBoolean(): boolean {
    return (this.#next() & 1) === 1;
  }
}

/** An IPv4 number part in a radix the URL parser and ipaddr.js both read. */
function numberPart(value: number, radix: number, rng: Rng): string {
  if (radix === 16) {
    const digits = '0'.repeat(rng.nextInt(0, 2)) + value.toString(16);
    return `0${rng.nextBoolean() ? 'x' : 'X'}${[...digits].map((c) => (rng.nextBoolean() ? c.toUpperCase() : c)).join('')}`;
  }
  if (radix === 8) return `0${'0'.repeat(rng.nextInt(0, 2))}${value.toString(8)}`;
  return String(value);
}

/** A spelling of an IPv4 address that both ipaddr.js and the WHATWG URL parser read as it. */
interface V4Spelling {
  text: string;
  /** A plain dotted quad (the only spelling that may count as the operator's own 127.x.x.x). */
  plain: boolean;
}

const v4Spelling = (b: readonly number[]): fc.Arbitrary<V4Spelling> =>
  fc.tuple(fc.constantFrom(4, 4, 3, 2, 1), fc.integer()).map(([parts, seed]) => {
    const rng = new Rng(seed);
    const plainWanted = rng.nextInt(0, 3) === 0;
    if (plainWanted) return { text: dotted(b), plain: true };
    const n = v4Int(b);
    const values =
      parts === 4
        ? [b[0]!, b[1]!, b[2]!, b[3]!]
        : parts === 3
          ? [b[0]!, b[1]!, (b[2]! << 8) | b[3]!]
          : parts === 2
            ? [b[0]!, n & 0xffffff]
            : [n];
    const text = values.map((v) => numberPart(v, [10, 8, 16][rng.nextInt(0, 2)]!, rng)).join('.');
    return { text, plain: /^(0|[1-9]\d*)(\.(0|[1-9]\d*)){3}$/.test(text) };
  });

/** What only URLs add: a trailing dot, fullwidth digits and dots, ideographic full stops, %-escapes. */
function urlDisguise(text: string, how: number): string {
  switch (how % 5) {
    case 1:
      return `${text}.`;
    case 2:
      return [...text].map((c) => (/[0-9]/.test(c) ? String.fromCharCode(c.charCodeAt(0) + 0xfee0) : c)).join('');
    case 3:
      return text.replaceAll('.', '\u3002');
    case 4:
      return [...text]
        .map((c, i) => (i % 2 === 0 && /[0-9a-z]/i.test(c) ? `%${c.charCodeAt(0).toString(16)}` : c))
        .join('');
    default:
      return text;
  }
}

// ---------------------------------------------------------------------------------------------
// Expected URL verdicts

type Verdict = 'ok' | 'address_blocked' | 'insecure_url';

function expectedVerdicts(
  classes: Expected,
  loopbackWritten: boolean,
  isV6: boolean,
  scheme: 'http' | 'https',
  policy: UrlPolicy,
): Set<Verdict> {
  if (scheme === 'http' && !loopbackWritten) return new Set(['insecure_url']);
  const out = new Set<Verdict>();
  for (const c of classes) {
    switch (c) {
      case 'loopback':
        out.add(loopbackWritten ? 'ok' : 'address_blocked');
        break;
      case 'private':
        // The allowlists below cover every address, so only private_network decides.
        out.add(policy.privateNetwork ? 'ok' : 'address_blocked');
        break;
      case 'public':
        if (policy.privateNetwork && policy.proxyConfigured) out.add('address_blocked');
        else if (policy.proxyConfigured && isV6) out.add('address_blocked');
        else out.add('ok');
        break;
      default:
        out.add('address_blocked');
    }
  }
  return out;
}

function verdictOf(url: string, policy: UrlPolicy): { verdict: Verdict; literal?: string | undefined } {
  try {
    const target = checkOutboundUrl(url, policy);
    return { verdict: 'ok', literal: target.literal };
  } catch (error) {
    assert.ok(error instanceof OutboundError, String(error));
    assert.ok(error.code === 'address_blocked' || error.code === 'insecure_url', `${url}: ${error.code}`);
    return { verdict: error.code };
  }
}

const policyArb: fc.Arbitrary<UrlPolicy> = fc.record({
  privateNetwork: fc.boolean(),
  privateAllow: fc.constantFrom<readonly string[]>(['0.0.0.0/0', '::/0'], ['::/0', '0.0.0.0/0', 'nothing.example']),
  proxyConfigured: fc.boolean(),
});

const show = (set: Iterable<string>): string => [...set].join('|');

// ---------------------------------------------------------------------------------------------

describe('fuzz: classifyAddress against the IANA reference', () => {
  // Protects: the IPv4 range table (RFC 1918, CGN, loopback, link-local, metadata list, test
  // nets, multicast, class E) and the decoding of every IPv4 spelling ipaddr.js accepts: a range
  // dropped from the classifier, or an odd spelling misread, makes some address the wrong class.
  it('IPv4 in every spelling: the class the reference gives', { timeout: fuzzTimeout(10_000) }, () => {
    fc.assert(
      fc.property(
        interestingV4.chain((b) => fc.tuple(fc.constant(b), v4Spelling(b))),
        ([b, spelling]) => {
          const expected = refV4(b);
          const got = classifyAddress(spelling.text);
          assert.ok(expected.has(got), `${spelling.text} (${dotted(b)}): got ${got}, reference ${show(expected)}`);
        },
      ),
      { numRuns: fuzzRuns() },
    );
  });

  // Protects: the IPv6 table and the unwrapping of IPv4 carried in mapped, translated, NAT64
  // (both prefixes, every RFC 6052 position) and 6to4 forms — an address that reaches a private,
  // loopback, link-local or metadata IPv4 must never come out 'public', in any IPv6 spelling.
  it('IPv6 in every spelling: the class the reference gives', { timeout: fuzzTimeout(15_000) }, () => {
    fc.assert(
      fc.property(
        interestingV6.chain((b) => fc.tuple(fc.constant(b), v6Spelling(b, false), fc.boolean())),
        ([b, spelling, bracket]) => {
          const expected = refV6(b);
          const text = bracket && !spelling.text.includes('%') ? `[${spelling.text}]` : spelling.text;
          const got = classifyAddress(text);
          assert.ok(expected.has(got), `${text}: got ${got}, reference ${show(expected)}`);
          if (got === 'public') {
            assert.ok(refV6(b).has('public') || refV4(b.slice(12)).has('public'), `${text} public`);
          }
        },
      ),
      { numRuns: fuzzRuns() },
    );
  });

  // Protects: fail-closed parsing — near-misses of valid spellings (extra groups, doubled '::',
  // stray characters, fullwidth digits) and random text never throw, and whatever the
  // classifier does read as an address, it judges as the reference judges the address the
  // WHATWG URL parser reads from the same text (the parser that decides what a URL dials).
  it(
    'near-miss and random text: never throws; any address it reads, judged as the URL parser reads it',
    { timeout: fuzzTimeout(5_000) },
    () => {
      const nearMiss = fc
        .tuple(
          fc.oneof(fc.ipV4(), fc.ipV6(), fc.ipV4Extended()),
          fc.nat(),
          fc.constantFrom(':', '::', '.', ' ', '%', 'g', '0', '00', '[', ']', '\u0000', '１', 'x', 'ffff:'),
        )
        .map(([addr, pos, junk]) => {
          const i = pos % (addr.length + 1);
          return addr.slice(0, i) + junk + addr.slice(i);
        });
      fc.assert(
        fc.property(
          fc.oneof(nearMiss, fc.string({ maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 40 })),
          (text) => {
            const got = classifyAddress(text);
            assert.ok(got in SEVERITY, got);
            if (got === 'invalid') return;
            const bare = text.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '');
            const whatwg = whatwgBytes(bare);
            if (whatwg === undefined) {
              // Read by ipaddr.js, but no URL can carry it (e.g. '::1.0.00.0': WHATWG refuses
              // leading zeros in an embedded IPv4). Only resolver answers reach the classifier
              // as text, and those are canonical, so nothing to compare against.
              return;
            }
            let expected = whatwg.length === 4 ? refV4(whatwg) : refV6(whatwg);
            if (/^::\d+\.\d+\.\d+\.\d+$/.test(bare) && whatwg.length === 16) {
              expected = new Set([...expected, ...refV4(whatwg.slice(12))]); // see the IPv6 property
            }
            assert.ok(expected.has(got), `${JSON.stringify(text)}: got ${got}, reference ${show(expected)}`);
          },
        ),
        { numRuns: fuzzRuns() },
      );
    },
  );
});

/** The address the WHATWG URL parser reads from a host, as 4 or 16 bytes, or undefined. */
function whatwgBytes(host: string): number[] | undefined {
  let hostname: string;
  try {
    hostname = new URL(`https://${host.includes(':') ? `[${host}]` : host}/`).hostname;
  } catch {
    return undefined;
  }
  if (/^\d+\.\d+\.\d+\.\d+$/.test(hostname)) return hostname.split('.').map(Number);
  if (!hostname.startsWith('[')) return undefined;
  const inner = hostname.slice(1, -1);
  const [head, tail] = inner.includes('::') ? inner.split('::') : [inner, undefined];
  const left = head === '' || head === undefined ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups =
    tail === undefined ? left : [...left, ...new Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return groups.flatMap((g) => {
    const v = parseInt(g, 16);
    return [v >> 8, v & 0xff];
  });
}

describe('fuzz: checkOutboundUrl on IP-literal hosts', () => {
  // Protects: the URL policy's literal check (judged on the address the URL parser produces) and
  // the loopback exemption (granted only to a plain dotted quad 127.x.x.x or [::1] as written):
  // decimal, octal, hex, short, trailing-dot, fullwidth, ideographic and %-encoded spellings of a
  // private/loopback/metadata IPv4 are never let through, and http goes only to loopback.
  it(
    'IPv4 literals: refused or allowed exactly as the reference class and policy say',
    { timeout: fuzzTimeout(10_000) },
    () => {
      fc.assert(
        fc.property(
          interestingV4.chain((b) => fc.tuple(fc.constant(b), v4Spelling(b))),
          fc.nat(),
          fc.constantFrom<'http' | 'https'>('https', 'https', 'http'),
          policyArb,
          ([b, spelling], how, scheme, policy) => {
            const disguised = spelling.plain && how % 5 !== 0 ? urlDisguise(spelling.text, how) : spelling.text;
            const plain = spelling.plain && disguised === spelling.text;
            const classes = refV4(b);
            const loopbackWritten = plain && classes.has('loopback');
            const url = `${scheme}://${disguised}:8443/a2a`;
            const expected = expectedVerdicts(classes, loopbackWritten, false, scheme, policy);
            const { verdict, literal } = verdictOf(url, policy);
            assert.ok(
              expected.has(verdict),
              `${url} ${JSON.stringify(policy)}: ${verdict}, expected ${show(expected)}`,
            );
            if (verdict === 'ok') assert.equal(literal, dotted(b), url);
          },
        ),
        { numRuns: fuzzRuns() },
      );
    },
  );

  // Protects: the same for IPv6 literals, plus the egress-proxy rule (a public IPv6 literal that
  // would go through the proxy is refused) and the loopback exemption for [::1] only (never for
  // ::ffff:127.0.0.1 and other wrappings of 127/8).
  it(
    'IPv6 literals: refused or allowed exactly as the reference class and policy say',
    { timeout: fuzzTimeout(15_000) },
    () => {
      fc.assert(
        fc.property(
          interestingV6.chain((b) => fc.tuple(fc.constant(b), v6Spelling(b, true))),
          fc.constantFrom<'http' | 'https'>('https', 'https', 'http'),
          policyArb,
          ([b, spelling], scheme, policy) => {
            // WHATWG serialises the host itself (::a.b.c.d becomes ::xxxx:xxxx), so the reference
            // class of the bytes is all that counts here.
            const classes = refV6(b);
            const isLoopback = b.every((v, i) => v === (i === 15 ? 1 : 0));
            const url = `${scheme}://[${spelling.text}]/a2a`;
            const expected = expectedVerdicts(classes, isLoopback, true, scheme, policy);
            if (isLoopback && spelling.text.includes('.')) {
              // [::0.0.0.1] is ::1 too, but an odd spelling: refusing it as "not written as
              // [::1]" is as right as accepting it.
              for (const v of expectedVerdicts(classes, false, true, scheme, policy)) expected.add(v);
            }
            const { verdict } = verdictOf(url, policy);
            assert.ok(
              expected.has(verdict),
              `${url} ${JSON.stringify(policy)}: ${verdict}, expected ${show(expected)}`,
            );
          },
        ),
        { numRuns: fuzzRuns() },
      );
    },
  );
});
