/**
 * The `telemetry` config section and where trace export goes: `telemetry.otlp` in the config,
 * else the standard `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` / `OTEL_EXPORTER_OTLP_ENDPOINT`
 * variables; off when neither is set (or `OTEL_SDK_DISABLED=true`). The collector URL is
 * operator config, held to the outbound rule: https, or http to loopback only, and no
 * credentials in it; header values come from environment variables only and are never logged.
 *
 * @example
 * ```yaml
 * telemetry:
 *   otlp:
 *     endpoint: https://otel.example.net:4318/v1/traces
 *     headers: [{ name: authorization, env: OTLP_AUTHORIZATION }]
 *     sampleRatio: 0.25
 * ```
 */
import { AirlockError } from '../errors/index.js';
import type { TelemetrySettings } from './schema.js';

export type { TelemetrySettings } from './schema.js';

/** The OTLP/HTTP traces path appended to `OTEL_EXPORTER_OTLP_ENDPOINT` (the spec's rule). */
const TRACES_PATH = 'v1/traces';

/**
 * Where and how spans are exported, resolved: header values read from the environment.
 *
 * @example
 * ```ts
 * const target: OtlpTarget = { url: 'http://127.0.0.1:4318/v1/traces', headers: {}, serviceName: 'airlock', sampleRatio: 1 };
 * ```
 */
export interface OtlpTarget {
  url: string;
  /** Header values: secrets, never logged. */
  headers: Record<string, string>;
  serviceName: string;
  sampleRatio: number;
}

/**
 * A telemetry setting that cannot be used (a bad `OTEL_*` variable, found at start).
 *
 * @example
 * ```ts
 * throw new TelemetryConfigError('OTEL_EXPORTER_OTLP_ENDPOINT: must be https (http only to loopback)');
 * ```
 */
export class TelemetryConfigError extends AirlockError {
  readonly code = 'TELEMETRY_CONFIG_INVALID';
}

/**
 * What is wrong with `telemetry` beyond its schema, as the config key and the fix; undefined
 * when nothing is. The endpoint must be https, or http to a loopback host, without credentials;
 * every header's variable must be set.
 *
 * @example
 * ```ts
 * telemetryConfigProblem({ otlp: { endpoint: 'http://otel.internal:4318/v1/traces', sampleRatio: 1 } }, {});
 * // { key: 'telemetry.otlp.endpoint', problem: 'must be https (plain http only to a loopback collector)' }
 * ```
 */
export function telemetryConfigProblem(
  settings: TelemetrySettings | undefined,
  env: Readonly<Record<string, string | undefined>>,
): { key: string; problem: string } | undefined {
  const otlp = settings?.otlp;
  if (otlp === undefined) return undefined;
  const problem = endpointProblem(otlp.endpoint);
  if (problem !== undefined) return { key: 'telemetry.otlp.endpoint', problem };
  const headers = otlp.headers ?? [];
  for (const [index, header] of headers.entries()) {
    if ((env[header.env] ?? '') === '') {
      return { key: `telemetry.otlp.headers[${index}].env`, problem: `${header.env} is not set (or empty)` };
    }
  }
  return undefined;
}

/**
 * The export target: `telemetry.otlp` when configured, else the OTEL_* variables, else
 * undefined (export off). Throws {@link TelemetryConfigError} naming the variable when an
 * OTEL_* endpoint breaks the endpoint rule.
 *
 * @example
 * ```ts
 * otlpTarget(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' });
 * // { url: 'http://127.0.0.1:4318/v1/traces', headers: {}, serviceName: 'airlock', sampleRatio: 1 }
 * ```
 */
export function otlpTarget(
  settings: TelemetrySettings | undefined,
  env: Readonly<Record<string, string | undefined>>,
): OtlpTarget | undefined {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return undefined;
  const serviceName = settings?.otlp?.serviceName ?? nonEmpty(env.OTEL_SERVICE_NAME) ?? 'airlock';
  const otlp = settings?.otlp;
  if (otlp !== undefined) {
    const headers: Record<string, string> = {};
    for (const header of otlp.headers ?? []) headers[header.name.toLowerCase()] = env[header.env] ?? '';
    return { url: otlp.endpoint, headers, serviceName, sampleRatio: otlp.sampleRatio };
  }
  const specific = nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  const general = nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  const variable = specific !== undefined ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT';
  const url = specific ?? (general === undefined ? undefined : `${general.replace(/\/+$/, '')}/${TRACES_PATH}`);
  if (url === undefined) return undefined;
  const problem = endpointProblem(url);
  if (problem !== undefined) throw new TelemetryConfigError(`${variable}: ${problem}`);
  // OTEL_EXPORTER_OTLP_(TRACES_)HEADERS are read by the exporter itself.
  return { url, headers: {}, serviceName, sampleRatio: 1 };
}

/** The endpoint rule: a URL, https or http to loopback, no credentials (never echoed back). */
function endpointProblem(endpoint: string): string | undefined {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return 'is not a URL';
  }
  if (url.username !== '' || url.password !== '') {
    return 'must not carry credentials: send them as a header (telemetry.otlp.headers, from the environment)';
  }
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && isLoopbackHost(url.hostname)) return undefined;
  return 'must be https (plain http only to a loopback collector)';
}

function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}
