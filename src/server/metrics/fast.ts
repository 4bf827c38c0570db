/**
 * Counters and histograms whose hot path is one map lookup per label value and a few additions
 * (no string is built), or none at all through a child bound to its label values. prom-client
 * hashes an increment's labels every time (a key sort and a string build per call); here the
 * values live in plain maps, and prom-client only renders them when scraped: a counter
 * hands its totals to a prom-client `Counter` in its `collect`, a histogram is rendered by a
 * prom-client `Histogram` whose `get` reads the map. Label values are positional, in `labelNames` order.
 *
 * @example
 * ```ts
 * const refusals = fastCounter({ name: 'x_total', help: 'x', labelNames: ['class', 'reason'], registers: [registry] });
 * refusals.inc('auth', 'invalid_credentials');
 * const seconds = fastHistogram({ name: 'y_seconds', help: 'y', labelNames: ['op'], buckets: [0.1, 1], registers: [registry] });
 * seconds.observe(0.05, 'get');
 * ```
 */
import type { Histogram, MetricObjectWithValues, MetricType, MetricValueWithName, Registry } from 'prom-client';
import { promClient } from './prom.js';

/**
 * A counter with positional label values.
 *
 * @example
 * ```ts
 * series.refusals.inc('echo', 'auth', 'invalid_credentials');
 * ```
 */
export interface LabelledCounter {
  inc(...values: string[]): void;
  /** The series of these label values, found once: its `inc` is one addition. */
  child(...values: string[]): { inc(): void };
}

/**
 * A histogram with positional label values.
 *
 * @example
 * ```ts
 * series.storeSeconds.observe(0.002, 'memory', 'put');
 * ```
 */
export interface LabelledHistogram {
  observe(value: number, ...values: string[]): void;
  /** The series of these label values, found once. */
  child(...values: string[]): LabelledHistogramChild;
}

/**
 * One series of a histogram.
 *
 * @example
 * ```ts
 * const put = series.storeSeconds.child('memory', 'put');
 * put.observe(0.002);
 * ```
 */
export interface LabelledHistogramChild {
  observe(value: number): void;
}

/**
 * The series of a metric by label values: one map level per label, so finding a series reads
 * the values' cached string hashes and builds nothing. `all` lists them for rendering.
 */
class SeriesIndex<Entry> {
  readonly all: Entry[] = [];
  readonly #depth: number;
  readonly #make: (values: readonly string[]) => Entry;
  readonly #root = new Map<string, unknown>();
  #only: Entry | undefined;

  constructor(depth: number, make: (values: readonly string[]) => Entry) {
    this.#depth = depth;
    this.#make = make;
  }

  find(values: readonly string[]): Entry {
    if (this.#depth === 0) return (this.#only ??= this.#add(values));
    let level = this.#root;
    const last = this.#depth - 1;
    for (let i = 0; i < last; i++) {
      const value = values[i] ?? '';
      let next = level.get(value) as Map<string, unknown> | undefined;
      if (next === undefined) level.set(value, (next = new Map<string, unknown>()));
      level = next;
    }
    const value = values[last] ?? '';
    let entry = level.get(value) as Entry | undefined;
    if (entry === undefined) level.set(value, (entry = this.#add(values)));
    return entry;
  }

  #add(values: readonly string[]): Entry {
    const entry = this.#make(values.slice(0, this.#depth));
    this.all.push(entry);
    return entry;
  }
}

/**
 * What both kinds are made from.
 *
 * @example
 * ```ts
 * const options: FastMetricOptions = { name: 'x_total', help: 'x', labelNames: [], registers: [registry] };
 * ```
 */
export interface FastMetricOptions {
  name: string;
  help: string;
  labelNames: readonly string[];
  registers: Registry[];
}

/**
 * A counter counted in a map, handed to prom-client when scraped.
 *
 * @example
 * ```ts
 * fastCounter({ name: 'x_total', help: 'x', labelNames: ['agent'], registers: [registry] }).inc('echo');
 * ```
 */
export function fastCounter(options: FastMetricOptions): LabelledCounter {
  const { labelNames } = options;
  const index = new SeriesIndex(labelNames.length, (values) => ({ values, count: 0, inc: increment }));
  new (promClient().Counter)({
    name: options.name,
    help: options.help,
    labelNames,
    registers: options.registers,
    collect() {
      this.reset();
      for (const { values, count } of index.all) if (count > 0) this.inc(labelsOf(labelNames, values), count);
    },
  });
  return {
    inc: (...values) => void (index.find(values).count += 1),
    child: (...values) => index.find(values),
  };
}

function increment(this: { count: number }): void {
  this.count += 1;
}

interface HistogramSeries extends LabelledHistogramChild {
  readonly values: readonly string[];
  /** Per bucket (not cumulative); the last one is +Inf. */
  readonly counts: number[];
  sum: number;
  count: number;
}

/**
 * A histogram observed into a map; prom-client renders what its `get` reads from the map.
 *
 * @example
 * ```ts
 * const h = fastHistogram({ name: 'x_seconds', help: 'x', labelNames: [], buckets: [0.1, 1], registers: [registry] });
 * h.observe(0.2);
 * ```
 */
export function fastHistogram(options: FastMetricOptions & { buckets: readonly number[] }): LabelledHistogram {
  const { name, labelNames, buckets } = options;
  const index = new SeriesIndex<HistogramSeries>(labelNames.length, (values) => ({
    values,
    counts: new Array<number>(buckets.length + 1).fill(0),
    sum: 0,
    count: 0,
    observe(value: number) {
      let bucket = 0;
      while (bucket < buckets.length && value > buckets[bucket]!) bucket += 1;
      this.counts[bucket]! += 1;
      this.sum += value;
      this.count += 1;
    },
  }));
  // An unlabelled histogram shows its zero series before the first observation, as prom-client's does.
  if (labelNames.length === 0) index.find([]);
  const render = (): MetricObjectWithValues<MetricValueWithName<string>> => {
    const values: MetricValueWithName<string>[] = [];
    for (const series of index.all) {
      const labels = labelsOf(labelNames, series.values);
      let cumulative = 0;
      for (let i = 0; i <= buckets.length; i++) {
        cumulative += series.counts[i]!;
        values.push({
          metricName: `${name}_bucket`,
          labels: { ...labels, le: buckets[i] ?? '+Inf' },
          value: cumulative,
        });
      }
      values.push({ metricName: `${name}_sum`, labels, value: series.sum });
      values.push({ metricName: `${name}_count`, labels, value: series.count });
    }
    return { name, help: options.help, type: HISTOGRAM, aggregator: 'sum', collect: () => undefined, values };
  };
  new (renderedHistogramClass())(options, render);
  return {
    observe: (value, ...values) => index.find(values).observe(value),
    child: (...values) => index.find(values),
  };
}

/** prom-client declares `type` as an enum, yet writes and reads the string (`# TYPE … histogram`). */
const HISTOGRAM = 'histogram' as unknown as MetricType;

type Rendered = () => MetricObjectWithValues<MetricValueWithName<string>>;
type RenderedHistogramClass = new (
  options: FastMetricOptions & { buckets: readonly number[] },
  render: Rendered,
) => Histogram;
let renderedHistogram: RenderedHistogramClass | undefined;

/**
 * A prom-client histogram (registered, typed as one) whose values come from `render`; the class
 * is made on first use, because its base class lives in prom-client, loaded only with metrics.
 */
function renderedHistogramClass(): RenderedHistogramClass {
  renderedHistogram ??= class RenderedHistogram extends promClient().Histogram {
    readonly #render: Rendered;

    constructor(options: FastMetricOptions & { buckets: readonly number[] }, render: Rendered) {
      super({ ...options, labelNames: [...options.labelNames], buckets: [...options.buckets] });
      this.#render = render;
    }

    override get(): Promise<MetricObjectWithValues<MetricValueWithName<string>>> {
      return Promise.resolve(this.#render());
    }

    /** What the registry renders the exposition text from (prom-client's histograms have it). */
    getForPromString(): Promise<MetricObjectWithValues<MetricValueWithName<string>>> {
      return Promise.resolve(this.#render());
    }
  };
  return renderedHistogram;
}

function labelsOf(names: readonly string[], values: readonly string[]): Record<string, string> {
  const labels: Record<string, string> = {};
  for (let i = 0; i < names.length; i++) labels[names[i]!] = values[i] ?? '';
  return labels;
}
