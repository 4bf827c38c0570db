/**
 * A registry entry: its validated, frozen form (`RegistryEntry`) and how it is built from the
 * file's raw entry, every cross-field rule checked.
 *
 * @example
 * ```ts
 * const entry = buildEntry(rawEntry, label, env, network, baseDir);
 * entry.timeouts.totalMs; // 120000
 * ```
 */
import { buildOAuth, type OAuthSettings } from '../auth/config.js';
import { buildCardKeys, type EntryCardKeys } from './card-keys.js';
import { collectProblems, RegistryError } from './error.js';
import { checkHosts, checkUrl, type NetworkSettings } from './network.js';
import type { RawEntry } from './schema.js';
import { resolveSecret, type BearerSecret } from './secrets.js';

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
  /** OAuth 2.0 (`auth.oauth2_client_credentials` or `auth.token_exchange`): tokens from a token endpoint. */
  readonly oauth?: OAuthSettings;
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
 * One validated entry from its raw form: URLs and literal addresses checked, timeouts
 * consistent, the secret read, card keys read; durations in milliseconds; frozen. Every
 * problem of the entry is reported at once. `network` is undefined when the environment's own
 * network settings are invalid (reported apart): literal addresses are then not judged.
 *
 * @example
 * ```ts
 * const entry = buildEntry(raw.agents[0]!, 'agents[0] "travel"', process.env, network, baseDir);
 * ```
 * @throws RegistryError naming the entry and key of each problem
 */
export function buildEntry(
  raw: RawEntry,
  label: string,
  env: NodeJS.ProcessEnv,
  network: NetworkSettings | undefined,
  baseDir: string,
): RegistryEntry {
  const problems: RegistryError[] = [];
  // Each check's RegistryError is kept for the report and the next check runs.
  const check = collectProblems(problems);
  const cardUrl = check(() => checkUrl(raw.card_url, label, 'card_url'));
  const rpcUrl = raw.rpc_url === undefined ? undefined : check(() => checkUrl(raw.rpc_url!, label, 'rpc_url'));
  if (network !== undefined) check(() => checkHosts([cardUrl, rpcUrl], raw.private_network, label, network));
  const { connect, read, total } = raw.timeouts;
  if (connect > total) problems.push(new RegistryError(label, 'timeouts.connect', 'is longer than timeouts.total'));
  if (read > total) problems.push(new RegistryError(label, 'timeouts.read', 'is longer than timeouts.total'));
  if (raw.poll_interval_s > raw.max_wait_s) {
    problems.push(new RegistryError(label, 'poll_interval_s', 'is longer than max_wait_s'));
  }
  // Keys on a URL are held to the card's origin: without a valid card_url there is nothing to hold them to.
  const cardKeys =
    raw.card_keys === undefined || cardUrl === undefined
      ? undefined
      : check(() => buildCardKeys(raw.card_keys!, cardUrl, label, baseDir));
  if (raw.require_signed_card === true && raw.card_keys === undefined) {
    problems.push(
      new RegistryError(label, 'require_signed_card', 'needs card_keys: the keys a signature must verify with'),
    );
  }
  const oauth =
    raw.auth === undefined ? undefined : check(() => buildOAuth(raw.auth!, label, env, network, raw.private_network));
  const bearerEnv = raw.auth?.bearer_env;
  const auth = bearerEnv === undefined ? undefined : check(() => resolveSecret(bearerEnv, label, env));
  if (problems.length > 0 || cardUrl === undefined) throw RegistryError.all(problems);
  const entry: RegistryEntry = {
    name: raw.name,
    cardUrl: cardUrl.href,
    ...(rpcUrl !== undefined && { rpcUrl: rpcUrl.href }),
    description: raw.description,
    skills: Object.freeze([...raw.skills]),
    effect: raw.effect,
    ...(auth !== undefined && { auth }),
    ...(oauth !== undefined && { oauth }),
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

function ms(seconds: number): number {
  return Math.round(seconds * 1000);
}
