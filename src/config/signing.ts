/**
 * Loading `signing`: the card signing keys (private key files readable by their owner only),
 * the JWK Set the gateway serves, and the `jku` put in signature headers.
 *
 * @example
 * ```ts
 * const { keys, jwks, jku } = loadSigning({ keys: [{ file: 'signing-key.json' }], jku: true }, 'https://gw.example');
 * ```
 */
import { createPublicKey } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import {
  SigningKeyError,
  importKeySet,
  importSigningKey,
  parseKeyDocument,
  type PublicJwk,
} from '../trust/signing/index.js';
import type { SigningSettings } from './airlock-config.js';
import { ConfigError } from './errors.js';
import type { SigningConfig } from './schema.js';

/** Private key and JWK Set files are a few kilobytes. */
const MAX_KEY_FILE_BYTES = 1024 * 1024;

/**
 * Reads the signing keys, the served JWK Set and the `jku` (see `SigningSettings`). Every
 * problem is a `ConfigError` naming the key: a private key file others may read, a key that
 * does not import or sign, two keys with one `kid`, a `jwksFile` with private material or
 * without one of the signing keys, `jku: true` without an https `server.publicUrl`.
 *
 * @example
 * ```ts
 * const signing = raw.signing === undefined ? undefined : loadSigning(raw.signing, server.publicUrl);
 * ```
 */
export function loadSigning(config: SigningConfig, publicUrl: string | undefined): SigningSettings {
  const keys = config.keys.map((entry, index) => {
    const key = `signing.keys[${index}].file`;
    const bytes = readKeyFile(entry.file, key, true);
    return asConfigError(key, () => importSigningKey(parseKeyDocument(bytes, entry.file), entry.file));
  });
  const kids = new Set<string>();
  keys.forEach((signer, index) => {
    if (kids.has(signer.kid)) {
      throw new ConfigError(
        `signing.keys[${index}].file`,
        `a second key with the kid "${signer.kid}"; list each key once`,
      );
    }
    kids.add(signer.kid);
  });
  let jwks: { keys: PublicJwk[] };
  if (config.jwksFile === undefined) {
    jwks = { keys: keys.map((signer) => ({ ...signer.publicJwk })) };
  } else {
    const key = 'signing.jwksFile';
    const path = config.jwksFile;
    const served = asConfigError(key, () => importKeySet(parseKeyDocument(readKeyFile(path, key, false), path), path));
    for (const signer of keys) {
      const published = served.get(signer.kid);
      // Verifiers look keys up by kid in this set: a signing key missing from it (or a different
      // key under its kid) would make every card's signature fail for everyone.
      if (published === undefined) {
        throw new ConfigError(key, `${path} lacks the signing key "${signer.kid}"; add its public JWK`);
      }
      if (!published.publicKey.equals(createPublicKey(signer.privateKey))) {
        throw new ConfigError(key, `${path} holds a different key under the signing key's kid "${signer.kid}"`);
      }
      if (!published.algorithms.includes(signer.alg)) {
        throw new ConfigError(key, `${path} limits the key "${signer.kid}" to another algorithm than ${signer.alg}`);
      }
    }
    jwks = served.toJwks();
  }
  const jku = jkuFrom(config.jku, publicUrl);
  return { keys, jwks, ...(jku !== undefined && { jku }) };
}

function jkuFrom(setting: SigningConfig['jku'], publicUrl: string | undefined): string | undefined {
  if (setting === undefined || setting === false) return undefined;
  if (typeof setting === 'string') {
    let url: URL | undefined;
    try {
      url = new URL(setting);
    } catch {
      url = undefined;
    }
    if (url?.protocol !== 'https:' || /\s/.test(setting) || url.username !== '' || url.password !== '') {
      throw new ConfigError('signing.jku', 'must be true, false or an https URL (without credentials)');
    }
    return url.href;
  }
  // Only the operator's public URL can say where the gateway is reached from outside: the
  // listening address is loopback, and a Host header is the caller's word.
  if (publicUrl === undefined) {
    throw new ConfigError(
      'signing.jku',
      'true needs server.publicUrl (the jku names the gateway as others reach it); or give the URL itself',
    );
  }
  if (!publicUrl.startsWith('https://')) {
    throw new ConfigError(
      'signing.jku',
      'true needs an https server.publicUrl: a key set URL over plain http could be swapped in transit',
    );
  }
  return `${publicUrl.replace(/\/+$/, '')}/.well-known/jwks.json`;
}

/**
 * A key file's bytes. With `secret`, the file must be readable by its owner only (as ssh insists
 * for private keys): a signing key others can read is a key others can sign with.
 */
function readKeyFile(path: string, key: string, secret: boolean): Buffer {
  let mode: number;
  let size: number;
  try {
    const stats = statSync(path);
    if (!stats.isFile()) throw new ConfigError(key, `${path} is not a file`);
    mode = stats.mode;
    size = stats.size;
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : 'cannot be read';
    throw new ConfigError(key, `${path}: ${reason}`);
  }
  // Windows has no POSIX modes (Node reports 0666 for any writable file): ACLs guard keys there.
  if (secret && process.platform !== 'win32' && (mode & 0o077) !== 0) {
    const shown = (mode & 0o777).toString(8).padStart(4, '0');
    throw new ConfigError(
      key,
      `${path} is accessible by group or others (mode ${shown}); a private key must be readable by its owner only: chmod 600 ${path}`,
    );
  }
  if (size > MAX_KEY_FILE_BYTES) throw new ConfigError(key, `${path}: larger than 1 MiB`);
  try {
    return readFileSync(path);
  } catch {
    throw new ConfigError(key, `${path}: cannot be read`);
  }
}

/** A `SigningKeyError` (its message names the file and the problem) as a `ConfigError` on `key`. */
function asConfigError<T>(key: string, build: () => T): T {
  try {
    return build();
  } catch (error) {
    if (error instanceof SigningKeyError) throw new ConfigError(key, error.message);
    throw error;
  }
}
