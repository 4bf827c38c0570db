/**
 * `airlock keys generate [--alg ES256|ES384|ES512|EdDSA|RS256|PS256] --out DIR`: a new card
 * signing key. The private JWK goes to `DIR/<kid>.private.jwk.json` (mode 0600, directory
 * 0700 when created), the public key is added to `DIR/jwks.json`, so rotating keeps the old
 * public keys in the set that verifiers load. The kid is the key's RFC 7638 thumbprint.
 *
 * An existing `jwks.json` must be a valid public JWK Set; anything else (private keys in it,
 * unreadable JSON) stops the command before anything is written.
 *
 * @example
 * ```sh
 * airlock keys generate --alg EdDSA --out /etc/airlock/keys
 * # kid       8yiUlxSWHKwnqkhBo7H5aZSeKpvfcLMNnzIESyk84FQ
 * # alg       EdDSA
 * # private   /etc/airlock/keys/8yiUl….private.jwk.json (mode 0600: keep it secret)
 * # jwks      /etc/airlock/keys/jwks.json (2 keys: publish this)
 * ```
 */
import { chmod, readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { writeStateFile } from '../state/file.js';
import {
  GENERATED_ALGORITHMS,
  generateSigningKey,
  importKeySet,
  parseKeyDocument,
  type GeneratedAlgorithm,
} from '../trust/signing/index.js';
import { errorLine, PROCESS_IO, type CommandIO } from './registry.js';

/**
 * Options of `airlock keys generate`.
 *
 * @example
 * ```ts
 * const options: KeysGenerateOptions = { alg: 'ES256', out: 'keys' };
 * ```
 */
export interface KeysGenerateOptions {
  /** One of `GENERATED_ALGORITHMS` (case-insensitive); default ES256. */
  alg?: string;
  out: string;
}

/**
 * The name of the public key set in the output directory.
 *
 * @example
 * ```ts
 * join(out, JWKS_FILE_NAME); // 'keys/jwks.json'
 * ```
 */
export const JWKS_FILE_NAME = 'jwks.json';

/**
 * `airlock keys generate`. Exit codes: 0 written, 1 nothing written (bad `jwks.json`, a write
 * failed), 2 usage (unknown algorithm).
 *
 * @example
 * ```ts
 * process.exitCode = await keysGenerateCommand({ alg: 'EdDSA', out: 'keys' });
 * ```
 */
export async function keysGenerateCommand(options: KeysGenerateOptions, io: CommandIO = PROCESS_IO): Promise<number> {
  const alg = algorithmFrom(options.alg);
  if (alg === undefined) {
    io.stderr(`airlock: --alg must be one of ${GENERATED_ALGORITHMS.join(', ')}\n`);
    return 2;
  }
  const dir = resolve(options.out);
  const jwksPath = join(dir, JWKS_FILE_NAME);
  try {
    const existing = await readExistingSet(jwksPath);
    const generated = await generateSigningKey(alg);
    const privatePath = join(dir, `${generated.kid}.private.jwk.json`);
    if (await exists(privatePath)) throw new Error(`${privatePath} already exists; not overwriting a private key`);
    // The private key first: a published public key without its private key would be useless,
    // the other way round only an unpublished key.
    await writeStateFile(privatePath, `${JSON.stringify(generated.privateJwk, null, 2)}\n`);
    const keys = [...existing, generated.publicJwk];
    await writeStateFile(jwksPath, `${JSON.stringify({ keys }, null, 2)}\n`);
    // The set is public; the state file helper writes 0600, which would stop a web server or a
    // sidecar that publishes it.
    await chmod(jwksPath, 0o644);
    io.stdout(
      [
        `kid       ${generated.kid}`,
        `alg       ${generated.alg}`,
        `private   ${privatePath} (mode 0600: keep it secret)`,
        `jwks      ${jwksPath} (${keys.length} ${keys.length === 1 ? 'key' : 'keys'}: publish this)`,
        '',
      ].join('\n'),
    );
    return 0;
  } catch (error) {
    io.stderr(`airlock: ${errorLine(error)}\n`);
    return 1;
  }
}

function algorithmFrom(value: string | undefined): GeneratedAlgorithm | undefined {
  if (value === undefined) return 'ES256';
  return GENERATED_ALGORITHMS.find((alg) => alg.toLowerCase() === value.trim().toLowerCase());
}

/** The keys of an existing `jwks.json`, as written (so rotation keeps them byte for byte); none when absent. */
async function readExistingSet(path: string): Promise<unknown[]> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new Error(`cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})`, { cause: error });
  }
  const document = parseKeyDocument(bytes, path);
  if (typeof document !== 'object' || document === null || !Array.isArray((document as { keys?: unknown }).keys)) {
    throw new Error(`${path} is not a JWK Set ({"keys": [...]}); move it away or fix it`);
  }
  const keys = (document as { keys: unknown[] }).keys;
  // Checked as verifiers will load it: public keys only, kids unique.
  if (keys.length > 0) importKeySet(document, path);
  return keys;
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
