/**
 * Client tokens: resolved once at startup, kept only as SHA-256 digests, compared in
 * constant time. The plaintext never reaches a log, an audit row or a response.
 *
 * @example
 * ```ts
 * const token = resolveToken({ env: 'DEMO_TOKEN', file: '.airlock/demo-token', generate: true }, process.env, 'clients[0].token');
 * const digest = hashToken(token.value);
 * ```
 */
import { createHash, hash, randomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ConfigError } from './errors.js';
import type { TokenSourceConfig } from './schema.js';

export const MIN_TOKEN_LENGTH = 32;

export interface ResolvedToken {
  value: string;
  /** Where it came from, for the startup banner: never the token itself. */
  origin: { kind: 'inline' } | { kind: 'env'; name: string } | { kind: 'file'; path: string; generated: boolean };
}

/** A fresh token: 32 random bytes, base64url (43 characters). */
export function generateToken(): string {
  return randomBytes(32).toString('base64url');
}

export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/**
 * The hex SHA-256 digest of a presented token, as `hashToken(token).toString('hex')`, made with
 * the one-shot `crypto.hash` (Node 20.12+, the engines floor): no Hash object per request.
 *
 * @example
 * ```ts
 * tokenDigestHex('abc'); // 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'
 * ```
 */
export function tokenDigestHex(token: string): string {
  return hash('sha256', token, 'hex');
}

/**
 * Whether two digests in hex are the same, in a time that depends on their length only: every
 * character is compared, with no early exit, as `timingSafeEqual` does for buffers. For the
 * digest a lookup has just found, which `timingSafeEqual` would need parsed back into a `Buffer`
 * on every request (about 0.2 µs a call in process, 0.7 µs through the gateway).
 *
 * @example
 * ```ts
 * sameDigestHex(tokenDigestHex(token), client.digestHex); // true for the client's token
 * ```
 */
export function sameDigestHex(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

export function resolveToken(source: TokenSourceConfig, env: NodeJS.ProcessEnv, key: string): ResolvedToken {
  if (typeof source === 'string') return checked({ value: source, origin: { kind: 'inline' } }, key);
  if (source.env !== undefined) {
    const value = env[source.env];
    if (value !== undefined && value.length > 0) {
      return checked({ value, origin: { kind: 'env', name: source.env } }, `${key} (from ${source.env})`);
    }
  }
  if (source.file !== undefined) {
    const path = resolve(source.file);
    if (existsSync(path)) {
      const value = readFileSync(path, 'utf8').trim();
      return checked({ value, origin: { kind: 'file', path: source.file, generated: false } }, `${key} (from ${path})`);
    }
    if (source.generate) {
      const value = generateOnce(path);
      if (value === undefined) return resolveToken(source, env, key);
      return { value, origin: { kind: 'file', path: source.file, generated: true } };
    }
  }
  const where = [source.env && `environment variable ${source.env}`, source.file && `file ${source.file}`]
    .filter(Boolean)
    .join(' or ');
  throw new ConfigError(key, where.length > 0 ? `no token found in ${where}` : 'names no env or file to read from');
}

/**
 * Writes a fresh token to `path` unless another process got there first: the token is written
 * whole to a private temporary file and linked into place, so two gateways started together from
 * one folder never see a half-written token and never both win. Returns undefined when the file
 * appeared meanwhile (the caller reads it).
 */
function generateOnce(path: string): string | undefined {
  const value = generateToken();
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  writeFileSync(temporary, `${value}\n`, { mode: 0o600, flag: 'wx' });
  try {
    linkSync(temporary, path);
    return value;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
    throw error;
  } finally {
    unlinkSync(temporary);
  }
}

function checked(token: ResolvedToken, key: string): ResolvedToken {
  if (token.value.length < MIN_TOKEN_LENGTH) {
    throw new ConfigError(
      key,
      `token must be at least ${MIN_TOKEN_LENGTH} characters (generate one with: airlock tokens new <client>)`,
    );
  }
  if (/\s/.test(token.value)) throw new ConfigError(key, 'token must not contain white space');
  return token;
}
