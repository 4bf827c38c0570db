import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadCaFile, maskCredentials, parseEgressProxy, parseEnvSettings } from './settings.js';
import { makeTestPki, opensslAvailable } from './test-pki.test.js';
import type { TestPki } from './test-pki.test.js';

describe('parseEnvSettings', () => {
  let dir: string;
  let pki: TestPki | undefined;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'airlock-net-settings-'));
    if (opensslAvailable()) pki = makeTestPki(['localhost'], join(dir, 'pki-dir'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('reads the three variables and nothing else (proxy variables are ignored)', () => {
    const settings = parseEnvSettings({
      HTTP_PROXY: 'http://evil:1',
      HTTPS_PROXY: 'http://evil:2',
      ALL_PROXY: 'http://evil:3',
      NO_PROXY: '*',
      http_proxy: 'http://evil:4',
      https_proxy: 'http://evil:5',
    });
    assert.deepEqual(settings, {});
  });

  test('empty variables count as unset', () => {
    assert.deepEqual(
      parseEnvSettings({ AIRLOCK_PRIVATE_ALLOW: ' ', AIRLOCK_CA_FILE: '', AIRLOCK_EGRESS_PROXY: '' }),
      {},
    );
  });

  test('AIRLOCK_PRIVATE_ALLOW: comma-separated hosts, addresses and CIDRs; a bad entry names the variable', () => {
    assert.deepEqual(parseEnvSettings({ AIRLOCK_PRIVATE_ALLOW: '10.20.0.0/16, w.corp,,fd00::/8 , 10.0.0.1' }), {
      privateAllow: ['10.20.0.0/16', 'w.corp', 'fd00::/8', '10.0.0.1'],
    });
    assert.throws(
      () => parseEnvSettings({ AIRLOCK_PRIVATE_ALLOW: '10.0.0.0/8,*.corp' }),
      /^Error: AIRLOCK_PRIVATE_ALLOW: "\*\.corp" is not a host name, IP address or CIDR range$/,
    );
  });

  test('AIRLOCK_EGRESS_PROXY: http://host:port only, and credentials are masked in the error', () => {
    assert.deepEqual(parseEnvSettings({ AIRLOCK_EGRESS_PROXY: 'http://squid.internal:3128' }), {
      egressProxy: 'http://squid.internal:3128',
    });
    for (const bad of [
      'https://u:hunter2@squid:3128',
      'socks5://u:hunter2@squid:1080',
      'http://u:hunter2@squid:3128/path',
      'http://u:hunter2@squid:3128/?q',
      'http://u:hunt/er2@squid:3128',
      'http://u:hunter2@squid:99999',
      'squid:3128',
    ]) {
      assert.throws(
        () => parseEnvSettings({ AIRLOCK_EGRESS_PROXY: bad }),
        (error: Error) => {
          assert.match(error.message, /^AIRLOCK_EGRESS_PROXY: /);
          assert.doesNotMatch(error.message, /hunter2|hunt|er2/);
          assert.doesNotMatch(error.message, /\n/);
          return true;
        },
        bad,
      );
    }
  });

  test('AIRLOCK_CA_FILE: must be readable and hold parseable PEM certificates', (t) => {
    assert.throws(
      () => parseEnvSettings({ AIRLOCK_CA_FILE: join(dir, 'missing.pem') }),
      /^Error: AIRLOCK_CA_FILE: cannot read .*\(ENOENT\)$/,
    );
    writeFileSync(join(dir, 'empty.pem'), 'nothing here');
    assert.throws(() => parseEnvSettings({ AIRLOCK_CA_FILE: join(dir, 'empty.pem') }), /contains no PEM certificate/);
    writeFileSync(join(dir, 'bad.pem'), '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
    assert.throws(() => parseEnvSettings({ AIRLOCK_CA_FILE: join(dir, 'bad.pem') }), /does not parse/);
    if (pki === undefined) return t.skip('openssl is not installed');
    assert.deepEqual(parseEnvSettings({ AIRLOCK_CA_FILE: pki.caFile }), { caFile: pki.caFile });
    assert.match(loadCaFile(pki.caFile), /BEGIN CERTIFICATE/);
  });
});

describe('parseEgressProxy and maskCredentials', () => {
  test('parses host, port and a Basic authorization that is never displayed', () => {
    const proxy = parseEgressProxy('http://bob:s%40cret@squid.internal:3128');
    assert.equal(proxy.host, 'squid.internal');
    assert.equal(proxy.port, 3128);
    assert.equal(proxy.authorization, `Basic ${Buffer.from('bob:s@cret').toString('base64')}`);
    assert.equal(proxy.display, 'http://***@squid.internal:3128');
    assert.equal(parseEgressProxy('http://squid').port, 80);
    assert.equal(parseEgressProxy('http://[fd00::3]:3128').host, 'fd00::3');
  });

  test('masks credentials even in text that is not a URL', () => {
    assert.equal(maskCredentials('http://bob:hunter2@squid:3128'), 'http://***@squid:3128');
    assert.equal(maskCredentials('http://bob:hu/nter2@squid'), 'http://***@squid');
    assert.equal(maskCredentials('http://squid:3128'), 'http://squid:3128');
    assert.equal(maskCredentials('bob:hunter2@squid:3128'), '***@squid:3128');
    // A `//` inside a password is not a scheme: nothing of the password is shown.
    assert.equal(maskCredentials('bob:hu//nter2@squid:3128'), '***@squid:3128');
    assert.equal(maskCredentials('squid:3128'), 'squid:3128');
  });

  test('a proxy value without a scheme never shows its password in the error', () => {
    assert.throws(
      () => parseEgressProxy('bob:hunter2@squid:3128'),
      (error: unknown) => error instanceof Error && !error.message.includes('hunter2'),
    );
  });
});
