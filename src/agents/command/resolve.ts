/**
 * Finding the command backend's program and working directory, once, when the gateway starts.
 * The child's environment holds only what the config names (often no PATH at all), so a bare
 * program name is looked up here, in Airlock's own PATH, and the absolute path is used from then
 * on. A program that is not there or not executable is a configuration error, reported at
 * startup rather than on a caller's request.
 *
 * @example
 * ```ts
 * resolveProgram('jq', { PATH: '/usr/bin:/bin' });       // '/usr/bin/jq'
 * resolveProgram('bin/agent.sh', {});                     // '<cwd>/bin/agent.sh'
 * resolveWorkingDirectory(undefined);                     // process.cwd()
 * ```
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

import { BackendConfigError } from '../backend.js';

/**
 * The absolute path of the program `command` names:
 * - with a `/` in it, a path: absolute as is, relative against Airlock's working directory
 *   (`process.cwd()`, like every other path in the config; not the backend's `cwd`);
 * - otherwise, a name: the first executable regular file of that name in `env.PATH`. Empty and
 *   relative PATH entries are skipped, so the lookup never depends on the working directory.
 *
 * Throws {@link BackendConfigError} when there is no such executable regular file.
 *
 * @example
 * ```ts
 * resolveProgram('/bin/sh', {});                      // '/bin/sh'
 * resolveProgram('./scripts/reply.sh', {});           // '/srv/airlock/scripts/reply.sh'
 * resolveProgram('python3', process.env);             // '/usr/bin/python3'
 * resolveProgram('no-such-tool', process.env);        // throws BackendConfigError
 * ```
 */
export function resolveProgram(command: string, env: NodeJS.ProcessEnv): string {
  if (command.includes('/')) {
    const path = resolve(process.cwd(), command);
    const problem = executableProblem(path);
    if (problem !== undefined) {
      throw new BackendConfigError(`command backend: the program ${JSON.stringify(command)} ${problem} (${path})`);
    }
    return path;
  }
  for (const directory of (env.PATH ?? '').split(delimiter)) {
    if (directory.length === 0 || !isAbsolute(directory)) continue;
    const path = join(directory, command);
    if (executableProblem(path) === undefined) return path;
  }
  throw new BackendConfigError(
    `command backend: the program ${JSON.stringify(command)} was not found as an executable file in PATH` +
      ' (give a path with a "/" or fix PATH)',
  );
}

/**
 * The absolute working directory for the program: `cwd` resolved against Airlock's working
 * directory, or Airlock's working directory itself when `cwd` is absent. Throws
 * {@link BackendConfigError} when it is not an existing directory.
 *
 * @example
 * ```ts
 * resolveWorkingDirectory('var/agent'); // '/srv/airlock/var/agent'
 * resolveWorkingDirectory(undefined);   // '/srv/airlock'
 * ```
 */
export function resolveWorkingDirectory(cwd: string | undefined): string {
  const path = resolve(process.cwd(), cwd ?? '.');
  let isDirectory = false;
  try {
    isDirectory = statSync(path).isDirectory();
  } catch {
    // Missing or unreadable: reported below like a file in its place.
  }
  if (!isDirectory) {
    throw new BackendConfigError(`command backend: cwd ${JSON.stringify(cwd)} is not an existing directory (${path})`);
  }
  return path;
}

/** Why `path` cannot be run, or undefined when it is an executable regular file. */
function executableProblem(path: string): string | undefined {
  let isFile: boolean;
  try {
    isFile = statSync(path).isFile();
  } catch {
    return 'does not exist';
  }
  if (!isFile) return 'is not a regular file';
  try {
    accessSync(path, constants.X_OK);
  } catch {
    return 'is not executable';
  }
  return undefined;
}
