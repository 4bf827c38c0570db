import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { OutboundError } from './errors.js';
import { checkOutboundUrl, readOutboundUrl } from './url-policy.js';
import type { UrlPolicy } from './url-policy.js';

const open: UrlPolicy = { privateNetwork: false, privateAllow: [], proxyConfigured: false };
const proxied: UrlPolicy = { ...open, proxyConfigured: true };

function refusal(url: string, policy: UrlPolicy = open): OutboundError {
  try {
    checkOutboundUrl(url, policy);
  } catch (error) {
    assert.ok(error instanceof OutboundError, `expected an OutboundError for ${url}`);
    return error;
  }
  assert.fail(`expected ${url} to be refused`);
}

describe('checkOutboundUrl', () => {
  test('accepts https to a name and http only to a loopback host', () => {
    const target = checkOutboundUrl('https://agent.example/a2a/v1?x=1#frag', open);
    assert.equal(target.origin, 'https://agent.example');
    assert.equal(target.path, '/a2a/v1?x=1');
    assert.equal(target.host, 'agent.example');
    assert.equal(target.literal, undefined);
    for (const url of ['http://localhost:8080/', 'http://127.0.0.1/', 'http://127.8.9.10:1/', 'http://[::1]:9/']) {
      assert.doesNotThrow(() => checkOutboundUrl(url, open), url);
    }
  });

  test('refuses plain http to anything but loopback', () => {
    for (const url of ['http://agent.example/', 'http://93.184.216.34/', 'http://localhost.evil.example/']) {
      assert.equal(refusal(url).code, 'insecure_url', url);
    }
  });

  test('refuses other schemes and garbage', () => {
    for (const url of [
      'ftp://agent.example/',
      'file:///etc/passwd',
      'javascript:alert(1)',
      'not a url',
      '',
      'x'.repeat(9000),
    ]) {
      assert.equal(refusal(url).code, 'insecure_url', url.slice(0, 20));
    }
  });

  test('refuses credentials in the URL and never repeats them', () => {
    for (const url of ['https://user:hunter2@agent.example/', 'https://user@agent.example/', 'http://a:b@127.0.0.1/']) {
      const error = refusal(url);
      assert.equal(error.code, 'url_has_credentials');
      assert.doesNotMatch(error.message, /hunter2|user@|a:b/);
    }
  });

  test('refuses private literals in decimal, octal, hex, mapped, NAT64 and 6to4 spellings', () => {
    const privateForms = [
      'https://10.0.0.1/',
      'https://012.0.0.1/',
      'https://0xa000001/',
      'https://167772161/',
      'https://0xa.0.0.1/',
      'https://[::ffff:10.0.0.1]/',
      'https://[64:ff9b::10.0.0.1]/',
      'https://[2002:a00:1::1]/',
      'https://[fd12::1]/',
    ];
    for (const url of privateForms) assert.equal(refusal(url).code, 'address_blocked', url);
  });

  test('refuses metadata, link-local and unspecified literals in any spelling, whatever the entry allows', () => {
    const blocked = [
      'https://169.254.169.254/',
      'https://2852039166/',
      'https://0xa9fea9fe/',
      'https://0251.0376.0251.0376/',
      'https://0xa9.0xfe.0xa9.0xfe/',
      'https://[::ffff:169.254.169.254]/',
      'https://[::ffff:a9fe:a9fe]/',
      'https://[64:ff9b::a9fe:a9fe]/',
      'https://[2002:a9fe:a9fe::1]/',
      'https://[fe80::1]/',
      'https://[fd00:ec2::254]/',
      'https://100.100.100.200/',
      'https://0.0.0.0/',
      'https://0/',
      'https://[::]/',
    ];
    const permissive: UrlPolicy = { ...open, privateNetwork: true, privateAllow: ['0.0.0.0/0', '::/0'] };
    for (const url of blocked) {
      assert.equal(refusal(url).code, 'address_blocked', url);
      assert.equal(refusal(url, permissive).code, 'address_blocked', url);
    }
  });

  test('an odd spelling of a loopback address is not a loopback host: refused for https and http alike', () => {
    for (const host of [
      '0x7f.1',
      '0x7f000001',
      '2130706433',
      '0177.0.0.1',
      '127.1',
      '[::ffff:127.0.0.1]',
      '[::ffff:7f00:1]',
    ]) {
      const https = refusal(`https://${host}:8443/`);
      assert.equal(https.code, 'address_blocked', host);
      assert.match(https.message, /written as/);
      assert.equal(refusal(`http://${host}:8080/`).code, 'insecure_url', host);
    }
  });

  test('a private literal passes only for a private_network entry that lists it', () => {
    assert.equal(refusal('https://10.20.0.5/').code, 'address_blocked');
    assert.equal(refusal('https://10.20.0.5/', { ...open, privateNetwork: true }).code, 'address_blocked');
    const target = checkOutboundUrl('https://10.20.0.5/', {
      ...open,
      privateNetwork: true,
      privateAllow: ['10.20.0.0/16'],
    });
    assert.equal(target.literal, '10.20.0.5');
  });

  test('with an egress proxy, a public IPv6 literal is refused (it would go through the proxy)', () => {
    const error = refusal('https://[2606:4700::1111]/', proxied);
    assert.equal(error.code, 'address_blocked');
    assert.match(error.message, /IPv6 literal/);
    assert.doesNotThrow(() => checkOutboundUrl('https://[2606:4700::1111]/', open));
    assert.doesNotThrow(() => checkOutboundUrl('https://93.184.216.34/', proxied));
    assert.doesNotThrow(() => checkOutboundUrl('https://[::1]:8443/', proxied)); // loopback goes direct
  });

  test('messages never contain the path or query (they may hold tokens)', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z0-9]{8,20}$/), (secret) => {
        for (const url of [`http://agent.example/${secret}?t=${secret}`, `https://10.0.0.1/${secret}?t=${secret}`]) {
          assert.doesNotMatch(refusal(url).message, new RegExp(secret));
        }
      }),
      { numRuns: 50 },
    );
  });
});

describe('readOutboundUrl', () => {
  test('reads the parse, the credentials and the host as policy sees it', () => {
    assert.equal(readOutboundUrl('not a url'), undefined);
    const odd = readOutboundUrl('http://0x7f.1/a#frag');
    assert.equal(odd?.host, '0x7f.1');
    assert.equal(odd?.literal, '127.0.0.1');
    assert.equal(odd?.url.hash, '#frag', 'the fragment is kept: policies decide about it');
    assert.equal(readOutboundUrl('https://u:p@a.example/')?.hasCredentials, true);
    const plain = readOutboundUrl('https://a.example/x');
    assert.deepEqual([plain?.host, plain?.literal, plain?.hasCredentials], ['a.example', undefined, false]);
  });
});
