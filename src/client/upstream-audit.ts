/**
 * What the upstream connector (`upstream.ts`) records of its outbound calls, the same way the
 * outbound client does: one `a2a.client.send` row per turn's send or stream (a card or token
 * failure at connect is a send that never left), one `a2a.client.get` row per poll. The gateway
 * writes them to its audit trail, and its metrics count them
 * (`airlock_outbound_calls_total{entry,call,outcome,error_type}`) as they count the client's.
 *
 * Card fetches are logged as `card_fetched` (`entry`, `outcome`: `ok` or the error type), one
 * line per fetch (a card served from the cache is not a fetch), for
 * `airlock_outbound_card_fetches_total`.
 *
 * @example
 * ```ts
 * const audit = upstreamAudit(setup.audit, log);
 * audit.call('a2a.client.send', entry.name, { taskId, state: 'working', inputChars: 5 });
 * audit.failed('a2a.client.get', entry.name, error, { taskId });
 * ```
 */
import type { AuditEvent } from '../audit/index.js';
import type { TrustedCard } from '../trust/index.js';
import type { TaskState } from '../protocol/model.js';
import { clientAuditEvent, type ClientAuditFields } from './bookkeeping.js';
import { DENIED } from './call.js';
import type { CardResolver } from './contracts.js';
import { CALL_ERROR_TYPES, type CallErrorType } from './result.js';
import type { OutboundLog } from './wiring.js';

/**
 * Where the connector's rows go (the gateway's audit trail); a hook that throws is logged.
 *
 * @example
 * ```ts
 * const hook: UpstreamAuditHook = (row) => audit.record(row, false);
 * ```
 */
export type UpstreamAuditHook = (row: AuditEvent) => void;

/** What a successful call adds to its row. */
interface CallFacts {
  taskId?: string | undefined;
  contextId?: string | undefined;
  state?: TaskState | undefined;
  inputChars?: number;
}

/**
 * The connector's audit writer.
 *
 * @example
 * ```ts
 * const audit: UpstreamAudit = upstreamAudit(undefined, log); // writes nothing
 * ```
 */
export interface UpstreamAudit {
  /** A call that worked. */
  call(type: 'a2a.client.send' | 'a2a.client.get', entry: string, facts: CallFacts): void;
  /** A call that failed with `errorType` (an outbound error type; any other becomes `invalid_response`). */
  failed(type: 'a2a.client.send' | 'a2a.client.get', entry: string, errorType: string, facts?: CallFacts): void;
}

const KNOWN_TYPES: ReadonlySet<string> = new Set(CALL_ERROR_TYPES);

/**
 * The writer over `hook` (absent: rows are not built at all).
 *
 * @example
 * ```ts
 * const audit = upstreamAudit((row) => rows.push(row), () => undefined);
 * ```
 */
export function upstreamAudit(hook: UpstreamAuditHook | undefined, log: OutboundLog): UpstreamAudit {
  if (hook === undefined) return { call: () => undefined, failed: () => undefined };
  const write = (type: 'a2a.client.send' | 'a2a.client.get', fields: ClientAuditFields): void => {
    try {
      hook(clientAuditEvent(type, fields, new Date()));
    } catch (error) {
      log('a2a.upstream.audit_failed', { type, error: error instanceof Error ? error.name : typeof error });
    }
  };
  return {
    call: (type, entry, facts) => write(type, { outcome: 'ok', agent: entry, ...facts }),
    failed: (type, entry, errorType, facts = {}) => {
      const reason: CallErrorType = KNOWN_TYPES.has(errorType) ? (errorType as CallErrorType) : 'invalid_response';
      write(type, { outcome: DENIED.has(reason) ? 'denied' : 'error', agent: entry, ...facts, reason });
    },
  };
}

/**
 * `cards`, logging `card_fetched` for each resolve that fetched (a fresh `fetchedAt`) or failed.
 * A failure names its outbound error type when `typeOf` knows it.
 *
 * @example
 * ```ts
 * const cards = countingCards(cardResolverFrom(trust), log, (error) => transportFailure(error, 'card_invalid').errorType);
 * ```
 */
export function countingCards(
  cards: CardResolver,
  log: OutboundLog,
  typeOf: (error: unknown) => string,
  now: () => number = Date.now,
): CardResolver {
  return {
    resolve: async (entry): Promise<TrustedCard> => {
      const started = now();
      let trusted: TrustedCard;
      try {
        trusted = await cards.resolve(entry);
      } catch (error) {
        log('card_fetched', { entry: entry.name, outcome: typeOf(error) });
        throw error;
      }
      if (trusted.fetchedAt >= started) log('card_fetched', { entry: entry.name, outcome: 'ok' });
      return trusted;
    },
  };
}
