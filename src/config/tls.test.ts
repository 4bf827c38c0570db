/**
 * `server.tls`, `server.allowInsecureNetwork` and `clients[].certificate` at load: every bad
 * config refused in one line naming the key and the fix; the good ones loaded.
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { makeTestCa, type Issued, type TestCa } from '../../test/helpers/test-ca.js';
import { ConfigError } from './errors.js';
import { parseConfig } from './load.js';
import { normalizeFingerprint, normalizeSubject } from './tls.js';

const TOKEN = 'token-for-client-a-0123456789abcdef0123';
const AGENTS = `agents:\n  - { slug: a, name: A, description: d, skills: [{ id: s, name: s, description: d }], backend: { type: echo } }\n`;

let ca: TestCa;
let server: Issued;
let other: Issued;

before(() => {
  ca = makeTestCa('tls-config');
  server = ca.issue('server', { cn: 'airlock', server: true });
  other = ca.issue('other', { cn: 'other', server: true });
});
after(() => ca.cleanup());

function load(server: string, clients = ''): ReturnType<typeof parseConfig> {
  return parseConfig(`server: ${server}\n${AGENTS}${clients}`, { TOKEN });
}

/** The one-line message the loader refuses with. */
function refusal(server: string, clients = ''): string {
  try {
    load(server, clients);
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    assert.ok(!error.message.includes('\n'), error.message);
    return error.message;
  }
  assert.fail('expected a refusal');
}

const tls = (extra = '', files = { cert: server.certFile, key: server.keyFile }): string =>
  `{ tls: { cert: '${files.cert}', key: '${files.key}'${extra} } }`;

describe('server.tls at load', () => {
  it('loads a matching pair, TLS off by default', () => {
    const config = load(tls());
    assert.equal(config.server.tls?.certFile, server.certFile);
    assert.equal(config.server.tls?.clientCertificates, 'off');
    assert.match(config.server.tls?.cert ?? '', /BEGIN CERTIFICATE/);
    assert.equal(load('{}').server.tls, undefined);
  });

  it('refuses a missing, unreadable or non-PEM file, naming the key', () => {
    assert.match(
      refusal(tls('', { cert: '/nonexistent/tls.pem', key: server.keyFile })),
      /^config: server\.tls\.cert: cannot read \/nonexistent\/tls\.pem \(ENOENT\)$/,
    );
    assert.match(
      refusal(tls('', { cert: server.certFile, key: '/nonexistent/k' })),
      /^config: server\.tls\.key: cannot read/,
    );
    assert.match(
      refusal(tls('', { cert: server.keyFile, key: server.keyFile })),
      /^config: server\.tls\.cert: is not a PEM certificate/,
    );
    assert.match(
      refusal(tls('', { cert: server.certFile, key: server.certFile })),
      /^config: server\.tls\.key: is not an unencrypted PEM private key/,
    );
  });

  it("refuses a key that is not the certificate's, without printing key material", () => {
    const message = refusal(tls('', { cert: server.certFile, key: other.keyFile }));
    assert.match(
      message,
      /^config: server\.tls\.key: .*other\.key is not the key of the certificate in server\.tls\.cert$/,
    );
    assert.doesNotMatch(message, /PRIVATE/);
  });

  it('refuses client certificates without the CA they chain to, and a bad CA file', () => {
    assert.match(
      refusal(tls(', clientCertificates: request')),
      /^config: server\.tls\.ca: clientCertificates: request needs the CA file/,
    );
    assert.match(
      refusal(tls(`, ca: '${server.keyFile}', clientCertificates: require`)),
      /^config: server\.tls\.ca: is not a PEM certificate/,
    );
    assert.equal(
      load(tls(`, ca: '${ca.caFile}', clientCertificates: require`)).server.tls?.clientCertificates,
      'require',
    );
  });
});

describe('server.allowInsecureNetwork', () => {
  it('refuses allowNonLoopback on a network bind over plain HTTP, naming both keys and the fix', () => {
    const message = refusal('{ host: 0.0.0.0, allowNonLoopback: true }');
    assert.match(
      message,
      /^config: server\.allowNonLoopback: true on "0\.0\.0\.0" without server\.tls would serve plain HTTP/,
    );
    assert.match(
      message,
      /set server\.tls \(cert, key\), or server\.allowInsecureNetwork: true when a TLS-terminating proxy/,
    );
  });

  it('allows it with TLS, with allowInsecureNetwork, or on a loopback bind (a proxy on the same machine)', () => {
    assert.equal(
      load('{ host: 0.0.0.0, allowNonLoopback: true, allowInsecureNetwork: true }').server.allowNonLoopback,
      true,
    );
    assert.equal(
      load(`{ host: 0.0.0.0, allowNonLoopback: true, tls: { cert: '${server.certFile}', key: '${server.keyFile}' } }`)
        .server.tls?.clientCertificates,
      'off',
    );
    assert.equal(load('{ host: 127.0.0.1, allowNonLoopback: true }').server.allowNonLoopback, true);
    assert.equal(load('{}').server.allowInsecureNetwork, false);
  });
});

describe('clients[].certificate', () => {
  const mtls = (): string => tls(`, ca: '${ca.caFile}', clientCertificates: request`);
  const clientWith = (certificate: string, id = 'bot'): string =>
    `  - { id: ${id}, token: "\${TOKEN}", agents: [a], certificate: ${certificate} }\n`;

  it('normalizes the subject (any order) and the fingerprint (any case, colons optional)', () => {
    const fingerprint = new X509Certificate(server.cert).fingerprint256;
    const config = load(
      mtls(),
      `clients:\n${clientWith(`{ subject: 'O=Acme, CN=ci-bot', fingerprint256: '${fingerprint.replace(/:/g, '').toLowerCase()}' }`)}`,
    );
    assert.deepEqual(config.clients[0]?.certificate, {
      subject: 'CN=ci-bot\nO=Acme',
      fingerprint256: fingerprint,
      alone: false,
      required: false,
    });
    assert.equal(normalizeSubject('O=Acme\nCN=ci-bot', 'lines'), 'CN=ci-bot\nO=Acme');
    assert.equal(normalizeFingerprint('ab:cd'), 'AB:CD');
  });

  it('refuses a certificate when none is asked for, one that names nothing, a bad subject, and a shared one', () => {
    assert.match(
      refusal(tls(), `clients:\n${clientWith("{ subject: 'CN=x' }")}`),
      /^config: clients\[0\]\.certificate: no client certificate is asked for, .*server\.tls\.clientCertificates/,
    );
    assert.match(
      refusal('{}', `clients:\n${clientWith("{ subject: 'CN=x' }")}`),
      /^config: clients\[0\]\.certificate: no client certificate/,
    );
    assert.match(
      refusal(mtls(), `clients:\n${clientWith('{ alone: true }')}`),
      /^config: clients\[0\]\.certificate: names neither a subject nor a fingerprint256$/,
    );
    assert.match(
      refusal(mtls(), `clients:\n${clientWith("{ subject: 'ci-bot' }")}`),
      /^config: clients\[0\]\.certificate\.subject: write it as KEY=value pairs/,
    );
    assert.match(
      refusal(mtls(), `clients:\n${clientWith("{ fingerprint256: 'AB:CD' }")}`),
      /^config: clients\[0\]\.certificate\.fingerprint256: /,
    );
    assert.match(
      refusal(
        mtls(),
        `clients:\n${clientWith("{ subject: 'CN=x, O=y' }")}${clientWith("{ subject: 'O=y, CN=x' }", 'two')}`.replace(
          'token: "${TOKEN}", agents: [a], certificate: { subject: \'O=y',
          'token: "other-token-0123456789abcdef0123456789", agents: [a], certificate: { subject: \'O=y',
        ),
      ),
      /^config: clients\[1\]\.certificate: clients "bot" and "two" name the same certificate/,
    );
  });
});
