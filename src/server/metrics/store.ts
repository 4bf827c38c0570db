/**
 * The task store, timed: each operation's latency goes to `airlock_store_operation_seconds` and
 * each failure to `airlock_store_errors_total`, labelled with the store kind (from the config)
 * and the operation (a method name of the `TaskStore` interface, never a caller's string).
 *
 * @example
 * ```ts
 * const store = timedStore(new MemoryTaskStore(), 'memory', series);
 * await store.get(owner, taskId); // observed as { store: 'memory', operation: 'get' }
 * ```
 */
import type { TaskStore } from '../../tasks/store.js';
import type { LabelledHistogramChild } from './fast.js';
import type { MetricSeries } from './series.js';

/**
 * Wraps `store` so that its operations are timed. The store's own object still does the work;
 * the wrapper is a plain object (no Proxy), so a call costs one extra function and two clock reads.
 *
 * @example
 * ```ts
 * const store = timedStore(await openTaskStore(spec), 'postgres', series);
 * ```
 */
export function timedStore(
  store: TaskStore,
  kind: string,
  series: Pick<MetricSeries, 'storeSeconds' | 'storeErrors'>,
): TaskStore {
  const putSeconds = series.storeSeconds.child(kind, 'put');
  const getSeconds = series.storeSeconds.child(kind, 'get');
  const listSeconds = series.storeSeconds.child(kind, 'list');
  /** Times `run` until it settles; a failure (thrown or rejected) is also counted and goes on to the caller. */
  const timed = <T>(seconds: LabelledHistogramChild, operation: string, run: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    const failed = (error: unknown): never => {
      seconds.observe((performance.now() - started) / 1000);
      series.storeErrors.inc(kind, operation);
      throw error;
    };
    let pending: Promise<T>;
    try {
      pending = run();
    } catch (error) {
      // A store that throws fails as one that rejects: `failed` throws in the executor.
      return new Promise<T>(() => failed(error));
    }
    return pending.then((value) => {
      seconds.observe((performance.now() - started) / 1000);
      return value;
    }, failed);
  };
  return {
    put: (owner, task, options) => timed(putSeconds, 'put', () => store.put(owner, task, options)),
    get: (owner, taskId) => timed(getSeconds, 'get', () => store.get(owner, taskId)),
    list: (owner, query) => timed(listSeconds, 'list', () => store.list(owner, query)),
    ...(store.failRunning !== undefined && {
      failRunning: (settle) =>
        timed(series.storeSeconds.child(kind, 'failRunning'), 'failRunning', () => store.failRunning!(settle)),
    }),
    ...(store.approvals !== undefined && { approvals: store.approvals }),
    ...(store.push !== undefined && { push: store.push }),
    ...(store.leases !== undefined && { leases: store.leases }),
    close: () => store.close(),
  };
}
