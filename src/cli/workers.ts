/**
 * `airlock serve --workers N`: N gateway processes behind one port (node:cluster; Node 20 has no
 * SO_REUSEPORT). The primary checks the config, forks the workers and owns the signals: SIGTERM
 * or SIGINT drains every worker and exits 0 once they all did; SIGHUP is forwarded to each
 * worker (each reloads as one process would); a worker that dies unexpectedly is forked again
 * with a backoff, and a JSON line says so. The pid file names the primary. Each worker runs the
 * gateway of one process and behaves as a replica does (see `serve.ts` and docs/OPERATIONS.md,
 * "Workers").
 *
 * On a SQLite file the first worker starts alone: it migrates the file and fails what an earlier
 * run left running (SQLite has no turn leases); the others are forked once it listens, so none
 * of their turns can be failed by that recovery. PostgreSQL workers start together.
 *
 * @example
 * ```ts
 * if (workers > 1 && cluster.isPrimary) return runWorkerPrimary({ workers, config, drainSeconds, logger });
 * ```
 */
import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import { basename, dirname, extname, join } from 'node:path';
import { AirlockError } from '../errors/index.js';
import type { Logger } from '../server/log.js';
import { removeServePid, serveFiles, writeServePid } from '../server/reload/pid-file.js';
import { collectorFields } from './collector.js';

/** The most workers one primary forks. */
export const MAX_WORKERS = 256;

/** A worker's quick deaths in a row double its restart delay, up to this. */
const MAX_RESTART_DELAY_MS = 10_000;
const FIRST_RESTART_DELAY_MS = 250;
/** A worker that lived this long before dying restarts after the first delay again. */
const HEALTHY_AFTER_MS = 10_000;

/**
 * Reads the `--workers` flag: a count (1 to {@link MAX_WORKERS}) or `auto` (this machine's
 * available parallelism). Undefined when the value is neither.
 *
 * @example
 * ```ts
 * parseWorkerCount('auto'); // os.availableParallelism()
 * parseWorkerCount('2'); // 2
 * ```
 */
export function parseWorkerCount(value: string): number | undefined {
  if (value === 'auto') return Math.min(availableParallelism(), MAX_WORKERS);
  const count = Number(value);
  return Number.isInteger(count) && count >= 1 && count <= MAX_WORKERS ? count : undefined;
}

/**
 * What this process is among the workers of one `airlock serve --workers N`: its index (1..N),
 * N, and whether it is the first worker's first start (which runs the restart recovery).
 *
 * @example
 * ```ts
 * const role = workerRole(); // undefined in a process that is not a worker of N > 1
 * ```
 */
export interface WorkerRole {
  readonly index: number;
  readonly count: number;
  readonly first: boolean;
}

const ENV_INDEX = 'AIRLOCK_WORKER_INDEX';
const ENV_COUNT = 'AIRLOCK_WORKERS';
const ENV_FIRST = 'AIRLOCK_WORKER_FIRST';

/**
 * This process's role when the cluster primary forked it (see {@link WorkerRole}).
 *
 * @example
 * ```ts
 * workerRole(process.env)?.index; // 2
 * ```
 */
export function workerRole(env: NodeJS.ProcessEnv = process.env): WorkerRole | undefined {
  if (!cluster.isWorker) return undefined;
  const index = Number(env[ENV_INDEX]);
  const count = Number(env[ENV_COUNT]);
  if (!Number.isInteger(index) || !Number.isInteger(count) || count < 2) return undefined;
  return { index, count, first: env[ENV_FIRST] === '1' };
}

/**
 * The audit file of worker `index`: one writer per file (the JSONL sink locks it), so each
 * worker keeps its own chain beside the configured one (`audit.jsonl` → `audit.worker-2.jsonl`).
 *
 * @example
 * ```ts
 * workerAuditFile('/var/log/airlock/audit.jsonl', 2); // '/var/log/airlock/audit.worker-2.jsonl'
 * ```
 */
export function workerAuditFile(file: string, index: number): string {
  const extension = extname(file);
  return join(dirname(file), `${basename(file, extension)}.worker-${index}${extension}`);
}

/**
 * Tells the primary this worker listens (the primary forks the others after the first does).
 *
 * @example
 * ```ts
 * reportWorkerListening(url);
 * ```
 */
export function reportWorkerListening(url: string): void {
  process.send?.({ airlock: 'listening', url });
}

/**
 * What the primary needs: how many workers, the config path (for the pid file), how long a
 * drain may take, and where to log.
 */
export interface WorkerPrimaryOptions {
  workers: number;
  /** Node options each worker gets before this process's own (`--single-threaded-gc`). */
  nodeFlags?: readonly string[];
  /** The workers' collector and why (./collector.ts), for the `workers_listening` line. */
  gc?: { singleThreaded: boolean; reason: string };
  config: string;
  drainSeconds: number;
  /** Fork the others only once the first listens (a SQLite file: its restart recovery). */
  firstAlone: boolean;
  logger: Logger;
}

/**
 * Runs the cluster primary until SIGTERM or SIGINT (then exits the process). Rejects when a
 * worker exits before every worker listened (the worker has printed why).
 *
 * @example
 * ```ts
 * await runWorkerPrimary({ workers: 2, config: 'airlock.yaml', drainSeconds: 30, logger });
 * ```
 */
export async function runWorkerPrimary(options: WorkerPrimaryOptions): Promise<void> {
  const { workers, logger } = options;
  if (options.nodeFlags !== undefined && options.nodeFlags.length > 0) {
    cluster.setupPrimary({ execArgv: [...options.nodeFlags, ...process.execArgv] });
  }
  const byIndex = new Map<number, Worker>();
  const restarts = new Map<number, { delayMs: number }>();
  let stopping = false;
  let started = false;

  const fork = (index: number, first: boolean): Worker => {
    const worker = cluster.fork({
      [ENV_INDEX]: String(index),
      [ENV_COUNT]: String(workers),
      [ENV_FIRST]: first ? '1' : '',
    });
    const bornAt = Date.now();
    byIndex.set(index, worker);
    worker.once('exit', (code, signal) => {
      if (byIndex.get(index) === worker) byIndex.delete(index);
      if (stopping || !started) return;
      const lived = Date.now() - bornAt;
      const restart = restarts.get(index) ?? { delayMs: 0 };
      restart.delayMs =
        lived >= HEALTHY_AFTER_MS
          ? FIRST_RESTART_DELAY_MS
          : Math.min(MAX_RESTART_DELAY_MS, Math.max(FIRST_RESTART_DELAY_MS, restart.delayMs * 2));
      restarts.set(index, restart);
      logger.warn({
        event: 'worker_exited',
        worker: index,
        pid: worker.process.pid,
        code,
        signal,
        restartInMs: restart.delayMs,
      });
      setTimeout(() => {
        if (stopping) return;
        const next = fork(index, false);
        next.once('message', (message: unknown) => {
          if (isListening(message)) logger.info({ event: 'worker_restarted', worker: index, pid: next.process.pid });
        });
      }, restart.delayMs).unref();
    });
    return worker;
  };

  const listening = (worker: Worker): Promise<void> =>
    new Promise((resolve, reject) => {
      const onExit = (code: number | null, signal: string | null): void =>
        reject(new WorkerStartError(`a worker exited before it listened (${signal ?? `exit ${code}`})`));
      worker.once('exit', onExit);
      worker.on('message', function onMessage(message: unknown) {
        if (!isListening(message)) return;
        worker.off('message', onMessage);
        worker.off('exit', onExit);
        resolve();
      });
    });

  const files = serveFiles(options.config);
  await writeServePid(files, options.config).then(
    () => process.once('exit', () => removeServePid(files)),
    (error: unknown) =>
      logger.warn({ event: 'pid_file_not_written', error: (error as NodeJS.ErrnoException).code ?? 'unknown' }),
  );

  const stop = (signal: string): void => {
    // A second signal while draining: the person means it.
    if (stopping) {
      for (const worker of byIndex.values()) worker.process.kill('SIGKILL');
      process.exit(1);
    }
    stopping = true;
    logger.info({ event: 'stopping', signal, workers: byIndex.size, drainSeconds: options.drainSeconds });
    // Each worker drains for up to drainSeconds and closes within 5 s more; then they are killed.
    const force = setTimeout(
      () => {
        for (const worker of byIndex.values()) worker.process.kill('SIGKILL');
        process.exit(1);
      },
      options.drainSeconds * 1000 + 10_000,
    );
    force.unref();
    const exits = [...byIndex.values()].map(
      (worker) =>
        new Promise<number>((resolve) => {
          if (worker.process.exitCode !== null) return resolve(worker.process.exitCode);
          worker.once('exit', (code) => resolve(code ?? 1));
          worker.process.kill('SIGTERM');
        }),
    );
    void Promise.all(exits).then((codes) => {
      const failed = codes.filter((code) => code !== 0).length;
      logger.info({ event: 'workers_stopped', workers: codes.length, failed });
      process.exit(failed === 0 ? 0 : 1);
    });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGHUP', () => {
    if (stopping) return;
    for (const worker of byIndex.values()) worker.process.kill('SIGHUP');
  });

  try {
    // SQLite: the first worker alone first (see the module comment); PostgreSQL migrates under a
    // lock and keeps turn leases, so its workers start together.
    const first = listening(fork(1, true));
    if (options.firstAlone) await first;
    await Promise.all([first, ...Array.from({ length: workers - 1 }, (_, i) => listening(fork(i + 2, false)))]);
  } catch (error) {
    stopping = true;
    for (const worker of byIndex.values()) worker.process.kill('SIGTERM');
    throw error;
  }
  started = true;
  logger.info({
    event: 'workers_listening',
    workers,
    pids: [...byIndex.values()].map((worker) => worker.process.pid),
    ...(options.gc !== undefined && collectorFields(options.gc)),
  });
}

function isListening(message: unknown): boolean {
  return typeof message === 'object' && message !== null && (message as { airlock?: unknown }).airlock === 'listening';
}

/** A worker stopped before it served (its own line on stderr says why). */
export class WorkerStartError extends AirlockError {
  readonly code = 'worker_start_failed';
  constructor(message: string) {
    super(message);
  }
}
