/**
 * The metrics of issue 20 point 1 that follow other replicas, the approval store, upstream
 * backends and reloads, end to end: a gateway with `metrics` on and a real PostgreSQL bus, a
 * second bus on the same channel acting as another replica, an `a2a` backend relaying to a
 * second gateway (one reachable entry, one whose port is closed), and two reloads (applied,
 * refused). `/metrics` is scraped over HTTP and each new series checked for its value.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { AuditEvent } from '../src/audit/index.js';
import { parseConfig } from '../src/config/load.js';
import { createGateway, type Gateway } from '../src/server/http.js';
import { silentLogger } from '../src/server/log.js';
import { createUpstreams, type Upstreams } from '../src/server/upstreams.js';
import { createPostgresTaskEventBus, type PostgresTaskEventBus } from '../src/tasks/buses/postgres.js';
import { postgresSkip, POSTGRES_URL, uniqueName, waitFor } from './helpers/backing-services.js';
import { rpc, startGateway, TOKEN_A, TOKEN_B, v10Message, type TestGateway } from './helpers/gateway.js';

const skip = await postgresSkip();
const METRICS_TOKEN = 'metrics-token-0123456789abcdef0123456789';

function yaml(requestsPerMinute: number): string {
  return `
server: { host: 127.0.0.1, port: 0, instanceId: metrics-relay }
limits: { requestsPerMinute: ${requestsPerMinute} }
metrics: { port: 0, token: { env: METRICS_TOKEN } }
upstreams: { registry: REGISTRY, pins: PINS }
agents:
  - { slug: echo, name: Echo, description: E, skills: [{ id: e, name: E, description: E }], backend: { type: echo } }
  - { slug: relay, name: Relay, description: R, skills: [{ id: r, name: R, description: R }], backend: { type: a2a, agent: far } }
  - { slug: down, name: Down, description: D, skills: [{ id: d, name: D, description: D }], backend: { type: a2a, agent: gone } }
clients:
  - { id: a, token: "\${TOKEN_A}", agents: [echo, relay, down] }
`;
}

/** `name{a="x",b="y"}` (labels sorted) → value. */
function parseExposition(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(match !== null, `not an exposition line: ${line}`);
    const labels = [...(match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)]
      .map(([, name, value]) => `${name}="${value}"`)
      .sort();
    samples.set(`${match[1]}{${labels.join(',')}}`, Number(match[3]));
  }
  return samples;
}

function sample(samples: Map<string, number>, name: string, labels: Record<string, string> = {}): number | undefined {
  const key = Object.entries(labels)
    .map(([label, value]) => `${label}="${value}"`)
    .sort()
    .join(',');
  return samples.get(`${name}{${key}}`);
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

describe('metrics: bus lag, approvals pending, upstream calls and card fetches, reloads', { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'airlock-metrics-more-'));
  const schema = uniqueName('metrics');
  const rows: AuditEvent[] = [];
  let far: TestGateway;
  let upstreams: Upstreams;
  let bus: PostgresTaskEventBus;
  let otherReplica: PostgresTaskEventBus;
  let gateway: Gateway;
  let url: string;
  let samples: Map<string, number>;

  const configText = (requestsPerMinute: number) =>
    yaml(requestsPerMinute).replace('REGISTRY', join(dir, 'registry.yaml')).replace('PINS', join(dir, 'pins.json'));

  before(async () => {
    far = await startGateway();
    writeFileSync(
      join(dir, 'registry.yaml'),
      `agents:
  - name: far
    card_url: ${far.url}/a2a/echo/.well-known/agent-card.json
    description: Another gateway's echo.
    effect: read_only
    auth: { bearer_env: AIRLOCK_SECRET_FAR }
    poll_interval_s: 0.05
    max_wait_s: 5
  - name: gone
    card_url: http://127.0.0.1:${await closedPort()}/.well-known/agent-card.json
    description: Nothing listens here.
    effect: read_only
    timeouts: { connect: 1, read: 2, total: 2 }
`,
    );
    const env = { TOKEN_A, TOKEN_B, METRICS_TOKEN };
    const config = parseConfig(configText(100), env);
    const late: { gateway?: Gateway } = {};
    upstreams = await createUpstreams(config.upstreams!, {
      logger: {
        info: (r) => late.gateway?.metrics?.cardEvent(r),
        warn: (r) => late.gateway?.metrics?.cardEvent(r),
        error: () => undefined,
      },
      env: { AIRLOCK_SECRET_FAR: TOKEN_A },
      // Both gateways run in this process: the relay needs an id of its own, or the far one sees a loop.
      instanceId: 'metrics-relay',
      audit: (row) => late.gateway?.recordAudit(row),
    });
    bus = createPostgresTaskEventBus({ url: POSTGRES_URL, schema });
    otherReplica = createPostgresTaskEventBus({ url: POSTGRES_URL, schema });
    await waitFor(() => bus.connected && otherReplica.connected, 10_000, 'both buses');
    const { prepareBackends } = await import('../src/server/backends.js');
    const backends = await prepareBackends(config, { logger: silentLogger, upstream: upstreams.backendFor });
    gateway = createGateway(config, {
      logger: silentLogger,
      bus,
      backends: backends.bySlug,
      auditSink: { write: (row) => void rows.push(row), close: () => undefined },
    });
    late.gateway = gateway;
    const base = await gateway.listen();

    // Another replica publishes three events and a cancel.
    for (let i = 0; i < 3; i++) {
      otherReplica.publish('t-remote', {
        kind: 'status-update',
        taskId: 't-remote',
        contextId: 'c',
        status: { state: 'working' },
        final: false,
      } as never);
    }
    otherReplica.requestCancel('t-remote');
    await otherReplica.flushed();
    await waitFor(() => bus.stats.received >= 4, 5_000, 'four messages received');

    // Two relayed sends (the card fetched once, then cached) and one to an entry that is down.
    for (const text of ['one', 'two']) {
      const sent = await rpc(`${base}/a2a/relay`, 'SendMessage', { message: v10Message(text) }, { version: '1.0' });
      assert.equal(sent.body.result?.task?.status.state, 'TASK_STATE_COMPLETED', JSON.stringify(sent.body));
    }
    const down = await rpc(`${base}/a2a/down`, 'SendMessage', { message: v10Message('x') }, { version: '1.0' });
    assert.equal(down.body.result?.task?.status.state, 'TASK_STATE_FAILED', JSON.stringify(down.body));

    // An applied reload (a limit) and a refused one (the server port needs a restart).
    assert.equal(gateway.reload(() => parseConfig(configText(50), env)).outcome, 'applied');
    const moved = parseConfig(configText(50), env);
    moved.server.port = 1;
    assert.equal(gateway.reload(() => moved).outcome, 'refused');

    url = gateway.metrics!.url!;
    const scraped = await fetch(url, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    assert.equal(scraped.status, 200);
    samples = parseExposition(await scraped.text());
  });

  after(async () => {
    await gateway?.close();
    await upstreams?.close();
    await otherReplica?.close();
    await bus?.close();
    await far?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('observes the lag of each message from the other replica, by bus kind', () => {
    assert.equal(sample(samples, 'airlock_event_bus_lag_seconds_count', { bus: 'postgres' }), 4);
    const sum = sample(samples, 'airlock_event_bus_lag_seconds_sum', { bus: 'postgres' }) ?? -1;
    assert.ok(sum >= 0 && sum < 5, `lag sum ${sum} s`);
    assert.equal(sample(samples, 'airlock_event_bus_lag_seconds_bucket', { bus: 'postgres', le: '+Inf' }), 4);
  });

  it('counts the upstream backend calls as outbound calls, by entry, outcome and error type', () => {
    const calls = (labels: Record<string, string>) => sample(samples, 'airlock_outbound_calls_total', labels);
    assert.ok((calls({ entry: 'far', call: 'send', outcome: 'ok', error_type: 'none' }) ?? 0) >= 2);
    assert.equal(calls({ entry: 'gone', call: 'send', outcome: 'error', error_type: 'network_error' }), 1);
    const sends = rows.filter((row) => row.type === 'a2a.client.send');
    assert.ok(sends.some((row) => row.agent === 'far' && row.outcome === 'ok'));
  });

  it('counts card fetches by entry and outcome, and shows each entry’s pin state', () => {
    assert.equal(sample(samples, 'airlock_outbound_card_fetches_total', { entry: 'far', outcome: 'ok' }), 1);
    assert.equal(
      sample(samples, 'airlock_outbound_card_fetches_total', { entry: 'gone', outcome: 'network_error' }),
      1,
    );
    assert.equal(sample(samples, 'airlock_outbound_card_pin_state', { entry: 'far', state: 'pinned' }), 1);
    assert.equal(sample(samples, 'airlock_outbound_card_pin_state', { entry: 'far', state: 'mismatch' }), 0);
    assert.equal(sample(samples, 'airlock_card_events_total', { entry: 'far', event: 'card_pinned_tofu' }), 1);
  });

  it('shows approvals pending for every configured agent (none waits here)', () => {
    for (const agent of ['echo', 'relay', 'down']) {
      assert.equal(sample(samples, 'airlock_approvals_pending', { agent }), 0, agent);
    }
  });

  it('writes an audit row for each reload, naming sections only, and counts both', () => {
    const reloads = rows.filter((row) => row.type.startsWith('config.'));
    assert.deepEqual(
      reloads.map((row) => ({ ...row, time: undefined })),
      [
        { type: 'config.reloaded', time: undefined, outcome: 'ok', sections: 'limits' },
        {
          type: 'config.reload_refused',
          time: undefined,
          outcome: 'denied',
          reason: 'needs_restart',
          sections: 'server',
        },
      ],
    );
    assert.equal(sample(samples, 'airlock_config_reloads_total', { outcome: 'applied', reason: 'none' }), 1);
    assert.equal(sample(samples, 'airlock_config_reloads_total', { outcome: 'refused', reason: 'needs_restart' }), 1);
    assert.equal(sample(samples, 'airlock_audit_rows_total', { type: 'config.reloaded' }), 1);
  });
});

describe('airlock_approvals_pending labels', () => {
  it('every configured agent gets a value; a name not in the config is counted as unknown', async () => {
    const { openMetrics } = await import('../src/server/metrics/wiring.js');
    const config = parseConfig(
      `
server: { port: 41241 }
metrics: { port: 0 }
agents:
  - { slug: ops, name: O, description: O, skills: [{ id: o, name: O, description: O }], backend: { type: echo } }
  - { slug: echo, name: E, description: E, skills: [{ id: e, name: E, description: E }], backend: { type: echo } }
`,
      {},
    );
    const metrics = openMetrics(config, silentLogger)!;
    metrics.observeApprovals(
      async () =>
        new Map([
          ['ops', 2],
          ['Evil {agent}', 3],
          ['', 1],
        ]),
    );
    const samples = parseExposition(await metrics.series.registry.metrics());
    assert.equal(sample(samples, 'airlock_approvals_pending', { agent: 'ops' }), 2);
    assert.equal(sample(samples, 'airlock_approvals_pending', { agent: 'echo' }), 0);
    assert.equal(sample(samples, 'airlock_approvals_pending', { agent: 'unknown' }), 4);
    // A store that fails the read leaves the series out of that scrape, and the scrape works.
    metrics.observeApprovals(async () => Promise.reject(new Error('store down')));
    const failed = parseExposition(await metrics.series.registry.metrics());
    assert.equal(sample(failed, 'airlock_approvals_pending', { agent: 'ops' }), undefined);
    await metrics.close();
  });
});
