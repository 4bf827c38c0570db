/**
 * `airlock reload --config F`: asks the running `airlock serve` of that config to re-read it
 * (SIGHUP to the pid in its pid file), then prints what changed, or why the reload was refused,
 * from the outcome serve records. Exits 1 with one line when nothing is running, when the
 * reload was refused, or when no outcome came back in time.
 *
 * @example
 * ```sh
 * airlock reload --config airlock.yaml
 * # reloaded (pid 4242): clients[b], limits.requestsPerMinute
 * ```
 */
import { existsSync, readFileSync } from 'node:fs';
import { readReloadOutcome, readServePid, serveFiles } from '../server/reload/pid-file.js';

/**
 * Sends the reload and reports; resolves with the exit code.
 *
 * @example
 * ```ts
 * process.exitCode = await reloadCommand({ config: 'airlock.yaml' });
 * ```
 */
export async function reloadCommand(options: {
  config: string;
  /** How long to wait for serve's outcome (default 5 s). */
  waitMs?: number;
  out?: (line: string) => void;
  err?: (line: string) => void;
}): Promise<number> {
  const out = options.out ?? ((line: string) => process.stdout.write(`${line}\n`));
  const err = options.err ?? ((line: string) => process.stderr.write(`airlock: ${line}\n`));
  const files = serveFiles(options.config);
  const pid = readServePid(files);
  if (pid === undefined) {
    err(`no airlock serve is running for ${options.config} (no pid file at ${files.pid})`);
    return 1;
  }
  const problem = notServing(pid);
  if (problem !== undefined) {
    err(`${problem} (pid ${pid} in ${files.pid}); start airlock serve, or remove the stale file`);
    return 1;
  }
  const sent = Date.now();
  process.kill(pid, 'SIGHUP');
  const deadline = sent + (options.waitMs ?? 5000);
  while (Date.now() < deadline) {
    const recorded = readReloadOutcome(files);
    if (recorded !== undefined && recorded.at >= sent) {
      const { outcome } = recorded;
      if (outcome.outcome === 'applied') {
        out(
          outcome.changed.length === 0
            ? `reloaded (pid ${pid}): nothing changed`
            : `reloaded (pid ${pid}): ${outcome.changed.join(', ')}`,
        );
        return 0;
      }
      err(`reload refused (pid ${pid}): ${outcome.message}`);
      return 1;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  err(
    `sent SIGHUP to pid ${pid}, but heard nothing back within ${Math.round((deadline - sent) / 1000)} s: see its log`,
  );
  return 1;
}

/**
 * Why `pid` is not an airlock serve we may signal, if it is not: gone (a stale pid file), run
 * by another user, or (where /proc tells) another program that took the pid over. A wrong
 * SIGHUP would end that program.
 */
function notServing(pid: number): string | undefined {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
      ? 'the process is another user’s'
      : 'no airlock serve is running';
  }
  const cmdline = `/proc/${pid}/cmdline`;
  if (existsSync(cmdline)) {
    const args = readFileSync(cmdline, 'utf8').split('\0');
    if (!args.includes('serve')) return 'the process is not airlock serve';
  }
  return undefined;
}
