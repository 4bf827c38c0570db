/**
 * The audit row of one config reload: `config.reloaded` (the sections it changed) or
 * `config.reload_refused` (the reason code, and for `needs_restart` the sections of the keys
 * that need one). Only top-level section names go in (`clients`, never `clients[b].token`):
 * no client id, no key below a section, no value, no message.
 *
 * @example
 * ```ts
 * audit.record(reloadAuditRow({ outcome: 'applied', changed: ['clients[b]', 'limits.maxParts'] }), false);
 * // { type: 'config.reloaded', outcome: 'ok', sections: 'clients,limits', time }
 * ```
 */
import { auditTime, type AuditEvent } from '../../audit/index.js';
import type { ReloadOutcome } from './reloader.js';

/** A section name as the config spells it; anything else is left out of the row. */
const SECTION = /^[a-z][a-zA-Z0-9]{0,31}$/;

/**
 * The top-level sections of config keys as diff.ts names them (`auth.jwt.issuer` → `auth`,
 * `agents[echo].tools` → `agents`), sorted, each once, comma-separated; undefined for none.
 *
 * @example
 * ```ts
 * sectionsOf(['limits.maxParts', 'clients[b]', 'clients[c].token']); // 'clients,limits'
 * ```
 */
export function sectionsOf(keys: readonly string[]): string | undefined {
  const sections = new Set<string>();
  for (const key of keys) {
    const section = /^[^.[]*/.exec(key)![0];
    if (SECTION.test(section)) sections.add(section);
  }
  return sections.size === 0 ? undefined : [...sections].sort().slice(0, 32).join(',');
}

/**
 * The row for `outcome`.
 *
 * @example
 * ```ts
 * reloadAuditRow({ outcome: 'refused', reason: 'needs_restart', message: '…', restart: ['server.port'] });
 * // { type: 'config.reload_refused', outcome: 'denied', reason: 'needs_restart', sections: 'server', time }
 * ```
 */
export function reloadAuditRow(outcome: ReloadOutcome, now: Date = new Date()): AuditEvent {
  const time = auditTime(now);
  if (outcome.outcome === 'applied') {
    const sections = sectionsOf(outcome.changed);
    return { type: 'config.reloaded', time, outcome: 'ok', ...(sections !== undefined && { sections }) };
  }
  const sections = sectionsOf(outcome.restart ?? []);
  return {
    type: 'config.reload_refused',
    time,
    outcome: 'denied',
    reason: outcome.reason,
    ...(sections !== undefined && { sections }),
  };
}
