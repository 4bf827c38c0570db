/**
 * The audit sink, metered: the configured sinks' write latency and failures, then every row the
 * gateway records turned into counters (`metricsOfRow`) and task durations. Rows are counted
 * whether or not any sink is configured: with metrics on, the gateway builds its rows even when
 * it writes them nowhere.
 *
 * A row its sink could not write is not counted (what it records did not happen: the caller is
 * refused), and the sink's error goes on to the caller unchanged.
 *
 * @example
 * ```ts
 * const sink = meteredAuditSink(series, new Set(['echo']), openAuditSinks(config.audit));
 * const audit = new InboundAudit(sink, logger);
 * ```
 */
import type { AuditEvent, AuditSink } from '../../audit/index.js';
import { metricsOfRow } from './from-audit.js';
import type { MetricSeries } from './series.js';

/** Tasks whose start time is kept for the duration histogram; past it the oldest is forgotten. */
export const MAX_TIMED_TASKS = 10_000;

/**
 * Wraps `inner` (absent: no sink configured) with the metrics.
 *
 * @example
 * ```ts
 * meteredAuditSink(series, agents, undefined).write(row); // counted, written nowhere
 * ```
 */
export function meteredAuditSink(
  series: MetricSeries,
  agents: ReadonlySet<string>,
  inner: AuditSink | undefined,
  now: () => number = () => performance.now(),
): AuditSink {
  const started = new Map<string, { at: number; agent: string }>();
  const watchedBatches = new WeakSet<Promise<void>>();
  const count = (row: AuditEvent): void => {
    series.auditRows.inc(row.type);
    const meaning = metricsOfRow(row, agents);
    for (const { series: name, labels } of meaning.counts) series[name].inc(...labels);
    const task = meaning.task;
    if (task === undefined) return;
    if (task.ends === undefined) {
      if (started.size >= MAX_TIMED_TASKS) started.delete(started.keys().next().value as string);
      started.set(task.id, { at: now(), agent: task.agent });
      return;
    }
    const start = started.get(task.id);
    if (start === undefined) return;
    started.delete(task.id);
    series.taskDuration.observe((now() - start.at) / 1000, task.agent, task.ends);
  };
  return {
    write: (row) => {
      if (inner !== undefined) {
        const at = performance.now();
        try {
          inner.write(row);
        } catch (error) {
          series.auditWriteErrors.inc();
          throw error;
        } finally {
          series.auditWriteSeconds.observe((performance.now() - at) / 1000);
        }
      }
      count(row);
    },
    // Group commit: the write timed above is the row's encoding and chaining; the batch's one
    // write is the sink's, and a batch that fails counts once as a write error.
    committed: () => {
      const pending = inner?.committed?.();
      if (pending !== undefined && !watchedBatches.has(pending)) {
        watchedBatches.add(pending);
        pending.catch(() => series.auditWriteErrors.inc());
      }
      return pending;
    },
    close: () => inner?.close(),
  };
}
