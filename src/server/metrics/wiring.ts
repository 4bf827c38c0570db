/**
 * The gateway's metrics, wired: the series, the request meter for the routes, the metered audit
 * sink, the timed store, the scrape-time gauges and the listener. `createGateway` calls
 * {@link openMetrics} once; it answers undefined when the config has no `metrics` section, and
 * then nothing anywhere pays for metrics.
 *
 * Nothing below `server/` imports a metrics library: the task service, the store and the audit
 * trail are observed through the ports the gateway already composes.
 *
 * @example
 * ```ts
 * const metrics = openMetrics(config, logger);
 * const store = metrics?.store(rawStore, config.store.type) ?? rawStore;
 * const url = await metrics?.listen(); // http://127.0.0.1:9464/metrics
 * ```
 */
import type { AuditSink } from '../../audit/index.js';
import type { AirlockConfig } from '../../config/load.js';
import { SharedTaskEventBus } from '../../tasks/buses/shared.js';
import type { TaskEventBus } from '../../tasks/events.js';
import type { TaskStore } from '../../tasks/store.js';
import type { Logger } from '../log.js';
import { meteredAuditSink } from './audit-sink.js';
import { cardEventLabels, cardFetchLabels, pinStateOf } from './card-events.js';
import { UNKNOWN_LABEL } from './from-audit.js';
import { createMetricsListener } from './listener.js';
import { createRequestMeter, type RequestMeter } from './requests.js';
import { createSeries, type GaugeSources, type MetricSeries } from './series.js';
import { timedStore } from './store.js';

/**
 * The gateway's metrics (`gateway.metrics`).
 *
 * @example
 * ```ts
 * const text = await gateway.metrics?.series.registry.metrics();
 * ```
 */
export interface GatewayMetrics {
  readonly series: MetricSeries;
  /** Wraps the JSON-RPC, HTTP+JSON and ask routes. */
  readonly requests: RequestMeter;
  /** The configured sink (or none), metered: every row the gateway records is counted. */
  auditSink(inner: AuditSink | undefined): AuditSink;
  /** The task store, timed (`kind`: the config's store type). */
  store(store: TaskStore, kind: string): TaskStore;
  /** Where the scrape-time gauges read from. */
  sample(sources: GaugeSources): void;
  /** A log record of the upstream connector: counted when it is a card trust event or a card fetch (card-events.ts). */
  cardEvent(record: Readonly<Record<string, unknown>>): void;
  /**
   * Observes the lag of a shared bus (`airlock_event_bus_lag_seconds`); a one-process bus, or
   * none, has no other replica to measure.
   */
  observeBus(bus: TaskEventBus | undefined): void;
  /**
   * Where `airlock_approvals_pending` reads at scrape time: every configured agent gets a value
   * (0 when none waits), any other name counts as `unknown`, and a store that fails the read
   * leaves the series out of that scrape.
   */
  observeApprovals(count: () => Promise<ReadonlyMap<string, number>>): void;
  /** Starts the listener; resolves with the scrape URL. */
  listen(): Promise<string>;
  /** The scrape URL once listening. */
  readonly url: string | undefined;
  close(): Promise<void>;
}

/**
 * The metrics for `config`, or undefined when `metrics` is not configured.
 *
 * @example
 * ```ts
 * openMetrics({ ...config, metrics: { host: '127.0.0.1', port: 0 } }, logger)?.listen();
 * ```
 */
export function openMetrics(config: AirlockConfig, logger: Logger): GatewayMetrics | undefined {
  const settings = config.metrics;
  if (settings === undefined) return undefined;
  const series = createSeries();
  const agents: ReadonlySet<string> = new Set(config.agents.map((agent) => agent.slug));
  const listener = createMetricsListener({
    registry: series.registry,
    host: settings.host,
    port: settings.port,
    tokenDigest: settings.tokenDigest,
    logger,
  });
  let url: string | undefined;
  const stops: (() => void)[] = [];
  // Entries come from the registry file (the connector's log lines), so the map stays small.
  const pins = new Map<string, 'pinned' | 'mismatch'>();
  series.sample({ cardPins: () => pins });
  return {
    series,
    requests: createRequestMeter(series),
    auditSink: (inner) => meteredAuditSink(series, agents, inner),
    store: (store, kind) => timedStore(store, kind, series),
    sample: (sources) => series.sample(sources),
    cardEvent: (record) => {
      const labels = cardEventLabels(record);
      if (labels !== undefined) series.cardEvents.inc(...labels);
      const fetched = cardFetchLabels(record);
      if (fetched !== undefined) series.cardFetches.inc(...fetched);
      const pin = pinStateOf(record);
      if (pin !== undefined) pins.set(...pin);
    },
    observeBus: (bus) => {
      if (!(bus instanceof SharedTaskEventBus)) return;
      const kind = bus.kind;
      stops.push(bus.onReceiptLag((seconds) => series.busLag.observe(seconds, kind)));
    },
    observeApprovals: (count) =>
      series.sample({ approvalsPending: () => pendingByConfiguredAgent(count, agents, logger) }),
    listen: async () => (url = await listener.listen()),
    get url() {
      return url;
    },
    close: () => {
      for (const stop of stops.splice(0)) stop();
      return listener.close();
    },
  };
}

/** The store's counts under bounded labels: configured agents (0 included), else `unknown`. */
async function pendingByConfiguredAgent(
  count: () => Promise<ReadonlyMap<string, number>>,
  agents: ReadonlySet<string>,
  logger: Logger,
): Promise<ReadonlyMap<string, number>> {
  let counts: ReadonlyMap<string, number>;
  try {
    counts = await count();
  } catch (error) {
    logger.warn({ event: 'metrics_approvals_count_failed', error: error instanceof Error ? error.name : 'error' });
    return new Map();
  }
  const out = new Map<string, number>([...agents].map((agent) => [agent, 0]));
  for (const [agent, n] of counts) {
    const label = agents.has(agent) ? agent : UNKNOWN_LABEL;
    out.set(label, (out.get(label) ?? 0) + n);
  }
  return out;
}

/**
 * The request meter's route wrappers; each the identity without metrics.
 *
 * @example
 * ```ts
 * const meter = routeMeters(metrics);
 * const rpc = meter.jsonRpc(createRpcRoute(bindingOptions));
 * ```
 */
export function routeMeters(metrics: GatewayMetrics | undefined): Pick<RequestMeter, 'jsonRpc' | 'httpJson' | 'ask'> {
  if (metrics !== undefined) return metrics.requests;
  return { jsonRpc: (route) => route, httpJson: (route) => route, ask: (route) => route };
}
