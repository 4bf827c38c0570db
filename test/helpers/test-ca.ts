/**
 * A throwaway test CA made with the `openssl` CLI in a private mkdtemp directory: server
 * certificates (SAN 127.0.0.1 and localhost) and client certificates, as PEM files and text.
 * EC P-256 keys: each certificate takes a few milliseconds.
 *
 * @example
 * ```ts
 * const ca = makeTestCa('tls-test');
 * const server = ca.issue('server', { cn: 'airlock-test', server: true });
 * const bot = ca.issue('ci-bot', { cn: 'ci-bot' });
 * ca.cleanup();
 * ```
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** One issued certificate: file paths and PEM text. */
export interface Issued {
  certFile: string;
  keyFile: string;
  cert: string;
  key: string;
}

export interface TestCa {
  dir: string;
  /** The CA certificate (PEM) and its file. */
  caFile: string;
  ca: string;
  /** Issues a certificate signed by this CA; `server` adds the loopback SAN and serverAuth. */
  issue(name: string, options: { cn: string; org?: string; server?: boolean }): Issued;
  /** A key that belongs to no certificate (for a mismatched pair). */
  strayKey(name: string): string;
  cleanup(): void;
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];

function run(args: string[]): void {
  execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/**
 * A CA named `name` in its own temp directory (`within`: share one parent directory).
 *
 * @example
 * ```ts
 * const other = makeTestCa('other', ca.dir);
 * ```
 */
export function makeTestCa(name: string, within?: string): TestCa {
  const dir = mkdtempSync(join(within ?? tmpdir(), `airlock-${name}-`));
  const file = (base: string): string => join(dir, base);
  run([
    'req',
    '-x509',
    ...EC,
    '-keyout',
    file('ca.key'),
    '-out',
    file('ca.pem'),
    '-days',
    '2',
    '-subj',
    `/CN=Airlock ${name} CA`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  let serial = 0;
  return {
    dir,
    caFile: file('ca.pem'),
    ca: readFileSync(file('ca.pem'), 'utf8'),
    issue: (leaf, options) => {
      serial += 1;
      const subject = `${options.org === undefined ? '' : `/O=${options.org}`}/CN=${options.cn}`;
      run(['req', ...EC, '-keyout', file(`${leaf}.key`), '-out', file(`${leaf}.csr`), '-subj', subject]);
      const extensions = options.server
        ? 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n'
        : 'extendedKeyUsage=clientAuth\n';
      writeFileSync(file(`${leaf}.ext`), `basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\n${extensions}`);
      run([
        'x509',
        '-req',
        '-in',
        file(`${leaf}.csr`),
        '-CA',
        file('ca.pem'),
        '-CAkey',
        file('ca.key'),
        '-set_serial',
        String(0x1000 + serial),
        '-out',
        file(`${leaf}.pem`),
        '-days',
        '2',
        '-extfile',
        file(`${leaf}.ext`),
      ]);
      return {
        certFile: file(`${leaf}.pem`),
        keyFile: file(`${leaf}.key`),
        cert: readFileSync(file(`${leaf}.pem`), 'utf8'),
        key: readFileSync(file(`${leaf}.key`), 'utf8'),
      };
    },
    strayKey: (leaf) => {
      run(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', file(`${leaf}.key`)]);
      return file(`${leaf}.key`);
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
