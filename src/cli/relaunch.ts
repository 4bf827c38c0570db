/**
 * Starting `airlock serve` again with node options it was not given (`--single-threaded-gc`, see
 * ./collector.ts: V8 takes it only on node's command line). Node 20 cannot replace its own process
 * image, so this process stays as a thin supervisor of the one it starts:
 *
 * - SIGTERM, SIGINT and SIGHUP are passed on (a service manager's stop or reload reaches the
 *   gateway); the gateway writes its own pid file, so `airlock reload` signals it directly.
 * - The gateway runs in a process group of its own, so a terminal's Ctrl-C reaches it once,
 *   through here, and not twice (a second SIGINT would cut its drain short).
 * - It exits when the gateway does, with its exit code (128 + the signal's number when killed).
 * - Should the supervisor die without passing anything on (SIGKILL), the gateway sees its IPC
 *   channel close and drains as on SIGTERM, so no gateway outlives it holding the port.
 * - A service manager may signal every process of the service at once (systemd's default
 *   `KillMode=control-group`): the gateway then gets SIGTERM twice, its own and the one passed
 *   on, so a supervised gateway takes a second SIGTERM or SIGINT within a second of the first as
 *   the same stop (see `serve.ts`), not as "stop now".
 *
 * @example
 * ```ts
 * const { plan, supervised, exitCode } = await planServeCollector('auto', 1);
 * ```
 */
import { spawn } from 'node:child_process';
import inspector from 'node:inspector';
import { constants } from 'node:os';
import {
  availableCores,
  planCollector,
  SINGLE_THREADED_GC,
  type CollectorMode,
  type CollectorPlan,
} from './collector.js';

/** Set in the started process: why it was started again (for its start-up log line). */
const RELAUNCHED = 'AIRLOCK_RELAUNCHED';
const PASSED_ON = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

/**
 * Runs this command again as a child with `flags` before node's own options, passes signals on,
 * and resolves with the exit code this process should end with.
 *
 * @example
 * ```ts
 * process.exitCode = await relaunchWith(['--single-threaded-gc'], '1 core');
 * ```
 */
function relaunchWith(flags: readonly string[], reason: string): Promise<number> {
  // `--inspect` is for the gateway: free its port here so the process started with it binds it.
  if (inspector.url() !== undefined) inspector.close();
  const child = spawn(process.execPath, [...flags, ...process.execArgv, ...process.argv.slice(1)], {
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    detached: true,
    env: { ...process.env, [RELAUNCHED]: reason },
  });
  const passOn = (signal: NodeJS.Signals) => (): void => {
    child.kill(signal);
  };
  const handlers = PASSED_ON.map((signal) => [signal, passOn(signal)] as const);
  for (const [signal, handler] of handlers) process.on(signal, handler);
  const release = (): void => {
    for (const [name, handler] of handlers) process.off(name, handler);
  };
  return new Promise((resolve, reject) => {
    child.once('error', (error) => {
      release();
      reject(error);
    });
    child.once('exit', (code, signal) => {
      release();
      resolve(code ?? 128 + (signal === null ? 0 : constants.signals[signal]));
    });
  });
}

/**
 * In a process {@link relaunchWith} started: why it was started (undefined in any other process).
 * Also arranges its end should the supervisor vanish: the IPC channel closing raises SIGTERM
 * here, the usual drain. Call once, early in `serve`.
 *
 * @example
 * ```ts
 * const reason = adoptSupervisor(); // '1 core' when relaunched
 * ```
 */
function adoptSupervisor(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const reason = env[RELAUNCHED];
  if (reason === undefined || process.channel === undefined) return undefined;
  // Not for the gateway's own children (command backends, tool servers).
  delete env[RELAUNCHED];
  process.channel.unref();
  process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'));
  return reason;
}

/**
 * The collector of this `airlock serve` (./collector.ts), and the exit code when this process
 * only supervised the one it started with the flag (then it has nothing more to do).
 *
 * @example
 * ```ts
 * const { plan, exitCode } = await planServeCollector('auto', 1);
 * if (exitCode !== undefined) return void (process.exitCode = exitCode);
 * ```
 */
export async function planServeCollector(
  mode: CollectorMode,
  workers: number,
): Promise<{ plan: CollectorPlan; supervised: boolean; exitCode?: number }> {
  const plan = planCollector({ mode, cores: availableCores(), workers, execArgv: process.execArgv });
  const reason = adoptSupervisor();
  if (reason !== undefined) return { plan: { ...plan, reason }, supervised: true };
  if (!plan.relaunch) return { plan, supervised: false };
  return { plan, supervised: false, exitCode: await relaunchWith([SINGLE_THREADED_GC], plan.reason) };
}
