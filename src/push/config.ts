/**
 * The `push` section of the config: push notifications are off unless `enabled`. Its schema is
 * ./schema.ts (composed by `src/config/schema.ts`); the loader runs {@link pushConfigProblem}
 * (what a schema cannot say).
 *
 * @example
 * ```yaml
 * push:
 *   enabled: true
 *   allowPrivate: [hooks.corp.internal, 10.20.0.0/16]   # AIRLOCK_PRIVATE_ALLOW semantics
 *   maxConfigsPerTask: 10
 * ```
 */
import { parseAllowEntry } from '../net/address.js';
import type { PushSettings } from './schema.js';

export type { PushSettings } from './schema.js';

/**
 * The defaults: push off.
 *
 * @example
 * ```ts
 * DEFAULT_PUSH_SETTINGS.enabled; // false
 * ```
 */
export const DEFAULT_PUSH_SETTINGS: PushSettings = {
  enabled: false,
  allowPrivate: [],
  allowHttpLoopback: false,
  maxConfigsPerTask: 10,
  maxConfigsPerPrincipal: 1000,
  maxUrlLength: 2048,
  maxTokenLength: 1024,
  maxAttempts: 4,
  retryBaseMs: 1000,
  connectTimeoutMs: 5000,
  readTimeoutMs: 10_000,
  totalTimeoutMs: 15_000,
  maxResponseBytes: 65_536,
  maxQueuedEvents: 256,
};

/**
 * What the schema cannot check: each `allowPrivate` entry parses, and plain-http loopback
 * webhooks only from a loopback-only gateway. Returns the key and the problem, or undefined.
 * Several replicas need no check here: they need a shared store (PostgreSQL), which keeps the
 * configs and the outbox for all of them, and `airlock serve` refuses any other store then.
 *
 * @example
 * ```ts
 * pushConfigProblem({ ...DEFAULT_PUSH_SETTINGS, allowPrivate: ['*.corp'] }, false);
 * // { key: 'push.allowPrivate[0]', problem: '"*.corp" is not a host name, IP address or CIDR range' }
 * ```
 */
export function pushConfigProblem(
  push: PushSettings,
  allowNonLoopback: boolean,
): { key: string; problem: string } | undefined {
  for (let i = 0; i < push.allowPrivate.length; i++) {
    const entry = push.allowPrivate[i] as string;
    if (parseAllowEntry(entry) === undefined) {
      const shown = entry.replace(/[^\x20-\x7e]/g, '?').slice(0, 64);
      return { key: `push.allowPrivate[${i}]`, problem: `"${shown}" is not a host name, IP address or CIDR range` };
    }
  }
  if (push.allowHttpLoopback && allowNonLoopback) {
    return {
      key: 'push.allowHttpLoopback',
      problem:
        'plain http webhooks are allowed only when the gateway is loopback-only (server.allowNonLoopback: false)',
    };
  }
  return undefined;
}
