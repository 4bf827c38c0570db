import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  CLIENT_ADDRESS_CACHE_SIZE,
  clientAddressOf,
  isLoopbackAddress,
  isLoopbackPeer,
  parseTrustedProxies,
} from './client-address.js';

const proxies = parseTrustedProxies(['10.0.0.0/8', '192.168.1.1', 'fd00::/8']);

describe('clientAddressOf', () => {
  const cases: [string, string | undefined, string | undefined, string | undefined][] = [
    ['no header: the peer', '203.0.113.5', undefined, '203.0.113.5'],
    ['an untrusted peer’s header is ignored', '203.0.113.5', '127.0.0.1', '203.0.113.5'],
    ['a trusted peer: the right-most hop', '10.0.0.2', '198.51.100.7', '198.51.100.7'],
    ['a trusted chain is skipped from the right', '10.0.0.2', '198.51.100.7, 10.9.9.9, 192.168.1.1', '198.51.100.7'],
    ['a spoofed left part cannot win', '10.0.0.2', '127.0.0.1, 198.51.100.7', '198.51.100.7'],
    ['all hops trusted: the left-most', '10.0.0.2', '10.1.1.1, 10.2.2.2', '10.1.1.1'],
    ['a malformed hop stops the walk', '10.0.0.2', '198.51.100.7, garbage', '10.0.0.2'],
    ['a hop with a port', '10.0.0.2', '198.51.100.7:4711', '198.51.100.7'],
    ['a bracketed IPv6 hop with a port', '10.0.0.2', '[2001:db8::1]:443', '2001:db8::1'],
    ['an IPv4-mapped peer is unmapped', '::ffff:10.0.0.2', '198.51.100.7', '198.51.100.7'],
    ['an IPv6 trusted proxy', 'fd00::1', '2001:db8::7', '2001:db8::7'],
    ['odd IPv4 spellings are not addresses', '10.0.0.2', '127.1', '10.0.0.2'],
    ['no peer', undefined, '198.51.100.7', undefined],
  ];
  for (const [name, peer, header, expected] of cases) {
    it(name, () => assert.equal(clientAddressOf(peer, header, proxies), expected));
  }

  it('cached answers: the same on every call, per trusted list, and right past the cache bound', () => {
    const header = '198.51.100.7, 10.9.9.9';
    assert.equal(clientAddressOf('10.0.0.2', header, proxies), '198.51.100.7');
    assert.equal(clientAddressOf('10.0.0.2', header, proxies), '198.51.100.7');
    // Another list (a reload) is judged afresh: 10.0.0.2 is not trusted there.
    const others = parseTrustedProxies(['192.168.1.1']);
    assert.equal(clientAddressOf('10.0.0.2', header, others), '10.0.0.2');
    for (let i = 0; i < CLIENT_ADDRESS_CACHE_SIZE + 10; i++) {
      const hop = `198.51.${i >> 8}.${i & 255}`;
      assert.equal(clientAddressOf('10.0.0.2', `${hop}, 10.9.9.9`, proxies), hop);
    }
    assert.equal(clientAddressOf('10.0.0.2', header, proxies), '198.51.100.7');
    assert.equal(clientAddressOf('203.0.113.5', '127.0.0.1', proxies), '203.0.113.5');
  });

  it('with no trusted proxies, the header never matters', () => {
    assert.equal(clientAddressOf('10.0.0.2', '198.51.100.7', []), '10.0.0.2');
  });

  it('property: an untrusted peer is always the answer, whatever it sends', () => {
    fc.assert(
      fc.property(fc.ipV4(), fc.array(fc.oneof(fc.ipV4(), fc.string()), { maxLength: 8 }), (peer, hops) => {
        fc.pre(!peer.startsWith('10.') && peer !== '192.168.1.1');
        const answer = clientAddressOf(peer, hops.join(', '), proxies);
        assert.equal(answer, clientAddressOf(peer, undefined, proxies));
      }),
    );
  });

  it('property: behind a trusted proxy, the answer is never a hop left of the first untrusted one', () => {
    fc.assert(
      fc.property(fc.array(fc.ipV4(), { minLength: 1, maxLength: 3 }), fc.ipV4(), (spoofed, real) => {
        fc.pre(!real.startsWith('10.') && real !== '192.168.1.1');
        const header = [...spoofed, real, '10.3.3.3'].join(', ');
        assert.equal(clientAddressOf('10.0.0.2', header, proxies), clientAddressOf(real, undefined, []));
      }),
    );
  });
});

describe('parseTrustedProxies', () => {
  it('refuses what is not an address or range, naming it', () => {
    assert.throws(() => parseTrustedProxies(['10.0.0.0/33']), /"10\.0\.0\.0\/33"/);
    assert.throws(() => parseTrustedProxies(['proxy.example']), /proxy\.example/);
  });
});

describe('isLoopbackAddress', () => {
  for (const address of ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1']) {
    it(`${address} is loopback`, () => assert.equal(isLoopbackAddress(address), true));
  }
  for (const address of ['10.0.0.1', '::', '0.0.0.0', '::ffff:10.0.0.1', '2001:db8::1', 'localhost', undefined]) {
    it(`${String(address)} is not`, () => assert.equal(isLoopbackAddress(address), false));
  }
});

describe('isLoopbackPeer', () => {
  it('agrees with isLoopbackAddress on every address form node:http or clientAddressOf reports', () => {
    const v4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((parts) => parts.join('.'));
    const forms = fc.oneof(
      v4,
      v4.map((address) => `::ffff:${address}`),
      fc.ipV6(),
      fc.constantFrom('::1', '::', '127.0.0.1', '::ffff:127.0.0.1', '10.0.0.1', 'fe80::1', '::ffff:7f00:1'),
    );
    fc.assert(
      fc.property(forms, (address) => {
        // What node:http reports and what clientAddressOf returns are canonical forms.
        const canonical = clientAddressOf(address, undefined, []) ?? address;
        assert.equal(isLoopbackPeer(canonical), isLoopbackAddress(canonical), canonical);
      }),
    );
    assert.equal(isLoopbackPeer(undefined), false);
  });
});
