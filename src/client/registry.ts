/**
 * The outbound registry: the only place a remote agent's address can come from. A caller (a
 * person, a model, a tool) names an entry; it never supplies a URL. The file is deployment
 * config (`--registry FILE` or `AIRLOCK_REGISTRY`), checked completely at startup so that a
 * missing secret or a bad network setting stops the process before any call, with the
 * offending entry and key named in one line.
 *
 * @example
 * ```ts
 * const registry = loadRegistryFile(registryPath(options.registry, process.env)!, process.env);
 * const entry = registry.get('travel'); // throws RegistryError listing the known names
 * ```
 *
 * ```yaml
 * agents:
 *   - name: travel
 *     card_url: https://travel.example.com/.well-known/agent-card.json
 *     description: Books trains and hotels.
 *     effect: acting
 *     auth: { bearer_env: AIRLOCK_SECRET_TRAVEL }
 *     card_keys: { jwks_file: travel-jwks.json }   # its card must be signed with one of these
 * ```
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { inspect } from 'node:util';
import ipaddr from 'ipaddr.js';
import { MIN_SECRET_LENGTH } from '../content/redact.js';
import { classifyAddress, isAllowed, isLoopbackHost } from '../net/address.js';
import { parseEgressProxy, parseEnvSettings, type EgressProxy as ParsedProxy } from '../net/settings.js';
import type { CardSignatureKeys } from '../trust/card.js';
import {
  SigningKeyError,
  combineKeySets,
  importKeySet,
  parseKeyDocument,
  type OperatorKeySet,
  type SignatureCoverage,
} from '../trust/signing/index.js';
import Type, { type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import Value from 'typebox/value';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { AirlockError } from '../errors/index.js';

/**
 * What a registry name must look like: the same shape as an inbound agent slug.
 *
 * @example
 * ```ts
 * REGISTRY_NAME_PATTERN.test('travel-desk'); // true
 * ```
 */
export const REGISTRY_NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/**
 * Prefix every `bearer_env` must carry: secrets meant for remotes live in their own namespace,
 * so an entry cannot be pointed at an unrelated variable (a cloud key, say) and ship it out.
 *
 * @example
 * ```ts
 * 'AIRLOCK_SECRET_TRAVEL'.startsWith(SECRET_ENV_PREFIX); // true
 * ```
 */
export const SECRET_ENV_PREFIX = 'AIRLOCK_SECRET_';

/** Files larger than this are refused: a registry is a short list. */
const MAX_REGISTRY_BYTES = 1024 * 1024;
/** A JWK Set file of a dozen RSA keys is under 10 KiB. */
const MAX_JWKS_FILE_BYTES = 1024 * 1024;
const MAX_URL_LENGTH = 2048;

/**
 * A registry problem, in one line: `registry: agents[1] "travel": auth.bearer_env: …`. The
 * message names keys and environment variables, never a secret's value.
 *
 * @example
 * ```ts
 * try { parseRegistry(text, env); } catch (e) { if (e instanceof RegistryError) console.error(e.message); }
 * ```
 */
export class RegistryError extends AirlockError {
  readonly code = 'REGISTRY_INVALID';
  /** The entry's name (or `agents[i]` before a name is known); empty for file-level problems. */
  readonly entry: string;
  /** Dotted key inside the entry (or the environment variable), e.g. `auth.bearer_env`. */
  readonly key: string;

  constructor(entry: string, key: string, problem: string) {
    const where = [entry, key].filter((part) => part.length > 0).join(': ');
    super(oneLine(`registry: ${where.length > 0 ? `${where}: ` : ''}${problem}`));
    this.entry = entry;
    this.key = key;
  }
}

/**
 * A bearer token for one entry, read from the environment at startup. The value sits in a
 * private field so that logging, `JSON.stringify` or `util.inspect` of an entry never prints
 * it; only {@link BearerSecret.header} (for the request) and
 * {@link BearerSecret.valueForRedaction} (to scrub an echo from a reply) read it.
 *
 * @example
 * ```ts
 * headers.authorization = entry.auth.header(); // 'Bearer …'
 * String(entry.auth);                         // '[secret from AIRLOCK_SECRET_TRAVEL]'
 * ```
 */
export class BearerSecret {
  /** The environment variable it came from (safe to show). */
  readonly env: string;
  readonly #value: string;

  constructor(env: string, value: string) {
    this.env = env;
    this.#value = value;
  }

  /** The `Authorization` header value. */
  header(): string {
    return `Bearer ${this.#value}`;
  }

  /** The raw value, for redacting an echo of it; never for output. */
  valueForRedaction(): string {
    return this.#value;
  }

  toString(): string {
    return `[secret from ${this.env}]`;
  }

  toJSON(): { bearer_env: string } {
    return { bearer_env: this.env };
  }

  [inspect.custom](): string {
    return this.toString();
  }
}

/**
 * The operator's egress proxy (`AIRLOCK_EGRESS_PROXY`, `http://host:port`), as the guarded
 * transport parses it (`src/net`). Proxy credentials, when the URL carries them, stay in a
 * private field; `url` and every printed form omit them.
 *
 * @example
 * ```ts
 * registry.network.egressProxy?.url; // 'http://proxy.internal:3128'
 * ```
 */
export class RegistryEgressProxy {
  /** `http://host:port`, without credentials. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly #authorization: string | undefined;

  constructor(parsed: ParsedProxy) {
    this.host = parsed.host;
    this.port = parsed.port;
    this.url = parsed.display.replace('//***@', '//');
    this.#authorization = parsed.authorization;
  }

  /** The `Proxy-Authorization` value for CONNECT, when the URL named credentials. */
  proxyAuthorization(): string | undefined {
    return this.#authorization;
  }

  toString(): string {
    return this.url;
  }

  toJSON(): string {
    return this.url;
  }

  [inspect.custom](): string {
    return `RegistryEgressProxy(${this.url})`;
  }
}

/**
 * Network settings shared by every entry, from the environment, read by `src/net`'s
 * `parseEnvSettings` (the same reading the guarded transport gets).
 *
 * @example
 * ```ts
 * registry.network.privateAllow; // ['10.20.0.0/16', 'w.corp']
 * ```
 */
export interface NetworkSettings {
  /** `AIRLOCK_PRIVATE_ALLOW`: hosts, IPs and CIDRs a `private_network` entry may reach (as written). */
  readonly privateAllow: readonly string[];
  /** `AIRLOCK_EGRESS_PROXY`, parsed. */
  readonly egressProxy?: RegistryEgressProxy;
}

/**
 * Per-request timeouts, in milliseconds (the file says seconds).
 *
 * @example
 * ```ts
 * const timeouts: EntryTimeouts = { connectMs: 5000, readMs: 60_000, totalMs: 120_000 };
 * ```
 */
export interface EntryTimeouts {
  readonly connectMs: number;
  readonly readMs: number;
  readonly totalMs: number;
}

/**
 * One validated entry, defaults applied. Durations are in milliseconds, except `cardRefreshS`
 * (the trust layer's own unit). Structurally, it is also what src/trust's resolver takes.
 *
 * @example
 * ```ts
 * const { cardUrl, effect, maxReplyChars } = registry.get('travel');
 * ```
 */
export interface RegistryEntry {
  readonly name: string;
  /** Normalised (`URL.href`). https, or http to a loopback host. */
  readonly cardUrl: string;
  /**
   * A second origin the card's JSON-RPC interface may be on (besides the card URL's). The
   * endpoint called is always the card's interface; only its origin is checked against this.
   */
  readonly rpcUrl?: string;
  /** The operator's description; remote card text never replaces it. */
  readonly description: string;
  /** The skill ids this entry may be used for (informational; empty means any). */
  readonly skills: readonly string[];
  readonly effect: 'read_only' | 'acting';
  readonly auth?: BearerSecret;
  readonly privateNetwork: boolean;
  /** Lower-case hex SHA-256 of the card's trust fields, when pinned by the operator. */
  readonly cardSha256?: string;
  /** Seconds a trusted card is used before it is fetched and checked again (as src/trust reads it). */
  readonly cardRefreshS: number;
  readonly timeouts: EntryTimeouts;
  readonly maxResponseBytes: number;
  readonly maxReplyChars: number;
  readonly pollIntervalMs: number;
  readonly maxWaitMs: number;
  /** The operator's keys for the card's signatures (`card_keys`), read and checked at load. */
  readonly cardKeys?: EntryCardKeys;
  /**
   * Refuse the card unless a signature verifies with `cardKeys` (`require_signed_card`; true
   * by default when `card_keys` is set, and only possible then).
   */
  readonly requireSignedCard: boolean;
}

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

// ---------------------------------------------------------------------------------------------
// Schema (the file's shape; snake_case as operators write it)

const Seconds = (options: { default: number; maximum: number }) =>
  Type.Number({ exclusiveMinimum: 0, maximum: options.maximum, default: options.default });

const EntrySchema = Type.Object(
  {
    name: Type.String({ pattern: REGISTRY_NAME_PATTERN.source }),
    card_url: Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH }),
    rpc_url: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH })),
    description: Type.String({ minLength: 1, maxLength: 2000 }),
    skills: Type.Array(Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$' }), {
      maxItems: 100,
      default: [],
    }),
    effect: Type.Union([Type.Literal('read_only'), Type.Literal('acting')]),
    auth: Type.Optional(
      Type.Object({ bearer_env: Type.String({ minLength: 1, maxLength: 128 }) }, { additionalProperties: false }),
    ),
    private_network: Type.Boolean({ default: false }),
    card_sha256: Type.Optional(Type.String({ pattern: '^[0-9a-fA-F]{64}$' })),
    card_refresh_s: Type.Integer({ minimum: 1, maximum: 86_400, default: 300 }),
    timeouts: Type.Object(
      {
        connect: Seconds({ default: 5, maximum: 600 }),
        read: Seconds({ default: 60, maximum: 3600 }),
        total: Seconds({ default: 120, maximum: 3600 }),
      },
      { additionalProperties: false, default: {} },
    ),
    max_response_bytes: Type.Integer({ minimum: 1024, maximum: 64 * 1024 * 1024, default: 1024 * 1024 }),
    max_reply_chars: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 20_000 }),
    poll_interval_s: Type.Number({ minimum: 0.05, maximum: 300, default: 2 }),
    max_wait_s: Type.Number({ exclusiveMinimum: 0, maximum: 86_400, default: 120 }),
    card_keys: Type.Optional(
      Type.Object(
        {
          /** A JWK Set file of public keys, relative to the registry file's directory. */
          jwks_file: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
          /** Public JWKs written in the registry. */
          keys: Type.Optional(Type.Array(Type.Record(Type.String(), Type.Unknown()), { minItems: 1, maxItems: 16 })),
          /** A JWK Set URL on the card's own origin. */
          jwks_url: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH })),
          coverage: Type.Union([Type.Literal('trust-fields'), Type.Literal('interfaces')], { default: 'trust-fields' }),
        },
        { additionalProperties: false },
      ),
    ),
    require_signed_card: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

const RegistrySchema = Type.Object(
  { agents: Type.Array(EntrySchema, { maxItems: 1000 }) },
  { additionalProperties: false },
);

type RawRegistry = Static<typeof RegistrySchema>;
type RawEntry = RawRegistry['agents'][number];

const validator = Compile(RegistrySchema);

// ---------------------------------------------------------------------------------------------
// The registry

/**
 * The validated registry. Entries are frozen; lookups by name only.
 *
 * @example
 * ```ts
 * for (const entry of registry.entries()) console.log(entry.name, entry.effect);
 * ```
 */
export class Registry {
  readonly network: NetworkSettings;
  readonly #entries: ReadonlyMap<string, RegistryEntry>;

  constructor(entries: readonly RegistryEntry[], network: NetworkSettings) {
    this.#entries = new Map(entries.map((entry) => [entry.name, entry]));
    this.network = network;
  }

  /** Registry names in file order. */
  names(): string[] {
    return [...this.#entries.keys()];
  }

  entries(): RegistryEntry[] {
    return [...this.#entries.values()];
  }

  /** The entry, or undefined: for callers that answer an unknown name themselves. */
  find(name: string): RegistryEntry | undefined {
    return typeof name === 'string' ? this.#entries.get(name) : undefined;
  }

  /**
   * The entry, or a `RegistryError` listing the known names. The asked-for name is echoed only
   * when it has the shape of a registry name, so a caller cannot inject text into the message.
   */
  get(name: string): RegistryEntry {
    const entry = this.find(name);
    if (entry !== undefined) return entry;
    const shown = typeof name === 'string' && REGISTRY_NAME_PATTERN.test(name) ? `"${name}"` : 'that name';
    const known = this.names();
    throw new RegistryError(
      '',
      '',
      `no agent ${shown} in the registry; known: ${known.length > 0 ? known.join(', ') : '(none)'}`,
    );
  }

  toJSON(): { agents: RegistryEntry[] } {
    return { agents: this.entries() };
  }
}

/**
 * Which registry file to load: the `--registry` option wins over `AIRLOCK_REGISTRY`.
 *
 * @example
 * ```ts
 * registryPath(undefined, { AIRLOCK_REGISTRY: 'registry.yaml' }); // 'registry.yaml'
 * ```
 */
export function registryPath(option: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (option !== undefined && option.length > 0) return option;
  const fromEnv = env.AIRLOCK_REGISTRY;
  return fromEnv !== undefined && fromEnv.length > 0 ? fromEnv : undefined;
}

/**
 * Reads and validates a registry file.
 *
 * @example
 * ```ts
 * const registry = loadRegistryFile('examples/registry.yaml', process.env);
 * ```
 * @throws RegistryError
 */
export function loadRegistryFile(path: string, env: NodeJS.ProcessEnv = process.env): Registry {
  // Files the registry names (card_keys.jwks_file) are relative to the registry's directory.
  const baseDir = dirname(resolve(path));
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : 'cannot be read';
    throw new RegistryError('', '', `${path}: ${reason}`);
  }
  if (text.length > MAX_REGISTRY_BYTES) throw new RegistryError('', '', `${path}: larger than 1 MiB`);
  return parseRegistry(text, env, path, baseDir);
}

/**
 * Parses and validates registry YAML against the environment: schema and defaults, unique
 * names, URLs (https, or http to loopback; no credentials), secrets present, the private
 * network and egress proxy settings, and card signature keys (read from `baseDir`, default the
 * working directory).
 *
 * @example
 * ```ts
 * const registry = parseRegistry('agents: []\n', process.env);
 * registry.names(); // []
 * ```
 * @throws RegistryError
 */
export function parseRegistry(
  text: string,
  env: NodeJS.ProcessEnv = process.env,
  source = 'inline',
  baseDir = process.cwd(),
): Registry {
  let document: unknown;
  try {
    // Duplicate keys are an error; a small alias budget stops alias bombs (as config/ does).
    document = parseYaml(text, { uniqueKeys: true, maxAliasCount: 100, prettyErrors: false });
  } catch (error) {
    if (error instanceof YAMLParseError) {
      throw new RegistryError('', '', `${source}: ${error.message.split('\n')[0] ?? 'not valid YAML'}`);
    }
    throw error;
  }
  if (document === null || typeof document !== 'object' || Array.isArray(document)) {
    throw new RegistryError('', '', `${source}: expected a mapping with an "agents" list at the top level`);
  }
  const withDefaults = Value.Default(RegistrySchema, document);
  if (!validator.Check(withDefaults)) throw firstSchemaError(withDefaults);
  const raw: RawRegistry = withDefaults;
  const network = readNetwork(env);
  const seen = new Set<string>();
  const entries = raw.agents.map((rawEntry, index) => {
    const label = `agents[${index}] "${rawEntry.name}"`;
    if (seen.has(rawEntry.name)) throw new RegistryError(label, 'name', 'is used by an earlier entry');
    seen.add(rawEntry.name);
    return buildEntry(rawEntry, label, env, network, baseDir);
  });
  return new Registry(entries, network);
}

function buildEntry(
  raw: RawEntry,
  label: string,
  env: NodeJS.ProcessEnv,
  network: NetworkSettings,
  baseDir: string,
): RegistryEntry {
  const cardUrl = checkUrl(raw.card_url, label, 'card_url');
  const rpcUrl = raw.rpc_url === undefined ? undefined : checkUrl(raw.rpc_url, label, 'rpc_url');
  checkHosts([cardUrl, rpcUrl], raw.private_network, label, network);
  const { connect, read, total } = raw.timeouts;
  if (connect > total) throw new RegistryError(label, 'timeouts.connect', 'is longer than timeouts.total');
  if (read > total) throw new RegistryError(label, 'timeouts.read', 'is longer than timeouts.total');
  if (raw.poll_interval_s > raw.max_wait_s) {
    throw new RegistryError(label, 'poll_interval_s', 'is longer than max_wait_s');
  }
  const cardKeys = raw.card_keys === undefined ? undefined : buildCardKeys(raw.card_keys, cardUrl, label, baseDir);
  if (raw.require_signed_card === true && cardKeys === undefined) {
    throw new RegistryError(label, 'require_signed_card', 'needs card_keys: the keys a signature must verify with');
  }
  const entry: RegistryEntry = {
    name: raw.name,
    cardUrl: cardUrl.href,
    ...(rpcUrl !== undefined && { rpcUrl: rpcUrl.href }),
    description: raw.description,
    skills: Object.freeze([...raw.skills]),
    effect: raw.effect,
    ...(raw.auth !== undefined && { auth: resolveSecret(raw.auth.bearer_env, label, env) }),
    privateNetwork: raw.private_network,
    ...(raw.card_sha256 !== undefined && { cardSha256: raw.card_sha256.toLowerCase() }),
    cardRefreshS: raw.card_refresh_s,
    timeouts: Object.freeze({ connectMs: ms(connect), readMs: ms(read), totalMs: ms(total) }),
    maxResponseBytes: raw.max_response_bytes,
    maxReplyChars: raw.max_reply_chars,
    pollIntervalMs: ms(raw.poll_interval_s),
    maxWaitMs: ms(raw.max_wait_s),
    ...(cardKeys !== undefined && { cardKeys }),
    // Naming keys means wanting signed cards; `require_signed_card: false` only tolerates unsigned ones.
    requireSignedCard: raw.require_signed_card ?? cardKeys !== undefined,
  };
  return Object.freeze(entry);
}

/**
 * `card_keys`: the file and inline keys read and checked now (public keys only, no `oct`, no
 * kid twice), the URL checked like `card_url` and held to the card's origin.
 */
function buildCardKeys(
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

function ms(seconds: number): number {
  return Math.round(seconds * 1000);
}

/** Token characters we are willing to put in a header: printable ASCII, no spaces (RFC 6750 b64token and more). */
const TOKEN_PATTERN = /^[\x21-\x7e]{1,8192}$/;
const SECRET_ENV_PATTERN = /^AIRLOCK_SECRET_[A-Z0-9_]{1,100}$/;

function resolveSecret(name: string, label: string, env: NodeJS.ProcessEnv): BearerSecret {
  if (!SECRET_ENV_PATTERN.test(name)) {
    throw new RegistryError(
      label,
      'auth.bearer_env',
      `must name an environment variable starting with ${SECRET_ENV_PREFIX} (upper case, digits, _)`,
    );
  }
  const value = env[name];
  if (value === undefined || value.length === 0) {
    throw new RegistryError(label, 'auth.bearer_env', `environment variable ${name} is not set`);
  }
  // The value is never echoed: only what is wrong with it.
  if (!TOKEN_PATTERN.test(value)) {
    throw new RegistryError(
      label,
      'auth.bearer_env',
      `environment variable ${name} must hold printable ASCII without spaces or line breaks`,
    );
  }
  // Replies are scrubbed of the token; the scrubber skips values this short (too many false hits).
  if (value.length < MIN_SECRET_LENGTH) {
    throw new RegistryError(
      label,
      'auth.bearer_env',
      `environment variable ${name} must hold at least ${MIN_SECRET_LENGTH} characters, so that an echo of it can be redacted`,
    );
  }
  return new BearerSecret(name, value);
}

// ---------------------------------------------------------------------------------------------
// URLs and addresses

function checkUrl(text: string, label: string, key: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new RegistryError(label, key, 'is not an absolute URL');
  }
  if (/\s/.test(text)) throw new RegistryError(label, key, 'must not contain white space');
  if (url.username !== '' || url.password !== '') {
    // The URL itself is not echoed: it holds the credentials.
    throw new RegistryError(label, key, 'must not carry credentials (user:password@); use auth.bearer_env');
  }
  if (url.hash !== '') throw new RegistryError(label, key, 'must not have a #fragment');
  if (url.protocol === 'https:') return url;
  if (url.protocol === 'http:') {
    if (isLoopbackHost(url.hostname)) return url;
    throw new RegistryError(label, key, 'must be https (plain http is allowed only to a loopback host)');
  }
  throw new RegistryError(label, key, 'must be an https URL');
}

/** `[::1]` → `::1`: URL keeps the brackets on IPv6 hostnames. */
function bareHost(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

/** The literal address a hostname spells, for messages (an IPv4-mapped address shown as IPv4). */
function literalAddress(hostname: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const host = bareHost(hostname);
  // URL has already normalised IPv4 forms (127.1, 0x7f.1, 2130706433) to dotted quads.
  if (!ipaddr.isValid(host)) return undefined;
  return ipaddr.process(host);
}

/**
 * Startup check of literal addresses, with the transport's own address policy (`src/net`):
 * host names are checked by the transport at connect time, against what they resolve to then;
 * a literal can be judged now, so a mistake is reported before the first call rather than at it.
 */
function checkHosts(
  urls: readonly (URL | undefined)[],
  privateNetwork: boolean,
  label: string,
  network: NetworkSettings,
): void {
  if (privateNetwork && network.privateAllow.length === 0) {
    throw new RegistryError(
      label,
      'private_network',
      'needs AIRLOCK_PRIVATE_ALLOW to list the hosts or CIDRs it may reach',
    );
  }
  urls.forEach((url, index) => {
    if (url === undefined) return;
    const key = index === 0 ? 'card_url' : 'rpc_url';
    const address = literalAddress(url.hostname);
    if (address === undefined) return;
    const shown = address.toString();
    const kind = classifyAddress(bareHost(url.hostname));
    switch (kind) {
      case 'loopback':
        return;
      case 'public':
        if (privateNetwork && network.egressProxy !== undefined) {
          throw new RegistryError(
            label,
            key,
            `host ${shown} is a public address; a private_network entry reaches only private addresses while AIRLOCK_EGRESS_PROXY is set`,
          );
        }
        return;
      case 'private':
        if (!privateNetwork) {
          throw new RegistryError(
            label,
            key,
            `host ${shown} is a private address; set private_network: true and list it in AIRLOCK_PRIVATE_ALLOW`,
          );
        }
        if (!isAllowed(url.hostname, bareHost(url.hostname), network.privateAllow)) {
          throw new RegistryError(label, key, `host ${shown} is not in AIRLOCK_PRIVATE_ALLOW`);
        }
        return;
      default:
        // metadata, link-local, reserved: never reachable, whatever the entry says.
        throw new RegistryError(label, key, `host ${shown} is in a blocked range (${kind})`);
    }
  });
}

const NETWORK_VARIABLES = ['AIRLOCK_PRIVATE_ALLOW', 'AIRLOCK_EGRESS_PROXY'] as const;

/**
 * AIRLOCK_PRIVATE_ALLOW and AIRLOCK_EGRESS_PROXY, read by the transport's own parser
 * (`parseEnvSettings`), so the registry and the transport can never disagree about them.
 * AIRLOCK_CA_FILE is left to the transport: checking the registry reads no other file.
 */
function readNetwork(env: NodeJS.ProcessEnv): NetworkSettings {
  const subset: NodeJS.ProcessEnv = {};
  for (const name of NETWORK_VARIABLES) if (env[name] !== undefined) subset[name] = env[name];
  let privateAllow: readonly string[];
  let egressProxy: RegistryEgressProxy | undefined;
  try {
    const settings = parseEnvSettings(subset);
    privateAllow = Object.freeze([...(settings.privateAllow ?? [])]);
    egressProxy =
      settings.egressProxy === undefined
        ? undefined
        : new RegistryEgressProxy(parseEgressProxy(settings.egressProxy, 'AIRLOCK_EGRESS_PROXY'));
  } catch (error) {
    throw networkError(error, subset);
  }
  return Object.freeze({ privateAllow, ...(egressProxy !== undefined && { egressProxy }) });
}

/** The transport's one-line message as a RegistryError, keyed by the variable it names. */
function networkError(error: unknown, env: NodeJS.ProcessEnv): RegistryError {
  const message = error instanceof Error ? error.message : String(error);
  const match = /^(AIRLOCK_[A-Z_]+): (.*)$/s.exec(message);
  const variable = match?.[1] ?? '';
  let problem = match?.[2] ?? message;
  if (variable === 'AIRLOCK_EGRESS_PROXY') {
    // The value is quoted again with every character up to the last `@` hidden, whatever
    // shape it has: a scheme-less `user:password@host` must not be echoed either.
    const why = /" ([^"]*)$/.exec(problem)?.[1] ?? 'is not a valid egress proxy; expected http://host:port';
    const value = (env.AIRLOCK_EGRESS_PROXY ?? '').trim();
    problem = `"${oneLine(maskCredentials(value)).slice(0, 200)}" ${why}`;
  }
  return new RegistryError('', variable, problem);
}

/**
 * Hides any `user:password@`: everything between the scheme (if any) and the last `@` is
 * masked, since a host never contains `@` and a password may contain `/` or `@`.
 */
function maskCredentials(text: string): string {
  const at = text.lastIndexOf('@');
  if (at === -1) return text;
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(text);
  const start = scheme === null ? 0 : scheme[0].length;
  return `${text.slice(0, start)}***${text.slice(at)}`;
}

// ---------------------------------------------------------------------------------------------
// Errors

function firstSchemaError(value: unknown): RegistryError {
  const errors = [...validator.Errors(value)];
  // The deepest error says the most: a union's mismatch says less than the field inside it.
  errors.sort((a, b) => b.instancePath.length - a.instancePath.length);
  const error = errors[0];
  if (error === undefined) return new RegistryError('', '', 'invalid registry');
  let path = error.instancePath;
  let problem = error.message;
  // `additionalProperties: false` reports the extra key itself as failing a `false` schema.
  if (error.keyword === 'boolean') problem = 'is not a known setting';
  const params = error.params as { additionalProperties?: string[]; requiredProperties?: string[] };
  const extra = params.additionalProperties;
  if (extra !== undefined && extra.length > 0) {
    path = `${path}/${extra[0]}`;
    problem = 'is not a known setting';
  }
  const missing = params.requiredProperties;
  if (error.keyword === 'required' && missing !== undefined && missing.length > 0) {
    path = `${path}/${missing[0]}`;
    problem = 'is required';
  }
  // A union of literals reports "must be equal to constant"; say which values are meant.
  if (/\/effect$/.test(path) && error.keyword !== 'required') problem = 'must be read_only or acting';
  if (/\/card_keys\/coverage$/.test(path)) problem = 'must be trust-fields or interfaces';
  const segments = path
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (segments[0] !== 'agents' || segments[1] === undefined || !/^\d+$/.test(segments[1])) {
    return new RegistryError('', segments.join('.'), problem);
  }
  const index = Number(segments[1]);
  const agents = (value as { agents?: unknown }).agents;
  const rawName = Array.isArray(agents) ? (agents[index] as { name?: unknown } | undefined)?.name : undefined;
  const label =
    typeof rawName === 'string' && REGISTRY_NAME_PATTERN.test(rawName)
      ? `agents[${index}] "${rawName}"`
      : `agents[${index}]`;
  const key = segments
    .slice(2)
    .map((s) => (/^\d+$/.test(s) ? `[${s}]` : `.${s}`))
    .join('')
    .replace(/^\./, '');
  return new RegistryError(label, key, problem);
}

function oneLine(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, ' ');
}
