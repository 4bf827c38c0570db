/**
 * The `metrics` config section's schema (TypeBox). Only the config check loads it, in its own
 * worker thread (off-thread.ts): the serving process imports the types alone.
 */
import Type, { type Static } from 'typebox';

/**
 * The schema of `metrics`.
 *
 * @example
 * ```ts
 * Value.Default(MetricsSchema, { port: 9464 }); // { host: '127.0.0.1', port: 9464 }
 * ```
 */
export const MetricsSchema = Type.Object(
  {
    host: Type.String({ default: '127.0.0.1', minLength: 1, maxLength: 255 }),
    port: Type.Integer({ minimum: 0, maximum: 65535 }),
    /** A bearer token scrapers must send: read from the environment or a file (at least 32 characters). */
    token: Type.Optional(
      Type.Object(
        {
          env: Type.Optional(Type.String({ pattern: '^[A-Z_][A-Z0-9_]*$' })),
          file: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

/**
 * `metrics` as written.
 *
 * @example
 * ```ts
 * const raw: MetricsConfig = { host: '127.0.0.1', port: 9464 };
 * ```
 */
export type MetricsConfig = Static<typeof MetricsSchema>;
