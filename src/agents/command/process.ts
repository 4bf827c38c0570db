/**
 * Running the command backend's program for one turn: spawned without a shell, in a process group
 * of its own, with the message on stdin; stdout decoded and handed on as it arrives; stderr
 * captured (capped); the whole group killed on timeout, on too much output, on request, and
 * whatever the program left behind killed when it exits.
 *
 * Killing the group (not just the program) matters: a script's pipelines and background jobs are
 * its children, and a kill that reached only the shell would leave them running.
 *
 * @example
 * ```ts
 * const run = startCommandProcess({
 *   program: '/usr/bin/tr', args: ['a-z', 'A-Z'], cwd: '/tmp', env: {}, stdin: 'hello',
 *   timeoutMs: 5000, maxOutputBytes: 65536, maxStderrBytes: 8192,
 *   onStdout: (text) => process.stdout.write(text),
 * });
 * const result = await run.finished; // { end: { kind: 'exited', code: 0 }, outputBytes: 5, … }
 * ```
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { StringDecoder } from 'node:string_decoder';
import { setTimeout as delay } from 'node:timers/promises';

import { StderrCapture, type StderrSummary } from './stderr.js';

/**
 * Between SIGTERM and SIGKILL: time for a program to clean up, not to carry on.
 *
 * @example
 * ```ts
 * await terminateGroup(pid, DEFAULT_KILL_GRACE_MS);
 * ```
 */
export const DEFAULT_KILL_GRACE_MS = 2000;

/** How often a terminating group is checked for members left. */
const GROUP_POLL_MS = 25;

/**
 * What {@link startCommandProcess} needs. Every path is absolute (see `./resolve.ts`).
 *
 * @example
 * ```ts
 * const options: CommandProcessOptions = {
 *   program: '/srv/agent/reply.sh', args: [], cwd: '/srv/agent', env: { LANG: 'C.UTF-8' },
 *   stdin: 'hello', timeoutMs: 60_000, maxOutputBytes: 1 << 20, maxStderrBytes: 8192,
 *   onStdout: (text) => parser.push(text),
 * };
 * ```
 */
export interface CommandProcessOptions {
  readonly program: string;
  /** Passed as they are: never through a shell. */
  readonly args: readonly string[];
  readonly cwd: string;
  /** The program's whole environment: nothing is inherited. */
  readonly env: Readonly<Record<string, string>>;
  /** Written to stdin, which is then closed. */
  readonly stdin: string;
  /** The whole run; then the group is killed and the run ends `timed-out`. */
  readonly timeoutMs: number;
  /** Bytes of stdout; beyond them the group is killed and the run ends `output-exceeded`. */
  readonly maxOutputBytes: number;
  /** Bytes of stderr kept for the log. */
  readonly maxStderrBytes: number;
  /** Between SIGTERM and SIGKILL; {@link DEFAULT_KILL_GRACE_MS} when absent. */
  readonly killGraceMs?: number;
  /**
   * Stdout, decoded as UTF-8 as it arrives. A character cut between two reads is held until it
   * is whole, so `text` never holds half of one. Not called once the output cap is passed.
   */
  readonly onStdout: (text: string) => void;
}

/**
 * How a run ended. The first decision wins: a program killed for its timeout ends `timed-out`,
 * whatever exit status the kill gave it.
 *
 * @example
 * ```ts
 * const ends: CommandEnd[] = [
 *   { kind: 'exited', code: 0 },
 *   { kind: 'signaled', signal: 'SIGSEGV' },
 *   { kind: 'timed-out' },
 *   { kind: 'output-exceeded' },
 *   { kind: 'stopped' },
 *   { kind: 'spawn-failed', code: 'EACCES', message: 'spawn /srv/agent/reply.sh EACCES' },
 * ];
 * ```
 */
export type CommandEnd =
  /** The program exited by itself with this status. */
  | { readonly kind: 'exited'; readonly code: number }
  /** The program was killed by a signal it did not get from us. */
  | { readonly kind: 'signaled'; readonly signal: string }
  | { readonly kind: 'timed-out' }
  | { readonly kind: 'output-exceeded' }
  /** {@link CommandProcess.stop} was called (a canceled turn, a closing gateway). */
  | { readonly kind: 'stopped' }
  /** The program could not be started at all (`code` is the errno name, `message` for the log). */
  | { readonly kind: 'spawn-failed'; readonly code: string; readonly message: string };

/**
 * The whole of a run, once the program has exited and its output is read.
 *
 * @example
 * ```ts
 * const { end, outputBytes, stderr, durationMs } = await run.finished;
 * ```
 */
export interface CommandResult {
  readonly end: CommandEnd;
  /** Stdout bytes read (the byte that passed the cap included). */
  readonly outputBytes: number;
  readonly stderr: StderrSummary;
  readonly durationMs: number;
}

/**
 * A running program.
 *
 * @example
 * ```ts
 * signal.addEventListener('abort', () => run.stop());
 * const result = await run.finished;
 * await run.terminated; // nothing of the group is left (or SIGKILL was sent)
 * ```
 */
export interface CommandProcess {
  /** The program's pid, which is also its process group id; undefined when it did not start. */
  readonly pid: number | undefined;
  /** Resolves once the program has exited and stdout and stderr are closed. Never rejects. */
  readonly finished: Promise<CommandResult>;
  /**
   * Resolves after `finished`, once the process group is gone: right away when nothing was left,
   * else when the last member died or, after the grace period, SIGKILL was sent to the group.
   * Never rejects.
   */
  readonly terminated: Promise<void>;
  /** Kills the group (SIGTERM, then SIGKILL after the grace period). Idempotent. */
  stop(): void;
}

/**
 * Spawns the program and runs it to its end. Never throws: a program that cannot be started
 * ends `spawn-failed`.
 *
 * @example
 * ```ts
 * const run = startCommandProcess({ ...options, onStdout: (text) => chunks.push(text) });
 * setTimeout(() => run.stop(), 1000);
 * (await run.finished).end; // { kind: 'stopped' } if it was still running after a second
 * ```
 */
export function startCommandProcess(options: CommandProcessOptions): CommandProcess {
  const startedAt = Date.now();
  const graceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  const stderr = new StderrCapture(options.maxStderrBytes);
  const decoder = new StringDecoder('utf8');
  let outputBytes = 0;
  /** Our own decision about the end (timeout, cap, stop), taken before the program exited. */
  let decided: CommandEnd | undefined;
  let termination: Promise<void> | undefined;

  const resultOf = (end: CommandEnd): CommandResult => ({
    end,
    outputBytes,
    stderr: stderr.summary(),
    durationMs: Date.now() - startedAt,
  });

  let child: ChildProcessWithoutNullStreams;
  try {
    child = spawn(options.program, [...options.args], {
      shell: false,
      // A group of its own (the child is its leader, pgid = pid), so that one kill reaches
      // everything the program starts.
      detached: true,
      cwd: options.cwd,
      env: { ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
  } catch (error) {
    // Synchronous refusals (an argument with a NUL byte, …): nothing was started.
    const end = spawnFailure(error);
    return {
      pid: undefined,
      finished: Promise.resolve(resultOf(end)),
      terminated: Promise.resolve(),
      stop: () => undefined,
    };
  }

  const pid = child.pid;
  const killGroup = (): Promise<void> => {
    if (pid === undefined) return Promise.resolve();
    termination ??= terminateGroup(pid, graceMs);
    return termination;
  };
  const decide = (end: CommandEnd): void => {
    if (decided !== undefined) return;
    decided = end;
    void killGroup();
  };

  const timer = setTimeout(() => decide({ kind: 'timed-out' }), options.timeoutMs);

  child.stdout.on('data', (chunk: Buffer) => {
    if (decided?.kind === 'output-exceeded') return;
    outputBytes += chunk.length;
    if (outputBytes > options.maxOutputBytes) {
      decide({ kind: 'output-exceeded' });
      return;
    }
    const text = decoder.write(chunk);
    if (text.length > 0) options.onStdout(text);
  });
  child.stderr.on('data', (chunk: Buffer) => stderr.write(chunk));

  // A program that exits without reading its stdin makes the write fail with EPIPE: expected.
  child.stdin.on('error', () => undefined);
  child.stdin.end(options.stdin, 'utf8');

  const finished = new Promise<CommandResult>((resolve) => {
    let settled = false;
    const settle = (end: CommandEnd): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(resultOf(end));
    };
    child.on('error', (error) => {
      // Spawn failures come here with no pid (and no 'close' to wait for); later errors (a
      // failed kill) change nothing about how the run ends.
      if (pid === undefined) settle(spawnFailure(error));
    });
    // The program is gone, but whatever it started in its group may live on (and hold stdout
    // open, which would keep 'close' from coming): end them too.
    child.on('exit', () => void killGroup());
    child.on('close', (code, signal) => {
      if (decided?.kind !== 'output-exceeded') {
        const rest = decoder.end();
        if (rest.length > 0) options.onStdout(rest);
      }
      if (decided !== undefined) settle(decided);
      else if (code !== null) settle({ kind: 'exited', code });
      else settle({ kind: 'signaled', signal: signal ?? 'unknown' });
    });
  });

  return {
    pid,
    finished,
    terminated: finished.then(() => termination),
    stop: () => decide({ kind: 'stopped' }),
  };
}

/**
 * Ends process group `pgid`: SIGTERM, then SIGKILL once `graceMs` have passed with members left.
 * Resolves as soon as the group is gone, or right after the SIGKILL. Never throws.
 *
 * A member that is a zombie (exited, not yet reaped by its parent) still counts as one, so on a
 * system whose init does not reap orphans this waits for the grace period; SIGKILL is then a
 * no-op.
 *
 * @example
 * ```ts
 * await terminateGroup(child.pid, 2000);
 * ```
 */
export async function terminateGroup(pgid: number, graceMs: number): Promise<void> {
  if (!signalGroup(pgid, 'SIGTERM')) return;
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    await delay(Math.min(GROUP_POLL_MS, Math.max(1, deadline - Date.now())));
    if (!signalGroup(pgid, 0)) return;
  }
  signalGroup(pgid, 'SIGKILL');
}

/** Sends `signal` to the group; false when the group no longer exists (ESRCH). */
function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    // EPERM: a member we may not signal (a setuid program); it is there all the same.
    return errnoOf(error) !== 'ESRCH';
  }
}

function spawnFailure(error: unknown): CommandEnd {
  return {
    kind: 'spawn-failed',
    code: errnoOf(error) ?? 'unknown',
    message: error instanceof Error ? error.message : String(error),
  };
}

function errnoOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  const code = error.code;
  return typeof code === 'string' ? code : undefined;
}
