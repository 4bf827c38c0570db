/**
 * OpenTelemetry export end to end: the real SDK (TracerProvider, BatchSpanProcessor, OTLP/HTTP
 * JSON exporter, set up by `startTelemetry`) exports to a loopback OTLP receiver that decodes
 * what arrives. Gateway A serves `echo` and `relay` (an `a2a` backend through the real upstream
 * connector); gateway B serves the echo the relay reaches (its server span links to the
 * traceparent A sent). Checked: the server span and its admission, turn and store children (ids,
 * parents, attributes), the caller's traceparent as a link only, the outbound span and the
 * traceparent it sends (ours, not the caller's), and that no message text or token is exported.
 * First, with nothing configured: no SDK loaded and nothing sent to the receiver.
 */
import { loadRegistryFile } from '../src/client/registry.js';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createUpstreamBackend } from '../src/agents/upstream/index.js';
import { createUpstreamConnector, type UpstreamConnectorRuntime } from '../src/client/upstream.js';
import { otlpTarget } from '../src/telemetry/config.js';
import { startTelemetry, telemetrySdkLoaded, type Telemetry } from '../src/telemetry/setup.js';
import { tracingActive } from '../src/telemetry/tracer.js';
import {
  DEFAULT_YAML,
  eventually,
  rpc,
  startGateway,
  TOKEN_A,
  v03Message,
  type TestGateway,
} from './helpers/gateway.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './helpers/tracing.js';

const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const CALLER_TRACEPARENT = `00-${CALLER_TRACE}-${CALLER_SPAN}-01`;
const CALLER_TRACESTATE = 'vendor=caller-state-0123';
const CALLER_BAGGAGE = 'user=caller-baggage-0123';
/** Message text: it must appear in no exported byte. */
const SECRET_TEXT = 'secret-message-text-5f1c2a9e';
const RELAY_TEXT = 'relayed-message-text-77d0b3c4';
/** The registry entry's bearer token toward gateway B (B's client `a`). */
const UPSTREAM_TOKEN_ENV = 'AIRLOCK_SECRET_UPSTREAM';
const COLLECTOR_KEY = 'collector-key-value-9a8b7c6d';

const SERVER = 2;
const CLIENT = 3;

const GATEWAY_A_YAML = `
server: { host: 127.0.0.1, port: 0, defaultAgent: echo, rest: true }
agents:
  - slug: echo
    name: Echo
    description: Echoes.
    skills: [{ id: echo, name: Echo, description: Echoes text, tags: [demo] }]
    backend: { type: echo }
  - slug: relay
    name: Relay
    description: Relays to gateway B.
    skills: [{ id: relay, name: Relay, description: Relays, tags: [demo] }]
    backend: { type: echo }
clients:
  - { id: a, token: "\${TOKEN_A}", agents: [echo, relay] }
`;

function registryYaml(cardUrl: string): string {
  return `agents:
  - name: upstream
    card_url: ${cardUrl}
    description: Gateway B's echo.
    effect: read_only
    auth: { bearer_env: ${UPSTREAM_TOKEN_ENV} }
    poll_interval_s: 0.05
    max_wait_s: 5
`;
}

describe('trace export is off by default', () => {
  it('with nothing configured, no SDK is loaded, no tracer is active and nothing is sent', async () => {
    const receiver = await startOtlpReceiver();
    const telemetry = await startTelemetry(otlpTarget(undefined, {}));
    const gw = await startGateway(DEFAULT_YAML);
    try {
      assert.equal(telemetry.enabled, false);
      assert.equal(telemetrySdkLoaded(), false);
      assert.equal(tracingActive(), false);
      const call = await rpc(`${gw.url}/a2a/echo`, 'message/send', { message: v03Message('hello') });
      assert.equal(call.status, 200);
      await telemetry.flush();
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(receiver.bodies.length, 0);
    } finally {
      await gw.close();
      await receiver.close();
    }
  });
});

describe('OTLP/HTTP export of the gateway’s spans', () => {
  let receiver: OtlpReceiver;
  let telemetry: Telemetry;
  let gwA: TestGateway;
  let gwB: TestGateway;
  let connector: UpstreamConnectorRuntime;
  let dir: string;

  before(async () => {
    receiver = await startOtlpReceiver();
    telemetry = await startTelemetry(
      { url: receiver.url, headers: { 'x-collector-key': COLLECTOR_KEY }, serviceName: 'airlock-test', sampleRatio: 1 },
      { instanceId: 'gw-test-1', scheduledDelayMillis: 20, exportTimeoutMillis: 2000 },
    );
    // Two gateways of one process: distinct instance ids, or B would see A's relay as a loop.
    gwB = await startGateway(DEFAULT_YAML, { server: { instanceId: 'otel-test-gw-b' } });
    dir = mkdtempSync(join(tmpdir(), 'airlock-otel-'));
    writeFileSync(join(dir, 'upstreams.yaml'), registryYaml(`${gwB.url}/a2a/echo/.well-known/agent-card.json`));
    connector = createUpstreamConnector({
      registryPath: join(dir, 'upstreams.yaml'),
      registry: loadRegistryFile(join(dir, 'upstreams.yaml'), { [UPSTREAM_TOKEN_ENV]: TOKEN_A }),
      pinsPath: join(dir, 'pins.json'),
      env: { [UPSTREAM_TOKEN_ENV]: TOKEN_A },
    });
    const relay = createUpstreamBackend({ type: 'a2a', agent: 'upstream' }, { agent: 'relay' }, connector);
    gwA = await startGateway(GATEWAY_A_YAML, { backends: { relay }, server: { instanceId: 'otel-test-gw-a' } });
  });

  after(async () => {
    await gwA.close();
    await connector.close();
    await gwB.close();
    await telemetry.shutdown();
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * Flushes until `find` finds its span. A flush exports what is queued, but an export the
   * batch timer started may still be on its way: so, again until it arrived.
   */
  async function arrived(
    find: (spans: ReceivedSpan[]) => ReceivedSpan | undefined,
    what: string,
  ): Promise<ReceivedSpan> {
    let found: ReceivedSpan | undefined;
    await eventually(
      async () => {
        await telemetry.flush();
        found = find(receiver.spans());
        return found !== undefined;
      },
      3000,
      what,
    );
    return found!;
  }

  /** The server span whose task is `taskId`, and every span of its trace. */
  async function traceOf(taskId: string): Promise<{ server: ReceivedSpan; spans: ReceivedSpan[] }> {
    const server = await arrived(
      (spans) => spans.find((span) => span.kind === SERVER && span.attributes['a2a.task.id'] === taskId),
      `the server span of task ${taskId}`,
    );
    // Its children ended before it did: they are in the same export or an earlier one.
    return { server, spans: receiver.spans().filter((span) => span.traceId === server.traceId) };
  }

  it('the SDK is loaded and registered, the resource names the service and instance', () => {
    assert.equal(telemetry.enabled, true);
    assert.equal(telemetrySdkLoaded(), true);
    assert.equal(tracingActive(), true);
  });

  it('a send: a SERVER span linked to the caller, with admission, turn and store children', async () => {
    const call = await rpc(
      `${gwA.url}/a2a/echo`,
      'message/send',
      { message: v03Message(SECRET_TEXT) },
      { headers: { traceparent: CALLER_TRACEPARENT, tracestate: CALLER_TRACESTATE, baggage: CALLER_BAGGAGE } },
    );
    assert.equal(call.status, 200);
    const taskId = call.body.result.id as string;
    const contextId = call.body.result.contextId as string;
    const { server, spans } = await traceOf(taskId);

    assert.equal(server.name, 'a2a.jsonrpc');
    assert.equal(server.parentSpanId, '', 'the server span is a root');
    assert.notEqual(server.traceId, CALLER_TRACE, 'the caller’s trace is not ours');
    assert.deepEqual(server.links, [{ traceId: CALLER_TRACE, spanId: CALLER_SPAN }]);
    assert.equal(server.attributes['a2a.method'], 'send');
    assert.equal(server.attributes['a2a.agent'], 'echo');
    assert.equal(server.attributes['a2a.context.id'], contextId);
    assert.equal(server.resource['service.name'], 'airlock-test');
    assert.equal(server.resource['service.instance.id'], 'gw-test-1');

    const named = (name: string) => spans.filter((span) => span.name === name);
    const [admission] = named('airlock.admission');
    assert.equal(admission?.parentSpanId, server.spanId);
    assert.equal(admission?.attributes['airlock.admission.refused'], undefined);
    assert.equal(named('airlock.admission.turn')[0]?.parentSpanId, server.spanId);
    const [turn] = named('airlock.turn');
    assert.equal(turn?.parentSpanId, server.spanId);
    assert.equal(turn?.attributes['a2a.task.id'], taskId);
    assert.equal(turn?.attributes['a2a.context.id'], contextId);
    assert.equal(turn?.attributes['a2a.task.state'], 'completed');
    assert.equal(turn?.attributes['airlock.backend'], 'echo');
    const writes = named('airlock.store.put');
    assert.ok(writes.length >= 1, 'at least one store write');
    for (const write of writes) {
      assert.equal(write.parentSpanId, turn?.spanId, 'a store write is a child of the turn');
      assert.equal(write.attributes['a2a.task.id'], taskId);
    }
  });

  it('a refused request: the admission span says refused, the server span still ends', async () => {
    const call = await rpc(`${gwA.url}/a2a/echo`, 'message/send', { message: v03Message('x') }, { token: 'wrong' });
    assert.equal(call.status, 401);
    const admission = await arrived(
      (spans) => spans.find((span) => span.attributes['airlock.admission.refused'] === true),
      'a refused admission',
    );
    assert.equal(admission.name, 'airlock.admission');
    const server = await arrived(
      (spans) => spans.find((span) => span.spanId === admission.parentSpanId),
      'its server span',
    );
    assert.equal(server.name, 'a2a.jsonrpc');
    assert.equal(server.attributes['a2a.method'], undefined, 'never decoded');
  });

  it('an unknown task: the server span carries the JSON-RPC error code', async () => {
    const call = await rpc(`${gwA.url}/a2a/echo`, 'tasks/get', { id: 'no-such-task' });
    assert.equal(call.body.error.code, -32001);
    const server = await arrived(
      (spans) => spans.find((span) => span.kind === SERVER && span.attributes['a2a.task.id'] === 'no-such-task'),
      'the server span of the get',
    );
    assert.equal(server?.attributes['a2a.method'], 'get');
    assert.equal(server?.attributes['a2a.task.id'], 'no-such-task');
    assert.equal(server?.attributes['a2a.response.error_code'], -32001);
  });

  it('the HTTP+JSON binding: its own server span, with the method, task id, error code and admission child', async () => {
    const response = await fetch(`${gwA.url}/a2a/echo/tasks/no-such-rest-task`, {
      headers: { authorization: `Bearer ${TOKEN_A}`, 'a2a-version': '1.0', traceparent: CALLER_TRACEPARENT },
    });
    assert.equal(response.status, 404);
    await response.text();
    const server = await arrived(
      (spans) => spans.find((span) => span.kind === SERVER && span.attributes['a2a.task.id'] === 'no-such-rest-task'),
      'the HTTP+JSON server span',
    );
    assert.equal(server.name, 'a2a.http_json');
    assert.equal(server.parentSpanId, '');
    assert.deepEqual(server.links, [{ traceId: CALLER_TRACE, spanId: CALLER_SPAN }]);
    assert.equal(server.attributes['a2a.method'], 'get');
    assert.equal(server.attributes['a2a.response.error_code'], -32001);
    const admission = await arrived(
      (spans) => spans.find((span) => span.name === 'airlock.admission' && span.parentSpanId === server.spanId),
      'its admission span',
    );
    assert.equal(admission.traceId, server.traceId);
  });

  it('a relayed turn: CLIENT spans under the turn, and the upstream gets our traceparent, not the caller’s', async () => {
    const call = await rpc(
      `${gwA.url}/a2a/relay`,
      'message/send',
      { message: v03Message(RELAY_TEXT) },
      { headers: { traceparent: CALLER_TRACEPARENT, tracestate: CALLER_TRACESTATE, baggage: CALLER_BAGGAGE } },
    );
    assert.equal(call.status, 200, JSON.stringify(call.body));
    const { server, spans } = await traceOf(call.body.result.id as string);
    const [turn] = spans.filter((span) => span.name === 'airlock.turn');
    assert.equal(turn?.attributes['airlock.backend'], 'a2a');
    const outbound = spans.filter((span) => span.name === 'airlock.outbound');
    assert.ok(outbound.length >= 2, 'the card fetch and the send at least');
    for (const span of outbound) {
      assert.equal(span.kind, CLIENT);
      assert.equal(span.parentSpanId, turn?.spanId, 'an outbound call is a child of the turn');
      assert.equal(span.attributes['server.address'], '127.0.0.1');
      assert.equal(span.attributes['url.full'], undefined, 'no URL (it could hold a credential)');
    }
    const ours = new Set(outbound.map((span) => `${server.traceId}-${span.spanId}`));
    // B's own server span links to the outbound span that called it, in A's trace.
    // (B's span ends when its answer, maybe a stream, is written: possibly after A read it.)
    const atB = await arrived(
      (spans) =>
        spans.find((span) => span.kind === SERVER && span.links.some((link) => link.traceId === server.traceId)),
      'gateway B’s server span, linked to A’s trace',
    );
    assert.notEqual(atB.traceId, server.traceId);
    // What B was sent: a traceparent naming one of A's outbound spans, not the caller's.
    assert.equal(atB.links.length, 1);
    assert.ok(ours.has(`${atB.links[0]!.traceId}-${atB.links[0]!.spanId}`));
    assert.equal(atB.attributes['a2a.method'], 'stream');
  });

  it('no message text, token or collector key in anything exported; the collector got its header', async () => {
    await telemetry.flush();
    const everything = receiver.bodies.join('\n');
    assert.ok(everything.length > 0);
    for (const secret of [SECRET_TEXT, RELAY_TEXT, TOKEN_A, COLLECTOR_KEY, CALLER_TRACESTATE, CALLER_BAGGAGE]) {
      assert.equal(everything.includes(secret), false, `${secret.slice(0, 12)}… must not be exported`);
    }
    assert.ok(receiver.headers.every((headers) => headers['x-collector-key'] === COLLECTOR_KEY));
  });
});

describe('sampleRatio 0: whole requests are sampled out', () => {
  it('exports nothing, children included, and the SDK unregisters on shutdown', async () => {
    const receiver = await startOtlpReceiver();
    const telemetry = await startTelemetry(
      { url: receiver.url, headers: {}, serviceName: 'airlock-test', sampleRatio: 0 },
      { scheduledDelayMillis: 20 },
    );
    const gw = await startGateway(DEFAULT_YAML);
    try {
      assert.equal(telemetry.enabled, true);
      const call = await rpc(`${gw.url}/a2a/echo`, 'message/send', { message: v03Message('hello') });
      assert.equal(call.status, 200);
      await telemetry.flush();
      await new Promise((resolve) => setTimeout(resolve, 50));
      await telemetry.flush();
      assert.deepEqual(receiver.spans(), [], 'no span of the request, not even a turn or store child');
    } finally {
      await gw.close();
      await telemetry.shutdown();
      await receiver.close();
    }
    assert.equal(tracingActive(), false);
  });
});
