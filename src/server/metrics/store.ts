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
import type { MetricSeries } from './series.js';

/** The operations timed; the rest of the store passes through untouched. */
const TIMED: ReadonlySet<PropertyKey> = new Set(['put', 'get', 'list', 'failRunning']);

/**
 * Wraps `store` so that its operations are timed. The store's own object still does the work
 * (its methods run bound to it, so private fields keep working).
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
  const wrapped = new Map<PropertyKey, unknown>();
  const time =
    (operation: string, run: (...args: unknown[]) => unknown) =>
    (...args: unknown[]): unknown => {
      const started = performance.now();
      const done = (): void => series.storeSeconds.observe((performance.now() - started) / 1000, kind, operation);
      const failed = (error: unknown): never => {
        done();
        series.storeErrors.inc(kind, operation);
        throw error;
      };
      let result: unknown;
      try {
        result = run(...args);
      } catch (error) {
        return failed(error);
      }
      if (!(result instanceof Promise)) {
        done();
        return result;
      }
      return result.then((value: unknown) => {
        done();
        return value;
      }, failed);
    };
  return new Proxy(store, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      let fn = wrapped.get(property);
      if (fn === undefined) {
        const bound = (value as (...args: unknown[]) => unknown).bind(target);
        fn = TIMED.has(property) ? time(String(property), bound) : bound;
        wrapped.set(property, fn);
      }
      return fn;
    },
  });
}
