import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  carriedIPv4,
  checkDestination,
  chooseRoute,
  classifyAddress,
  isAllowed,
  isLoopbackHost,
  parseAllowEntry,
} from './address.js';
import type { AddressClass } from './address.js';

// ---------------------------------------------------------------------------------------------
// Generators: an IPv4 address as four bytes, and every way of writing or wrapping it.
// ---------------------------------------------------------------------------------------------

type Bytes = [number, number, number, number];
const byte = fc.integer({ min: 0, max: 255 });

const inRange = (prefix: number[], free: number): fc.Arbitrary<Bytes> =>
  fc.tuple(byte, byte, byte, byte).map((random) => {
    const out = [...prefix, ...random.slice(prefix.length)] as Bytes;
    if (free >= 0) out[prefix.length - 1] = (prefix[prefix.length - 1] as number) | (random[0] & free);
    return out;
  });

const privateV4 = fc.oneof(
  inRange([10], 0),
  inRange([172, 16], 0x0f),
  inRange([192, 168], 0),
  inRange([100, 64], 0x3f),
);
const loopbackV4 = inRange([127], 0);
const linkLocalV4 = inRange([169, 254], 0);
const metadataV4 = fc.constantFrom<Bytes>(
  [169, 254, 169, 254],
  [169, 254, 170, 2],
  [100, 100, 100, 200],
  [168, 63, 129, 16],
  [192, 0, 0, 192],
);
const anyV4 = fc.tuple(byte, byte, byte, byte) as fc.Arbitrary<Bytes>;
const publicV4 = anyV4.filter((b) => classifyAddress(b.join('.')) === 'public');

const hex16 = (hi: number, lo: number): string => ((hi << 8) | lo).toString(16);
const toInt = (b: Bytes): number => ((b[0] << 24) >>> 0) + (b[1] << 16) + (b[2] << 8) + b[3];

/** IPv6 text from 16 bytes. */
function v6(bytes: number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < 16; i += 2) parts.push(hex16(bytes[i] as number, bytes[i + 1] as number));
  return parts.join(':');
}

/** Where RFC 6052 puts the IPv4 bytes for each prefix length (byte 8 is always skipped). */
const NAT64_POSITIONS: Record<number, number[]> = {
  48: [6, 7, 9, 10],
  56: [7, 9, 10, 11],
  64: [9, 10, 11, 12],
  96: [12, 13, 14, 15],
};

/** Every IPv6 wrapping that carries `b`, as [label, address]. */
const wrapped = (b: Bytes): fc.Arbitrary<[string, string]> =>
  fc.oneof(
    fc.constant<[string, string]>(['mapped', `::ffff:${b.join('.')}`]),
    fc.constant<[string, string]>(['mapped-hex', `::ffff:${hex16(b[0], b[1])}:${hex16(b[2], b[3])}`]),
    fc.constant<[string, string]>(['mapped-long', `0:0:0:0:0:ffff:${b.join('.')}`]),
    fc.constant<[string, string]>(['translated', `::ffff:0:${b.join('.')}`]),
    fc.constant<[string, string]>(['nat64', `64:ff9b::${b.join('.')}`]),
    fc
      .tuple(fc.constantFrom(48, 56, 64, 96), fc.array(byte, { minLength: 16, maxLength: 16 }))
      .map(([length, noise]): [string, string] => {
        const bytes = [0x00, 0x64, 0xff, 0x9b, 0x00, 0x01, ...noise.slice(6)];
        bytes[8] = 0;
        (NAT64_POSITIONS[length] as number[]).forEach((position, i) => (bytes[position] = b[i] as number));
        return [`nat64-local/${length}`, v6(bytes)];
      }),
    fc
      .tuple(byte, byte)
      .map(([x, y]): [string, string] => ['6to4', `2002:${hex16(b[0], b[1])}:${hex16(b[2], b[3])}:${hex16(x, y)}::1`]),
    fc.constant<[string, string]>(['bracketed-mapped', `[::ffff:${b.join('.')}]`]),
  );

/** Odd spellings of an IPv4 address that URL parsers (and ipaddr.js) accept. */
const spelled = (b: Bytes): fc.Arbitrary<string> => {
  const n = toInt(b);
  const part = (value: number): fc.Arbitrary<string> =>
    fc.constantFrom(
      String(value),
      `0x${value.toString(16)}`,
      `0X${value.toString(16).toUpperCase()}`,
      `0${value.toString(8)}`,
    );
  return fc.oneof(
    fc.constantFrom(String(n), `0x${n.toString(16)}`, `0${n.toString(8)}`),
    fc.tuple(part(b[0]), part(b[1]), part(b[2]), part(b[3])).map((p) => p.join('.')),
    fc.tuple(part(b[0]), part(b[1]), part((b[2] << 8) + b[3])).map((p) => p.join('.')),
    fc.tuple(part(b[0]), part((b[1] << 16) + (b[2] << 8) + b[3])).map((p) => p.join('.')),
  );
};

const anyHost = fc.oneof(
  fc.constantFrom('localhost', '127.0.0.1', '[::1]', '::1', 'agent.example', 'w.corp', '10.0.0.5', '0x7f.1'),
  fc.domain(),
  fc.string(),
);
const anyAllow = fc.array(
  fc.oneof(
    fc.constantFrom('0.0.0.0/0', '::/0', '10.0.0.0/8', '169.254.0.0/16', '127.0.0.0/8', 'w.corp', 'localhost'),
    fc.domain(),
  ),
  { maxLength: 4 },
);

const NEVER: readonly AddressClass[] = ['metadata', 'link-local', 'reserved', 'invalid'];

// ---------------------------------------------------------------------------------------------

describe('classifyAddress: examples', () => {
  const cases: [string, AddressClass][] = [
    ['93.184.216.34', 'public'],
    ['8.8.8.8', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['10.1.2.3', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.1', 'public'],
    ['192.168.0.1', 'private'],
    ['100.64.0.1', 'private'],
    ['fd12:3456::1', 'private'],
    ['fec0::1', 'private'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['169.254.1.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['169.254.169.254', 'metadata'],
    ['169.254.170.2', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['168.63.129.16', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['fd00:0ec2:0000::0254', 'metadata'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['0.0.0.0', 'reserved'],
    ['::', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['224.0.0.1', 'reserved'],
    ['ff02::1', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['198.51.100.7', 'reserved'],
    ['203.0.113.9', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'reserved'], // Teredo: its IPv4 is obfuscated; refuse
    ['::7f00:1', 'reserved'], // IPv4-compatible (deprecated)
    ['4000::1', 'reserved'], // outside 2000::/3
    ['::ffff:127.0.0.1', 'loopback'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::a00:1', 'private'],
    ['64:ff9b::5db8:d822', 'public'],
    ['2002:7f00:1::', 'loopback'],
    ['2002:5db8:d822::1', 'public'],
    ['2130706433', 'loopback'],
    ['0x7f.1', 'loopback'],
    ['0177.0.0.1', 'loopback'],
    ['0xa9fea9fe', 'metadata'],
    ['012.0.0.1', 'private'],
    ['', 'invalid'],
    ['localhost', 'invalid'],
    ['1.2.3.4.5', 'invalid'],
    ['08.0.0.1', 'invalid'],
    ['1.2.3.4 ', 'invalid'],
    ['127.0.0.1%lo', 'invalid'],
    ['x'.repeat(1000), 'invalid'],
  ];
  for (const [address, expected] of cases) {
    test(`${address.slice(0, 40) || '(empty)'} is ${expected}`, () => assert.equal(classifyAddress(address), expected));
  }
});

describe('classifyAddress: properties', () => {
  test('every IPv4-mapped, translated, NAT64 (well-known and local-use) and 6to4 form of a private address is private', () => {
    fc.assert(
      fc.property(
        privateV4.chain((b) => wrapped(b).map((w) => [b, w] as const)),
        ([b, [label, address]]) => {
          // A local-use NAT64 address has several readings (its prefix length is deployment
          // config); the worst one wins, which may be worse than private but never better.
          if (label.startsWith('nat64-local')) assert.notEqual(classifyAddress(address), 'public', address);
          else assert.equal(classifyAddress(address), 'private', `${label} ${address} (${b.join('.')})`);
          const verdict = checkDestination({ host: 'agent.example', address, privateNetwork: false, privateAllow: [] });
          assert.equal(verdict.ok, false, `${label} ${address} must be refused`);
        },
      ),
      { numRuns: 300 },
    );
  });

  test('every wrapped form of a loopback, link-local or metadata address keeps that class and is refused for a name', () => {
    const hostile = fc.oneof(
      loopbackV4.map((b) => ['loopback', b] as const),
      linkLocalV4.map((b) => [classifyAddress(b.join('.')), b] as const),
      metadataV4.map((b) => ['metadata', b] as const),
    );
    fc.assert(
      fc.property(
        hostile.chain(([cls, b]) => wrapped(b).map((w) => [cls, w] as const)),
        fc.boolean(),
        ([cls, [label, address]], privateNetwork) => {
          if (!label.startsWith('nat64-local')) assert.equal(classifyAddress(address), cls, `${label} ${address}`);
          const verdict = checkDestination({
            host: 'agent.example',
            address,
            privateNetwork,
            privateAllow: ['0.0.0.0/0', '::/0', 'agent.example'],
          });
          assert.equal(verdict.ok, false, `${label} ${address}`);
        },
      ),
      { numRuns: 300 },
    );
  });

  test('wrapped forms of a public address are public (nothing is refused for being wrapped alone)', () => {
    // Except local-use NAT64: without its (deployment-specific) prefix length every reading
    // counts, so it is public only when all of them are.
    fc.assert(
      fc.property(
        publicV4.chain((b) =>
          wrapped(b)
            .filter(([label]) => !label.startsWith('nat64-local'))
            .map((w) => [b, w] as const),
        ),
        ([b, [label, address]]) => {
          assert.equal(classifyAddress(address), 'public', `${label} ${address} (${b.join('.')})`);
        },
      ),
      { numRuns: 300 },
    );
  });

  test('odd spellings of 127.x are loopback, and the URL parser reads them as the same address', () => {
    fc.assert(
      fc.property(
        loopbackV4.chain((b) => spelled(b).map((s) => [b, s] as const)),
        ([b, spelling]) => {
          assert.equal(classifyAddress(spelling), 'loopback', spelling);
          assert.equal(new URL(`http://${spelling}/`).hostname, b.join('.'), spelling);
        },
      ),
      { numRuns: 300 },
    );
  });

  test('any spelling of any IPv4 address classifies exactly like its dotted-quad form', () => {
    fc.assert(
      fc.property(
        anyV4.chain((b) => spelled(b).map((s) => [b, s] as const)),
        ([b, spelling]) => {
          assert.equal(classifyAddress(spelling), classifyAddress(b.join('.')), spelling);
        },
      ),
      { numRuns: 300 },
    );
  });

  test("odd spellings of 127.0.0.1 are not the operator's loopback host, so they are refused", () => {
    fc.assert(
      fc.property(
        spelled([127, 0, 0, 1]).filter((s) => s !== '127.0.0.1'),
        (spelling) => {
          assert.equal(isLoopbackHost(spelling), false, spelling);
          const verdict = checkDestination({
            host: spelling,
            address: spelling,
            privateNetwork: true,
            privateAllow: [],
          });
          assert.equal(verdict.ok, false, spelling);
        },
      ),
    );
  });

  test('classifyAddress never throws, whatever it is given', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.ipV4(), fc.ipV6(), fc.ipV4Extended(), fc.domain()), (text) => {
        classifyAddress(text);
      }),
      { numRuns: 400 },
    );
  });
});

describe('checkDestination', () => {
  const base = { host: 'agent.example', privateNetwork: false, privateAllow: [] as string[] };

  test('metadata, link-local, reserved and invalid addresses are refused whatever the host, entry and allowlist', () => {
    fc.assert(
      fc.property(
        fc
          .oneof(fc.ipV4(), fc.ipV6(), fc.ipV4Extended(), fc.string())
          .filter((a) => NEVER.includes(classifyAddress(a))),
        anyHost,
        fc.boolean(),
        anyAllow,
        fc.boolean(),
        (address, host, privateNetwork, privateAllow, proxyConfigured) => {
          const verdict = checkDestination({ host, address, privateNetwork, privateAllow, proxyConfigured });
          assert.equal(verdict.ok, false, `${host} → ${address}`);
        },
      ),
      { numRuns: 400 },
    );
  });

  test('a loopback address is allowed exactly when the host is written as localhost, 127.x.x.x or ::1', () => {
    fc.assert(
      fc.property(loopbackV4, anyHost, fc.boolean(), anyAllow, (b, host, privateNetwork, privateAllow) => {
        const verdict = checkDestination({ host, address: b.join('.'), privateNetwork, privateAllow });
        assert.equal(verdict.ok, isLoopbackHost(host), `${host} → ${b.join('.')}`);
      }),
      { numRuns: 300 },
    );
  });

  test('a name resolving to loopback is refused, even when listed in the private allowlist', () => {
    const verdict = checkDestination({
      host: 'evil.test',
      address: '127.0.0.1',
      privateNetwork: true,
      privateAllow: ['evil.test', '127.0.0.0/8'],
    });
    assert.deepEqual(verdict.ok, false);
    assert.match((verdict as { reason: string }).reason, /loopback/);
  });

  test('a private address is allowed only for a private_network entry with the host or the address listed', () => {
    fc.assert(
      fc.property(privateV4, fc.boolean(), anyAllow, (b, privateNetwork, privateAllow) => {
        const address = b.join('.');
        const verdict = checkDestination({ host: 'w.corp', address, privateNetwork, privateAllow });
        assert.equal(verdict.ok, privateNetwork && isAllowed('w.corp', address, privateAllow), address);
      }),
      { numRuns: 300 },
    );
    assert.equal(checkDestination({ ...base, address: '10.0.0.5' }).ok, false);
    assert.equal(
      checkDestination({ ...base, address: '10.0.0.5', privateNetwork: true, privateAllow: ['10.1.0.0/16'] }).ok,
      false,
    );
    assert.equal(
      checkDestination({ ...base, address: '10.0.0.5', privateNetwork: true, privateAllow: ['10.0.0.0/16'] }).ok,
      true,
    );
    assert.equal(
      checkDestination({ host: 'w.corp', address: '10.9.9.9', privateNetwork: true, privateAllow: ['W.Corp'] }).ok,
      true,
    );
  });

  test('public addresses are allowed, except for a private_network entry while an egress proxy is set', () => {
    assert.deepEqual(checkDestination({ ...base, address: '93.184.216.34' }), { ok: true });
    assert.deepEqual(checkDestination({ ...base, address: '93.184.216.34', privateNetwork: true }), { ok: true });
    const verdict = checkDestination({
      ...base,
      address: '93.184.216.34',
      privateNetwork: true,
      proxyConfigured: true,
    });
    assert.equal(verdict.ok, false);
  });

  test('reasons are one printable line, even for hostile resolver answers', () => {
    const verdict = checkDestination({ ...base, address: `evil\r\nX-Injected: 1${'a'.repeat(200)}` });
    assert.equal(verdict.ok, false);
    assert.doesNotMatch((verdict as { reason: string }).reason, /[\r\n]/);
    assert.ok((verdict as { reason: string }).reason.length < 200);
  });
});

describe('chooseRoute', () => {
  test('only public destinations of ordinary entries go through a configured proxy', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.ipV4(), fc.ipV6()),
        fc.boolean(),
        fc.boolean(),
        (address, privateNetwork, proxyConfigured) => {
          const route = chooseRoute({ address, privateNetwork, proxyConfigured });
          const expected = proxyConfigured && !privateNetwork && classifyAddress(address) === 'public';
          assert.equal(route, expected ? 'proxy' : 'direct');
        },
      ),
    );
  });
});

describe('isLoopbackHost, parseAllowEntry, isAllowed, carriedIPv4', () => {
  test('loopback hosts', () => {
    for (const host of ['localhost', 'LOCALHOST', '127.0.0.1', '127.1.2.3', '::1', '[::1]', '0:0:0:0:0:0:0:1']) {
      assert.equal(isLoopbackHost(host), true, host);
    }
    for (const host of [
      'localhost.',
      'a.localhost',
      '127.1',
      '0x7f.0.0.1',
      '[::ffff:127.0.0.1]',
      '10.0.0.1',
      '',
      '::1%lo',
    ]) {
      assert.equal(isLoopbackHost(host), false, host);
    }
  });

  test('allowlist entries', () => {
    assert.deepEqual(parseAllowEntry('W.Corp'), { kind: 'host', host: 'w.corp' });
    assert.equal(parseAllowEntry('10.20.0.0/16')?.kind, 'range');
    assert.equal(parseAllowEntry('fd00::/8')?.kind, 'range');
    assert.equal(parseAllowEntry('10.0.0.1')?.kind, 'range');
    for (const bad of [
      '*.corp',
      '012.0.0.0/8',
      '10.0.0.0/33',
      '10.0.0.0/x',
      'a b',
      '',
      'http://x',
      '1.2.3',
      '-a.corp',
      '::ffff:10.0.0.0/8',
    ]) {
      assert.equal(parseAllowEntry(bad), undefined, bad);
    }
  });

  test('allowlist matching: by host name, by range, mapped forms match IPv4 ranges, malformed entries match nothing', () => {
    assert.equal(isAllowed('w.corp', '10.20.1.1', ['10.20.0.0/16']), true);
    assert.equal(isAllowed('w.corp', '::ffff:10.20.1.1', ['10.20.0.0/16']), true);
    assert.equal(isAllowed('w.corp', '::ffff:10.20.1.1', ['::ffff:10.20.0.0/112']), true);
    assert.equal(isAllowed('x.corp', '10.30.1.1', ['10.20.0.0/16', 'w.corp']), false);
    assert.equal(isAllowed('w.corp', '10.30.1.1', ['*.corp', 'bad entry']), false);
    assert.equal(isAllowed('w.corp', '64:ff9b::a14:101', ['10.20.0.0/16']), false);
  });

  test('allowlist entries parsed once decide as a fresh parse does, however many entries pass through', () => {
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 1500; i++) {
        const range = `10.${i % 256}.0.0/16`;
        assert.equal(isAllowed('x.corp', `10.${i % 256}.9.9`, ['bad entry', range]), true, range);
        assert.equal(isAllowed('x.corp', `10.${(i + 1) % 256}.9.9`, [range, `h${i}.corp`]), false, range);
        assert.equal(isAllowed(`h${i}.corp`, '10.0.0.1', [` H${i}.Corp `]), true);
      }
    }
  });

  test('carried IPv4 addresses', () => {
    assert.deepEqual(carriedIPv4('::ffff:10.0.0.1'), ['10.0.0.1']);
    assert.deepEqual(carriedIPv4('64:ff9b::a00:1'), ['10.0.0.1']);
    assert.deepEqual(carriedIPv4('2002:7f00:1::'), ['127.0.0.1']);
    assert.equal(carriedIPv4('2606:4700::1'), undefined);
    assert.equal(carriedIPv4('10.0.0.1'), undefined);
    assert.equal(carriedIPv4('64:ff9b:1::a00:1')?.length, 4);
  });
});
