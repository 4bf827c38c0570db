/**
 * Every Prometheus series the gateway exports, defined in one place: name, help text, labels
 * and buckets. One `Registry` per gateway (never prom-client's global one), so two gateways in
 * one process (tests, the library) never mix their counts.
 *
 * Label values come only from the config (agent slugs, registry entry names) or from closed
 * enums in code (methods, reasons, states): a caller never chooses one. Counters count in a plain
 * map and hand their totals to prom-client at scrape time (`fastCounter`), so the hot path pays
 * a map lookup per label value per increment (or none, through a child), not prom-client's label hashing.
 *
 * @example
 * ```ts
 * const series = createSeries();
 * series.requests.inc('echo', 'jsonrpc', 'send', '1.0', 'ok');
 * const text = await series.registry.metrics();
 * ```
 */
import type { Registry } from 'prom-client';
import { promClient } from './prom.js';
import { fastCounter, fastHistogram, type LabelledCounter, type LabelledHistogram } from './fast.js';

export type { LabelledCounter, LabelledHistogram } from './fast.js';

/** Latency buckets (seconds) of store and audit operations: sub-millisecond to seconds. */
export const OPERATION_BUCKETS = [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
/** Event bus lag buckets (seconds): a loopback hop to a replica minutes behind. */
export const BUS_LAG_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Task duration buckets (seconds): a quick echo to an hour parked on a person. */
export const TASK_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];

/**
 * Values sampled at scrape time (collect callbacks), from the parts that know them.
 *
 * @example
 * ```ts
 * const gauges: GaugeSources = { turnsInFlight: () => service.running, streamsOpen: () => streams.open() };
 * ```
 */
export interface GaugeSources {
  turnsInFlight?: () => number;
  streamsOpen?: () => number;
  /** Upstream entry → its card's pin state as last seen here (`pinned` or `mismatch`). */
  cardPins?: () => ReadonlyMap<string, 'pinned' | 'mismatch'>;
  /** Agent slug → actions awaiting a person now (read from the approval store at scrape time). */
  approvalsPending?: () => Promise<ReadonlyMap<string, number>>;
}

/**
 * The gateway's series. See docs/OPERATIONS.md, "Metrics", for what each means and what to alert on.
 *
 * @example
 * ```ts
 * const series: MetricSeries = createSeries();
 * ```
 */
export interface MetricSeries {
  readonly registry: Registry;
  /** agent, binding, method, dialect, outcome */
  readonly requests: LabelledCounter;
  /** agent, class, reason */
  readonly refusals: LabelledCounter;
  /** agent, state */
  readonly taskTransitions: LabelledCounter;
  /** agent, reason */
  readonly taskFailures: LabelledCounter;
  /** seconds; agent, state (final states) */
  readonly taskDuration: LabelledHistogram;
  /** agent */
  readonly suspiciousInputs: LabelledCounter;
  /** seconds; store, operation */
  readonly storeSeconds: LabelledHistogram;
  /** store, operation */
  readonly storeErrors: LabelledCounter;
  /** entry, call, outcome, error_type */
  readonly outboundCalls: LabelledCounter;
  /** entry, event */
  readonly cardEvents: LabelledCounter;
  /** entry, outcome (ok or the outbound error type) */
  readonly cardFetches: LabelledCounter;
  /** agent, kind */
  readonly approvalsRequested: LabelledCounter;
  /** agent, decision */
  readonly approvalsDecided: LabelledCounter;
  /** reason */
  readonly approvalsRefused: LabelledCounter;
  /** agent, outcome, reason */
  readonly toolCalls: LabelledCounter;
  /** agent, outcome, reason */
  readonly pushDeliveries: LabelledCounter;
  /** type */
  readonly auditRows: LabelledCounter;
  readonly auditWriteSeconds: LabelledHistogram;
  readonly auditWriteErrors: LabelledCounter;
  /** outcome (applied, refused), reason (none, invalid_config, needs_restart, apply_failed) */
  readonly reloads: LabelledCounter;
  /** seconds from publish on another replica to receipt here; bus (postgres, redis) */
  readonly busLag: LabelledHistogram;
  /** Sets where the scrape-time gauges read from. */
  sample(sources: GaugeSources): void;
}

/**
 * A fresh registry with every series registered (and the process's default metrics: CPU,
 * memory, event-loop lag, GC).
 *
 * @example
 * ```ts
 * const series = createSeries();
 * series.registry.contentType; // 'text/plain; version=0.0.4; charset=utf-8'
 * ```
 */
export function createSeries(options: { defaultMetrics?: boolean } = {}): MetricSeries {
  const { collectDefaultMetrics, Gauge, Registry } = promClient();
  const registry = new Registry();
  const registers = [registry];
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry });
  const counter = (name: string, help: string, labelNames: string[]): LabelledCounter =>
    fastCounter({ name, help, labelNames, registers });
  const histogram = (name: string, help: string, labelNames: string[], buckets: number[]): LabelledHistogram =>
    fastHistogram({ name, help, labelNames, buckets, registers });
  const sources: GaugeSources = {};
  new Gauge({
    name: 'airlock_turns_in_flight',
    help: 'Turns running on this process now (sampled at scrape).',
    registers,
    collect() {
      this.set(sources.turnsInFlight?.() ?? 0);
    },
  });
  new Gauge({
    name: 'airlock_sse_streams_open',
    help: 'SSE streams open on this process now (sampled at scrape).',
    registers,
    collect() {
      this.set(sources.streamsOpen?.() ?? 0);
    },
  });
  new Gauge({
    name: 'airlock_outbound_card_pin_state',
    help: "1 for the pin state of each upstream entry's card as last seen on this process (pinned or mismatch).",
    labelNames: ['entry', 'state'],
    registers,
    collect() {
      this.reset();
      for (const [entry, state] of sources.cardPins?.() ?? []) {
        this.set({ entry, state: 'pinned' }, state === 'pinned' ? 1 : 0);
        this.set({ entry, state: 'mismatch' }, state === 'mismatch' ? 1 : 0);
      }
    },
  });
  new Gauge({
    name: 'airlock_approvals_pending',
    help: 'Guarded actions awaiting a person now, by agent (read from the approval store at scrape).',
    labelNames: ['agent'],
    registers,
    async collect() {
      const pending = await sources.approvalsPending?.();
      this.reset();
      for (const [agent, count] of pending ?? []) this.set({ agent }, count);
    },
  });
  return {
    registry,
    requests: counter(
      'airlock_requests_total',
      'A2A requests answered, by agent, binding, canonical method, dialect and outcome.',
      ['agent', 'binding', 'method', 'dialect', 'outcome'],
    ),
    refusals: counter(
      'airlock_refusals_total',
      'Requests refused before or instead of a turn, by class and reason code.',
      ['agent', 'class', 'reason'],
    ),
    taskTransitions: counter(
      'airlock_task_transitions_total',
      'Task lifecycle transitions recorded, by agent and state.',
      ['agent', 'state'],
    ),
    taskFailures: counter('airlock_task_failures_total', 'Tasks failed, by agent and reason code.', [
      'agent',
      'reason',
    ]),
    taskDuration: histogram(
      'airlock_task_duration_seconds',
      'Time from submitted to a final state, for tasks submitted on this process.',
      ['agent', 'state'],
      TASK_BUCKETS,
    ),
    suspiciousInputs: counter('airlock_suspicious_inputs_total', 'Messages with suspicious patterns counted.', [
      'agent',
    ]),
    storeSeconds: histogram(
      'airlock_store_operation_seconds',
      'Task store operation latency, by store kind and operation.',
      ['store', 'operation'],
      OPERATION_BUCKETS,
    ),
    storeErrors: counter(
      'airlock_store_errors_total',
      'Task store operations that failed, by store kind and operation.',
      ['store', 'operation'],
    ),
    outboundCalls: counter(
      'airlock_outbound_calls_total',
      'Outbound calls (a2a.client.* audit rows), by registry entry, call, outcome and error_type.',
      ['entry', 'call', 'outcome', 'error_type'],
    ),
    cardEvents: counter(
      'airlock_card_events_total',
      'Card trust events of the upstream cards of a2a backends (pins, signatures), by registry entry and event.',
      ['entry', 'event'],
    ),
    cardFetches: counter(
      'airlock_outbound_card_fetches_total',
      "Agent card fetches of the a2a backends' upstream entries, by entry and outcome (ok, or the outbound error type).",
      ['entry', 'outcome'],
    ),
    approvalsRequested: counter(
      'airlock_approvals_requested_total',
      'Guarded actions and questions parked on a person.',
      ['agent', 'kind'],
    ),
    approvalsDecided: counter('airlock_approvals_decided_total', 'Decisions and answers a person gave.', [
      'agent',
      'decision',
    ]),
    approvalsRefused: counter('airlock_approvals_refused_total', 'Proposals and decisions refused, by reason code.', [
      'reason',
    ]),
    toolCalls: counter('airlock_tool_calls_total', 'Tool calls, by agent, outcome and reason code.', [
      'agent',
      'outcome',
      'reason',
    ]),
    pushDeliveries: counter('airlock_push_deliveries_total', 'Webhook deliveries, by agent, outcome and reason code.', [
      'agent',
      'outcome',
      'reason',
    ]),
    auditRows: counter('airlock_audit_rows_total', 'Audit rows recorded, by event type.', ['type']),
    auditWriteSeconds: histogram(
      'airlock_audit_write_seconds',
      "Time to hand one audit row to the configured sinks (encoded and chained; with the file's group commit, its write follows at the end of the loop turn).",
      [],
      OPERATION_BUCKETS,
    ),
    auditWriteErrors: counter(
      'airlock_audit_write_errors_total',
      'Audit writes that failed: a row refused by a sink, or a group-commit batch of the file.',
      [],
    ),
    reloads: counter('airlock_config_reloads_total', 'Config reloads (SIGHUP), by outcome and reason.', [
      'outcome',
      'reason',
    ]),
    busLag: histogram(
      'airlock_event_bus_lag_seconds',
      'Time from a task event or cancel published on another replica to its receipt here, by bus kind (clock skew clamped to 0).',
      ['bus'],
      BUS_LAG_BUCKETS,
    ),
    sample: (next) => Object.assign(sources, next),
  };
}
