/**
 * Where trace export goes (`telemetry.otlp`, else the OTEL_* variables) and what the loader
 * refuses: an endpoint that is plain http beyond loopback, or carries credentials, and a
 * header whose variable is unset. Pure functions and `parseConfig`: no network.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from '../src/config/load.js';
import { otlpTarget, TelemetryConfigError } from '../src/telemetry/config.js';
import { DEFAULT_YAML, TOKEN_A, TOKEN_B, TOKEN_C } from './helpers/gateway.js';

const TOKENS = { TOKEN_A, TOKEN_B, TOKEN_C };

function withTelemetry(section: string): string {
  return `${DEFAULT_YAML}\ntelemetry:\n${section}\n`;
}

describe('telemetry config', () => {
  it('is off with nothing configured, and with OTEL_SDK_DISABLED=true', () => {
    assert.equal(otlpTarget(undefined, {}), undefined);
    assert.equal(
      otlpTarget(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' }),
      undefined,
    );
    assert.equal(parseConfig(DEFAULT_YAML, TOKENS).telemetry, undefined);
  });

  it('reads the OTEL_* endpoints: the general one gets /v1/traces, the traces one is used as is', () => {
    assert.deepEqual(otlpTarget(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318/' }), {
      url: 'http://127.0.0.1:4318/v1/traces',
      headers: {},
      serviceName: 'airlock',
      sampleRatio: 1,
    });
    const target = otlpTarget(undefined, {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://otel.example.net/custom/traces',
      OTEL_SERVICE_NAME: 'edge-gw',
    });
    assert.equal(target?.url, 'https://otel.example.net/custom/traces');
    assert.equal(target?.serviceName, 'edge-gw');
  });

  it('refuses an OTEL_* endpoint over plain http beyond loopback, naming the variable', () => {
    assert.throws(
      () => otlpTarget(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel.internal:4318' }),
      (error: unknown) =>
        error instanceof TelemetryConfigError && /^OTEL_EXPORTER_OTLP_ENDPOINT: must be https/.test(error.message),
    );
  });

  it('loads telemetry.otlp with header values from the environment (never in the config)', () => {
    const yaml = withTelemetry(`  otlp:
    endpoint: https://otel.example.net:4318/v1/traces
    headers: [{ name: X-Api-Key, env: OTLP_KEY }]
    sampleRatio: 0.5`);
    const config = parseConfig(yaml, { ...TOKENS, OTLP_KEY: 'collector-secret' });
    assert.deepEqual(config.telemetry?.otlp?.headers, [{ name: 'X-Api-Key', env: 'OTLP_KEY' }]);
    const target = otlpTarget(config.telemetry, { OTLP_KEY: 'collector-secret' });
    assert.deepEqual(target?.headers, { 'x-api-key': 'collector-secret' });
    assert.equal(target?.sampleRatio, 0.5);
  });

  for (const [endpoint, problem] of [
    ['http://otel.internal:4318/v1/traces', /telemetry\.otlp\.endpoint: must be https/],
    ['https://user:pass@otel.example.net/v1/traces', /telemetry\.otlp\.endpoint: must not carry credentials/],
  ] as const) {
    it(`refuses ${endpoint.replace(/\/\/.*@/, '//…@')} at load, naming the key`, () => {
      assert.throws(() => parseConfig(withTelemetry(`  otlp: { endpoint: "${endpoint}" }`), TOKENS), problem);
    });
  }

  it('accepts http to a loopback collector', () => {
    const config = parseConfig(withTelemetry('  otlp: { endpoint: "http://127.0.0.1:4318/v1/traces" }'), TOKENS);
    assert.equal(config.telemetry?.otlp?.sampleRatio, 1);
  });

  it('refuses a header whose variable is not set, without printing any value', () => {
    const yaml = withTelemetry(`  otlp:
    endpoint: https://otel.example.net/v1/traces
    headers: [{ name: authorization, env: OTLP_AUTH }]`);
    assert.throws(() => parseConfig(yaml, TOKENS), /telemetry\.otlp\.headers\[0\]\.env: OTLP_AUTH is not set/);
  });
});
