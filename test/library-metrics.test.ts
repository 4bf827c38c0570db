/** The metrics and telemetry entry points of the library (src/index.ts), as an embedder uses them. */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import {
  createGateway,
  createSeries,
  otlpTarget,
  parseConfig,
  silentLogger,
  startTelemetry,
  TELEMETRY_OFF,
} from '../src/index.js';

it('exports the series factory, the telemetry setup and a gateway whose metrics can be read', async () => {
  const series = createSeries({ defaultMetrics: false });
  series.busLag.observe(0.004, 'redis');
  const text = await series.registry.metrics();
  assert.match(text, /^airlock_event_bus_lag_seconds_count\{bus="redis"\} 1$/m);
  assert.match(text, /^# TYPE airlock_approvals_pending gauge$/m);
  // Export off (no endpoint configured): nothing is loaded or registered.
  assert.equal(otlpTarget(undefined, {}), undefined);
  assert.equal(await startTelemetry(undefined), TELEMETRY_OFF);
  const config = parseConfig(
    `
server: { host: 127.0.0.1, port: 0 }
metrics: { port: 0 }
agents:
  - { slug: echo, name: E, description: E, skills: [{ id: e, name: E, description: E }], backend: { type: echo } }
`,
    {},
  );
  const gateway = createGateway(config, { logger: silentLogger });
  try {
    await gateway.listen();
    const exposition = await gateway.metrics!.series.registry.metrics();
    assert.match(exposition, /^airlock_approvals_pending\{agent="echo"\} 0$/m);
    assert.match((await fetch(gateway.metrics!.url!)).headers.get('content-type') ?? '', /^text\/plain/);
  } finally {
    await gateway.close();
  }
});
