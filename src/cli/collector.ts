/**
 * Which garbage collector `airlock serve` runs with: V8's default (marking and sweeping on helper
 * threads, beside the JavaScript thread) or `--single-threaded-gc` (all of it on that thread).
 *
 * Why it matters: V8 starts its helper threads whatever the process may use. Confined to one core
 * (`taskset`, a cpuset, a container with `--cpus=1`), those threads take that core from the event
 * loop during each old-generation collection, and requests wait: the bench measured 12 ms added to
 * the p99 at 1,000 req/s with the default and 1.7 ms with the flag, at no CPU cost it could show
 * (docs/PERFORMANCE-LOG.md). With cores to spare the helper threads are free, so the default stays.
 *
 * V8 takes the flag only on node's command line (not in `NODE_OPTIONS`, and `v8.setFlagsFromString`
 * after start-up aborts the process in a later collection), so a process that needs it is started
 * again with it (`./relaunch.ts`), and workers are forked with it.
 *
 * @example
 * ```ts
 * const plan = planCollector({ mode: 'auto', cores: 1, workers: 1, execArgv: process.execArgv });
 * // { singleThreaded: true, relaunch: true, workerFlags: [], reason: '1 core' }
 * ```
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/** The node option that keeps every collector task on the JavaScript thread. */
export const SINGLE_THREADED_GC = '--single-threaded-gc';

/**
 * `--gc`: `auto` (single-threaded when the process, or each worker, has at most one core),
 * `single-threaded` (always) or `concurrent` (V8's default, never changed).
 */
export type CollectorMode = 'auto' | 'single-threaded' | 'concurrent';

/**
 * Reads the `--gc` flag. Undefined when the value is none of the modes.
 *
 * @example
 * ```ts
 * parseCollectorMode('auto'); // 'auto'
 * parseCollectorMode('fast'); // undefined
 * ```
 */
export function parseCollectorMode(value: string): CollectorMode | undefined {
  return value === 'auto' || value === 'single-threaded' || value === 'concurrent' ? value : undefined;
}

/** What {@link planCollector} decides for one `airlock serve`. */
export interface CollectorPlan {
  /** Whether the serving process (or each worker) collects on its JavaScript thread. */
  readonly singleThreaded: boolean;
  /** Start this process again with {@link SINGLE_THREADED_GC} (one process that lacks it). */
  readonly relaunch: boolean;
  /** Node options added to each worker's (with `--workers N`). */
  readonly workerFlags: readonly string[];
  /** Why, in a few words, for the start-up log line. */
  readonly reason: string;
}

/**
 * Decides the collector (a pure function: the cores and arguments are read by the caller).
 * `cores` is what the process may run on (affinity and CPU quota, {@link availableCores});
 * `workers` is `--workers` (1 for one process). Auto picks single-threaded when each serving
 * process has at most one core: `cores ≤ 1` for one process, `cores ≤ workers` for workers, whose
 * helper threads would otherwise take their neighbours' cores.
 *
 * @example
 * ```ts
 * planCollector({ mode: 'auto', cores: 8, workers: 8, execArgv: [] }).workerFlags; // ['--single-threaded-gc']
 * planCollector({ mode: 'auto', cores: 8, workers: 1, execArgv: [] }).singleThreaded; // false
 * ```
 */
export function planCollector(input: {
  mode: CollectorMode;
  cores: number;
  workers: number;
  execArgv: readonly string[];
}): CollectorPlan {
  const { mode, cores, workers, execArgv } = input;
  const already = execArgv.includes(SINGLE_THREADED_GC);
  const coresText = `${formatCores(cores)} ${cores === 1 ? 'core' : 'cores'}`;
  // A flag given to node by hand is kept whatever the mode: it cannot be taken back from here.
  const [wanted, reason] = already
    ? [true, `${SINGLE_THREADED_GC} given to node`]
    : mode === 'single-threaded'
      ? [true, '--gc single-threaded']
      : mode === 'concurrent'
        ? [false, '--gc concurrent']
        : workers > 1
          ? [cores <= workers, `${coresText} for ${workers} workers`]
          : [cores <= 1, coresText];
  return {
    singleThreaded: wanted,
    relaunch: wanted && !already && workers === 1,
    // Workers inherit this process's options; the flag is added only when this one lacks it.
    workerFlags: wanted && !already && workers > 1 ? [SINGLE_THREADED_GC] : [],
    reason,
  };
}

/**
 * The collector's fields of a start-up log line (`listening`, `workers_listening`).
 *
 * @example
 * ```ts
 * collectorFields({ singleThreaded: true, reason: '1 core' }); // { gc: 'single-threaded', gcReason: '1 core' }
 * ```
 */
export function collectorFields(plan: Pick<CollectorPlan, 'singleThreaded' | 'reason'>): {
  gc: 'single-threaded' | 'concurrent';
  gcReason: string;
} {
  return { gc: plan.singleThreaded ? 'single-threaded' : 'concurrent', gcReason: plan.reason };
}

function formatCores(cores: number): string {
  return Number.isInteger(cores) ? String(cores) : cores.toFixed(2);
}

/**
 * The cores this process may use: the CPUs its affinity allows (`os.availableParallelism`) or its
 * cgroup's CPU quota, whichever is less. Node 20's libuv reads the affinity but not the quota, so
 * a container started with `--cpus=1` on a large host would otherwise count the host's cores.
 *
 * @example
 * ```ts
 * availableCores(); // 1 under `taskset -c 0`, 1.5 under `docker run --cpus=1.5`
 * ```
 */
export function availableCores(read: (path: string) => string | undefined = readText): number {
  const quota = cgroupCpuQuota(read);
  const affinity = availableParallelism();
  return quota === undefined ? affinity : Math.min(affinity, quota);
}

/**
 * The CPU quota of this process's cgroup, in cores, or undefined when there is none: cgroup v2's
 * `cpu.max` (`"max 100000"` or `"150000 100000"`) on the process's own group and each group above
 * it (the smallest wins), else cgroup v1's `cpu.cfs_quota_us` over `cpu.cfs_period_us`.
 *
 * @example
 * ```ts
 * cgroupCpuQuota((path) => files[path]); // 1.5
 * ```
 */
export function cgroupCpuQuota(read: (path: string) => string | undefined): number | undefined {
  const membership = read('/proc/self/cgroup');
  if (membership === undefined) return undefined;
  let smallest: number | undefined;
  const keep = (cores: number | undefined): void => {
    if (cores !== undefined && (smallest === undefined || cores < smallest)) smallest = cores;
  };
  for (const line of membership.split('\n')) {
    const [, controllers, path] = /^\d+:([^:]*):(\/.*)$/.exec(line.trim()) ?? [];
    if (controllers === undefined || path === undefined) continue;
    if (controllers === '') {
      // cgroup v2: every group from the process's own up to the root.
      for (let group = path; ; group = group.slice(0, group.lastIndexOf('/')) || '/') {
        keep(parseCpuMax(read(`/sys/fs/cgroup${group === '/' ? '' : group}/cpu.max`)));
        if (group === '/') break;
      }
    } else if (controllers.split(',').includes('cpu')) {
      for (const mount of ['/sys/fs/cgroup/cpu', '/sys/fs/cgroup/cpu,cpuacct']) {
        const dir = `${mount}${path === '/' ? '' : path}`;
        keep(parseCfsQuota(read(`${dir}/cpu.cfs_quota_us`), read(`${dir}/cpu.cfs_period_us`)));
      }
    }
  }
  return smallest;
}

/**
 * cgroup v2's `cpu.max` as cores: `"150000 100000"` → 1.5, `"max 100000"` → undefined.
 *
 * @example
 * ```ts
 * parseCpuMax('100000 100000\n'); // 1
 * ```
 */
export function parseCpuMax(text: string | undefined): number | undefined {
  const [quota, period] = (text ?? '').trim().split(/\s+/);
  return quota === undefined || period === undefined ? undefined : quotaCores(quota, period);
}

/**
 * cgroup v1's quota and period files as cores: `"50000"`, `"100000"` → 0.5; `"-1"` → undefined.
 *
 * @example
 * ```ts
 * parseCfsQuota('200000\n', '100000\n'); // 2
 * ```
 */
export function parseCfsQuota(quota: string | undefined, period: string | undefined): number | undefined {
  return quota === undefined || period === undefined ? undefined : quotaCores(quota.trim(), period.trim());
}

function quotaCores(quota: string, period: string): number | undefined {
  if (!/^\d+$/.test(quota) || !/^\d+$/.test(period)) return undefined;
  const cores = Number(quota) / Number(period);
  return Number.isFinite(cores) && cores > 0 ? cores : undefined;
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}
