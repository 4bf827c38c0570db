/**
 * Loading `auth.jwt`: where the verification keys come from (a JWKS file, a PEM public key, or
 * a JWKS URL fetched later by the server), checked at load so a bad source stops startup.
 *
 * @example
 * ```ts
 * const settings = loadJwt({ jwksFile: 'idp-jwks.json', issuer: 'https://idp.example', audience: 'airlock' });
 * settings.keys.kind; // 'jwks'
 * ```
 */
import { readFileSync } from 'node:fs';
import { isOutboundError } from '../net/errors.js';
import { checkOutboundUrl } from '../net/url-policy.js';
import { DEFAULT_JWKS_REFRESH_SECONDS, type JwtSettings } from './airlock-config.js';
import { ConfigError } from './errors.js';
import type { JwtConfig } from './schema.js';

/**
 * `auth.jwt` as loaded: exactly one key source, its files read and checked now (a JWKS or a
 * PEM public key), or its URL checked against the outbound URL policy.
 *
 * @example
 * ```ts
 * const jwt = raw.auth?.jwt === undefined ? undefined : loadJwt(raw.auth.jwt);
 * ```
 * @throws ConfigError naming the key
 */
export function loadJwt(config: JwtConfig): JwtSettings {
  const { jwksFile, publicKeyFile, jwksUrl, jwksRefreshSeconds, jwksPrivateNetwork, ...rest } = config;
  const sources = [jwksFile, publicKeyFile, jwksUrl].filter((source) => source !== undefined).length;
  if (sources !== 1) {
    throw new ConfigError('auth.jwt', 'set exactly one of jwksFile or publicKeyFile or jwksUrl');
  }
  if (jwksUrl === undefined) {
    if (jwksRefreshSeconds !== undefined)
      throw new ConfigError('auth.jwt.jwksRefreshSeconds', 'applies only with jwksUrl');
    if (jwksPrivateNetwork !== undefined)
      throw new ConfigError('auth.jwt.jwksPrivateNetwork', 'applies only with jwksUrl');
  } else {
    checkJwksUrl(jwksUrl);
    return {
      ...rest,
      keys: {
        kind: 'url',
        url: jwksUrl,
        refreshSeconds: jwksRefreshSeconds ?? DEFAULT_JWKS_REFRESH_SECONDS,
        privateNetwork: jwksPrivateNetwork ?? false,
      },
    };
  }
  if (jwksFile !== undefined) {
    const key = 'auth.jwt.jwksFile';
    let jwks: unknown;
    try {
      jwks = JSON.parse(readSmallFile(jwksFile, key));
    } catch (error) {
      if (error instanceof ConfigError) throw error;
      throw new ConfigError(key, `${jwksFile} is not JSON`);
    }
    const keys = (jwks as { keys?: unknown } | null)?.keys;
    if (!Array.isArray(keys) || keys.length === 0 || !keys.every((k) => typeof k === 'object' && k !== null)) {
      throw new ConfigError(key, `${jwksFile} is not a JWKS (an object with a non-empty "keys" array)`);
    }
    return { ...rest, keys: { kind: 'jwks', jwks: { keys: keys as Record<string, unknown>[] } } };
  }
  const key = 'auth.jwt.publicKeyFile';
  const pem = readSmallFile(publicKeyFile as string, key);
  if (!pem.includes('-----BEGIN PUBLIC KEY-----')) {
    throw new ConfigError(key, `${publicKeyFile as string} is not a PEM public key (BEGIN PUBLIC KEY)`);
  }
  return { ...rest, keys: { kind: 'pem', pem } };
}

/**
 * The JWKS URL must be https, or plain http to a loopback host written as such, with no
 * credentials: the same URL policy the guarded client applies, checked here so that a bad URL
 * fails at load. Whether the address is reachable (private network, allowlist) is the client's
 * decision at fetch time. Messages name the origin at most, never the path or query.
 */
function checkJwksUrl(url: string): void {
  try {
    checkOutboundUrl(url, { privateNetwork: true, privateAllow: [], proxyConfigured: false });
  } catch (error) {
    if (isOutboundError(error, 'insecure_url', 'url_has_credentials')) {
      throw new ConfigError('auth.jwt.jwksUrl', error.message);
    }
    // address_blocked and the like depend on AIRLOCK_PRIVATE_ALLOW: judged when fetching.
  }
}

function readSmallFile(path: string, key: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : 'cannot be read';
    throw new ConfigError(key, `${path}: ${reason}`);
  }
  if (text.length > 1024 * 1024) throw new ConfigError(key, `${path}: larger than 1 MiB`);
  return text;
}
