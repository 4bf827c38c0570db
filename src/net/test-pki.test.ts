/**
 * Test fixture: a throwaway certificate authority and a server certificate made with `openssl`
 * in a private mkdtemp directory (other suites share /tmp). Imported by the net tests; run on its
 * own, it checks that what it issues really chains to its CA.
 *
 * @example
 * ```ts
 * const pki = makeTestPki(['localhost', 'agent.example', '93.184.216.34']);
 * https.createServer({ key: pki.key, cert: pki.cert }, handler);
 * createGuardedClient({ caFile: pki.caFile });
 * pki.cleanup();
 * ```
 */
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import assert from 'node:assert/strict';
import { test } from 'node:test';

export interface TestPki {
  dir: string;
  /** Path of the CA certificate (PEM), for `caFile`. */
  caFile: string;
  caPem: string;
  /** Server certificate and key (PEM). */
  cert: string;
  key: string;
  cleanup(): void;
}

/**
 * True when an `openssl` binary can be run.
 *
 * @example
 * ```ts
 * if (!opensslAvailable()) return t.skip('openssl is not installed');
 * ```
 */
export function opensslAvailable(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Issues a CA and one server certificate for `names` (DNS names and IP addresses), in `dir`
 * (a fresh mkdtemp directory by default).
 *
 * @example
 * ```ts
 * const pki = makeTestPki(['localhost', '127.0.0.1']);
 * ```
 */
export function makeTestPki(names: readonly string[], dir = mkdtempSync(join(tmpdir(), 'airlock-net-pki-'))): TestPki {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = (name: string): string => join(dir, name);
  const run = (args: string[]): void => {
    execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  };
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  run([
    'req',
    '-x509',
    ...ec,
    '-keyout',
    file('ca.key'),
    '-out',
    file('ca.pem'),
    '-days',
    '2',
    '-subj',
    '/CN=Airlock net test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  run([
    'req',
    ...ec,
    '-keyout',
    file('server.key'),
    '-out',
    file('server.csr'),
    '-subj',
    '/CN=airlock-net-test-server',
  ]);
  const san = names.map((name) => (isIP(name) === 0 ? `DNS:${name}` : `IP:${name}`)).join(',');
  writeFileSync(
    file('server.ext'),
    `subjectAltName=${san}\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n`,
  );
  run([
    'x509',
    '-req',
    '-in',
    file('server.csr'),
    '-CA',
    file('ca.pem'),
    '-CAkey',
    file('ca.key'),
    '-CAcreateserial',
    '-out',
    file('server.pem'),
    '-days',
    '2',
    '-extfile',
    file('server.ext'),
  ]);
  return {
    dir,
    caFile: file('ca.pem'),
    caPem: readFileSync(file('ca.pem'), 'utf8'),
    cert: readFileSync(file('server.pem'), 'utf8'),
    key: readFileSync(file('server.key'), 'utf8'),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isMain) {
  test('the test PKI issues a server certificate that chains to its CA and names the given hosts', (t) => {
    if (!opensslAvailable()) return t.skip('openssl is not installed');
    const pki = makeTestPki(['localhost', '93.184.216.34']);
    try {
      const ca = new X509Certificate(pki.caPem);
      const leaf = new X509Certificate(pki.cert);
      assert.equal(leaf.verify(ca.publicKey), true);
      assert.equal(leaf.checkHost('localhost'), 'localhost');
      assert.equal(leaf.checkIP('93.184.216.34'), '93.184.216.34');
      assert.equal(leaf.checkHost('agent.example'), undefined);
    } finally {
      pki.cleanup();
    }
  });
}
