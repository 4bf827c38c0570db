/**
 * What a server process spends, read from outside: its CPU time (user + system, every thread)
 * from `/proc/<pid>/stat`, and core pinning with `taskset`, so that the server and the load
 * generator never share a core and the server's own cost per request can be told apart from
 * the load generator's.
 *
 * On a machine without `/proc` or `taskset` (macOS) the readings are undefined and the pinning
 * a no-op: the bench then prints req/s only.
 *
 * @example
 * ```ts
 * const pinned = pinCores(server.pid, generatorCore);
 * const before = cpuMicros(server.pid);
 * await runLoad(target, options);
 * const spent = cpuMicros(server.pid)! - before!; // µs of CPU the server used in the round
 * ```
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { runLoad, type Target } from './load.js';

/** Clock ticks per second of `/proc/<pid>/stat` (`getconf CLK_TCK`; 100 on Linux x86-64). */
const TICKS_PER_SECOND = clockTicks();

function clockTicks(): number {
  const answer = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  const ticks = Number.parseInt(answer.stdout ?? '', 10);
  return Number.isFinite(ticks) && ticks > 0 ? ticks : 100;
}

/**
 * The CPU time a process has used so far, in microseconds (utime + stime of all its threads),
 * or undefined when it cannot be read. Resolution: one clock tick (10 ms); rounds of seconds
 * make that negligible.
 *
 * @example
 * ```ts
 * cpuMicros(process.pid); // e.g. 1_230_000
 * ```
 */
export function cpuMicros(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) is in parentheses and may hold spaces: count fields after it.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) return undefined;
  return ((utime + stime) * 1_000_000) / TICKS_PER_SECOND;
}

/**
 * How the cores were split: the servers on `server`, this process (the load generator) on
 * `generator`; `pinned` false when the machine has one core or `taskset` is missing.
 *
 * @example
 * ```ts
 * const plan = corePlan(); // { pinned: true, server: 0, generator: 1 } on two cores
 * ```
 */
export interface CorePlan {
  pinned: boolean;
  server: number;
  generator: number;
}

/**
 * Pins this process (the load generator) to the last core and reserves core 0 for servers,
 * when there are at least two cores and `taskset` works.
 *
 * @example
 * ```ts
 * const plan = pinGenerator();
 * if (plan.pinned) pinServer(child.pid, plan);
 * ```
 */
export function pinGenerator(): CorePlan {
  const cores = availableParallelism();
  const plan: CorePlan = { pinned: false, server: 0, generator: Math.max(0, cores - 1) };
  if (cores < 2) return plan;
  plan.pinned = taskset(process.pid, plan.generator);
  return plan;
}

/**
 * Pins a server process, every thread of it, to the plan's server core. No-op when the plan is
 * not pinned. Returns whether it took.
 *
 * @example
 * ```ts
 * pinServer(child.pid, plan);
 * ```
 */
export function pinServer(pid: number | undefined, plan: CorePlan): boolean {
  if (!plan.pinned || pid === undefined) return false;
  return taskset(pid, plan.server);
}

function taskset(pid: number, core: number): boolean {
  const answer = spawnSync('taskset', ['-a', '-cp', String(core), String(pid)], { encoding: 'utf8' });
  return answer.status === 0;
}

/**
 * The line a bench prints about its cores: where the servers and the load generator run.
 *
 * @example
 * ```ts
 * console.log(describePlan(pinGenerator())); // 'pinned: servers on core 0, load generator on core 1'
 * ```
 */
export function describePlan(plan: CorePlan): string {
  return plan.pinned
    ? `pinned: servers on core ${plan.server}, load generator on core ${plan.generator}`
    : 'not pinned (one core, or no taskset): the load generator shares the server cores';
}

/**
 * One closed-loop load of a server (pipelining 1): the server's CPU µs a request over it (user +
 * system, every thread, from `/proc`; NaN where it cannot be read or nothing was answered), its
 * req/s, the requests answered and the failed ones (non-2xx, errors and timeouts).
 *
 * @example
 * ```ts
 * const { cpu, failed } = await cpuPerRequest(child, target, 3, 50);
 * ```
 */
export async function cpuPerRequest(
  server: { readonly pid: number | undefined; assertAlive(): void },
  target: Target,
  duration: number,
  connections: number,
): Promise<{ cpu: number; reqPerSec: number; requests: number; failed: number }> {
  server.assertAlive();
  const before = cpuMicros(server.pid);
  const stats = await runLoad(target, { connections, pipelining: 1, duration });
  const after = cpuMicros(server.pid);
  const cpu =
    before === undefined || after === undefined || stats.requests === 0
      ? Number.NaN
      : (after - before) / stats.requests;
  return {
    cpu,
    reqPerSec: stats.reqPerSec,
    requests: stats.requests,
    failed: stats.non2xx + stats.errors + stats.timeouts,
  };
}
