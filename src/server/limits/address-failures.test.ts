import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { AuthFailureLimiter, addressBucket } from './address-failures.js';

const IP = '203.0.113.9';

/** Records `count` failures for `address` at `now`. */
function fail(limiter: AuthFailureLimiter, address: string, now: number, count: number): void {
  for (let i = 0; i < count; i++) limiter.recordFailure(address, now);
}

describe('AuthFailureLimiter', () => {
  it('is not locked below the limit and locked once it is reached', () => {
    const limiter = new AuthFailureLimiter({ limit: 10 });
    fail(limiter, IP, 0, 9);
    assert.equal(limiter.isLocked(IP, 1_000), 0);
    assert.ok(limiter.recordFailure(IP, 1_000) > 0, 'the tenth failure locks the address');
    // The control itself: without it the address would still be let through here.
    assert.equal(limiter.isLocked(IP, 1_000), 59);
  });

  it('locks for the rest of the window that opened at the first failure, no longer', () => {
    const limiter = new AuthFailureLimiter({ limit: 3 });
    limiter.recordFailure(IP, 10_000);
    fail(limiter, IP, 40_000, 2);
    assert.equal(limiter.isLocked(IP, 40_000), 30);
    assert.equal(limiter.isLocked(IP, 69_000.5), 1, 'under a second left still answers 1');
    assert.equal(limiter.isLocked(IP, 70_000), 0);
    assert.equal(limiter.isLocked(IP, 3_600_000), 0, 'long after, still 0 (never negative)');
  });

  it('opens a fresh window after the old one closes', () => {
    const limiter = new AuthFailureLimiter({ limit: 3 });
    fail(limiter, IP, 0, 2);
    fail(limiter, IP, 60_000, 2); // new window: two, not four
    assert.equal(limiter.isLocked(IP, 60_000), 0);
    limiter.recordFailure(IP, 61_000);
    assert.equal(limiter.isLocked(IP, 61_000), 59);
  });

  it('keeps addresses apart', () => {
    const limiter = new AuthFailureLimiter({ limit: 1 });
    limiter.recordFailure(IP, 0);
    assert.ok(limiter.isLocked(IP, 0) > 0);
    assert.equal(limiter.isLocked('198.51.100.1', 0), 0);
  });

  it('counts an IPv6 /64 as one address, so rotating inside it gains nothing', () => {
    const limiter = new AuthFailureLimiter({ limit: 10 });
    for (let i = 0; i < 10; i++) limiter.recordFailure(`2001:db8:1:2::${i.toString(16)}:1`, 0);
    assert.ok(limiter.isLocked('2001:db8:1:2:ffff:ffff:ffff:ffff', 0) > 0);
    assert.equal(limiter.isLocked('2001:db8:1:3::1', 0), 0);
    assert.equal(limiter.size, 1);
  });

  it('counts each IPv6 address apart when told to', () => {
    const limiter = new AuthFailureLimiter({ limit: 1, bucket: (address) => address });
    limiter.recordFailure('2001:db8::1', 0);
    assert.equal(limiter.isLocked('2001:db8::2', 0), 0);
  });

  it('never answers more than the window, even if the clock steps back', () => {
    const limiter = new AuthFailureLimiter({ limit: 1 });
    limiter.recordFailure(IP, 100_000);
    assert.equal(limiter.isLocked(IP, 0), 60);
  });

  describe('memory bound', () => {
    it('stays within maxAddresses under a flood of fresh addresses', () => {
      const limiter = new AuthFailureLimiter({ maxAddresses: 100 });
      for (let i = 0; i < 10_000; i++) limiter.recordFailure(`2001:db8:${i.toString(16)}::1`, i);
      assert.equal(limiter.size, 100);
    });

    it('drops closed windows before open ones', () => {
      const limiter = new AuthFailureLimiter({ limit: 1, maxAddresses: 2 });
      limiter.recordFailure('a', 0); // closes at 60 s
      limiter.recordFailure('b', 30_000); // closes at 90 s
      limiter.recordFailure('c', 60_000); // a is closed: a goes
      assert.equal(limiter.size, 2);
      assert.ok(limiter.isLocked('b', 60_000) > 0);
      assert.ok(limiter.isLocked('c', 60_000) > 0);
    });

    it('drops the oldest open window when none has closed', () => {
      const limiter = new AuthFailureLimiter({ limit: 1, maxAddresses: 2 });
      limiter.recordFailure('a', 0);
      limiter.recordFailure('b', 1);
      limiter.recordFailure('c', 2);
      assert.equal(limiter.isLocked('a', 3), 0);
      assert.ok(limiter.isLocked('b', 3) > 0);
    });

    it('keeps windows in order of opening when an address comes back', () => {
      const limiter = new AuthFailureLimiter({ limit: 1, maxAddresses: 2 });
      limiter.recordFailure('a', 0);
      limiter.recordFailure('b', 30_000);
      limiter.recordFailure('a', 60_000); // a's new window is now the newest
      limiter.recordFailure('c', 60_001); // nothing closed: b, the oldest open one, goes
      assert.equal(limiter.isLocked('b', 60_001), 0);
      assert.ok(limiter.isLocked('a', 60_001) > 0);
    });
  });

  it('rejects nonsensical options', () => {
    assert.throws(() => new AuthFailureLimiter({ limit: 0 }), RangeError);
    assert.throws(() => new AuthFailureLimiter({ windowMs: -1 }), RangeError);
    assert.throws(() => new AuthFailureLimiter({ maxAddresses: 0 }), RangeError);
  });
});

describe('addressBucket', () => {
  it('leaves IPv4 alone and unmaps IPv4-mapped IPv6', () => {
    assert.equal(addressBucket('203.0.113.9'), '203.0.113.9');
    assert.equal(addressBucket('::ffff:203.0.113.9'), '203.0.113.9');
    assert.equal(addressBucket('::FFFF:203.0.113.9'), '203.0.113.9');
  });

  it('reduces IPv6 to its /64, canonically', () => {
    assert.equal(addressBucket('2001:db8::1'), '2001:db8:0:0::/64');
    assert.equal(addressBucket('2001:0DB8:0000:0001:1:2:3:4'), '2001:db8:0:1::/64');
    assert.equal(addressBucket('fe80::1%eth0'), 'fe80:0:0:0::/64');
    assert.equal(addressBucket('::'), '0:0:0:0::/64');
    assert.equal(addressBucket('1:2:3:4:5:6:7::'), '1:2:3:4::/64');
    assert.equal(addressBucket('64:ff9b::198.51.100.1'), '64:ff9b:0:0::/64');
    assert.equal(addressBucket('::ffff:cb00:7109'), '203.0.113.9');
    assert.equal(addressBucket('::203.0.113.9'), '0:0:0:0::/64');
  });

  for (const junk of [
    '1:::2',
    '1::2::3',
    'g::1',
    '1:2:3',
    '12345::',
    '1:2:3:4:5:6:7::8',
    '1:2:3:4:5:6:7:8:9',
    '1.2.3.4::',
    ':1::',
    '1:',
    '::1.2.3',
    '::1.2.3.4.5',
    '::1.2.3.256',
    '::1.2.3.4:5',
    '1:2:3:4:5:6:7:1.2.3.4',
  ]) {
    it(`returns ${JSON.stringify(junk)} unchanged`, () => {
      assert.equal(addressBucket(junk), junk);
    });
  }

  it('agrees with ipaddr.js on the /64 of any IPv6 address', () => {
    fc.assert(
      fc.property(fc.ipV6(), (address) => {
        // ipaddr.js reads the deprecated IPv4-compatible form `::1.2.3.4` as IPv4-mapped; we do not.
        fc.pre(!/^::\d+\.\d+\.\d+\.\d+$/.test(address));
        const parsed = ipaddr.IPv6.parse(address);
        const bucket = addressBucket(address);
        if (parsed.isIPv4MappedAddress()) return bucket === parsed.toIPv4Address().toString();
        const expected = parsed.parts
          .slice(0, 4)
          .map((part) => part.toString(16))
          .join(':');
        return bucket === `${expected}::/64`;
      }),
      { numRuns: 2_000 },
    );
  });
});
