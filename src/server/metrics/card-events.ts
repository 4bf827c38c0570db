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
