/**
 * `airlock serve` as a child process, for tests that need the real process: its signals, its
 * exit code, a restart on the same data directory.
 *
 * @example
 * ```ts
 * const server = await startServe(configPath, dataDir, { TOKEN_A });
 * server.child.kill('SIGTERM');
 * ```
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readReloadOutcome, serveFiles, type RecordedOutcome } from '../../src/server/reload/pid-file.js';
import { CLI } from './cli.js';

export interface ServeProcess {
  child: ChildProcess;
  url: string;
  /** Everything the process wrote so far (stdout and stderr). */
  output: () => string;
}

/** Starts the CLI on `configPath` (with `--data dataDir` when given) and resolves once it listens. */
export async function startServe(
  configPath: string,
  dataDir: string | undefined,
  env: Record<string, string>,
  logLevel = 'warn',
  launch: {
    /** A command node runs under (`['taskset', '-c', '0']`). */
    wrapper?: readonly string[];
    /** Node's own flags, before the CLI (`['--import', hooks]`). */
    nodeFlags?: readonly string[];
    /** More `serve` flags. */
    args?: readonly string[];
    /** A process group of its own, as a shell gives a command (to signal the group). */
    detached?: boolean;
  } = {},
): Promise<ServeProcess> {
  const args = [
    ...(launch.nodeFlags ?? []),
    ...CLI,
    'serve',
    '--config',
    configPath,
    '--log-level',
    logLevel,
    ...(launch.args ?? []),
  ];
  if (dataDir !== undefined) args.push('--data', dataDir);
  const [command, ...prefix] = [...(launch.wrapper ?? []), process.execPath];
  const child = spawn(command, [...prefix, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: launch.detached ?? false,
  });
  let output = '';
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start: ${output}`)), 30_000);
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /airlock listening on (http:\/\/\S+)/.exec(output);
      if (match !== null) {
        clearTimeout(timer);
        resolve(match[1] as string);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited (${code}): ${output}`));
    });
  });
  return { child, url, output: () => output };
}

/** SIGKILL, and wait for the exit. */
export async function killHard(server: Pick<ServeProcess, 'child'>): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.kill('SIGKILL');
  await exited;
}

/** Resolves with the exit code (or the signal's name) once the process has ended. */
export function exitOf(server: Pick<ServeProcess, 'child'>): Promise<number | string> {
  const { child } = server;
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  if (child.signalCode !== null) return Promise.resolve(child.signalCode);
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
}

/** Sends SIGHUP and waits (5 s at most) for the outcome serve records; throws with the output when none comes. */
export async function reloadOutcome(server: ServeProcess, configPath: string): Promise<RecordedOutcome['outcome']> {
  const files = serveFiles(configPath);
  const sent = Date.now();
  server.child.kill('SIGHUP');
  for (let attempt = 0; attempt < 250; attempt++) {
    const recorded = readReloadOutcome(files);
    if (recorded !== undefined && recorded.at >= sent) return recorded.outcome;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no reload outcome: ${server.output()}`);
}
