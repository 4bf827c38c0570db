/**
 * Card trust events of the `a2a` backends' upstream cards, counted from the operator log lines
 * the upstream connector writes (`card_pinned_tofu`, `card_pin_drift`, `card_pin_mismatch`, the
 * signature checks): `airlock_card_events_total{entry, event}`. The entry is a registry name (from
 * the registry file); an event not in the closed list below is not counted.
 *
 * @example
 * ```ts
 * const logger = tapLogger(baseLogger, (record) => metrics.cardEvent(record));
 * createUpstreams(config.upstreams, { logger });
 * ```
 */
import type { Logger } from '../log.js';
import { CALL_ERROR_TYPES } from '../../client/result.js';
import { UNKNOWN_LABEL } from './from-audit.js';

/**
 * The card trust events counted.
 *
 * @example
 * ```ts
 * CARD_EVENTS.has('card_pin_mismatch'); // true
 * ```
 */
export const CARD_EVENTS: ReadonlySet<string> = new Set([
  'card_pinned_tofu',
  'card_pin_drift',
  'card_pin_mismatch',
  'card_signature_verified',
  'card_signature_partial',
  'card_signature_refused',
]);

/** Registry entry names (docs/OUTBOUND.md). */
const ENTRY_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/**
 * The labels of one log record, or undefined when it is not a counted card event. Pure.
 *
 * @example
 * ```ts
 * cardEventLabels({ event: 'card_pin_mismatch', entry: 'weather' }); // ['weather', 'card_pin_mismatch']
 * cardEventLabels({ event: 'listening' });                           // undefined
 * ```
 */
export function cardEventLabels(record: Readonly<Record<string, unknown>>): [string, string] | undefined {
  const { event, entry } = record;
  if (typeof event !== 'string' || !CARD_EVENTS.has(event)) return undefined;
  return [typeof entry === 'string' && ENTRY_NAME.test(entry) ? entry : UNKNOWN_LABEL, event];
}

const FETCH_OUTCOMES: ReadonlySet<string> = new Set(['ok', ...CALL_ERROR_TYPES]);

/**
 * The labels of a `card_fetched` line (upstream-audit.ts): entry and outcome; undefined for any
 * other record. An outcome outside `ok` and the outbound error types becomes `unknown`. Pure.
 *
 * @example
 * ```ts
 * cardFetchLabels({ event: 'card_fetched', entry: 'weather', outcome: 'network_error' }); // ['weather', 'network_error']
 * ```
 */
export function cardFetchLabels(record: Readonly<Record<string, unknown>>): [string, string] | undefined {
  const { event, entry, outcome } = record;
  if (event !== 'card_fetched') return undefined;
  return [
    typeof entry === 'string' && ENTRY_NAME.test(entry) ? entry : UNKNOWN_LABEL,
    typeof outcome === 'string' && FETCH_OUTCOMES.has(outcome) ? outcome : UNKNOWN_LABEL,
  ];
}

/**
 * The pin state a record shows for its entry: `pinned` after a first-use pin or a fetched card
 * that passed its checks, `mismatch` after a drift or a mismatch (and a fetch refused for one);
 * undefined when it says nothing about pins. Pure.
 *
 * @example
 * ```ts
 * pinStateOf({ event: 'card_pin_drift', entry: 'weather' }); // ['weather', 'mismatch']
 * ```
 */
export function pinStateOf(record: Readonly<Record<string, unknown>>): [string, 'pinned' | 'mismatch'] | undefined {
  const { event, entry, outcome } = record;
  if (typeof entry !== 'string' || !ENTRY_NAME.test(entry)) return undefined;
  if (event === 'card_pinned_tofu' || (event === 'card_fetched' && outcome === 'ok')) return [entry, 'pinned'];
  if (event === 'card_pin_drift' || event === 'card_pin_mismatch') return [entry, 'mismatch'];
  if (event === 'card_fetched' && outcome === 'card_pin_mismatch') return [entry, 'mismatch'];
  return undefined;
}

/**
 * A logger that shows every record to `tap` before writing it (a tap that throws is ignored).
 *
 * @example
 * ```ts
 * const logger = tapLogger(createLogger('info'), (record) => seen.push(record));
 * ```
 */
export function tapLogger(logger: Logger, tap: (record: Record<string, unknown>) => void): Logger {
  const tapped = (write: (record: Record<string, unknown>) => void) => (record: Record<string, unknown>) => {
    try {
      tap(record);
    } catch {
      /* metrics never stop a log line */
    }
    write(record);
  };
  return {
    info: tapped((record) => logger.info(record)),
    warn: tapped((record) => logger.warn(record)),
    error: tapped((record) => logger.error(record)),
  };
}
