/**
 * `airlock agents`: every registry entry with the state of its card. All cards are resolved
 * at once, each within 5 s, exactly as a send would resolve them (card trust with the pin
 * file: a first resolution pins the digest, a changed card locks the entry). Shown: the
 * operator's name and effect, ok or the error type, the trust digest's first 12 digits, the
 * pin's source; `--json` adds the card URL, the endpoint Airlock would call, the signature that
 * verified (for entries with `card_keys`) and the reason. A verified card shows as `ok (signed)`.
 * Nothing of the remote card's text is printed, beyond URLs. The table fits the terminal (80
 * columns in a pipe): a row too wide wraps its widest cells, and each reason wraps under its row.
 *
 * Exit codes: 0 every card is usable, 1 otherwise (or the registry cannot be loaded).
 *
 * @example
 * ```sh
 * airlock agents --registry registry.yaml
 * # NAME    EFFECT     STATUS                    DIGEST        PIN
 * # travel  acting     ok                        3a820d13cbd2  tofu
 * # wiki    read_only  error card_pin_mismatch   -             tofu (drift)
 * #   agent card of registry entry "wiki": the card's trust digest changed from …
 * ```
 */
import { OutboundAuth } from '../client/auth/provider.js';
import type { OAuthKind } from '../client/auth/config.js';
import { OutboundAuthError } from '../client/auth/errors.js';
import { delegatesCallerOnly } from '../client/auth/token-exchange.js';
import {
  ERROR_MESSAGES,
  cardTrustEntry,
  errorTypeOf,
  type CallErrorType,
  type OutboundRuntime,
  type RegistryEntry,
} from '../client/index.js';
import { isOutboundError } from '../net/index.js';
import { CardTrustError, type PinSource, type TrustedCard } from '../trust/index.js';
import { PROCESS_IO, errorLine, openOutbound, startProgress, type CommandIO } from './registry.js';
import { AirlockError } from '../errors/index.js';
import { PinnedCardFile, pinnedCardsPathFor } from './registry-snapshots.js';
import { layoutTable, outputWidth, wrapLines } from './table.js';

/** Each card gets this long, fetch and pin check together. */
export const AGENT_CHECK_TIMEOUT_MS = 5000;

/**
 * One line of `airlock agents --json`.
 *
 * @example
 * ```ts
 * const row: AgentStatus = { name: 'travel', effect: 'acting', status: 'ok', digest: '3a82…', ... };
 * ```
 */
export interface AgentStatus {
  name: string;
  effect: RegistryEntry['effect'];
  /** The operator's description from the registry. */
  description: string;
  card_url: string;
  status: 'ok' | 'error';
  error_type: CallErrorType | null;
  /** Airlock's one-line reason (names URLs, never card text). */
  reason: string | null;
  /** The card's trust digest, when it was fetched and accepted. */
  digest: string | null;
  /** The stored pin, if any; `drift` is the digest last seen instead, while the entry is locked. */
  pin: { source: PinSource; digest: string; drift: string | null } | null;
  /** The endpoint a send would call. */
  endpoint: { url: string; version: '1.0' | '0.3' } | null;
  /** The card signature that verified with the entry's `card_keys`; null when none was checked or the card is unsigned. */
  signature: { kid: string; alg: string } | null;
  /**
   * The entry's auth kind and, for an OAuth kind, whether a token could be obtained now
   * (`ok`), was not needed (the card asks for none), failed (see `error_type`), was not tried
   * (the card was refused), or is had per caller (`per_caller`: a `token_exchange` entry without
   * `subject_token_env`, whose subject is the inbound caller's JWT; nothing is exchanged here).
   * The token itself is never printed.
   */
  auth: {
    kind: 'none' | 'bearer_env' | OAuthKind;
    token: 'ok' | 'not_needed' | 'failed' | 'not_checked' | 'per_caller' | null;
  };
}

/**
 * Options of `airlock agents`.
 *
 * @example
 * ```ts
 * const options: AgentsOptions = { json: true, registry: 'registry.yaml' };
 * ```
 */
export interface AgentsOptions {
  json: boolean;
  registry?: string;
}

/**
 * Runs `airlock agents`.
 *
 * @example
 * ```ts
 * process.exitCode = await agentsCommand({ json: false });
 * ```
 */
export async function agentsCommand(options: AgentsOptions, io: CommandIO = PROCESS_IO): Promise<number> {
  let runtime: OutboundRuntime;
  try {
    runtime = openOutbound(options.registry, io, { audit: false });
  } catch (error) {
    io.stderr(`airlock: ${errorLine(error)}\n`);
    return 1;
  }
  const entries = runtime.registry.entries();
  const progress = startProgress(io, `airlock: resolving ${entries.length} card(s)…`);
  let done = 0;
  let rows: AgentStatus[];
  const seen = new Map<string, TrustedCard>();
  try {
    rows = await Promise.all(
      entries.map(async (entry) => {
        const row = await checkEntry(runtime, entry, (trusted) => seen.set(entry.name, trusted));
        done += 1;
        progress.update(`airlock: resolving cards ${done}/${entries.length}`);
        return row;
      }),
    );
  } finally {
    progress.stop();
    await runtime.close();
  }
  await recordPinnedCards(runtime.pinsPath, rows, seen);
  if (options.json) io.stdout(`${JSON.stringify(rows, null, 2)}\n`);
  else io.stdout(table(rows, outputWidth(io.columns)));
  return rows.every((row) => row.status === 'ok') ? 0 : 1;
}

/**
 * One entry's card, resolved as a send would (5 s cap), and its pin. `onTrusted` is handed the
 * card when it was accepted.
 *
 * @example
 * ```ts
 * const row = await checkEntry(runtime, runtime.registry.get('travel'), (trusted) => cards.set('travel', trusted));
 * ```
 */
export async function checkEntry(
  runtime: OutboundRuntime,
  entry: RegistryEntry,
  onTrusted?: (trusted: TrustedCard) => void,
): Promise<AgentStatus> {
  const base = { name: entry.name, effect: entry.effect, description: entry.description, card_url: entry.cardUrl };
  let status: Pick<AgentStatus, 'status' | 'error_type' | 'reason' | 'digest' | 'endpoint' | 'signature'>;
  const kind = entry.oauth?.kind ?? (entry.auth !== undefined ? 'bearer_env' : 'none');
  let auth: AgentStatus['auth'] = { kind, token: entry.oauth === undefined ? null : 'not_checked' };
  try {
    const trusted = await withDeadline(
      runtime.trust.resolve(cardTrustEntry(entry, { capMs: AGENT_CHECK_TIMEOUT_MS })),
      AGENT_CHECK_TIMEOUT_MS,
    );
    onTrusted?.(trusted);
    status = {
      status: 'ok',
      error_type: null,
      reason: null,
      digest: trusted.digest,
      endpoint: { url: trusted.endpoint.url, version: trusted.endpoint.version },
      signature: trusted.signature === undefined ? null : { kid: trusted.signature.kid, alg: trusted.signature.alg },
    };
    if (entry.oauth !== undefined) {
      const token = await tryToken(runtime, entry, trusted);
      auth = {
        kind,
        token: token === 'per_caller' ? token : token === undefined ? 'ok' : token === null ? 'not_needed' : 'failed',
      };
      if (token instanceof OutboundAuthError) {
        status = {
          ...status,
          status: 'error',
          error_type: token.errorType,
          reason: errorLine(token, REASON_MAX_CHARS),
        };
      }
    }
  } catch (error) {
    const errorType = errorTypeOf(error, 'card_invalid');
    status = {
      status: 'error',
      error_type: errorType,
      reason: reasonOf(error, errorType),
      digest: null,
      endpoint: null,
      signature: null,
    };
  }
  let pin: AgentStatus['pin'] = null;
  try {
    const record = await runtime.pins.get(entry.name);
    if (record !== undefined) {
      pin = { source: record.source, digest: record.digest, drift: record.drift?.digest ?? null };
    }
  } catch (error) {
    // An unreadable pin file refuses every card anyway; say why once per row.
    if (status.status === 'ok') {
      status = { ...status, status: 'error', error_type: 'card_invalid', reason: errorLine(error, REASON_MAX_CHARS) };
    }
  }
  return { ...base, ...status, pin, auth };
}

/**
 * Asks for a token as a send would (the card's scheme choice included), within the command's
 * deadline: undefined when one was issued, null when the card needs none, `per_caller` for a
 * delegation-only entry (its card checked, no exchange: there is no caller here), else why not.
 * The token is dropped at once.
 */
async function tryToken(
  runtime: OutboundRuntime,
  entry: RegistryEntry,
  trusted: TrustedCard,
): Promise<OutboundAuthError | 'per_caller' | null | undefined> {
  // A delegation-only entry has no subject here: its card's schemes are checked as for an
  // inbound caller, and no token is asked for.
  const perCaller = delegatesCallerOnly(entry.oauth);
  try {
    const endpointAuth = new OutboundAuth({ transport: runtime.transport }).forEndpoint(
      entry,
      trusted.card,
      trusted.endpoint.url,
      { forInboundCaller: perCaller },
    );
    if (endpointAuth === undefined) return null;
    if (perCaller) return 'per_caller';
    await withDeadline(endpointAuth.header(), AGENT_CHECK_TIMEOUT_MS);
    return undefined;
  } catch (error) {
    if (error instanceof OutboundAuthError) return error;
    return new OutboundAuthError(
      'token_endpoint_unreachable',
      errorTypeOf(error, 'network_error'),
      'the token endpoint did not answer in time',
    );
  }
}

/**
 * Card trust, the transport and this command's deadline carry one-line messages written for
 * the operator that quote URLs but never card text (so do the TypeErrors card trust raises for
 * a bad registry entry); anything else is described by its error type only. Sorted by class,
 * not by `name` (a foreign error may carry any name) nor by `code` alone (codes such as
 * `request_timeout` are shared by several classes).
 */
function reasonOf(error: unknown, errorType: CallErrorType): string {
  const worded =
    error instanceof CardTrustError ||
    isOutboundError(error) ||
    error instanceof DeadlineError ||
    error instanceof TypeError;
  return worded ? errorLine(error, REASON_MAX_CHARS) : ERROR_MESSAGES[errorType];
}

class DeadlineError extends AirlockError {
  readonly code = 'request_timeout';
  constructor(ms: number) {
    super(`no answer within ${ms / 1000} s`);
  }
}

/** The transport's own timeouts are the real cap; this one also covers the pin file. */
async function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineError(ms)), ms + 250);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Records the trust fields of each card that matches its pin, so that a later `registry pin`
 * can show what changed. Display only: a file that cannot be written changes no result.
 */
async function recordPinnedCards(
  pinsPath: string,
  rows: readonly AgentStatus[],
  seen: ReadonlyMap<string, TrustedCard>,
): Promise<void> {
  const snapshots = new PinnedCardFile(pinnedCardsPathFor(pinsPath));
  for (const row of rows) {
    const trusted = seen.get(row.name);
    if (trusted === undefined || row.pin === null || row.pin.drift !== null || row.pin.digest !== trusted.digest)
      continue;
    try {
      await snapshots.record(row.name, trusted);
    } catch {
      // e.g. a read-only state directory: the listing stands without it
    }
  }
}

/** Reasons are Airlock's own sentences: shown whole (the hint at their end included), wrapped. */
const REASON_MAX_CHARS = 2000;

function table(rows: readonly AgentStatus[], width: number): string {
  if (rows.length === 0) return 'the registry lists no agents\n';
  const cells = rows.map((row) => [
    row.name,
    row.effect,
    row.status === 'ok' ? (row.signature === null ? 'ok' : 'ok (signed)') : `error ${row.error_type ?? ''}`.trim(),
    row.digest === null ? '-' : row.digest.slice(0, 12),
    row.pin === null ? '-' : `${row.pin.source}${row.pin.drift !== null ? ' (drift)' : ''}`,
  ]);
  // The AUTH column appears only when an entry uses OAuth: other listings keep their shape.
  if (rows.some((row) => row.auth.token !== null)) {
    cells.forEach((cell, index) => cell.push(authCell(rows[index]!.auth)));
  }
  const headers = ['NAME', 'EFFECT', 'STATUS', 'DIGEST', 'PIN', ...(cells[0]!.length > 5 ? ['AUTH'] : [])];
  const laid = layoutTable(headers, cells, { width });
  const out = [...laid.header];
  rows.forEach((row, index) => {
    out.push(...laid.rows[index]!);
    if (row.reason !== null) out.push(...wrapLines(row.reason, { width, indent: '  ' }));
  });
  return `${out.join('\n')}\n`;
}

/**
 * `oauth2 ok`, `exchange failed`, `exchange per caller (delegated)`, `bearer_env`, `-`: short,
 * to fit 80 columns; never the token.
 */
function authCell(auth: AgentStatus['auth']): string {
  if (auth.kind === 'none') return '-';
  const short: Record<string, string> = { oauth2_client_credentials: 'oauth2', token_exchange: 'exchange' };
  const kind = short[auth.kind] ?? auth.kind;
  if (auth.token === 'per_caller') return `${kind} per caller (delegated)`;
  return auth.token === null ? kind : `${kind} ${auth.token.replace('_', ' ')}`;
}
