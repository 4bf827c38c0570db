/**
 * The `telemetry` config section's schema (TypeBox). Only the config check loads it, in its own
 * worker thread (config/off-thread.ts): the serving process imports the types alone.
 */
import Type, { type Static } from 'typebox';

const ENV_NAME = Type.String({ pattern: '^[A-Z_][A-Z0-9_]*$', maxLength: 128 });

/**
 * The `telemetry` section's schema.
 *
 * @example
 * ```ts
 * Value.Check(TelemetrySchema, { otlp: { endpoint: 'http://127.0.0.1:4318/v1/traces' } }); // true
 * ```
 */
export const TelemetrySchema = Type.Object(
  {
    /** Trace export over OTLP/HTTP (JSON); absent: only the OTEL_* variables can turn it on. */
    otlp: Type.Optional(
      Type.Object(
        {
          /** The full traces URL of the collector, e.g. `https://otel.example.net:4318/v1/traces`. */
          endpoint: Type.String({ pattern: '^https?://\\S+$', maxLength: 2000 }),
          /** Request headers (a collector's API key), each value read from an environment variable. */
          headers: Type.Optional(
            Type.Array(
              Type.Object(
                { name: Type.String({ pattern: '^[A-Za-z0-9-]{1,64}$' }), env: ENV_NAME },
                { additionalProperties: false },
              ),
              { maxItems: 16 },
            ),
          ),
          /** `service.name` of the resource (default `airlock`, or `OTEL_SERVICE_NAME`). */
          serviceName: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$' })),
          /** Share of requests traced, 0..1 (default 1): the root span's sampling ratio. */
          sampleRatio: Type.Number({ minimum: 0, maximum: 1, default: 1 }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

/**
 * The `telemetry` section as loaded.
 *
 * @example
 * ```ts
 * const settings: TelemetrySettings = { otlp: { endpoint: 'http://127.0.0.1:4318/v1/traces', sampleRatio: 1 } };
 * ```
 */
export type TelemetrySettings = Static<typeof TelemetrySchema>;
