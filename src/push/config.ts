/**
 * The `push` section of the config: push notifications are off unless `enabled`. Owned here;
 * `src/config/schema.ts` composes it into the whole schema and the loader runs
 * {@link pushConfigProblem} (what a schema cannot say).
 *
 * @example
 * ```yaml
 * push:
 *   enabled: true
 *   allowPrivate: [hooks.corp.internal, 10.20.0.0/16]   # AIRLOCK_PRIVATE_ALLOW semantics
 *   maxConfigsPerTask: 10
 * ```
 */
import Type, { type Static } from 'typebox';
import { parseAllowEntry } from '../net/address.js';

/**
 * The schema of `push` (defaults applied by the loader).
 *
 * @example
 * ```ts
 * Value.Default(PushSchema, {}); // { enabled: false, allowPrivate: [], … }
 * ```
 */
export const PushSchema = Type.Object(
  {
    /** Serve the push-config methods and deliver webhooks; the card says `pushNotifications: true`. */
    enabled: Type.Boolean({ default: false }),
    /**
     * Webhook hosts (names as written in the URL), addresses or CIDR ranges that may be private:
     * the same entries and matching as `AIRLOCK_PRIVATE_ALLOW`. Metadata and link-local never.
     */
    allowPrivate: Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { maxItems: 256, default: [] }),
    /**
     * Plain http to a loopback webhook (tests, local development). Refused unless the gateway
     * itself is loopback-only (`server.allowNonLoopback: false`); the host must still be allowed.
     */
    allowHttpLoopback: Type.Boolean({ default: false }),
    maxConfigsPerTask: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
    maxConfigsPerPrincipal: Type.Integer({ minimum: 1, maximum: 100_000, default: 1000 }),
    /** Longest webhook URL accepted, in characters. */
    maxUrlLength: Type.Integer({ minimum: 64, maximum: 8192, default: 2048 }),
    /** Longest `token` and authentication credentials accepted, in characters. */
    maxTokenLength: Type.Integer({ minimum: 16, maximum: 4096, default: 1024 }),
    /** Tries per event and webhook (the first included); then `a2a.push.failed`. */
    maxAttempts: Type.Integer({ minimum: 1, maximum: 10, default: 4 }),
    /** The first retry waits this long; each next one twice as long (with jitter). */
    retryBaseMs: Type.Integer({ minimum: 1, maximum: 60_000, default: 1000 }),
    connectTimeoutMs: Type.Integer({ minimum: 100, maximum: 30_000, default: 5000 }),
    /** Idle time while reading the answer. */
    readTimeoutMs: Type.Integer({ minimum: 100, maximum: 60_000, default: 10_000 }),
    /** One whole attempt, connect to last byte. */
    totalTimeoutMs: Type.Integer({ minimum: 100, maximum: 120_000, default: 15_000 }),
    /** A receiver's answer is read up to this many bytes, then the attempt fails. */
    maxResponseBytes: Type.Integer({ minimum: 0, maximum: 1_048_576, default: 65_536 }),
    /**
     * Events waiting per task (with a durable store: per task and config, in its outbox); past
     * it new ones are dropped with `a2a.push.failed` (queue_full).
     */
    maxQueuedEvents: Type.Integer({ minimum: 1, maximum: 10_000, default: 256 }),
  },
  { additionalProperties: false },
);

/**
 * `push` as loaded (defaults applied).
 *
 * @example
 * ```ts
 * const push: PushSettings = { ...DEFAULT_PUSH_SETTINGS, enabled: true };
 * ```
 */
export type PushSettings = Static<typeof PushSchema>;

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
