/**
 * The `push` config section's schema (TypeBox). Only the config check loads it, in its own
 * worker thread (config/off-thread.ts): the serving process imports the types alone.
 */
import Type, { type Static } from 'typebox';

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
