/**
 * `airlock card …`: agent card tools for operators.
 *
 * - `card fetch <url|registry-name>`: fetch a card through the guarded transport (as card
 *   trust does: `A2A-Version: 1.0`, the 256 KiB cap) and print the exact bytes on stdout; a
 *   summary (trust digest, endpoint, signature status) goes to stderr. The signature is
 *   verified with `--keys`, else for a registry name with the entry's `card_keys` (its
 *   `jwks_url` fetched through the same transport). A registry name is fetched exactly as the
 *   outbound client fetches it, hop header included; a URL the operator typed is not a relay
 *   and goes without it, so an Airlock gateway's own card can be fetched too.
 * - `card sign <card.json> --key <jwk> [--key <jwk>…] [--jku URL]`: the signed card on stdout.
 * - `card verify <card.json|url> --keys <jwks> [--keys …]`: exit 0 when a signature verifies. A
 *   URL is fetched like `card fetch` does but without the hop header, so a gateway's own card
 *   can be checked.
 * - `card digest <card.json> [--payload]`: the trust digest (what pins compare) and the
 *   SHA-256 of the signing payload (or, with `--payload`, the payload itself).
 *
 * Exit codes: 0 done; 1 refused (the card or its signature; for `fetch`, also a failed fetch);
 * 2 could not start (a file or key set that cannot be read or used, an unknown option value).
 *
 * @example
 * ```sh
 * airlock card sign card.json --key keys/abc.private.jwk.json > signed.json
 * airlock card verify signed.json --keys keys/jwks.json   # verified  ES256 signature by kid "abc…"
 * airlock card fetch travel --registry registry.yaml --keys travel-jwks.json > travel-card.json
 * ```
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { RegistryError, cardTrustEntry, loadRegistry, type RegistryEntry } from '../client/index.js';
import { createOutboundTransport } from '../client/outbound-transport.js';
import { createGuardedClient, parseEnvSettings, type GuardedClient } from '../net/index.js';
import { decodeAnyCard } from '../protocol/card.js';
import {
  DEFAULT_MAX_CARD_BYTES,
  cardTrustDigest,
  chooseInterface,
  showUrl,
  type RequestTimeouts,
} from '../trust/index.js';
import {
  CardSignatureError,
  SigningKeyError,
  cardSigningPayload,
  combineKeySets,
  fetchKeySet,
  readKeySetFile,
  readSigningKeyFile,
  SDK_INSTANCE_DEFECT,
  signCard,
  uncoveredTrustFields,
  verifyCardSignatures,
  type OperatorKeySet,
  type SignatureCoverage,
} from '../trust/signing/index.js';
import { errorLine, PROCESS_IO, type CommandIO } from './registry.js';
import { AirlockError } from '../errors/index.js';

/** One or more values of a repeatable option. */
type OneOrMore = string | readonly string[];

/**
 * Options of `airlock card sign`.
 *
 * @example
 * ```ts
 * const options: CardSignOptions = { key: ['keys/new.private.jwk.json', 'keys/old.private.jwk.json'] };
 * ```
 */
export interface CardSignOptions {
  /** Private JWK files; one signature per key, in this order. */
  key: OneOrMore;
  /** Where the public keys are published (a hint in each protected header). */
  jku?: string;
}

/**
 * Options of `airlock card verify`.
 *
 * @example
 * ```ts
 * const options: CardVerifyOptions = { keys: 'trusted-jwks.json', coverage: 'interfaces' };
 * ```
 */
export interface CardVerifyOptions {
  /** JWK Set files (or single public JWKs); together, the operator's key set. */
  keys: OneOrMore;
  /** What a signature must cover (`trust-fields`, the default, or `interfaces`). */
  coverage?: string;
}

/**
 * Options of `airlock card digest`.
 *
 * @example
 * ```ts
 * const options: CardDigestOptions = { payload: true };
 * ```
 */
export interface CardDigestOptions {
  /** Print the canonical signing payload instead of the digests. */
  payload?: boolean;
}

/**
 * Options of `airlock card fetch`.
 *
 * @example
 * ```ts
 * const options: CardFetchOptions = { registry: 'registry.yaml', keys: 'travel-jwks.json' };
 * ```
 */
export interface CardFetchOptions {
  /** The registry to resolve a name in (default: AIRLOCK_REGISTRY). */
  registry?: string;
  /** Verify the card's signature with these key sets (default for a registry name: its `card_keys`). */
  keys?: OneOrMore;
  coverage?: string;
  /** The card shape to ask for with `A2A-Version` (default 1.0, as card trust asks). */
  version?: string;
}

/** Something that stops a command before it can judge a card: exit 2, not 1. */
class InputError extends AirlockError {
  readonly code = 'cli_input_invalid';
}

/** Timeouts for a card fetched by URL (a registry entry brings its own). */
const URL_TIMEOUTS: RequestTimeouts = { connectMs: 5_000, readMs: 10_000, totalMs: 15_000 };

/**
 * `airlock card sign <card.json> --key <jwk>`: the card with `signatures` replaced by one per
 * key, as JSON on stdout. Warns on stderr when the signature cannot cover all trust fields
 * (a v0.3 card's own members are outside the v1.0 signing payload).
 *
 * @example
 * ```ts
 * process.exitCode = await cardSignCommand('card.json', { key: 'keys/abc.private.jwk.json' });
 * ```
 */
export async function cardSignCommand(
  file: string,
  options: CardSignOptions,
  io: CommandIO = PROCESS_IO,
): Promise<number> {
  return run(io, async () => {
    const card = parseCard(await readCardFile(file), file);
    const keys = await Promise.all(list(options.key).map((path) => readSigningKeyFile(path)));
    if (keys.length === 0) throw new InputError('give at least one --key');
    let signed: Record<string, unknown>;
    try {
      signed = signCard(card, keys, { ...(options.jku !== undefined && { jku: options.jku }) });
    } catch (error) {
      if (error instanceof TypeError) throw new InputError(error.message);
      throw error;
    }
    const uncovered = uncoveredTrustFields(card);
    if (uncovered.length > 0) {
      io.stderr(
        `airlock: warning: the signature does not cover the card's ${uncovered.join(', ')} (members outside the A2A v1.0 card, such as v0.3's own, are not signed); verifiers refuse it unless they accept interfaces-only coverage\n`,
      );
    }
    io.stdout(`${JSON.stringify(signed, null, 2)}\n`);
    return 0;
  });
}

/**
 * `airlock card verify <card.json|url> --keys <jwks>`: exit 0 and one line on stdout when a
 * signature verifies with the operator's keys; otherwise the reason on stderr.
 *
 * @example
 * ```ts
 * process.exitCode = await cardVerifyCommand('signed.json', { keys: 'keys/jwks.json' });
 * ```
 */
export async function cardVerifyCommand(
  target: string,
  options: CardVerifyOptions,
  io: CommandIO = PROCESS_IO,
): Promise<number> {
  return run(io, async () => {
    const coverage = coverageFrom(options.coverage);
    const keySet = await loadKeySets(options.keys);
    const bytes = isUrl(target) ? await fetchForCheck(target, io) : await readCardFile(target);
    const verdict = await verifyCardSignatures(bytes, keySet, { requireSigned: true, coverage });
    if (verdict.status === 'verified')
      io.stdout(`verified  ${verdict.alg} signature by kid ${verdict.kid}${omitNote(verdict)}\n`);
    return 0;
  });
}

/**
 * `airlock card digest <card.json>`: the trust digest (`card_sha256`, pins) and the SHA-256 of
 * the signing payload; with `payload`, the canonical payload itself.
 *
 * @example
 * ```ts
 * process.exitCode = await cardDigestCommand('card.json', {});
 * ```
 */
export async function cardDigestCommand(
  file: string,
  options: CardDigestOptions = {},
  io: CommandIO = PROCESS_IO,
): Promise<number> {
  return run(io, async () => {
    const card = parseCard(await readCardFile(file), file);
    const payload = cardSigningPayload(card);
    if (options.payload === true) {
      io.stdout(`${payload}\n`);
      return 0;
    }
    const signatures = Array.isArray(card.signatures) ? card.signatures.length : 0;
    io.stdout(
      [
        `trust       ${trustDigestOf(card)}  (what card_sha256 and pins compare)`,
        `payload     ${createHash('sha256').update(payload, 'utf8').digest('hex')}  (SHA-256 of what a signature covers)`,
        `signatures  ${signatures}${signatures > 0 ? ' (not checked here: airlock card verify --keys …)' : ''}`,
        '',
      ].join('\n'),
    );
    return 0;
  });
}

/**
 * `airlock card fetch <url|registry-name>`: the card's exact bytes on stdout, a summary on
 * stderr (trust digest, endpoint, signature status), and with `keys`, or for a registry entry
 * with `card_keys`, its signature verified (exit 1 if it does not verify).
 *
 * @example
 * ```ts
 * process.exitCode = await cardFetchCommand('travel', { registry: 'registry.yaml' });
 * ```
 */
export async function cardFetchCommand(
  target: string,
  options: CardFetchOptions = {},
  io: CommandIO = PROCESS_IO,
): Promise<number> {
  return run(io, async () => {
    const coverage = options.coverage === undefined ? undefined : coverageFrom(options.coverage);
    const version = options.version ?? '1.0';
    if (version !== '1.0' && version !== '0.3') throw new InputError('--a2a-version must be 1.0 or 0.3');
    const givenKeys = options.keys === undefined ? undefined : await loadKeySets(options.keys);
    const source = cardSource(target, options.registry, io);
    // A registry entry is fetched through the outbound client's transport (hop header set by
    // it); a URL the operator typed, through the plain guarded transport.
    const settings = parseEnvSettings(io.env);
    const transport = source.hop ? createOutboundTransport(settings) : createGuardedClient(settings);
    try {
      const bytes = await fetchCardBytes(transport, source, version);
      const where = showUrl(source.url);
      const text = strictText(bytes, where);
      io.stdout(text.endsWith('\n') ? text : `${text}\n`);
      const card = parseCard(bytes, where);
      const lines = [`fetched     ${where} (${bytes.length} bytes)`];
      lines.push(`trust       ${trustDigestOf(card)}`);
      try {
        const endpoint = chooseInterface(decodeAnyCard(card), {
          cardUrl: source.url,
          ...(source.rpcUrl !== undefined && { rpcUrl: source.rpcUrl }),
        });
        lines.push(
          `endpoint    ${endpoint.url} (${endpoint.binding === 'JSONRPC' ? 'JSON-RPC' : endpoint.binding} ${endpoint.version})`,
        );
      } catch (error) {
        lines.push(`endpoint    refused: ${errorLine(error)}`);
      }
      const signatures = Array.isArray(card.signatures) ? card.signatures.length : 0;
      // --keys wins; else a registry entry's own card_keys, with its own requirement and coverage.
      const check =
        givenKeys !== undefined
          ? { keySet: givenKeys, requireSigned: true, coverage: coverage ?? 'trust-fields' }
          : source.entry?.cardKeys === undefined
            ? undefined
            : {
                keySet: await registryKeySet(transport, source.entry, source.entry.cardKeys),
                requireSigned: source.entry.requireSignedCard,
                coverage: coverage ?? source.entry.cardKeys.coverage,
              };
      const unchecked = signatures > 0 ? ' (not checked: give --keys, or card_keys in the registry)' : '';
      lines.push(`signatures  ${signatures}${check === undefined ? unchecked : ''}`);
      io.stderr(`${lines.map((line) => `airlock: ${line}`).join('\n')}\n`);
      if (check === undefined) return 0;
      const verdict = await verifyCardSignatures(bytes, check.keySet, check);
      io.stderr(
        verdict.status === 'verified'
          ? `airlock: verified    ${verdict.alg} signature by kid ${verdict.kid}${omitNote(verdict)}\n`
          : 'airlock: unsigned    accepted: the registry entry does not require a signature\n',
      );
      return 0;
    } finally {
      await transport.close();
    }
  });
}

// ---------------------------------------------------------------------------------------------

/** Runs a command body, turning errors into one stderr line and an exit code. */
async function run(io: CommandIO, body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (error) {
    io.stderr(`airlock: ${errorLine(error)}\n`);
    if (error instanceof InputError || error instanceof SigningKeyError || error instanceof RegistryError) return 2;
    return 1;
  }
}

function list(value: OneOrMore | undefined): string[] {
  if (value === undefined) return [];
  return typeof value === 'string' ? [value] : [...value];
}

/** What an accepted signature leaves out (an `@a2a-js/sdk` ≤ 1.3 instance signature), or nothing. */
function omitNote(verdict: { omits?: readonly string[] }): string {
  if (verdict.omits === undefined || verdict.omits.length === 0) return '';
  return ` (it does not cover ${verdict.omits.join(', ')}: ${SDK_INSTANCE_DEFECT}; accepted under interfaces-only coverage)`;
}

function coverageFrom(value: string | undefined): SignatureCoverage {
  if (value === undefined || value === 'trust-fields') return 'trust-fields';
  if (value === 'interfaces') return 'interfaces';
  throw new InputError('--coverage must be trust-fields or interfaces');
}

async function loadKeySets(paths: OneOrMore): Promise<OperatorKeySet> {
  const files = list(paths);
  if (files.length === 0) throw new InputError('give at least one --keys file');
  return combineKeySets(await Promise.all(files.map((path) => readKeySetFile(path))));
}

function isUrl(target: string): boolean {
  return /^https?:\/\//i.test(target);
}

async function readCardFile(path: string): Promise<Buffer> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    throw new InputError(`cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})`, { cause: error });
  }
  if (bytes.length > DEFAULT_MAX_CARD_BYTES) {
    throw new CardSignatureError('card_malformed', `${path} is larger than ${DEFAULT_MAX_CARD_BYTES} bytes`);
  }
  return bytes;
}

function strictText(bytes: Uint8Array, where: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (error) {
    throw new CardSignatureError('card_malformed', `${where} is not UTF-8`, { cause: error });
  }
}

function parseCard(bytes: Uint8Array, where: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(strictText(bytes, where));
  } catch (error) {
    if (error instanceof CardSignatureError) throw error;
    throw new CardSignatureError('card_malformed', `${where} is not JSON`, { cause: error });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new CardSignatureError('card_malformed', `${where} is not a JSON object`);
  }
  // Depth-capped before anything recurses into it.
  cardSigningPayload(value);
  return value as Record<string, unknown>;
}

function trustDigestOf(card: Record<string, unknown>): string {
  try {
    return cardTrustDigest(decodeAnyCard(card));
  } catch (error) {
    throw new CardSignatureError('card_malformed', 'the document is not an agent card Airlock can read', {
      cause: error,
    });
  }
}

/** A fetch that fails before a card could be checked is an input problem (exit 2). */
async function fetchForCheck(url: string, io: CommandIO): Promise<Buffer> {
  const transport = createGuardedClient(parseEnvSettings(io.env));
  try {
    return await fetchCardBytes(transport, cardSource(url, undefined, io), '1.0');
  } catch (error) {
    throw new InputError(errorLine(error), { cause: error });
  } finally {
    await transport.close();
  }
}

/** Where a card is fetched from and how: a URL the operator typed, or a registry entry. */
interface CardSource {
  url: string;
  rpcUrl?: string;
  timeouts: RequestTimeouts;
  privateNetwork: boolean;
  /** Send the hop header: a registry entry is fetched exactly as the outbound client fetches it. */
  hop: boolean;
  entry?: RegistryEntry;
}

function cardSource(target: string, registry: string | undefined, io: CommandIO): CardSource {
  if (isUrl(target)) {
    // A URL typed by the operator may reach what AIRLOCK_PRIVATE_ALLOW allows. The operator is
    // no relay, so no hop header: an Airlock gateway (which refuses it) can be checked too.
    return { url: target, timeouts: URL_TIMEOUTS, privateNetwork: true, hop: false };
  }
  const entry = loadRegistry(registry, io.env).get(target);
  const trust = cardTrustEntry(entry);
  return {
    url: trust.cardUrl,
    ...(trust.rpcUrl !== undefined && { rpcUrl: trust.rpcUrl }),
    timeouts: trust.timeouts,
    privateNetwork: trust.privateNetwork === true,
    hop: true,
    entry,
  };
}

/**
 * A card's bytes through the guarded transport, with the request card trust makes. Transport
 * settings come from the environment (AIRLOCK_PRIVATE_ALLOW, AIRLOCK_CA_FILE,
 * AIRLOCK_EGRESS_PROXY).
 */
async function fetchCardBytes(transport: GuardedClient, source: CardSource, version: string): Promise<Buffer> {
  const response = await transport.request({
    method: 'GET',
    url: source.url,
    headers: {
      'A2A-Version': version,
      accept: 'application/json',
    },
    maxResponseBytes: DEFAULT_MAX_CARD_BYTES,
    timeouts: source.timeouts,
    privateNetwork: source.privateNetwork,
  });
  if (response.status !== 200) {
    throw new Error(`the card fetch from ${showUrl(source.url)} answered HTTP ${response.status}`);
  }
  return response.body;
}

/** A registry entry's keys: its files and inline keys, plus its `jwks_url` fetched now (as card trust would). */
async function registryKeySet(
  transport: GuardedClient,
  entry: RegistryEntry,
  keys: NonNullable<RegistryEntry['cardKeys']>,
): Promise<OperatorKeySet> {
  const sets: OperatorKeySet[] = keys.keySet === undefined ? [] : [keys.keySet];
  if (keys.jwksUrl !== undefined) {
    sets.push(
      // `transport` is the outbound client's here (an entry's keys): the hop header is set by it.
      await fetchKeySet(transport, {
        url: keys.jwksUrl,
        timeouts: entry.timeouts,
        privateNetwork: entry.privateNetwork,
      }),
    );
  }
  return combineKeySets(sets);
}
