/**
 * Loading `server.tls` and `clients[].certificate`: the certificate, key and client CA files are
 * read and checked at start (each problem one line naming its key), and the same reader checks
 * every replacement the gateway's watcher picks up later (src/server/tls/).
 *
 * @example
 * ```ts
 * const tls = raw.server?.tls === undefined ? undefined : loadTls(raw.server.tls);
 * const clients = withClientCertificates(resolveClients(raw, env), raw, tls);
 * ```
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import type { ClientCertificate, ClientEntry, TlsSettings } from './airlock-config.js';
import { ConfigError } from './errors.js';
import type { RawConfig, ServerTlsConfig } from './schema.js';

/** A certificate chain or key is a few kilobytes; a CA bundle rarely more than a few hundred. */
const MAX_PEM_BYTES = 1024 * 1024;

/**
 * The PEM texts of one certificate/key pair (and the client CA), checked to belong together.
 *
 * @example
 * ```ts
 * const { cert, key } = readTlsMaterial({ certFile: 'tls.crt', keyFile: 'tls.key' });
 * ```
 */
export interface TlsMaterial {
  cert: string;
  key: string;
  ca?: string;
}

/**
 * Reads and checks the PEM files: the certificate parses, the key parses (unencrypted), the key
 * is the certificate's, the CA parses, and Node builds a secure context from them.
 *
 * @example
 * ```ts
 * readTlsMaterial({ certFile: 'tls.crt', keyFile: 'tls.key', caFile: 'clients-ca.pem' });
 * ```
 * @throws ConfigError keyed `server.tls.cert`, `server.tls.key` or `server.tls.ca`
 */
export function readTlsMaterial(files: {
  certFile: string;
  keyFile: string;
  caFile?: string | undefined;
}): TlsMaterial {
  const cert = readPem(files.certFile, 'server.tls.cert');
  const key = readPem(files.keyFile, 'server.tls.key');
  const ca = files.caFile === undefined ? undefined : readPem(files.caFile, 'server.tls.ca');
  const leaf = checked('server.tls.cert', 'is not a PEM certificate', () => new X509Certificate(cert));
  const privateKey = checked('server.tls.key', 'is not an unencrypted PEM private key', () => createPrivateKey(key));
  if (!leaf.checkPrivateKey(privateKey)) {
    throw new ConfigError('server.tls.key', `${files.keyFile} is not the key of the certificate in server.tls.cert`);
  }
  if (ca !== undefined) checked('server.tls.ca', 'is not a PEM certificate', () => new X509Certificate(ca));
  checked('server.tls.cert', 'cannot serve TLS', () =>
    createSecureContext({ cert, key, ...(ca !== undefined && { ca }) }),
  );
  return { cert, key, ...(ca !== undefined && { ca }) };
}

/**
 * `server.tls` as loaded (see `TlsSettings`); client certificates need the CA that they chain to.
 *
 * @example
 * ```ts
 * loadTls({ cert: 'tls.crt', key: 'tls.key', clientCertificates: 'off' }).cert; // '-----BEGIN CERTIFICATE-----…'
 * ```
 * @throws ConfigError naming the key
 */
export function loadTls(config: ServerTlsConfig): TlsSettings {
  if (config.clientCertificates !== 'off' && config.ca === undefined) {
    throw new ConfigError(
      'server.tls.ca',
      `clientCertificates: ${config.clientCertificates} needs the CA file that client certificates must chain to`,
    );
  }
  const material = readTlsMaterial({ certFile: config.cert, keyFile: config.key, caFile: config.ca });
  return {
    certFile: config.cert,
    keyFile: config.key,
    ...(config.ca !== undefined && { caFile: config.ca }),
    ...material,
    clientCertificates: config.clientCertificates,
  };
}

/**
 * A certificate subject as the gateway compares it: `KEY=value` attributes, one per line,
 * sorted (the order a CA writes them in does not matter; every attribute must be there). A
 * config writes them separated by commas; `X509Certificate.subject` one per line (a value with
 * a comma in it can be matched by fingerprint only).
 *
 * @example
 * ```ts
 * normalizeSubject('O=Acme, CN=ci-bot'); // 'CN=ci-bot\nO=Acme'
 * normalizeSubject(new X509Certificate(pem).subject, 'lines'); // the same form
 * ```
 */
export function normalizeSubject(subject: string, written: 'commas' | 'lines' = 'commas'): string {
  return subject
    .split(written === 'commas' ? /\n|,\s*/ : '\n')
    .map((part) => part.trim())
    .filter((part) => part.length > 0)
    .sort()
    .join('\n');
}

/**
 * A SHA-256 fingerprint as `X509Certificate.fingerprint256` writes it: upper-case hex pairs
 * joined by colons.
 *
 * @example
 * ```ts
 * normalizeFingerprint('abcd…'); // 'AB:CD:…'
 * ```
 */
export function normalizeFingerprint(fingerprint: string): string {
  const hex = fingerprint.replace(/:/g, '').toUpperCase();
  return (hex.match(/../g) ?? []).join(':');
}

/**
 * The clients with their certificates (`clients[].certificate`) normalized. A certificate names
 * at least a subject or a fingerprint, no two clients name the same one, and client certificates
 * must be asked for (`server.tls.clientCertificates`), else the entry could never match.
 *
 * @example
 * ```ts
 * const clients = withClientCertificates(resolveClients(raw, env), raw, tls);
 * ```
 * @throws ConfigError keyed `clients[i].certificate`
 */
export function withClientCertificates(
  clients: ClientEntry[],
  raw: Pick<RawConfig, 'clients'>,
  tls: TlsSettings | undefined,
): ClientEntry[] {
  const seen = new Map<string, string>();
  return clients.map((client, index) => {
    const entry = raw.clients[index]?.certificate;
    if (entry === undefined) return client;
    const key = `clients[${index}].certificate`;
    if (tls === undefined || tls.clientCertificates === 'off') {
      throw new ConfigError(
        key,
        'no client certificate is asked for, so this one could never match: set server.tls.clientCertificates (request or require) and server.tls.ca',
      );
    }
    if (entry.subject === undefined && entry.fingerprint256 === undefined) {
      throw new ConfigError(key, 'names neither a subject nor a fingerprint256');
    }
    const subject = entry.subject === undefined ? undefined : normalizeSubject(entry.subject);
    if (subject !== undefined && !subject.split('\n').every((part) => /^[A-Za-z][A-Za-z0-9.]*=./.test(part))) {
      throw new ConfigError(
        `${key}.subject`,
        'write it as KEY=value pairs separated by commas, e.g. "O=Acme, CN=ci-bot"',
      );
    }
    const certificate: ClientCertificate = {
      ...(subject !== undefined && { subject }),
      ...(entry.fingerprint256 !== undefined && { fingerprint256: normalizeFingerprint(entry.fingerprint256) }),
      alone: entry.alone,
      required: entry.required,
    };
    const identity = `${certificate.subject ?? ''}|${certificate.fingerprint256 ?? ''}`;
    const other = seen.get(identity);
    if (other !== undefined) {
      throw new ConfigError(key, `clients "${other}" and "${client.id}" name the same certificate; give each its own`);
    }
    seen.set(identity, client.id);
    return { ...client, certificate };
  });
}

function readPem(path: string, key: string): string {
  try {
    if (statSync(path).size > MAX_PEM_BYTES) throw new ConfigError(key, `${path} is larger than 1 MiB`);
    return readFileSync(path, 'utf8');
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new ConfigError(key, `cannot read ${path}${code === undefined ? '' : ` (${code})`}`);
  }
}

function checked<T>(key: string, problem: string, make: () => T): T {
  try {
    return make();
  } catch (error) {
    // OpenSSL's own reason (never key material) helps the operator; the first line is enough.
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new ConfigError(key, `${problem} (${reason})`);
  }
}
