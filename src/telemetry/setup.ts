/**
 * Trace export: registers the official OpenTelemetry SDK (a TracerProvider with a
 * BatchSpanProcessor and the OTLP/HTTP exporter) when an export target is configured, and
 * nothing otherwise. The SDK is loaded by dynamic import on that path only, so a gateway with
 * export off neither loads it nor pays for context tracking: spans stay the API's no-op.
 *
 * @example
 * ```ts
 * const telemetry = await startTelemetry(otlpTarget(config.telemetry, process.env), { instanceId });
 * // … serve …
 * await telemetry.shutdown(); // flushes what is queued
 * ```
 */
import { context, trace } from '@opentelemetry/api';
import type { OtlpTarget } from './config.js';
import { LocalContextManager } from './context.js';

/**
 * A started (or skipped) telemetry setup.
 *
 * @example
 * ```ts
 * if (telemetry.enabled) await telemetry.flush();
 * ```
 */
export interface Telemetry {
  /** True when a provider of this setup is registered and exporting. */
  readonly enabled: boolean;
  /** Exports what is queued now (a drain calls it). */
  flush(): Promise<void>;
  /** Flushes, stops the exporter and unregisters the provider and context manager it registered. */
  shutdown(): Promise<void>;
}

/**
 * Tuning for tests (short delays); production keeps the SDK's defaults.
 *
 * @example
 * ```ts
 * await startTelemetry(target, { instanceId: 'gw-1', scheduledDelayMillis: 20 });
 * ```
 */
export interface TelemetryOptions {
  /** `service.instance.id` of the resource (the gateway's instance id). */
  instanceId?: string;
  /** The batch processor's export interval (SDK default 5000 ms). */
  scheduledDelayMillis?: number;
  /** How long one export may take (default 10 000 ms). */
  exportTimeoutMillis?: number;
}

/**
 * Export off: nothing registered, nothing to flush.
 *
 * @example
 * ```ts
 * const telemetry = target === undefined ? TELEMETRY_OFF : await startTelemetry(target);
 * ```
 */
export const TELEMETRY_OFF: Telemetry = Object.freeze({
  enabled: false,
  flush: () => Promise.resolve(),
  shutdown: () => Promise.resolve(),
});

/** Whether this process imported the SDK (through {@link startTelemetry}). */
let sdkLoaded = false;

/**
 * True once {@link startTelemetry} loaded the OpenTelemetry SDK in this process: with export
 * off it never does.
 *
 * @example
 * ```ts
 * telemetrySdkLoaded(); // false until an export target is configured
 * ```
 */
export function telemetrySdkLoaded(): boolean {
  return sdkLoaded;
}

/**
 * Starts export to `target`, or returns {@link TELEMETRY_OFF} when there is none. Registers the
 * provider globally, and a context manager (AsyncLocalStorage) unless one is registered. When
 * another tracer provider is registered already (an embedder's own), that one is kept: this
 * setup stays off.
 *
 * @example
 * ```ts
 * const telemetry = await startTelemetry({ url: 'http://127.0.0.1:4318/v1/traces', headers: {}, serviceName: 'airlock', sampleRatio: 1 });
 * ```
 */
export async function startTelemetry(
  target: OtlpTarget | undefined,
  options: TelemetryOptions = {},
): Promise<Telemetry> {
  if (target === undefined) return TELEMETRY_OFF;
  const [sdk, resources, exporters] = await Promise.all([
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/exporter-trace-otlp-http'),
  ]);
  sdkLoaded = true;
  const exporter = new exporters.OTLPTraceExporter({
    url: target.url,
    headers: target.headers,
    timeoutMillis: options.exportTimeoutMillis ?? 10_000,
  });
  const provider = new sdk.TracerProvider({
    resource: resources.resourceFromAttributes({
      'service.name': target.serviceName,
      ...(options.instanceId !== undefined && { 'service.instance.id': options.instanceId }),
    }),
    // Every inbound span is a root (trace.ts): the ratio decides per request, children follow.
    sampler: new sdk.ParentBasedSampler({ root: new sdk.TraceIdRatioBasedSampler(target.sampleRatio) }),
    spanProcessors: [
      new sdk.BatchSpanProcessor({
        exporter,
        ...(options.scheduledDelayMillis !== undefined && { scheduledDelayMillis: options.scheduledDelayMillis }),
        exportTimeoutMillis: options.exportTimeoutMillis ?? 10_000,
      }),
    ],
  });
  if (!trace.setGlobalTracerProvider(provider)) {
    await provider.shutdown();
    return TELEMETRY_OFF;
  }
  const manager = new LocalContextManager().enable();
  const ownManager = context.setGlobalContextManager(manager);
  if (!ownManager) manager.disable();
  let closed: Promise<void> | undefined;
  return {
    enabled: true,
    flush: () => provider.forceFlush(),
    shutdown: () =>
      (closed ??= provider
        .forceFlush()
        .catch(() => undefined)
        .then(() => provider.shutdown())
        .finally(() => {
          trace.disable();
          if (ownManager) context.disable();
        })),
  };
}
