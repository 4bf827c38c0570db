/**
 * Operator keys for card signatures: a private JWK that signs Airlock's own cards, and the
 * operator's set of public keys that remote cards must be signed with.
 *
 * The operator's set is the only source of verification keys. A2A#2096: a `jku` in a
 * signature's header lets the signer name its own trust root, so headers never add keys here
 * (`verify.ts` looks keys up by `kid` in this set and nowhere else).
 *
 * Each key verifies only with the algorithms its type fits (RFC 7518), narrowed to its `alg`
 * member when it has one:
 *
 * | key                   | algorithms                                 |
 * |-----------------------|--------------------------------------------|
 * | EC P-256 / P-384 / P-521 | ES256 / ES384 / ES512                   |
 * | OKP Ed25519           | EdDSA, Ed25519                             |
 * | RSA, ≥ 2048 bits      | RS256, RS384, RS512, PS256, PS384, PS512   |
 *
 * Refused: symmetric (`oct`) keys (whoever can verify with a shared secret can also sign),
 * RSA under 2048 bits, other curves and types, `use` other than `sig`, `key_ops` without the
 * operation, private material in a public set, and two keys with one `kid`.
 *
 * @example
 * ```ts
 * const signer = await readSigningKeyFile('keys/abc.private.jwk.json');
 * const trusted = await readKeySetFile('keys/jwks.json');
 * trusted.get(signer.kid)?.algorithms; // ['ES256']
 * ```
 */
import { createPrivateKey, createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { SigningKeyError, showKid } from './errors.js';
import { jwkThumbprint } from './thumbprint.js';

/**
 * The JWS algorithms card signatures may use. No `none`, no HMAC.
 *
 * @example
 * ```ts
 * const alg: SigningAlgorithm = 'ES256';
 * ```
 */
export type SigningAlgorithm =
  'ES256' | 'ES384' | 'ES512' | 'EdDSA' | 'Ed25519' | 'RS256' | 'RS384' | 'RS512' | 'PS256' | 'PS384' | 'PS512';

/**
 * Every `SigningAlgorithm`, for checks on untrusted header values.
 *
 * @example
 * ```ts
 * SIGNING_ALGORITHMS.includes(header.alg); // false for 'none' and 'HS256'
 * ```
 */
export const SIGNING_ALGORITHMS: readonly SigningAlgorithm[] = [
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
];

/**
 * A public JWK as Airlock publishes it: the key's public members, its `kid`, `use: "sig"`,
 * and `alg` when the key is meant for one algorithm.
 *
 * @example
 * ```ts
 * const jwk: PublicJwk = { kty: 'OKP', crv: 'Ed25519', x: '…', kid: '…', use: 'sig', alg: 'EdDSA' };
 * ```
 */
export interface PublicJwk {
  kty: 'EC' | 'OKP' | 'RSA';
  kid: string;
  use: 'sig';
  alg?: SigningAlgorithm;
  crv?: string;
  x?: string;
  y?: string;
  n?: string;
  e?: string;
}

/**
 * A key that signs cards: the private key, the algorithm it signs with, and its public JWK
 * (what goes into `jwks.json`).
 *
 * @example
 * ```ts
 * const signer: SigningKey = importSigningKey(privateJwk);
 * signer.alg; // 'ES256'
 * ```
 */
export interface SigningKey {
  readonly kid: string;
  readonly alg: SigningAlgorithm;
  readonly privateKey: KeyObject;
  readonly publicJwk: PublicJwk;
}

/**
 * One key of the operator's verification set.
 *
 * @example
 * ```ts
 * const key: VerificationKey | undefined = keySet.get(kid);
 * key?.algorithms; // ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512']
 * ```
 */
export interface VerificationKey {
  readonly kid: string;
  /** The algorithms this key verifies with: its type's, narrowed to its `alg` member. */
  readonly algorithms: readonly SigningAlgorithm[];
  readonly publicKey: KeyObject;
  readonly jwk: PublicJwk;
}

/**
 * The operator's verification keys, by `kid`. Built by `importKeySet`, `readKeySetFile`,
 * `fetchKeySet` or `combineKeySets`; never from a card or a signature header.
 *
 * @example
 * ```ts
 * const keySet = importKeySet({ keys: [publicJwk] });
 * keySet.get(publicJwk.kid)?.algorithms; // ['ES256']
 * keySet.toJwks();                       // { keys: [publicJwk] }
 * ```
 */
export class OperatorKeySet {
  readonly #keys: ReadonlyMap<string, VerificationKey>;

  constructor(keys: Iterable<VerificationKey>) {
    const byKid = new Map<string, VerificationKey>();
    for (const key of keys) {
      if (byKid.has(key.kid)) {
        throw new SigningKeyError('keyset_duplicate_kid', `two keys share the kid ${showKid(key.kid)}`);
      }
      byKid.set(key.kid, key);
    }
    this.#keys = byKid;
  }

  /** The key with this `kid`, if the operator has one. */
  get(kid: string): VerificationKey | undefined {
    return this.#keys.get(kid);
  }

  get size(): number {
    return this.#keys.size;
  }

  kids(): string[] {
    return [...this.#keys.keys()];
  }

  /** The set as a JWK Set document (what `/.well-known/jwks.json` serves). */
  toJwks(): { keys: PublicJwk[] } {
    return { keys: [...this.#keys.values()].map((key) => ({ ...key.jwk })) };
  }

  /** As JSON (a registry entry printed, say): the JWK Set, public keys only. */
  toJSON(): { keys: PublicJwk[] } {
    return this.toJwks();
  }
}

const EC_ALGORITHMS: Readonly<Record<string, SigningAlgorithm>> = {
  'P-256': 'ES256',
  'P-384': 'ES384',
  'P-521': 'ES512',
};
const RSA_ALGORITHMS: readonly SigningAlgorithm[] = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'];
const EDDSA_ALGORITHMS: readonly SigningAlgorithm[] = ['EdDSA', 'Ed25519'];
/** Private members per RFC 7518 §6.2.2, §6.3.2 and RFC 8037 §2. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'r', 't', 'k'];
const MIN_RSA_BITS = 2048;
const MAX_KID_LENGTH = 200;
/** Key files are a few kilobytes; a set of hundreds of RSA keys still fits. */
const MAX_KEY_FILE_BYTES = 1024 * 1024;

/**
 * The algorithms a JWK may sign or verify with (see the module table), narrowed to its `alg`.
 * Throws `SigningKeyError` (`key_symmetric`, `key_unsupported`, `key_too_small`,
 * `key_malformed`) for keys that may not sign cards at all.
 *
 * @example
 * ```ts
 * algorithmsForJwk({ kty: 'EC', crv: 'P-256', x, y });          // ['ES256']
 * algorithmsForJwk({ kty: 'RSA', n, e, alg: 'PS256' });          // ['PS256']
 * algorithmsForJwk({ kty: 'oct', k: '…' });                      // throws key_symmetric
 * ```
 */
export function algorithmsForJwk(jwk: Readonly<Record<string, unknown>>): SigningAlgorithm[] {
  const kty = jwk.kty;
  let fitting: readonly SigningAlgorithm[];
  if (kty === 'oct') {
    throw new SigningKeyError(
      'key_symmetric',
      'a symmetric (oct) key cannot be used: anyone able to verify with it could also sign',
    );
  } else if (kty === 'EC') {
    const alg =
      typeof jwk.crv === 'string' && Object.hasOwn(EC_ALGORITHMS, jwk.crv) ? EC_ALGORITHMS[jwk.crv] : undefined;
    if (alg === undefined) throw new SigningKeyError('key_unsupported', 'EC keys must be on P-256, P-384 or P-521');
    fitting = [alg];
  } else if (kty === 'OKP') {
    if (jwk.crv !== 'Ed25519') throw new SigningKeyError('key_unsupported', 'OKP keys must be Ed25519');
    fitting = EDDSA_ALGORITHMS;
  } else if (kty === 'RSA') {
    const bits = rsaModulusBits(jwk.n);
    if (bits < MIN_RSA_BITS) {
      throw new SigningKeyError('key_too_small', `RSA keys need at least ${MIN_RSA_BITS} bits (this one has ${bits})`);
    }
    fitting = RSA_ALGORITHMS;
  } else {
    throw new SigningKeyError('key_unsupported', 'keys must be EC, OKP (Ed25519) or RSA');
  }
  if (jwk.alg === undefined) return [...fitting];
  if (typeof jwk.alg !== 'string' || !(fitting as readonly string[]).includes(jwk.alg)) {
    throw new SigningKeyError(
      'key_unsupported',
      `the key's alg ${typeof jwk.alg === 'string' ? jwk.alg.slice(0, 20) : '(not text)'} does not fit a ${describeKey(jwk)} key`,
    );
  }
  return [jwk.alg as SigningAlgorithm];
}

/**
 * A private JWK as a `SigningKey`. The algorithm is the JWK's `alg`, else ES256/ES384/ES512
 * by curve, EdDSA for Ed25519, RS256 for RSA; the `kid` is the JWK's, else its RFC 7638
 * thumbprint. Throws `SigningKeyError`, e.g. `key_not_private` for a public JWK and
 * `key_malformed` when the private part does not belong to the public members.
 *
 * @example
 * ```ts
 * const signer = importSigningKey(JSON.parse(readFileSync('abc.private.jwk.json', 'utf8')));
 * signer.publicJwk; // { kty: 'EC', crv: 'P-256', x, y, kid, use: 'sig', alg: 'ES256' }
 * ```
 */
export function importSigningKey(jwk: unknown, source = 'the signing key'): SigningKey {
  const record = asJwk(jwk, source);
  const algorithms = within(source, () => algorithmsForJwk(record));
  checkUse(record, 'sign', source);
  if (typeof record.d !== 'string') {
    throw new SigningKeyError('key_not_private', `${source} is a public key; signing needs the private JWK`);
  }
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey({ key: record as JsonWebKey, format: 'jwk' });
  } catch (error) {
    throw new SigningKeyError('key_malformed', `${source} does not import as a private key`, { cause: error });
  }
  const derived = publicMembers(createPublicKey(privateKey));
  for (const [name, value] of Object.entries(derived)) {
    if (record[name] !== undefined && record[name] !== value) {
      throw new SigningKeyError('key_malformed', `${source}: its private part does not match its "${name}" member`);
    }
  }
  const alg = algorithms[0]!;
  const kid = kidOf(record, derived, source);
  return {
    kid,
    alg,
    privateKey,
    publicJwk: { ...derived, kid, use: 'sig', alg },
  };
}

/**
 * A public JWK as a `VerificationKey`. Throws `SigningKeyError`, `key_private_in_public_set`
 * when it carries private members.
 *
 * @example
 * ```ts
 * importVerificationKey({ kty: 'OKP', crv: 'Ed25519', x: '…' }).algorithms; // ['EdDSA', 'Ed25519']
 * ```
 */
export function importVerificationKey(jwk: unknown, source = 'the key'): VerificationKey {
  const record = asJwk(jwk, source);
  // A symmetric key is refused as such, not as "private material" (its `k` is both).
  if (record.kty === 'oct') within(source, () => algorithmsForJwk(record));
  const present = PRIVATE_MEMBERS.filter((name) => record[name] !== undefined);
  if (present.length > 0) {
    throw new SigningKeyError(
      'key_private_in_public_set',
      `${source} holds private key material (${present.join(', ')}); publish and configure only public keys`,
    );
  }
  const algorithms = within(source, () => algorithmsForJwk(record));
  checkUse(record, 'verify', source);
  let publicKey: KeyObject;
  try {
    publicKey = createPublicKey({ key: record as JsonWebKey, format: 'jwk' });
  } catch (error) {
    throw new SigningKeyError('key_malformed', `${source} does not import as a public key`, { cause: error });
  }
  const derived = publicMembers(publicKey);
  const kid = kidOf(record, derived, source);
  const published: PublicJwk = { ...derived, kid, use: 'sig' };
  if (record.alg !== undefined) published.alg = algorithms[0]!;
  return { kid, algorithms, publicKey, jwk: published };
}

/**
 * The operator's verification keys from a JWK Set (`{"keys": [...]}`), an array of JWKs, or a
 * single JWK. Throws `SigningKeyError` for any refused key (naming its index), for duplicate
 * key ids, and for an empty set.
 *
 * @example
 * ```ts
 * const keySet = importKeySet(JSON.parse(readFileSync('jwks.json', 'utf8')), 'jwks.json');
 * ```
 */
export function importKeySet(value: unknown, source = 'the key set'): OperatorKeySet {
  let list: unknown[];
  if (Array.isArray(value)) list = value;
  else if (isRecord(value) && Array.isArray(value.keys)) list = value.keys;
  else if (isRecord(value) && typeof value.kty === 'string') list = [value];
  else throw new SigningKeyError('key_malformed', `${source} is not a JWK Set ({"keys": [...]})`);
  if (list.length === 0) throw new SigningKeyError('keyset_empty', `${source} holds no keys`);
  const keys = list.map((jwk, i) => importVerificationKey(jwk, `${source}: keys[${i}]`));
  return within(source, () => new OperatorKeySet(keys));
}

/**
 * One set from several (a JWKS file, inline keys, a fetched `jwks_url`). The same key listed
 * twice is kept once; two different keys with one `kid` are refused.
 *
 * @example
 * ```ts
 * const keySet = combineKeySets([fileKeys, inlineKeys]);
 * ```
 */
export function combineKeySets(sets: readonly OperatorKeySet[]): OperatorKeySet {
  const byKid = new Map<string, VerificationKey>();
  for (const set of sets) {
    for (const kid of set.kids()) {
      const key = set.get(kid)!;
      const seen = byKid.get(kid);
      if (seen !== undefined && !seen.publicKey.equals(key.publicKey)) {
        throw new SigningKeyError('keyset_duplicate_kid', `two different keys share the kid ${showKid(kid)}`);
      }
      if (seen === undefined) byKid.set(kid, key);
    }
  }
  if (byKid.size === 0) throw new SigningKeyError('keyset_empty', 'the key sets hold no keys');
  return new OperatorKeySet(byKid.values());
}

/**
 * `importSigningKey` on a file (e.g. `<kid>.private.jwk.json` from `airlock keys generate`).
 *
 * @example
 * ```ts
 * const signer = await readSigningKeyFile('/etc/airlock/keys/abc.private.jwk.json');
 * ```
 */
export async function readSigningKeyFile(path: string): Promise<SigningKey> {
  return importSigningKey(await readJsonFile(path), path);
}

/**
 * `importKeySet` on a file (a `jwks.json`).
 *
 * @example
 * ```ts
 * const keySet = await readKeySetFile('/etc/airlock/trusted-jwks.json');
 * ```
 */
export async function readKeySetFile(path: string): Promise<OperatorKeySet> {
  return importKeySet(await readJsonFile(path), path);
}

/**
 * A JSON document from bytes: strict UTF-8, at most 1 MiB. Throws `SigningKeyError('key_malformed')`.
 *
 * @example
 * ```ts
 * parseKeyDocument(Buffer.from('{"keys":[]}'), 'jwks.json'); // { keys: [] }
 * ```
 */
export function parseKeyDocument(bytes: Uint8Array, source: string): unknown {
  if (bytes.byteLength > MAX_KEY_FILE_BYTES) {
    throw new SigningKeyError('key_malformed', `${source} is larger than ${MAX_KEY_FILE_BYTES} bytes`);
  }
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (error) {
    throw new SigningKeyError('key_malformed', `${source} is not UTF-8 JSON`, { cause: error });
  }
}

async function readJsonFile(path: string): Promise<unknown> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
    throw new SigningKeyError('key_unreadable', `cannot read ${path} (${typeof code === 'string' ? code : 'error'})`, {
      cause: error,
    });
  }
  return parseKeyDocument(bytes, path);
}

function asJwk(value: unknown, source: string): Record<string, unknown> {
  if (!isRecord(value) || typeof value.kty !== 'string') {
    throw new SigningKeyError('key_malformed', `${source} is not a JWK (an object with "kty")`);
  }
  return value;
}

function checkUse(jwk: Readonly<Record<string, unknown>>, operation: 'sign' | 'verify', source: string): void {
  if (jwk.use !== undefined && jwk.use !== 'sig') {
    throw new SigningKeyError('key_use_mismatch', `${source} is not a signature key (its "use" is not "sig")`);
  }
  if (jwk.key_ops !== undefined && (!Array.isArray(jwk.key_ops) || !jwk.key_ops.includes(operation))) {
    throw new SigningKeyError('key_use_mismatch', `${source}'s key_ops do not include "${operation}"`);
  }
}

/** The public members as Node exports them (canonical base64url), in RFC 7638 order. */
function publicMembers(publicKey: KeyObject): Omit<PublicJwk, 'kid' | 'use' | 'alg'> {
  const exported = publicKey.export({ format: 'jwk' });
  if (exported.kty === 'EC') return { kty: 'EC', crv: exported.crv!, x: exported.x!, y: exported.y! };
  if (exported.kty === 'OKP') return { kty: 'OKP', crv: exported.crv!, x: exported.x! };
  if (exported.kty === 'RSA') return { kty: 'RSA', e: exported.e!, n: exported.n! };
  throw new SigningKeyError('key_unsupported', 'keys must be EC, OKP (Ed25519) or RSA');
}

function kidOf(jwk: Readonly<Record<string, unknown>>, derived: Record<string, unknown>, source: string): string {
  if (jwk.kid === undefined) return jwkThumbprint(derived);
  if (typeof jwk.kid !== 'string' || jwk.kid.length === 0 || jwk.kid.length > MAX_KID_LENGTH) {
    throw new SigningKeyError('key_malformed', `${source} has a kid that is not 1 to ${MAX_KID_LENGTH} characters`);
  }
  return jwk.kid;
}

function rsaModulusBits(n: unknown): number {
  if (typeof n !== 'string' || !/^[A-Za-z0-9_-]+$/.test(n)) {
    throw new SigningKeyError('key_malformed', 'the RSA key lacks a base64url "n"');
  }
  const bytes = Buffer.from(n, 'base64url');
  let first = 0;
  while (first < bytes.length && bytes[first] === 0) first++;
  if (first === bytes.length) return 0;
  return (bytes.length - first - 1) * 8 + (32 - Math.clz32(bytes[first]!));
}

function describeKey(jwk: Readonly<Record<string, unknown>>): string {
  return jwk.kty === 'RSA' ? 'RSA' : `${String(jwk.kty)} ${String(jwk.crv)}`;
}

/** Runs `build`, prefixing a `SigningKeyError`'s message with where the key came from. */
function within<T>(source: string, build: () => T): T {
  try {
    return build();
  } catch (error) {
    if (error instanceof SigningKeyError && !error.message.startsWith(source)) {
      throw new SigningKeyError(error.code, `${source}: ${error.message}`, { cause: error.cause });
    }
    throw error;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
