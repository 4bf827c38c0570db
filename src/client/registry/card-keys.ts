/**
 * An entry's `card_keys`: the operator's keys for the card's signatures, read and checked at
 * load (files relative to the registry's directory, inline keys, a `jwks_url` on the card's
 * origin), in the shape card trust takes them.
 *
 * @example
 * ```ts
 * const cardKeys = buildCardKeys(raw.card_keys, cardUrl, label, baseDir);
 * cardKeys.keySet?.kids();
 * ```
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { CardSignatureKeys } from '../../trust/index.js';
import {
  SigningKeyError,
  combineKeySets,
  importKeySet,
  parseKeyDocument,
  type OperatorKeySet,
  type SignatureCoverage,
} from '../../trust/signing/index.js';
import { RegistryError } from './error.js';
import { checkUrl } from './network.js';
import type { RawEntry } from './schema.js';

/** A JWK Set file of a dozen RSA keys is under 10 KiB. */
const MAX_JWKS_FILE_BYTES = 1024 * 1024;

/**
 * An entry's `card_keys`, as card trust takes them: the keys of `jwks_file` and inline `keys`
 * together as one set, the `jwks_url` (on the card's origin, fetched by card trust through the
 * guarded transport), and the coverage a signature must have.
 *
 * @example
 * ```ts
 * const keys: EntryCardKeys | undefined = registry.get('travel').cardKeys;
 * keys?.keySet?.kids(); // ['NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs']
 * ```
 */
export interface EntryCardKeys extends Readonly<CardSignatureKeys> {
  readonly keySet?: OperatorKeySet;
  readonly jwksUrl?: string;
  readonly coverage: SignatureCoverage;
}

/**
 * `card_keys`: the file and inline keys read and checked now (public keys only, no `oct`, no
 * kid twice), the URL checked like `card_url` and held to the card's origin.
 *
 * @example
 * ```ts
 * const cardKeys = buildCardKeys(raw.card_keys, cardUrl, label, dirname(registryFile));
 * ```
 * @throws RegistryError naming `card_keys…`
 */
export function buildCardKeys(
  raw: NonNullable<RawEntry['card_keys']>,
  cardUrl: URL,
  label: string,
  baseDir: string,
): EntryCardKeys {
  if (raw.jwks_file === undefined && raw.keys === undefined && raw.jwks_url === undefined) {
    throw new RegistryError(label, 'card_keys', 'names no keys: give jwks_file, keys or jwks_url');
  }
  const sets: OperatorKeySet[] = [];
  if (raw.jwks_file !== undefined) {
    const path = resolve(baseDir, raw.jwks_file);
    sets.push(asRegistryError(label, 'card_keys.jwks_file', () => importKeySet(readJwksFile(path), path)));
  }
  if (raw.keys !== undefined) {
    const inline = raw.keys;
    // importKeySet names the key by index: "card_keys: keys[1] holds private key material".
    sets.push(asRegistryError(label, '', () => importKeySet({ keys: inline }, 'card_keys')));
  }
  let jwksUrl: string | undefined;
  if (raw.jwks_url !== undefined) {
    const url = checkUrl(raw.jwks_url, label, 'card_keys.jwks_url');
    // The card's own origin, so the keys and the card answer for each other: keys from a third
    // host would let that host vouch for a card it does not serve.
    if (url.origin !== cardUrl.origin) {
      throw new RegistryError(label, 'card_keys.jwks_url', `must be on the card's origin (${cardUrl.origin})`);
    }
    jwksUrl = url.href;
  }
  const keySet = sets.length === 0 ? undefined : asRegistryError(label, 'card_keys', () => combineKeySets(sets));
  return Object.freeze({
    ...(keySet !== undefined && { keySet }),
    ...(jwksUrl !== undefined && { jwksUrl }),
    coverage: raw.coverage,
  });
}

function readJwksFile(path: string): unknown {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : 'cannot be read';
    throw new SigningKeyError('key_unreadable', `${path}: ${reason}`, { cause: error });
  }
  if (bytes.length > MAX_JWKS_FILE_BYTES) throw new SigningKeyError('key_unreadable', `${path}: larger than 1 MiB`);
  return parseKeyDocument(bytes, path);
}

/** A refused key or key set (its message names the file or key index) as a `RegistryError`. */
function asRegistryError<T>(label: string, key: string, build: () => T): T {
  try {
    return build();
  } catch (error) {
    if (error instanceof SigningKeyError) throw new RegistryError(label, key, error.message);
    throw error;
  }
}
