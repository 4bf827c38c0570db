/**
 * Server child processes for the benchmarks: start one, learn its URL from the first line it
 * prints, notice if it dies, and stop every one of them however the benchmark ends.
 *
 * @example
 * ```ts
 * const server = await startChild({ name: 'raw', script: 'bench/peers/raw-http.ts' });
 * // ... load server.baseUrl ...
 * await stopAllChildren();
 * ```
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpus } from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { compiledPeer, isPeerSource } from './compiled-peers.js';

/** The repository root: children run from there so `--import tsx` and relative paths resolve. */
export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The first stdout line of every server we start: Airlock's banner and the peers' line. */
const LISTENING = /listening on (http:\/\/127\.0\.0\.1:\d+)/;
const READY_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 3_000;
const STDERR_TAIL_CHARS = 4_000;

export interface ChildSpec {
  name: string;
  /**
   * An entry point: a peer's source (`bench/peers/*.ts`) runs compiled (./compiled-peers.ts), any
   * other `.ts` with `node --import tsx`, `.js` with plain node.
   */
  script: string;
  args?: readonly string[];
  env?: Readonly<Record<string, string>>;
  /** Options for node itself, before the script (`--single-threaded-gc`, say); none by default. */
  nodeFlags?: readonly string[];
  /** How long to wait for the listening line; default 30 s. */
  readyTimeoutMs?: number;
  /**
   * Start it confined to this core (`taskset -c`), as a one-core deployment starts: Airlock then
   * serves from a second process with `--single-threaded-gc` (src/cli/collector.ts). Ignored
   * where `taskset` does not run.
   */
  startOnCore?: number;
  /**
   * The pid of the process that serves, once the listening line is out (Airlock's pid file,
   * `readServePid`), when it is not the one started; undefined fails the start.
   */
  servingPid?: () => number | undefined;
}

export interface ChildServer {
  readonly name: string;
  /** `http://127.0.0.1:PORT`, from the child's first line. */
  readonly baseUrl: string;
  readonly pid: number | undefined;
  /** The whole first line it printed (some peers add figures after the URL). */
  readonly firstLine: string;
  /** Throws if the child has exited since it started. */
  assertAlive(): void;
  /** SIGTERM, then SIGKILL after a grace period; resolves once it has exited. */
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();

/** Starts a server and resolves once it has printed its listening line. */
export function startChild(spec: ChildSpec): Promise<ChildServer> {
  let script: string;
  try {
    script = isPeerSource(spec.script) ? compiledPeer(spec.script, REPO_ROOT) : spec.script;
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
  const loader = script.endsWith('.ts') ? ['--import', 'tsx'] : [];
  const command = [process.execPath, ...(spec.nodeFlags ?? []), ...loader, script, ...(spec.args ?? [])];
  if (spec.startOnCore !== undefined && canPinAtStart()) command.unshift('taskset', '-c', String(spec.startOnCore));
  const child = spawn(command[0]!, command.slice(1), {
    cwd: REPO_ROOT,
    env: { ...process.env, NODE_ENV: 'production', ...spec.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  const stderr = captureTail(child);

  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (reason: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const tail = stderr.text();
      reject(new Error(`${spec.name}: ${reason}${tail ? `\n--- stderr ---\n${tail}` : ''}`));
    };
    const readyMs = spec.readyTimeoutMs ?? READY_TIMEOUT_MS;
    const timer = setTimeout(() => fail(`no listening line within ${readyMs} ms`), readyMs);
    child.once('error', (error) => fail(error.message));
    child.once('exit', (code, signal) => fail(`exited before listening (code ${code}, signal ${signal})`));

    // readline keeps draining stdout after the first line, so a chatty child never blocks on a full pipe.
    const lines = createInterface({ input: child.stdout });
    lines.once('line', (line) => {
      const baseUrl = LISTENING.exec(line)?.[1];
      if (baseUrl === undefined) return fail(`unexpected first line: ${JSON.stringify(line)}`);
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const pid = spec.servingPid === undefined ? child.pid : spec.servingPid();
      // Measuring the process started instead would read a supervisor's idle CPU as the server's.
      if (pid === undefined) return fail('no serving pid (its pid file holds none)');
      resolve(childServer(spec.name, baseUrl, line, child, pid, stderr.text));
    });
  });
}

let pinAtStart: boolean | undefined;
function canPinAtStart(): boolean {
  pinAtStart ??= cpus().length > 1 && spawnSync('taskset', ['-c', '0', 'true']).status === 0;
  return pinAtStart;
}

function childServer(
  name: string,
  baseUrl: string,
  firstLine: string,
  child: ChildProcess,
  pid: number | undefined,
  stderr: () => string,
): ChildServer {
  return {
    name,
    baseUrl,
    firstLine,
    pid,
    assertAlive() {
      if (child.exitCode !== null || child.signalCode !== null) {
        const tail = stderr();
        throw new Error(
          `${name} died (code ${child.exitCode}, signal ${child.signalCode})${tail ? `\n--- stderr ---\n${tail}` : ''}`,
        );
      }
    },
    stop: () => stopChild(child),
  };
}

/** Keeps the last few KB of a child's stderr for error messages. */
function captureTail(child: ChildProcess): { text: () => string } {
  let tail = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => {
    tail = (tail + chunk).slice(-STDERR_TAIL_CHARS);
  });
  return { text: () => tail.trim() };
}

/** SIGTERM every child, then SIGKILL those still running after a grace period. */
export async function stopAllChildren(): Promise<void> {
  await Promise.all([...running].map(stopChild));
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve();
    }, STOP_GRACE_MS);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Last resort, for `process.on('exit')` where nothing async can run. */
export function killAllChildrenNow(): void {
  for (const child of running) child.kill('SIGKILL');
}
